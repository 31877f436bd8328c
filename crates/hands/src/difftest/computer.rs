//! The `claude_computer` surface: one turn of `computer` toolset blocks through hands'
//! [`ComputerToolset`] on the shared Xvfb, block by block, noting which blocks reached the desktop.

use hands_core::CancellationToken;
use hands_toolset::computer::declaration::ToolsetDeclaration;
use hands_toolset::computer::members::Member;
use hands_toolset::computer::{Batch, ComputerConfig, ComputerToolset, Shape};
use hands_toolset::wire::ToolUse;
use serde_json::{Value, json};

use super::record::{Log, RecordedDesktop};
use super::{Env, elide_images};

/// Case: `{"declaration": entry | null, "blocks": [tool_use…]}`.
///
/// Answer: `{"config_error"}` when the toolset refuses the declaration, else `{"declaration",
/// "results": [tool_result + "acted"], "closing_acted", "fault"}`.
pub async fn claude_computer(env: &mut Env, case: &Value) -> anyhow::Result<Value> {
    let declaration = match case.get("declaration") {
        None | Some(Value::Null) => ToolsetDeclaration::new(),
        Some(entry) => match ToolsetDeclaration::from_json(entry) {
            Ok(declaration) => declaration,
            Err(e) => return Ok(json!({"config_error": e.to_string()})),
        },
    };
    let blocks = match ToolUse::from_message(&case["blocks"]) {
        Ok(blocks) => blocks,
        Err(e) => return Ok(json!({"wire_error": e.to_string()})),
    };
    let log = Log::default();
    let desktop = RecordedDesktop::new(env.desktop()?, log.clone());
    let config = ComputerConfig {
        shape: Shape::Toolset(declaration),
        ..ComputerConfig::default()
    };
    let mut toolset = match ComputerToolset::new(desktop, config) {
        Ok(toolset) => toolset,
        Err(e) => return Ok(json!({"config_error": e.to_string()})),
    };
    let cancel = CancellationToken::new();
    let mut batch = Batch::default();
    let mut results = Vec::new();
    let mut acted = Vec::new();
    let mine: Vec<&ToolUse> = blocks.iter().filter(|b| toolset.owns(b)).collect();
    for tool_use in mine {
        log.take();
        let index = results.len();
        let result = toolset
            .run_block(&mut batch, tool_use, index, &cancel)
            .await;
        acted.push(!log.take().is_empty() || ran_without_driver(tool_use, &result));
        results.push(result);
    }
    let fault = toolset.finish_batch(batch, &mut results, &cancel).await;
    let closing = log.take();
    // A button or key left down by the case would leak into the next one.
    let _ = hands_core::Desktop::button(toolset.desktop(), hands_core::input::Button::Left, false)
        .await;
    let results: Vec<Value> = results
        .iter()
        .zip(acted)
        .map(|(result, acted)| {
            let mut block = elide_images(result.to_json());
            block["acted"] = json!(acted);
            block
        })
        .collect();
    Ok(json!({
        "declaration": toolset.declaration(),
        // The members hands' computer toolset can require a confirmation for, to compare with the
        // SDK's list of the members that need a `confirm` callback.
        "confirm_members": Member::KEYBOARD.iter().map(|m| m.name()).collect::<Vec<_>>(),
        "results": results,
        "closing_acted": !closing.is_empty(),
        "fault": fault.map(|f| f.to_string()),
    }))
}

/// Members that run without a driver call: `wait` (a cancellable sleep) and, in the browser,
/// `list_tabs` (the state itself). A successful one acted, as the SDK's driver method did.
pub fn ran_without_driver(tool_use: &ToolUse, result: &hands_toolset::wire::ToolResult) -> bool {
    matches!(tool_use.name.as_str(), "wait" | "list_tabs") && !result.is_error
}
