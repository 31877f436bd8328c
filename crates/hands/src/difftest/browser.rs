//! The browser surfaces: `claude_browser` (Claude's `browser_toolset_20260801`) and `fn_browser`
//! (the driver spec's function-tool toolset), both over the shared Chromium, reset to the case's
//! start page before each case.
//!
//! A case names page elements and tabs by placeholders, since refs and tab ids are issued by the
//! real browser: `"$ref:<label>"` is the ref of the element with that label in a read of the
//! start page, `"$tab:0"` the id of the start tab. A placeholder that names nothing becomes a ref
//! or id no read issued.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use hands_cdp::CdpBrowser;
use hands_core::CancellationToken;
use hands_core::browser::args::{PageUrl, ReadFilter};
use hands_core::browser::driver::ReadResult;
use hands_core::browser::{Browser, BrowserMember, BrowserState, DriverError, MemberSet};
use hands_toolset::browser::{
    Approval, BrowserToolCall, BrowserToolset, BrowserToolsetConfig, ConfirmContext, ConfirmFn,
    OriginAllowList, UrlPolicy, UrlPolicyFn, UrlVerdict,
};
use hands_toolset::claude_browser::declaration::BrowserToolsetDeclaration;
use hands_toolset::claude_browser::{Batch, ClaudeBrowserConfig, ClaudeBrowserToolset, Member};
use hands_toolset::wire::ToolUse;
use serde_json::{Value, json};

use super::record::{Log, RecordedBrowser};
use super::{Env, elide_images};

/// Case: `{"declaration", "blocks", "start_url", "allow_origins"?, "deny"?: [member],
/// "no_confirm"?}`.
///
/// Answer: `{"config_error"}`, or `{"declaration", "results": [tool_result + "acted"], "fault"}`.
pub async fn claude_browser(env: &mut Env, case: &Value) -> anyhow::Result<Value> {
    let declaration = match case.get("declaration") {
        None | Some(Value::Null) => BrowserToolsetDeclaration::new(),
        Some(entry) => match BrowserToolsetDeclaration::from_json(entry) {
            Ok(declaration) => declaration,
            Err(e) => return Ok(json!({"config_error": e.to_string()})),
        },
    };
    let deny: Vec<BrowserMember> = strings(&case["deny"])
        .iter()
        .filter_map(|name| Member::from_name(name))
        .flat_map(|m| m.driver_members().iter().copied())
        .collect();
    // `"no_confirm": true` builds the toolset without a confirm callback, to see which members
    // demand one.
    let confirm_callback = (case["no_confirm"] != json!(true)).then(|| confirm(deny));
    let config = ClaudeBrowserConfig {
        declaration,
        confirm: confirm_callback,
        url_policy: Some(url_policy(&case["allow_origins"])?),
        ..ClaudeBrowserConfig::default()
    };
    let probe = |p: Probe| ClaudeBrowserToolset::new(p, config.clone()).map(drop);
    let (browser, names) = match lend(env, case, probe).await? {
        Lent::Ready(browser, names) => (*browser, names),
        Lent::Refused(answer) => return Ok(answer),
    };
    let blocks = match ToolUse::from_message(&names.resolve(&case["blocks"])) {
        Ok(blocks) => blocks,
        Err(e) => {
            env.give_back(browser);
            return Ok(json!({"wire_error": e.to_string()}));
        }
    };
    let log = Log::default();
    let mut toolset = ClaudeBrowserToolset::new(RecordedBrowser::new(browser, log.clone()), config)
        .map_err(|e| anyhow::anyhow!("the probe accepted what the toolset refuses: {e}"))?;
    let cancel = CancellationToken::new();
    let mut batch = Batch::default();
    let mut results = Vec::new();
    let mine: Vec<&ToolUse> = blocks.iter().filter(|b| toolset.owns(b)).collect();
    for tool_use in mine {
        log.take();
        let result = toolset.run_block(&mut batch, tool_use, &cancel).await;
        let mut block = elide_images(result.to_json());
        let ran = super::computer::ran_without_driver(tool_use, result.result());
        block["acted"] = json!(!log.take().is_empty() || ran);
        results.push(block);
    }
    let fault = toolset.finish_batch(batch);
    let declaration = toolset.declaration();
    env.give_back(toolset.into_driver().into_inner());
    Ok(json!({
        "declaration": declaration,
        "results": results,
        "fault": fault.map(|f| f.to_string()),
    }))
}

/// Case: `{"config": {"members"?, "additional_members"?, "confirm_reads"?, "allow_origins"?,
/// "deny"?}, "calls": [{"call_id", "name", "arguments"}], "start_url"}`. Calls run one at a time;
/// after a call that is not ok the rest are answered as skipped, as the runner does.
///
/// Answer: `{"config_error"}`, or `{"tools", "outputs": [function_call_output + "acted"]}`.
pub async fn fn_browser(env: &mut Env, case: &Value) -> anyhow::Result<Value> {
    let settings = &case["config"];
    let list = |key: &str| settings.get(key).filter(|v| !v.is_null()).map(strings);
    let deny: Vec<BrowserMember> = strings(&settings["deny"])
        .iter()
        .filter_map(|name| BrowserMember::from_name(name))
        .collect();
    let config = BrowserToolsetConfig {
        members: list("members"),
        additional_members: list("additional_members"),
        confirm_reads: list("confirm_reads").unwrap_or_default(),
        confirm: Some(confirm(deny)),
        url_policy: Some(url_policy(&settings["allow_origins"])?),
        ..BrowserToolsetConfig::default()
    };
    let probe = |p: Probe| BrowserToolset::new(p, config.clone()).map(drop);
    let (browser, names) = match lend(env, case, probe).await? {
        Lent::Ready(browser, names) => (*browser, names),
        Lent::Refused(answer) => return Ok(answer),
    };
    let log = Log::default();
    let toolset = BrowserToolset::new(RecordedBrowser::new(browser, log.clone()), config)
        .map_err(|e| anyhow::anyhow!("the probe accepted what the toolset refuses: {e}"))?;
    let calls = names.resolve(&case["calls"]);
    let cancel = CancellationToken::new();
    let mut outputs = Vec::new();
    let mut failed = false;
    for call in calls.as_array().into_iter().flatten() {
        let text = |key: &str| call.get(key).and_then(Value::as_str).unwrap_or("");
        let call = BrowserToolCall::from_text(text("call_id"), text("name"), text("arguments"));
        log.take();
        let (output, fault) = if failed {
            toolset.skip(&call, &cancel).await
        } else {
            toolset.call(&call, &cancel).await
        };
        failed |= !output.ok() || fault.is_some();
        let mut item = elide_images(output.to_openai());
        item["acted"] = json!(!log.take().is_empty());
        item["fault"] = json!(fault.map(|f| f.to_string()));
        outputs.push(item);
    }
    let tools = toolset.openai_tools();
    let driver = toolset.into_driver().into_inner();
    // What the real driver implements, so the suite can check its fake implements the same.
    let implemented: Vec<&str> = driver.implemented().iter().map(|m| m.name()).collect();
    env.give_back(driver);
    Ok(json!({"tools": tools, "outputs": outputs, "implemented": implemented}))
}

/// The shared Chromium lent to a case, or the answer to a case whose configuration is refused.
enum Lent {
    /// On the case's start page, with its placeholders.
    Ready(Box<CdpBrowser>, Names),
    /// The toolset refused the configuration: `{"config_error"}`.
    Refused(Value),
}

/// Lends the shared Chromium to a case. The toolsets take their driver by value, so `probe` first
/// builds the toolset over a driver that implements the same members: a configuration it refuses
/// never costs the real browser. Then the browser is reset to the case's start page.
async fn lend<E: std::fmt::Display>(
    env: &mut Env,
    case: &Value,
    probe: impl FnOnce(Probe) -> Result<(), E>,
) -> anyhow::Result<Lent> {
    let mut browser = env.browser().await?;
    if let Err(e) = probe(Probe(browser.implemented())) {
        env.give_back(browser);
        return Ok(Lent::Refused(json!({"config_error": e.to_string()})));
    }
    match reset(&mut browser, case).await {
        Ok(names) => Ok(Lent::Ready(Box::new(browser), names)),
        Err(e) => {
            env.give_back(browser);
            Err(e)
        }
    }
}

/// Placeholders resolved against the start page.
struct Names {
    refs: HashMap<String, String>,
    first_tab: String,
}

impl Names {
    fn resolve(&self, value: &Value) -> Value {
        match value {
            // A function call's arguments are JSON text: placeholders are quoted strings in it.
            Value::String(text) if text.contains("\"$ref:") || text.contains("\"$tab:0\"") => {
                let mut text = text.replace("\"$tab:0\"", &format!("\"{}\"", self.first_tab));
                for (label, reference) in &self.refs {
                    text = text.replace(&format!("\"$ref:{label}\""), &format!("\"{reference}\""));
                }
                while let Some(start) = text.find("\"$ref:") {
                    let end = text[start + 1..]
                        .find('"')
                        .map_or(text.len(), |i| start + 2 + i);
                    text.replace_range(start..end, "\"e999999\"");
                }
                json!(text)
            }
            Value::String(text) => {
                if let Some(label) = text.strip_prefix("$ref:") {
                    json!(
                        self.refs
                            .get(label)
                            .cloned()
                            .unwrap_or_else(|| "e999999".into())
                    )
                } else if text == "$tab:0" {
                    json!(self.first_tab)
                } else {
                    value.clone()
                }
            }
            Value::Array(items) => Value::Array(items.iter().map(|v| self.resolve(v)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.resolve(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// One tab, on the case's start page; the labels of its elements mapped to their refs.
async fn reset(browser: &mut CdpBrowser, case: &Value) -> anyhow::Result<Names> {
    let cancel = CancellationToken::new();
    let start = case
        .get("start_url")
        .and_then(Value::as_str)
        .unwrap_or("about:blank");
    let url = PageUrl::parse("start_url", start).map_err(|e| anyhow::anyhow!("{e}"))?;
    let state = browser.state(&cancel).await?;
    let tabs = state.tabs().to_vec();
    let first = match tabs.first() {
        Some(tab) => tab.id.clone(),
        None => {
            browser.new_tab(None, &cancel).await?;
            let state = browser.state(&cancel).await?;
            state
                .tabs()
                .first()
                .map(|t| t.id.clone())
                .ok_or_else(|| anyhow::anyhow!("Chromium has no tab after new_tab"))?
        }
    };
    for tab in tabs.iter().skip(1) {
        browser.close_tab(&tab.id, &cancel).await?;
    }
    if !tabs.first().is_some_and(|t| t.active) {
        browser.switch_tab(&first, &cancel).await?;
    }
    browser.navigate(&url, None, &cancel).await?;
    let mut refs = HashMap::new();
    if let Some(ReadResult::Structured(read)) =
        browser.read_page(ReadFilter::All, None, &cancel).await?
    {
        for element in read.elements() {
            refs.entry(element.label().to_owned())
                .or_insert_with(|| element.reference().as_str().to_owned());
        }
    }
    Ok(Names {
        refs,
        first_tab: first.as_str().to_owned(),
    })
}

/// Approves every call but those whose driver member is in `deny`.
fn confirm(deny: Vec<BrowserMember>) -> Arc<dyn hands_toolset::browser::Confirm> {
    Arc::new(ConfirmFn(move |context: ConfirmContext, _cancel| {
        let approval = if deny.contains(&context.member) {
            Approval::Deny
        } else {
            Approval::Approve
        };
        async move { Ok(approval) }
    }))
}

/// The origin allow-list the case names, or one that allows every URL.
fn url_policy(allow: &Value) -> anyhow::Result<Arc<dyn UrlPolicy>> {
    if allow.is_null() {
        return Ok(Arc::new(UrlPolicyFn(|_context, _url, _cancel| async {
            Ok(UrlVerdict::Allow)
        })));
    }
    Ok(Arc::new(
        OriginAllowList::new(strings(allow)).map_err(|e| anyhow::anyhow!("{e}"))?,
    ))
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// A driver that implements what the real one does and nothing else: the toolsets' constructors
/// read only `implemented()`, so it tells whether they accept a configuration.
struct Probe(MemberSet);

#[async_trait]
impl Browser for Probe {
    fn implemented(&self) -> MemberSet {
        self.0
    }
    async fn state(&mut self, _: &CancellationToken) -> Result<BrowserState, DriverError> {
        Err(DriverError::Gone(
            "the configuration probe has no browser".into(),
        ))
    }
}
