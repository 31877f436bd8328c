//! OpenAI's side of the context: the next request's input items projected from the whole
//! history, as Claude's are — old screenshots dropped in batches, the budget's cuts after.
//!
//! A `computer_call_output` must hold a screenshot, so an old computer screenshot goes with its
//! call: the call and its output leave the request, and a receipt (a user message naming the
//! calls) takes their place. A browser screenshot inside a `function_call_output` is replaced by
//! a text part. Reasoning and assistant messages stay, as do the calls of the latest response,
//! the latest computer and browser calls (the current observations), every call with safety
//! checks, and the last screenshots. The receipt sits where the calls were, so a reasoning item
//! is never followed by another reasoning item it did not precede.
//!
//! Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución"
//! (`context_budget`: "La proyección conserva las observaciones actuales y las relaciones
//! necesarias entre herramientas").

use std::collections::HashSet;

use serde_json::{Value, json};

use super::compactor::{CallerCuts, CompactionSnapshot, Compactor};
use super::{
    BudgetExceeded, ContextConfig, ContextManagement, DROPPED_SCREENSHOT, ProjectionState, fits,
    omitted_receipt, scheduled,
};

/// Why an OpenAI input could not be projected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProjectError {
    /// Over the budget with everything droppable dropped.
    Budget(BudgetExceeded),
    /// The caller's compaction callback answered with a decision that breaks its contract.
    Decision(String),
}

/// Which function names are browser tools (their latest call is a current observation).
type BrowserNames<'a> = &'a dyn Fn(&str) -> bool;

fn kind(item: &Value) -> &str {
    match item.get("type").and_then(Value::as_str) {
        Some(t) => t,
        None if item.get("role").is_some() => "message",
        None => "",
    }
}

fn call_id(item: &Value) -> Option<&str> {
    item.get("call_id").and_then(Value::as_str)
}

fn is_call(item: &Value) -> bool {
    matches!(kind(item), "function_call" | "computer_call")
}

fn is_output(item: &Value) -> bool {
    matches!(kind(item), "function_call_output" | "computer_call_output")
}

/// Whether an item is model output (part of a response), as opposed to input.
fn is_model_output(item: &Value) -> bool {
    match kind(item) {
        "message" => item.get("role").and_then(Value::as_str) == Some("assistant"),
        "function_call_output" | "computer_call_output" | "item_reference" => false,
        _ => true,
    }
}

/// One screenshot in the history: where, and whose call.
#[derive(Debug, Clone)]
struct Shot {
    item: usize,
    /// The part of a `function_call_output`; `None` for a computer screenshot.
    part: Option<usize>,
    call_id: String,
}

fn screenshots(items: &[Value]) -> Vec<Shot> {
    let mut shots = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(id) = call_id(item) else { continue };
        match kind(item) {
            "computer_call_output" => shots.push(Shot {
                item: i,
                part: None,
                call_id: id.to_owned(),
            }),
            "function_call_output" => {
                for (p, part) in item
                    .get("output")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    if part.get("type").and_then(Value::as_str) == Some("input_image") {
                        shots.push(Shot {
                            item: i,
                            part: Some(p),
                            call_id: id.to_owned(),
                        });
                    }
                }
            }
            _ => {}
        }
    }
    shots
}

fn has_checks(item: &Value, key: &str) -> bool {
    item.get(key)
        .and_then(Value::as_array)
        .is_some_and(|checks| !checks.is_empty())
}

/// The calls that never leave a request: those of the latest response, the latest computer and
/// browser calls, calls with safety checks, and those holding one of the kept screenshots.
fn protected(
    items: &[Value],
    shots: &[Shot],
    keep: usize,
    is_browser: BrowserNames<'_>,
) -> HashSet<String> {
    let mut keep_ids = HashSet::new();
    let mut latest_computer = None;
    let mut latest_browser = None;
    for item in items {
        let Some(id) = call_id(item) else { continue };
        match kind(item) {
            "computer_call" => {
                latest_computer = Some(id);
                if has_checks(item, "pending_safety_checks") {
                    keep_ids.insert(id.to_owned());
                }
            }
            "function_call"
                if item
                    .get("name")
                    .and_then(Value::as_str)
                    .is_some_and(is_browser) =>
            {
                latest_browser = Some(id);
            }
            "computer_call_output" if has_checks(item, "acknowledged_safety_checks") => {
                keep_ids.insert(id.to_owned());
            }
            _ => {}
        }
    }
    keep_ids.extend(
        latest_computer
            .into_iter()
            .chain(latest_browser)
            .map(str::to_owned),
    );
    // The latest response's calls: the last run of model output.
    let mut in_last = false;
    for item in items.iter().rev() {
        if is_model_output(item) {
            in_last = true;
            if is_call(item)
                && let Some(id) = call_id(item)
            {
                keep_ids.insert(id.to_owned());
            }
        } else if in_last {
            break;
        }
    }
    let first_kept = shots.len().saturating_sub(keep);
    keep_ids.extend(shots[first_kept..].iter().map(|s| s.call_id.clone()));
    keep_ids
}

/// What a receipt calls a call: its id and its function name or action types.
fn label(item: &Value) -> String {
    let id = call_id(item).unwrap_or("");
    let what = match kind(item) {
        "computer_call" => {
            let actions: Vec<&str> = match item.get("actions") {
                Some(Value::Array(actions)) => actions
                    .iter()
                    .filter_map(|a| a.get("type").and_then(Value::as_str))
                    .collect(),
                _ => item
                    .pointer("/action/type")
                    .and_then(Value::as_str)
                    .into_iter()
                    .collect(),
            };
            format!("computer: {}", actions.join(", "))
        }
        _ => item
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
    };
    format!("{id} ({what})")
}

fn receipt(calls: &[String]) -> Value {
    json!({"type": "message", "role": "user",
        "content": [{"type": "input_text", "text": omitted_receipt(calls)}]})
}

/// The input with the first `cut` screenshots cut and the calls in `dropped` removed.
fn apply(
    items: &[Value],
    shots: &[Shot],
    cut: usize,
    protected: &HashSet<String>,
    dropped: &HashSet<String>,
) -> Vec<Value> {
    let mut items = items.to_vec();
    let mut gone: HashSet<String> = dropped.clone();
    for shot in &shots[..cut.min(shots.len())] {
        match shot.part {
            Some(part) => {
                items[shot.item]["output"][part] =
                    json!({"type": "input_text", "text": DROPPED_SCREENSHOT});
            }
            None if !protected.contains(&shot.call_id) => {
                gone.insert(shot.call_id.clone());
            }
            None => {}
        }
    }
    let mut out = Vec::with_capacity(items.len());
    let mut pending: Vec<String> = Vec::new();
    for item in items {
        let leaves = (is_call(&item) || is_output(&item))
            && call_id(&item).is_some_and(|id| gone.contains(id));
        if leaves {
            if is_call(&item) {
                pending.push(label(&item));
            }
            continue;
        }
        if !pending.is_empty() {
            out.push(receipt(&std::mem::take(&mut pending)));
        }
        out.push(item);
    }
    if !pending.is_empty() {
        out.push(receipt(&pending));
    }
    out
}

/// Bytes and images of projected input items.
fn measure(items: &[Value]) -> (usize, usize) {
    let bytes = serde_json::to_vec(items).map_or(usize::MAX, |v| v.len());
    let images = items
        .iter()
        .map(|item| match kind(item) {
            "computer_call_output" => 1,
            "function_call_output" | "message" => item
                .get(if kind(item) == "message" {
                    "content"
                } else {
                    "output"
                })
                .and_then(Value::as_array)
                .map_or(0, |parts| {
                    parts
                        .iter()
                        .filter(|p| p.get("type").and_then(Value::as_str) == Some("input_image"))
                        .count()
                }),
            _ => 0,
        })
        .sum();
    (bytes, images)
}

/// Projects the history (items as JSON) into the next request's input. Over the budget, the
/// caller's `compactor` (if any) is asked which calls to drop before hands cuts any; its
/// decisions are kept in `cuts` and applied to every later projection.
pub(crate) fn project(
    items: &[Value],
    config: &ContextConfig,
    state: &mut ProjectionState,
    is_browser: BrowserNames<'_>,
    compactor: Option<&Compactor>,
    cuts: &mut CallerCuts,
) -> Result<Vec<Value>, ProjectError> {
    let ContextManagement::Client(client) = config.management else {
        return Ok(items.to_vec());
    };
    let caller_dropped = cuts.dropped();
    let summaries = cuts.summaries();
    let shots = screenshots(items);
    let keep = client.keep_screenshots;
    let excess = shots.len().saturating_sub(keep);
    let protected = protected(items, &shots, keep, is_browser);
    let mut cut = scheduled(shots.len(), &client).max(state.screenshots_cut.min(excess));
    let droppable: Vec<&Value> = items
        .iter()
        .filter(|item| {
            is_call(item)
                && call_id(item).is_some_and(|id| {
                    !protected.contains(id)
                        && !caller_dropped.contains(id)
                        && items.iter().any(|o| is_output(o) && call_id(o) == Some(id))
                })
        })
        .collect();
    let dropped_set = |n: usize| -> HashSet<String> {
        droppable[..n.min(droppable.len())]
            .iter()
            .filter_map(|item| call_id(item).map(str::to_owned))
            .chain(caller_dropped.iter().cloned())
            .collect()
    };
    let build = |cut: usize, gone: &HashSet<String>| -> Vec<Value> {
        let mut out = summaries.clone();
        out.extend(apply(items, &shots, cut, &protected, gone));
        out
    };
    let mut dropped = state.calls_dropped.min(droppable.len());
    let mut out = build(cut, &dropped_set(dropped));
    let Some(budget) = client.budget else {
        return Ok(out);
    };
    let (mut bytes, mut images) = measure(&out);
    if fits(budget, bytes, images, false) {
        return Ok(out);
    }
    if cut < excess {
        cut = excess;
        state.screenshots_cut = cut;
        out = build(cut, &dropped_set(dropped));
        (bytes, images) = measure(&out);
    }
    // Still over: the caller decides first, then hands cuts what the decision left over.
    if let Some(compactor) = compactor
        && !fits(budget, bytes, images, false)
        && dropped < droppable.len()
    {
        let eligible: Vec<String> = droppable[dropped..]
            .iter()
            .filter_map(|item| call_id(item).map(str::to_owned))
            .collect();
        let snapshot = CompactionSnapshot {
            history: out,
            eligible_call_ids: eligible.clone(),
            input_bytes: bytes,
            input_images: images,
        };
        let decision = compactor.call(&snapshot);
        cuts.take(decision, &eligible)
            .map_err(ProjectError::Decision)?;
        return project(items, config, state, is_browser, None, cuts);
    }
    while !fits(budget, bytes, images, true) && dropped < droppable.len() {
        // One call at a time (each measured whole): calls are few next to their screenshots.
        dropped += 1;
        out = build(cut, &dropped_set(dropped));
        (bytes, images) = measure(&out);
    }
    state.calls_dropped = state.calls_dropped.max(dropped);
    if fits(budget, bytes, images, false) {
        Ok(out)
    } else {
        Err(ProjectError::Budget(BudgetExceeded {
            input_bytes: bytes,
            input_images: images,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{ClientContext, ContextBudget, OMITTED_CALLS_PREFIX};

    fn no_browser(_: &str) -> bool {
        false
    }

    /// A stateless history of `turns` computer calls, each after a reasoning item, answered with
    /// a distinct screenshot; call `with_checks` carries a safety check.
    fn history(turns: usize, with_checks: Option<usize>) -> Vec<Value> {
        let mut items = vec![json!({"role": "user", "content": "do the task"})];
        for i in 0..turns {
            let checks = if with_checks == Some(i) {
                json!([{"id": format!("sc_{i}"), "code": "irrelevant_domain"}])
            } else {
                json!([])
            };
            items.push(json!({"type": "reasoning", "id": format!("rs_{i}"), "summary": []}));
            items.push(json!({"type": "computer_call", "id": format!("cu_{i}"), "call_id": format!("call_{i}"),
                "status": "completed", "actions": [{"type": "click", "x": i, "y": 1}],
                "pending_safety_checks": checks}));
            items.push(
                json!({"type": "computer_call_output", "call_id": format!("call_{i}"),
                "acknowledged_safety_checks": checks,
                "output": {"type": "computer_screenshot",
                    "image_url": format!("data:image/png;base64,{i:08}{}", "A".repeat(2_000))}}),
            );
        }
        items
    }

    /// Every call in the input is answered once after it, every output answers an earlier call,
    /// and no reasoning item is followed by another reasoning item.
    fn assert_valid(items: &[Value]) {
        let mut open: Vec<&str> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            if is_call(item) {
                open.push(call_id(item).unwrap());
            } else if is_output(item) {
                let id = call_id(item).unwrap();
                assert!(open.contains(&id), "output {id} answers no earlier call");
                open.retain(|o| *o != id);
            }
            if kind(item) == "reasoning" {
                assert_ne!(kind(&items[i + 1]), "reasoning", "at {i}");
            }
        }
        assert!(open.is_empty(), "unanswered: {open:?}");
    }

    fn screenshots_of(items: &[Value]) -> Vec<String> {
        items
            .iter()
            .filter(|i| kind(i) == "computer_call_output")
            .map(|i| i["output"]["image_url"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn old_computer_screenshots_leave_with_their_calls_in_batches() {
        let config = ContextConfig::default();
        let mut state = ProjectionState::default();
        let mut previous = String::new();
        let mut drops = 0;
        for turns in 1..=50 {
            let items = history(turns, Some(2));
            let out = project(
                &items,
                &config,
                &mut state,
                &no_browser,
                None,
                &mut CallerCuts::default(),
            )
            .unwrap();
            assert_valid(&out);
            let all = screenshots_of(&items);
            let visible = screenshots_of(&out);
            assert!(
                visible.ends_with(&all[all.len().saturating_sub(3)..]),
                "turn {turns}"
            );
            // The call with a safety check never leaves.
            if turns > 2 {
                assert!(visible.contains(&all[2]));
            }
            // Reasoning stays, in order.
            let reasoning = out.iter().filter(|i| kind(i) == "reasoning").count();
            assert_eq!(reasoning, turns);
            let text = serde_json::to_string(&out).unwrap();
            if !text.starts_with(&previous[..previous.len().saturating_sub(1)]) {
                drops += 1;
            }
            previous = text;
        }
        assert_eq!(drops, 5);
        let out = project(
            &history(50, None),
            &config,
            &mut state,
            &no_browser,
            None,
            &mut CallerCuts::default(),
        )
        .unwrap();
        let receipt = out
            .iter()
            .find(|i| kind(i) == "message" && i["role"] == "user" && i["content"].is_array())
            .unwrap();
        let text = receipt["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with(OMITTED_CALLS_PREFIX));
        assert!(text.contains("call_0 (computer: click)"), "{text}");
        assert!(!text.contains("x\":"), "no arguments in a receipt: {text}");
    }

    #[test]
    fn a_budget_cuts_more_and_stops_when_nothing_is_left_to_cut() {
        let config = ContextConfig {
            management: ContextManagement::Client(ClientContext {
                budget: Some(ContextBudget {
                    max_input_bytes: 20_000,
                    max_input_images: 4,
                }),
                ..ClientContext::default()
            }),
            ..ContextConfig::default()
        };
        let mut state = ProjectionState::default();
        for turns in 1..=30 {
            let items = history(turns, None);
            let out = project(
                &items,
                &config,
                &mut state,
                &no_browser,
                None,
                &mut CallerCuts::default(),
            )
            .unwrap();
            assert_valid(&out);
            let (bytes, images) = measure(&out);
            assert!(
                bytes <= 20_000 && images <= 4,
                "turn {turns}: {bytes} {images}"
            );
            assert_eq!(out.last(), items.last());
        }
        let tiny = ContextConfig {
            management: ContextManagement::Client(ClientContext {
                budget: Some(ContextBudget {
                    max_input_bytes: 50,
                    max_input_images: 3,
                }),
                ..ClientContext::default()
            }),
            ..ContextConfig::default()
        };
        assert!(
            project(
                &history(4, None),
                &tiny,
                &mut ProjectionState::default(),
                &no_browser,
                None,
                &mut CallerCuts::default(),
            )
            .is_err()
        );
    }

    #[test]
    fn browser_screenshots_become_text_and_the_latest_browser_call_stays() {
        let mut items = vec![json!({"role": "user", "content": "browse"})];
        for i in 0..14 {
            items.push(
                json!({"type": "function_call", "call_id": format!("call_{i}"),
                "name": "browser_screenshot", "arguments": "{}", "status": "completed"}),
            );
            items.push(json!({"type": "function_call_output", "call_id": format!("call_{i}"),
                "output": [{"type": "input_text", "text": "ok"},
                    {"type": "input_image", "image_url": format!("data:image/png;base64,{i:08}")}]}));
        }
        let is_browser = |name: &str| name.starts_with("browser_");
        let out = project(
            &items,
            &ContextConfig::default(),
            &mut ProjectionState::default(),
            &is_browser,
            None,
            &mut CallerCuts::default(),
        )
        .unwrap();
        assert_valid(&out);
        assert_eq!(out.len(), items.len(), "no call leaves");
        let (_, images) = measure(&out);
        assert_eq!(images, 14 - 9);
        assert_eq!(out[2]["output"][1]["text"], DROPPED_SCREENSHOT);
    }
}
