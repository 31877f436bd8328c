//! Claude's side of the context: screenshots in `tool_result` blocks dropped in batches,
//! exchanges dropped by the budget, and cache breakpoints after the tools and on the last
//! `tool_result` of the most recent turns, moved forward each turn — at most four in all.
//!
//! Screenshots pile up (1,000–1,800 input tokens each), and a request with more than 20 images
//! makes every image subject to a 2,000 px per-side limit. Dropping one old screenshot per turn
//! would change the prompt's prefix every turn and defeat the cache, so old screenshots are
//! dropped in batches (see [`super::DEFAULT_DROP_EVERY`]).
//!
//! Spec: claude-computer-use-tool, "Gestionar el historial de capturas de pantalla".

use base64::Engine as _;
use serde_json::{Value, json};

use super::{
    BudgetExceeded, ContextConfig, ContextManagement, DEFAULT_KEEP_SCREENSHOTS, DROPPED_SCREENSHOT,
    ProjectionState, fits, omitted_receipt, scheduled,
};

/// The API's limit on `cache_control` breakpoints per request.
pub const MAX_CACHE_BREAKPOINTS: usize = 4;
/// Above this many images in one request, each image's sides must be at most
/// [`MANY_IMAGES_MAX_SIDE`].
pub const MANY_IMAGES: usize = 20;
/// The per-side limit when a request holds more than [`MANY_IMAGES`] images.
pub const MANY_IMAGES_MAX_SIDE: u32 = 2000;

/// What a pruning pass did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PruneReport {
    /// Screenshots in tool results before the pass.
    pub before: usize,
    /// Screenshots dropped.
    pub dropped: usize,
    /// Whether the drop happened off the batch schedule because the request would otherwise
    /// hold more than 20 images with one over 2,000 px on a side.
    pub forced: bool,
}

/// Where an image block sits: message, block in the message, block in the tool result.
type ImageAt = (usize, usize, usize);

/// The image blocks inside `tool_result` blocks of user messages, oldest first.
fn tool_result_images(messages: &[Value]) -> Vec<ImageAt> {
    let mut found = Vec::new();
    for (m, message) in messages.iter().enumerate() {
        if message.get("role").and_then(Value::as_str) != Some("user") {
            continue;
        }
        let Some(blocks) = message.get("content").and_then(Value::as_array) else {
            continue;
        };
        for (b, block) in blocks.iter().enumerate() {
            if block.get("type").and_then(Value::as_str) != Some("tool_result") {
                continue;
            }
            if let Some(content) = block.get("content").and_then(Value::as_array) {
                for (c, item) in content.iter().enumerate() {
                    if item.get("type").and_then(Value::as_str) == Some("image") {
                        found.push((m, b, c));
                    }
                }
            }
        }
    }
    found
}

/// Counts the image blocks in a value (a block, a content list, a message's content).
fn images_in(v: &Value) -> usize {
    match v {
        Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("image") => 1,
        Value::Object(o) => o.get("content").map_or(0, images_in),
        Value::Array(items) => items.iter().map(images_in).sum(),
        _ => 0,
    }
}

/// Counts every image block of a request's messages (tool results and plain user images).
pub fn count_images(messages: &[Value]) -> usize {
    messages
        .iter()
        .map(|m| m.get("content").map_or(0, images_in))
        .sum()
}

/// The pixel size of a base64 PNG or JPEG image block, read from its header.
pub fn image_block_size(block: &Value) -> Option<(u32, u32)> {
    let data = block.pointer("/source/data")?.as_str()?;
    // A PNG's size sits in its first 24 bytes (32 base64 characters); a JPEG's SOF marker can be
    // anywhere, so the whole image is decoded for JPEGs only.
    let head = base64::engine::general_purpose::STANDARD
        .decode(data.get(..32)?)
        .ok()?;
    if head.starts_with(b"\x89PNG\r\n\x1a\n") && head.len() >= 24 {
        let w = u32::from_be_bytes(head[16..20].try_into().ok()?);
        let h = u32::from_be_bytes(head[20..24].try_into().ok()?);
        return Some((w, h));
    }
    if head.starts_with(&[0xff, 0xd8]) {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data)
            .ok()?;
        return jpeg_size(&bytes);
    }
    None
}

fn jpeg_size(bytes: &[u8]) -> Option<(u32, u32)> {
    let mut i = 2;
    while i + 9 < bytes.len() {
        if bytes[i] != 0xff {
            return None;
        }
        let marker = bytes[i + 1];
        let len = usize::from(u16::from_be_bytes([bytes[i + 2], bytes[i + 3]]));
        // SOF0..SOF15 except DHT (c4), JPG (c8) and DAC (cc) carry the frame size.
        if (0xc0..=0xcf).contains(&marker) && ![0xc4, 0xc8, 0xcc].contains(&marker) {
            let h = u32::from(u16::from_be_bytes([bytes[i + 5], bytes[i + 6]]));
            let w = u32::from(u16::from_be_bytes([bytes[i + 7], bytes[i + 8]]));
            return Some((w, h));
        }
        i += 2 + len;
    }
    None
}

/// Drops old screenshots from tool results: the oldest beyond `keep`, in whole batches of
/// `drop_every` (none on schedule when `None`), and at least the `min_cut` oldest. Whatever the
/// schedule, a request may not hold more than 20 images if any of them is over 2,000 px on a
/// side: then everything beyond `keep` goes now.
pub fn prune_screenshots(
    messages: &mut [Value],
    keep: usize,
    drop_every: Option<usize>,
    min_cut: usize,
) -> PruneReport {
    let images = tool_result_images(messages);
    let before = images.len();
    let excess = before.saturating_sub(keep);
    let client = super::ClientContext {
        keep_screenshots: keep,
        drop_every,
        budget: None,
    };
    let planned = scheduled(before, &client).max(min_cut.min(excess));
    let remaining = count_images(messages) - planned;
    let oversized = || {
        images[planned..].iter().any(|&(m, b, c)| {
            image_block_size(&messages[m]["content"][b]["content"][c])
                .is_some_and(|(w, h)| w.max(h) > MANY_IMAGES_MAX_SIDE)
        })
    };
    let (n_drop, forced) = if remaining > MANY_IMAGES && excess > planned && oversized() {
        (excess, true)
    } else {
        (planned, false)
    };
    for &(m, b, c) in &images[..n_drop] {
        messages[m]["content"][b]["content"][c] =
            json!({"type": "text", "text": DROPPED_SCREENSHOT});
    }
    PruneReport {
        before,
        dropped: n_drop,
        forced,
    }
}

/// An exchange the budget may drop: an assistant turn of tool uses and the user turn that
/// holds only their results.
#[derive(Debug, Clone)]
struct Exchange {
    /// The assistant message (the results are the next one).
    at: usize,
    /// Its tool uses, as the receipt names them.
    calls: Vec<String>,
}

/// The exchanges the budget may drop, oldest first: not the task, not the latest exchange (the
/// current observation), none holding one of the kept screenshots, none whose user turn holds
/// more than results (a person's text), and only where dropping keeps the roles alternating.
fn droppable_exchanges(
    history: &[Value],
    first_kept_image: Option<(usize, usize, usize)>,
) -> Vec<Exchange> {
    let role = |m: usize| {
        history
            .get(m)
            .and_then(|v| v.get("role"))
            .and_then(Value::as_str)
    };
    let blocks = |m: usize| {
        history
            .get(m)
            .and_then(|v| v.get("content"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
    };
    let last_exchange = (1..history.len().saturating_sub(1))
        .rev()
        .find(|&m| role(m) == Some("assistant") && role(m + 1) == Some("user"));
    let mut found = Vec::new();
    for m in 1..history.len().saturating_sub(1) {
        if Some(m) == last_exchange {
            break;
        }
        if role(m) != Some("assistant")
            || role(m - 1) != Some("user")
            || role(m + 1) != Some("user")
            || role(m + 2).is_some_and(|r| r != "assistant")
        {
            continue;
        }
        let calls: Vec<String> = blocks(m)
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
            .map(|b| {
                format!(
                    "{} ({})",
                    b.get("id").and_then(Value::as_str).unwrap_or(""),
                    b.get("name").and_then(Value::as_str).unwrap_or("")
                )
            })
            .collect();
        let results = blocks(m + 1);
        let only_results = !results.is_empty()
            && results
                .iter()
                .all(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"));
        let holds_kept = first_kept_image.is_some_and(|(km, _, _)| m + 1 >= km);
        if calls.is_empty() || !only_results || holds_kept {
            continue;
        }
        found.push(Exchange { at: m, calls });
    }
    found
}

/// Bytes and images of a projected request's messages.
fn measure(out: &[Option<Value>]) -> (usize, usize) {
    let kept: Vec<&Value> = out.iter().flatten().collect();
    let bytes = serde_json::to_vec(&kept).map_or(usize::MAX, |v| v.len());
    let images = kept
        .iter()
        .map(|m| m.get("content").map_or(0, images_in))
        .sum();
    (bytes, images)
}

/// The history with the oldest `cut` screenshots dropped and the first `dropped` exchanges
/// removed (named in a receipt added to the task's message).
fn apply(history: &[Value], keep: usize, cut: usize, exchanges: &[Exchange]) -> Vec<Option<Value>> {
    let mut values = history.to_vec();
    prune_screenshots(&mut values, keep, None, cut);
    let mut out: Vec<Option<Value>> = values.into_iter().map(Some).collect();
    let mut calls = Vec::new();
    for exchange in exchanges {
        out[exchange.at] = None;
        out[exchange.at + 1] = None;
        calls.extend(exchange.calls.iter().cloned());
    }
    if !calls.is_empty()
        && let Some(Some(first)) = out.first_mut()
    {
        let receipt = json!({"type": "text", "text": omitted_receipt(&calls)});
        match first.get_mut("content") {
            Some(Value::Array(blocks)) => blocks.push(receipt),
            Some(content) => {
                let text = content.as_str().unwrap_or_default().to_owned();
                *content = json!([{"type": "text", "text": text}, receipt]);
            }
            None => {}
        }
    }
    out
}

/// Projects the history (messages as JSON) into the next request's messages: one entry per
/// message, `None` when dropped. Assistant messages are never changed (the caller sends them
/// verbatim: thinking signatures must come back unchanged).
pub(crate) fn project(
    history: &[Value],
    config: &ContextConfig,
    state: &mut ProjectionState,
) -> Result<Vec<Option<Value>>, BudgetExceeded> {
    let client = match config.management {
        ContextManagement::Native(_) => {
            // The server clears; hands only keeps the request under the 20-image rule.
            let mut values = history.to_vec();
            prune_screenshots(&mut values, DEFAULT_KEEP_SCREENSHOTS, None, 0);
            return Ok(values.into_iter().map(Some).collect());
        }
        ContextManagement::Client(client) => client,
    };
    let keep = client.keep_screenshots;
    let images = tool_result_images(history);
    let excess = images.len().saturating_sub(keep);
    let first_kept = images.get(excess).copied();
    let exchanges = droppable_exchanges(history, first_kept);
    let mut cut = scheduled(images.len(), &client).max(state.screenshots_cut.min(excess));
    let mut dropped = state.calls_dropped.min(exchanges.len());
    let mut out = apply(history, keep, cut, &exchanges[..dropped]);
    let Some(budget) = client.budget else {
        return Ok(out);
    };
    let (mut bytes, mut n_images) = measure(&out);
    if fits(budget, bytes, n_images, false) {
        return Ok(out);
    }
    if cut < excess {
        // First every screenshot but the kept ones.
        cut = excess;
        state.screenshots_cut = cut;
        out = apply(history, keep, cut, &exchanges[..dropped]);
        (bytes, n_images) = measure(&out);
    }
    if !fits(budget, bytes, n_images, false) {
        // Then the oldest exchanges, until there is room.
        let mut estimate = (bytes, n_images);
        while !fits(budget, estimate.0, estimate.1, true) && dropped < exchanges.len() {
            let at = exchanges[dropped].at;
            let pair = [out[at].clone(), out[at + 1].clone()];
            let (b, i) = measure(&pair);
            estimate = (estimate.0.saturating_sub(b), estimate.1.saturating_sub(i));
            dropped += 1;
        }
        state.calls_dropped = dropped;
        out = apply(history, keep, cut, &exchanges[..dropped]);
        (bytes, n_images) = measure(&out);
    }
    if fits(budget, bytes, n_images, false) {
        Ok(out)
    } else {
        Err(BudgetExceeded {
            input_bytes: bytes,
            input_images: n_images,
        })
    }
}

fn strip_cache_control(v: &mut Value) {
    match v {
        Value::Object(o) => {
            o.remove("cache_control");
            if let Some(content) = o.get_mut("content") {
                strip_cache_control(content);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_cache_control),
        _ => {}
    }
}

/// Counts `cache_control` markers anywhere in a value.
pub fn count_breakpoints(v: &Value) -> usize {
    match v {
        Value::Object(o) => {
            usize::from(o.contains_key("cache_control"))
                + o.values().map(count_breakpoints).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(count_breakpoints).sum(),
        _ => 0,
    }
}

/// Places the request's cache breakpoints: one after the tools (on the last tool, or the last
/// system block when there are no tools), and one on the last `tool_result` of each of the most
/// recent `turn_breakpoints` user turns that have results. Markers this function placed on
/// earlier turns are removed first, so they move forward; the total never exceeds
/// [`MAX_CACHE_BREAKPOINTS`].
pub fn place_breakpoints(
    system: &mut Value,
    tools: &mut [Value],
    messages: &mut [Value],
    turn_breakpoints: usize,
) -> usize {
    let ephemeral = json!({"type": "ephemeral"});
    messages.iter_mut().for_each(|m| {
        if let Some(content) = m.get_mut("content") {
            strip_cache_control(content);
        }
    });
    let mut used = count_breakpoints(system) + tools.iter().map(count_breakpoints).sum::<usize>();
    if used == 0 {
        if let Some(last) = tools.last_mut().and_then(Value::as_object_mut) {
            last.insert("cache_control".into(), ephemeral.clone());
            used += 1;
        } else if let Value::String(text) = system
            && !text.is_empty()
        {
            *system = json!([{"type": "text", "text": text.clone(), "cache_control": ephemeral}]);
            used += 1;
        } else if let Some(last) = system
            .as_array_mut()
            .and_then(|blocks| blocks.last_mut())
            .and_then(Value::as_object_mut)
        {
            last.insert("cache_control".into(), ephemeral.clone());
            used += 1;
        }
    }
    let budget = MAX_CACHE_BREAKPOINTS
        .saturating_sub(used)
        .min(turn_breakpoints);
    let mut placed = 0;
    for message in messages.iter_mut().rev() {
        if placed == budget {
            break;
        }
        if message.get("role").and_then(Value::as_str) != Some("user") {
            continue;
        }
        let Some(blocks) = message.get_mut("content").and_then(Value::as_array_mut) else {
            continue;
        };
        if let Some(last_result) = blocks
            .iter_mut()
            .rev()
            .find(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            .and_then(Value::as_object_mut)
        {
            last_result.insert("cache_control".into(), ephemeral.clone());
            placed += 1;
        }
    }
    used + placed
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A base64 PNG header claiming `w`x`h` (enough for the size reader).
    fn png_block(w: u32, h: u32) -> Value {
        let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        bytes.extend_from_slice(&w.to_be_bytes());
        bytes.extend_from_slice(&h.to_be_bytes());
        bytes.extend_from_slice(&[8, 2, 0, 0, 0, 0, 0, 0, 0]);
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png",
               "data": base64::engine::general_purpose::STANDARD.encode(bytes)}})
    }

    /// A conversation of `turns` turns, each answered with one screenshot of `w`x`h`.
    fn conversation(turns: usize, w: u32, h: u32) -> Vec<Value> {
        let mut messages = vec![json!({"role": "user", "content": "do the task"})];
        for i in 0..turns {
            messages.push(json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": format!("toolu_{i}"), "name": "screenshot",
                 "toolset_name": "computer", "input": {}}]}));
            messages.push(json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": format!("toolu_{i}"), "toolset_name": "computer",
                 "content": [png_block(w, h)]}]}));
        }
        messages
    }

    #[test]
    fn drops_in_batches_so_the_prefix_holds_between_drops() {
        let mut prefixes = Vec::new();
        let mut drops = Vec::new();
        let mut messages = conversation(0, 1280, 800);
        for turn in 0..60 {
            let more = conversation(1, 1280, 800);
            messages.extend(more.into_iter().skip(1).map(|mut m| {
                // Unique ids per turn.
                let s = m.to_string().replace("toolu_0", &format!("toolu_t{turn}"));
                m = serde_json::from_str(&s).unwrap();
                m
            }));
            let report = prune_screenshots(&mut messages, 3, Some(25), 0);
            drops.push(report.dropped);
            prefixes.push(serde_json::to_string(&messages).unwrap());
        }
        // Drops happen only when 25 have accumulated beyond the 3 kept: at 28 and 53 images.
        let when: Vec<usize> = drops
            .iter()
            .enumerate()
            .filter(|(_, d)| **d > 0)
            .map(|(i, _)| i + 1)
            .collect();
        assert_eq!(when, vec![28, 53]);
        assert!(drops.iter().all(|d| *d == 0 || *d == 25));
        // Between drops, each request's prefix is byte-identical to the previous request.
        for turn in 1..60 {
            if drops[turn] == 0 {
                assert!(
                    prefixes[turn].starts_with(&prefixes[turn - 1][..prefixes[turn - 1].len() - 1])
                );
            }
        }
        assert_eq!(tool_result_images(&messages).len(), 60 - 50);
    }

    #[test]
    fn twenty_images_over_2000px_forces_a_drop() {
        let mut small = conversation(21, 1280, 800);
        assert_eq!(prune_screenshots(&mut small, 3, Some(25), 0).dropped, 0);
        let mut big = conversation(21, 2419, 1512);
        let report = prune_screenshots(&mut big, 3, Some(25), 0);
        assert!(report.forced);
        assert_eq!(report.dropped, 18);
        assert_eq!(count_images(&big), 3);
        // Nothing on schedule (server clearing, or keep-all), but the rule still holds.
        let mut many = conversation(40, 1280, 800);
        assert_eq!(prune_screenshots(&mut many, 3, None, 0).dropped, 0);
        let mut many_big = conversation(22, 2500, 1400);
        assert!(prune_screenshots(&mut many_big, 3, None, 0).forced);
    }

    #[test]
    fn breakpoints_move_forward_and_never_exceed_four() {
        let mut messages = conversation(6, 1280, 800);
        let mut system = json!("You operate a desktop.");
        let mut tools = vec![
            json!({"type": "computer_toolset_20260801"}),
            json!({"name": "bash", "type": "bash_20250124"}),
        ];
        assert_eq!(
            place_breakpoints(&mut system, &mut tools, &mut messages, 3),
            4
        );
        assert!(tools[1].get("cache_control").is_some());
        let total = count_breakpoints(&Value::Array(messages.clone()))
            + count_breakpoints(&Value::Array(tools.clone()));
        assert_eq!(total, 4);
        // The three most recent results carry them.
        let marked: Vec<usize> = messages
            .iter()
            .enumerate()
            .filter(|(_, m)| count_breakpoints(m) > 0)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(marked, vec![8, 10, 12]);
        // Next turn: they move forward.
        messages.extend(conversation(1, 1280, 800).into_iter().skip(1));
        place_breakpoints(&mut system, &mut tools, &mut messages, 3);
        let marked: Vec<usize> = messages
            .iter()
            .enumerate()
            .filter(|(_, m)| count_breakpoints(m) > 0)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(marked, vec![10, 12, 14]);
        // With no tools, the system prompt carries the first one.
        let mut no_tools: Vec<Value> = vec![];
        let mut system = json!("sys");
        place_breakpoints(&mut system, &mut no_tools, &mut messages, 3);
        assert_eq!(system[0]["cache_control"], json!({"type": "ephemeral"}));
    }

    /// A conversation of `turns` turns, each answered with a distinct screenshot and `pad`
    /// bytes of text.
    fn distinct(turns: usize, pad: usize) -> Vec<Value> {
        let mut messages = vec![json!({"role": "user", "content": "do the task"})];
        for i in 0..turns {
            let width = u32::try_from(1000 + i).unwrap();
            messages.push(json!({"role": "assistant", "content": [
                {"type": "text", "text": "Next."},
                {"type": "tool_use", "id": format!("toolu_{i}"), "name": "left_click",
                 "toolset_name": "computer", "input": {"coordinate": [i, i]}}]}));
            messages.push(json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": format!("toolu_{i}"), "toolset_name": "computer",
                 "content": [{"type": "text", "text": "x".repeat(pad)}, png_block(width, 800)]}]}));
        }
        messages
    }

    fn sent(out: &[Option<Value>]) -> Vec<Value> {
        out.iter().flatten().cloned().collect()
    }

    /// Roles alternate from a user message, and every `tool_use` is answered by exactly one
    /// `tool_result` in the next message (and every result answers one).
    pub(crate) fn assert_valid(messages: &[Value]) {
        assert_eq!(messages[0]["role"], "user");
        for pair in messages.windows(2) {
            assert_ne!(pair[0]["role"], pair[1]["role"], "roles alternate");
        }
        let ids = |m: &Value, ty: &str, key: &str| -> Vec<String> {
            m["content"]
                .as_array()
                .map(|b| {
                    b.iter()
                        .filter(|b| b["type"] == ty)
                        .map(|b| b[key].as_str().unwrap().to_owned())
                        .collect()
                })
                .unwrap_or_default()
        };
        for (i, m) in messages.iter().enumerate() {
            if m["role"] == "assistant" {
                let uses = ids(m, "tool_use", "id");
                if let Some(next) = messages.get(i + 1) {
                    assert_eq!(uses, ids(next, "tool_result", "tool_use_id"), "message {i}");
                }
            } else if i > 0 {
                assert_eq!(
                    ids(&messages[i - 1], "tool_use", "id"),
                    ids(m, "tool_result", "tool_use_id")
                );
            }
        }
    }

    /// The data of every image in the messages, in order.
    fn image_data(messages: &[Value]) -> Vec<String> {
        tool_result_images(messages)
            .iter()
            .map(|&(m, b, c)| {
                messages[m]["content"][b]["content"][c]["source"]["data"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect()
    }

    #[test]
    fn the_last_three_screenshots_and_every_pairing_stay_through_fifty_turns() {
        let config = ContextConfig::default();
        let mut state = ProjectionState::default();
        let mut previous = String::new();
        let mut drops = 0;
        for turns in 1..=50 {
            let history = distinct(turns, 10);
            let out = sent(&project(&history, &config, &mut state).unwrap());
            assert_valid(&out);
            let all = image_data(&history);
            let visible = image_data(&out);
            let last3 = &all[all.len().saturating_sub(3)..];
            assert_eq!(
                &visible[visible.len() - last3.len()..],
                last3,
                "turn {turns}"
            );
            assert!(visible.len() <= 3 + 8, "turn {turns}: {}", visible.len());
            let text = serde_json::to_string(&out).unwrap();
            // Between drops, each request extends the previous one byte for byte.
            if text.starts_with(&previous[..previous.len().saturating_sub(1)]) {
            } else {
                drops += 1;
            }
            previous = text;
        }
        // 50 screenshots, 3 kept: drops at 12, 21, 30, 39 and 48 screenshots.
        assert_eq!(drops, 5);
    }

    #[test]
    fn a_budget_drops_the_oldest_exchanges_with_a_receipt_never_the_current_ones() {
        let config = ContextConfig {
            management: ContextManagement::Client(super::super::ClientContext {
                budget: Some(super::super::ContextBudget {
                    max_input_bytes: 60_000,
                    max_input_images: 5,
                }),
                ..super::super::ClientContext::default()
            }),
            ..ContextConfig::default()
        };
        let mut state = ProjectionState::default();
        let mut dropped = 0;
        for turns in 1..=40 {
            let history = distinct(turns, 2_000);
            let out = sent(&project(&history, &config, &mut state).unwrap());
            assert_valid(&out);
            let (bytes, images) = measure(&project(&history, &config, &mut state.clone()).unwrap());
            assert!(
                bytes <= 60_000 && images <= 5,
                "turn {turns}: {bytes} bytes, {images} images"
            );
            // The current exchange and the last three screenshots are always there.
            let all = image_data(&history);
            let visible = image_data(&out);
            assert!(visible.ends_with(&all[all.len().saturating_sub(3)..]));
            assert_eq!(out.last(), history.last());
            assert!(state.calls_dropped >= dropped, "only grows");
            dropped = state.calls_dropped;
            if dropped > 0 {
                let receipt = out[0]["content"][1]["text"].as_str().unwrap();
                assert!(receipt.starts_with(super::super::OMITTED_CALLS_PREFIX));
                assert!(receipt.contains("toolu_0 (left_click)"));
            }
        }
        assert!(dropped > 10, "{dropped}");
        // A budget nothing can meet stops.
        let tiny = ContextConfig {
            management: ContextManagement::Client(super::super::ClientContext {
                budget: Some(super::super::ContextBudget {
                    max_input_bytes: 100,
                    max_input_images: 3,
                }),
                ..super::super::ClientContext::default()
            }),
            ..ContextConfig::default()
        };
        let over = project(&distinct(5, 10), &tiny, &mut ProjectionState::default());
        assert!(over.is_err());
    }

    #[test]
    fn reads_png_and_jpeg_sizes() {
        assert_eq!(image_block_size(&png_block(1280, 800)), Some((1280, 800)));
        let pixels = hands_jpeg();
        let block = json!({"type": "image", "source": {"type": "base64", "media_type": "image/jpeg",
            "data": base64::engine::general_purpose::STANDARD.encode(&pixels)}});
        assert_eq!(image_block_size(&block), Some((3, 2)));
    }

    /// A minimal JPEG header with an SOF0 of 3x2.
    fn hands_jpeg() -> Vec<u8> {
        let mut b = vec![0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10];
        b.extend_from_slice(&[0; 14]);
        b.extend_from_slice(&[0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0x02, 0x00, 0x03]);
        b.extend_from_slice(&[0; 12]);
        b
    }
}
