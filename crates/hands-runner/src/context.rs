//! Screenshot history and prompt-cache breakpoints for long Claude runs.
//!
//! Screenshots pile up (1,000–1,800 input tokens each), and a request with more than 20 images
//! makes every image subject to a 2,000 px per-side limit. Dropping one old screenshot per turn
//! would change the prompt's prefix every turn and defeat the cache, so old screenshots are
//! dropped in batches: the last N are kept, and the older ones go only when K of them have
//! accumulated, so the prefix stays byte-identical between two drops. Breakpoints go after the
//! tools (and system), and on the last `tool_result` of the most recent turns, moved forward each
//! turn — at most four in all.
//!
//! Spec: claude-computer-use-tool, "Gestionar el historial de capturas de pantalla".

use base64::Engine as _;
use serde_json::{Value, json};

/// The API's limit on `cache_control` breakpoints per request.
pub const MAX_CACHE_BREAKPOINTS: usize = 4;
/// Above this many images in one request, each image's sides must be at most
/// [`MANY_IMAGES_MAX_SIDE`].
pub const MANY_IMAGES: usize = 20;
/// The per-side limit when a request holds more than [`MANY_IMAGES`] images.
pub const MANY_IMAGES_MAX_SIDE: u32 = 2000;
/// The text that takes the place of a dropped screenshot.
pub const DROPPED_SCREENSHOT: &str = "[an older screenshot was removed to save context]";
/// The beta header of server-side context editing.
pub const CONTEXT_MANAGEMENT_BETA: &str = "context-management-2025-06-27";
/// The server-side tool-result clearing edit type.
pub const CLEAR_TOOL_USES_EDIT: &str = "clear_tool_uses_20250919";

/// Who drops old screenshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PruneMode {
    /// hands drops them from the request, in batches.
    #[default]
    Client,
    /// The server's tool-result clearing does (recommended for models where removing a
    /// screenshot invalidates later thinking blocks); hands only adds the edit. Screenshots should
    /// then be sized to at most 2,000 px per side.
    ServerClearing,
}

/// Screenshot history settings. Defaults follow the spec: keep 3, drop every 25.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryConfig {
    /// Screenshots always kept, the most recent ones.
    pub keep: usize,
    /// Older screenshots are dropped only when this many have accumulated beyond `keep`.
    pub drop_every: usize,
    /// Who drops them.
    pub mode: PruneMode,
    /// Turns that get a cache breakpoint on their last tool result (at most 3 with the one after
    /// the tools).
    pub turn_breakpoints: usize,
}

impl Default for HistoryConfig {
    fn default() -> HistoryConfig {
        HistoryConfig {
            keep: 3,
            drop_every: 25,
            mode: PruneMode::Client,
            turn_breakpoints: 3,
        }
    }
}

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

/// Counts every image block of a request's messages (tool results and plain user images).
pub fn count_images(messages: &[Value]) -> usize {
    fn walk(v: &Value) -> usize {
        match v {
            Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("image") => 1,
            Value::Object(o) => o.get("content").map_or(0, walk),
            Value::Array(items) => items.iter().map(walk).sum(),
            _ => 0,
        }
    }
    messages
        .iter()
        .map(|m| m.get("content").map_or(0, walk))
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

/// Drops old screenshots from tool results, in batches (see the module doc). In
/// [`PruneMode::ServerClearing`] it drops nothing unless the 20-image rule forces it.
pub fn prune_screenshots(messages: &mut [Value], config: &HistoryConfig) -> PruneReport {
    let images = tool_result_images(messages);
    let before = images.len();
    let excess = before.saturating_sub(config.keep);
    let scheduled = match config.mode {
        PruneMode::Client if config.drop_every > 0 && excess >= config.drop_every => {
            excess - excess % config.drop_every
        }
        _ => 0,
    };
    // Whatever the schedule, a request may not hold more than 20 images if any of them is over
    // 2,000 px on a side: then everything beyond `keep` goes now.
    let remaining = count_images(messages) - scheduled;
    let oversized = || {
        images[scheduled..].iter().any(|&(m, b, c)| {
            image_block_size(&messages[m]["content"][b]["content"][c])
                .is_some_and(|(w, h)| w.max(h) > MANY_IMAGES_MAX_SIDE)
        })
    };
    let (n_drop, forced) = if remaining > MANY_IMAGES && excess > scheduled && oversized() {
        (excess, true)
    } else {
        (scheduled, false)
    };
    for &(m, b, c) in &images[..n_drop] {
        messages[m]["content"][b]["content"][c] =
            json!({"type": "text", "text": DROPPED_SCREENSHOT});
    }
    if n_drop > 0 {
        tracing::info!(before, dropped = n_drop, forced, "dropped old screenshots");
    }
    PruneReport {
        before,
        dropped: n_drop,
        forced,
    }
}

/// The `context_management` edit that leaves screenshot clearing to the server, keeping the
/// last `keep` tool uses. Send it with the [`CONTEXT_MANAGEMENT_BETA`] header.
pub fn server_clearing_edit(keep: usize) -> Value {
    json!({"edits": [{
        "type": CLEAR_TOOL_USES_EDIT,
        "trigger": {"type": "input_tokens", "value": 30_000},
        "keep": {"type": "tool_uses", "value": keep},
        "clear_at_least": {"type": "input_tokens", "value": 5_000},
    }]})
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
        let config = HistoryConfig::default();
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
            let report = prune_screenshots(&mut messages, &config);
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
        let config = HistoryConfig::default();
        let mut small = conversation(21, 1280, 800);
        assert_eq!(prune_screenshots(&mut small, &config).dropped, 0);
        let mut big = conversation(21, 2419, 1512);
        let report = prune_screenshots(&mut big, &config);
        assert!(report.forced);
        assert_eq!(report.dropped, 18);
        assert_eq!(count_images(&big), 3);
        // Server clearing drops nothing on schedule, but the rule still holds.
        let server = HistoryConfig {
            mode: PruneMode::ServerClearing,
            ..config
        };
        let mut many = conversation(40, 1280, 800);
        assert_eq!(prune_screenshots(&mut many, &server).dropped, 0);
        let mut many_big = conversation(22, 2500, 1400);
        assert!(prune_screenshots(&mut many_big, &server).forced);
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
