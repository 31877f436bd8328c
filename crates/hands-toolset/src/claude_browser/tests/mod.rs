//! The toolset against the recording fake driver: every member's driver calls, batches and the
//! halt text, `browser_state` rules, consent order, refusals and faults.

use std::time::Duration;

use hands_core::browser::args::{
    BrowserCall, CssPoint, CssRegion, DiagnosticsSource, GrantId, PageUrl, PointerButton,
    ReadFilter,
};
use hands_core::browser::driver::{FileCleanup, FileEffect, FileOutcome, FileStatus, ReadResult};
use hands_core::browser::{BrowserMember, BrowserOutput, DriverError, MemberSet};
use hands_core::input::{Modifier, ModifierSet};
use serde_json::{Value, json};

use super::fake::{
    Event, FakeBrowser, Log, calls, r, recording_confirm, recording_policy, t, take,
};
use super::*;
use crate::browser::consent::Approval;
use crate::strings::{
    BROWSER_ACTION_DENIED, BROWSER_BUTTON_HOLD_UNSUPPORTED, BROWSER_CANCELLED,
    BROWSER_HISTORY_UNSUPPORTED, BROWSER_NOT_EXECUTED, BROWSER_STATE_UNAVAILABLE,
    BROWSER_UNSUPPORTED, BROWSER_URL_DENIED,
};

/// Every member enabled, recording callbacks that allow and approve.
fn config(log: &Log) -> ClaudeBrowserConfig {
    let mut declaration = BrowserToolsetDeclaration::new();
    for member in Member::ALL {
        declaration = declaration.enable(member);
    }
    ClaudeBrowserConfig {
        declaration,
        confirm: Some(recording_confirm(log, vec![])),
        url_policy: Some(recording_policy(log)),
        ..ClaudeBrowserConfig::default()
    }
}

fn toolset(log: &Log) -> ClaudeBrowserToolset<FakeBrowser> {
    ClaudeBrowserToolset::new(FakeBrowser::new(log), config(log)).unwrap()
}

fn block(id: &str, name: &str, input: Value) -> ToolUse {
    ToolUse {
        id: id.into(),
        name: name.into(),
        toolset_name: Some("browser".into()),
        input,
    }
}

async fn turn(toolset: &mut ClaudeBrowserToolset<FakeBrowser>, blocks: &[ToolUse]) -> TurnOutcome {
    toolset.run_turn(blocks, &CancellationToken::new()).await
}

/// Runs one block and returns its result and the driver calls it made.
async fn one(name: &str, input: Value) -> (BrowserResult, Vec<BrowserCall>) {
    let log = Log::default();
    let mut toolset = toolset(&log);
    let outcome = turn(&mut toolset, &[block("toolu_1", name, input)]).await;
    assert!(outcome.fault.is_none(), "{name}: {:?}", outcome.fault);
    let result = outcome.results.into_iter().next().unwrap();
    (result, calls(&take(&log)))
}

/// Checks that a member's input makes exactly these driver calls and succeeds.
async fn check(name: &str, input: Value, want: Vec<BrowserCall>) {
    let (result, got) = one(name, input.clone()).await;
    assert!(!result.is_error(), "{name} {input}: {:?}", result.text());
    assert_eq!(got, want, "{name} {input}");
}

/// Checks that a member's input is refused with a text containing `needle`, and that nothing
/// reached the driver.
async fn refused(name: &str, input: Value, needle: &str) {
    let (result, got) = one(name, input.clone()).await;
    assert!(result.is_error(), "{name} {input} succeeded");
    let text = result.text().unwrap_or_default();
    assert!(text.contains(needle), "{name} {input}: {text:?}");
    assert!(got.is_empty(), "{name} {input} reached the driver: {got:?}");
    assert!(result.state().is_none());
}

fn point(x: u64, y: u64) -> CssPoint {
    CssPoint::new(x, y).unwrap()
}

fn url(text: &str) -> PageUrl {
    PageUrl::parse("url", text).unwrap()
}

fn coordinate(x: u64, y: u64) -> Value {
    json!({"type": "coordinate", "x": x, "y": y})
}

fn ref_target(r: &str) -> Value {
    json!({"type": "ref", "ref": r})
}

fn state_blocks(result: &BrowserResult) -> Vec<Value> {
    result.to_json()["content"]
        .as_array()
        .map(|content| {
            content
                .iter()
                .filter(|b| b["type"] == "browser_state")
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

mod construction;
mod members;
mod refusals;
mod results;
