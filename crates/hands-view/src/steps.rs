//! A run directory's `log.jsonl` read as steps: for each request/response, the model's text and
//! its calls (arguments as sent), then each action's timing, error and result text, the images
//! before and after it, and the point or path it aimed at (in screenshot pixels).
//!
//! Both model APIs' shapes are read: Anthropic `content` blocks (`text`, `tool_use`,
//! `tool_result`) and OpenAI `output` / `input` items (`message`, `computer_call`,
//! `function_call`, `function_call_output`).

use serde::Serialize;
use serde_json::{Value, json};

/// One action of a step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActionView {
    /// The call id.
    pub call_id: String,
    /// The tool or member (`left_click`, `browser_click`, `bash` …).
    pub name: String,
    /// The arguments as the model sent them.
    pub arguments: Value,
    /// How long it took, in ms (absent while it has not run).
    pub ms: Option<f64>,
    /// Whether it failed or was refused.
    pub is_error: Option<bool>,
    /// What the model was told (text; images are files).
    pub result: Option<String>,
    /// The screenshot the model had before it.
    pub image_before: Option<String>,
    /// That screenshot's size as the model saw it, `[width, height]` (the points are in its
    /// pixels; a trace may store it smaller).
    pub image_before_size: Option<[u32; 2]>,
    /// The screenshot it got back.
    pub image_after: Option<String>,
    /// Where it aimed: `[x, y]` in screenshot pixels.
    pub point: Option<[f64; 2]>,
    /// A drag's path, in screenshot pixels.
    pub path: Option<Vec<[f64; 2]>>,
    /// The browser's requests recorded by the time it was answered (since the action before):
    /// method, URL without query, kind, status, failure, refusal, bytes.
    pub network: Vec<Value>,
    /// The DOM snapshot taken after it (`dom/HASH.html`'s file name), for a browser run.
    pub dom: Option<String>,
}

/// One request and what came of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepView {
    /// The step number, from 1.
    pub step: u64,
    /// How long the model took, in ms.
    pub model_ms: Option<u64>,
    /// The model's text.
    pub text: Vec<String>,
    /// Its calls, in order.
    pub actions: Vec<ActionView>,
    /// After this step a person held the wheel: what the model was told they did.
    pub handoff: Option<String>,
    /// When the model's answer was logged, ms on the log's clock (`t_ms`).
    pub t_ms: Option<u64>,
}

/// The run's video (`hands run --video`): its file and when its first frame was taken.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VideoView {
    /// The file in the run directory (`video.webm`).
    pub file: String,
    /// When the video starts, ms on the log's clock: a step at `t_ms` is at
    /// `(t_ms - this) / 1000` seconds into the video.
    pub t_ms: u64,
}

/// The run as a whole.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunView {
    /// The task and settings (`start` line).
    pub start: Option<Value>,
    /// The steps.
    pub steps: Vec<StepView>,
    /// The video, if the run recorded one (the last, for a resumed run).
    pub video: Option<VideoView>,
}

/// A run's video file name: `video.webm` or `video-N.webm`, no separators.
pub fn video_name_ok(name: &str) -> bool {
    name.strip_prefix("video")
        .and_then(|rest| rest.strip_suffix(".webm"))
        .is_some_and(|mid| {
            mid.is_empty()
                || mid
                    .strip_prefix('-')
                    .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        })
}

/// A DOM snapshot's file name: 16 lowercase hex digits and `.html`.
pub fn dom_name_ok(name: &str) -> bool {
    name.strip_suffix(".html").is_some_and(|hash| {
        hash.len() == 16 && hash.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'))
    })
}

fn point_of(value: &Value) -> Option<[f64; 2]> {
    match value {
        Value::Array(xy) if xy.len() == 2 => Some([xy[0].as_f64()?, xy[1].as_f64()?]),
        Value::Object(p) => Some([p.get("x")?.as_f64()?, p.get("y")?.as_f64()?]),
        _ => None,
    }
}

/// The point and path an action aims at: Anthropic `coordinate` / `start_coordinate`, OpenAI
/// `x`/`y` and drag `path`, the browser toolset's `x`/`y` and `path`.
fn aim(arguments: &Value) -> (Option<[f64; 2]>, Option<Vec<[f64; 2]>>) {
    let action = arguments.get("action").unwrap_or(arguments);
    if let Some(Value::Array(path)) = action.get("path") {
        let path: Vec<[f64; 2]> = path.iter().filter_map(point_of).collect();
        return (path.last().copied(), (path.len() >= 2).then_some(path));
    }
    if let (Some(start), Some(end)) = (
        action.get("start_coordinate").and_then(point_of),
        action.get("coordinate").and_then(point_of),
    ) {
        return (Some(end), Some(vec![start, end]));
    }
    if let Some(p) = action.get("coordinate").and_then(point_of) {
        return (Some(p), None);
    }
    if let (Some(x), Some(y)) = (
        action.get("x").and_then(Value::as_f64),
        action.get("y").and_then(Value::as_f64),
    ) {
        return (Some([x, y]), None);
    }
    (None, None)
}

/// A message's text: a string, or its blocks' texts one per line.
pub(crate) fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The calls and text of a response body.
fn read_response(body: &Value, step: &mut StepView) {
    // Anthropic: `content` blocks.
    for block in body["content"].as_array().into_iter().flatten() {
        match block["type"].as_str() {
            Some("text") => step
                .text
                .push(block["text"].as_str().unwrap_or("").to_owned()),
            Some("tool_use") => step.actions.push(action(
                block["id"].as_str().unwrap_or(""),
                block["name"].as_str().unwrap_or(""),
                block["input"].clone(),
            )),
            _ => {}
        }
    }
    // OpenAI: `output` items.
    for item in body["output"].as_array().into_iter().flatten() {
        match item["type"].as_str() {
            Some("message") => step.text.push(text_of(&item["content"])),
            Some("computer_call") => {
                let arguments = match (item.get("action"), item.get("actions")) {
                    (Some(a), _) => json!({"action": a}),
                    (None, Some(all)) => json!({"actions": all}),
                    _ => Value::Null,
                };
                let name = item["action"]["type"].as_str().unwrap_or("computer_call");
                step.actions.push(action(
                    item["call_id"].as_str().unwrap_or(""),
                    name,
                    arguments,
                ));
            }
            Some("function_call") => {
                let arguments = item["arguments"]
                    .as_str()
                    .and_then(|a| serde_json::from_str(a).ok())
                    .unwrap_or(Value::Null);
                step.actions.push(action(
                    item["call_id"].as_str().unwrap_or(""),
                    item["name"].as_str().unwrap_or(""),
                    arguments,
                ));
            }
            _ => {}
        }
    }
}

pub(crate) fn action(call_id: &str, name: &str, arguments: Value) -> ActionView {
    let (point, path) = aim(&arguments);
    ActionView {
        call_id: call_id.to_owned(),
        name: name.to_owned(),
        arguments,
        ms: None,
        is_error: None,
        result: None,
        image_before: None,
        image_before_size: None,
        image_after: None,
        point,
        path,
        network: Vec::new(),
        dom: None,
    }
}

/// The answers a request body carries for earlier calls: (call id, text).
fn read_results(body: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(last) = body["messages"].as_array().and_then(|m| m.last()) {
        for block in last["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                out.push((
                    block["tool_use_id"].as_str().unwrap_or("").to_owned(),
                    text_of(&block["content"]),
                ));
            }
        }
    }
    for item in body["input"].as_array().into_iter().flatten() {
        if item["type"] == "function_call_output" {
            out.push((
                item["call_id"].as_str().unwrap_or("").to_owned(),
                text_of(&item["output"]),
            ));
        }
    }
    out
}

/// Builds the run's steps from its log lines (lines that are not JSON are skipped: the log of a
/// live run may end in a half-written line).
pub fn read_log(text: &str) -> RunView {
    let mut run = RunView {
        start: None,
        steps: Vec::new(),
        video: None,
    };
    let mut last_image: Option<String> = None;
    let mut last_size: Option<[u32; 2]> = None;
    for line in text.lines() {
        let Ok(entry) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let step_no = entry["step"].as_u64().unwrap_or(0);
        match entry["kind"].as_str() {
            Some("start") => run.start = Some(entry.clone()),
            Some("video") => {
                if let Some(file) = entry["file"].as_str().filter(|f| video_name_ok(f)) {
                    run.video = Some(VideoView {
                        file: file.to_owned(),
                        t_ms: entry["t_ms"].as_u64().unwrap_or(0),
                    });
                }
            }
            Some("request") => {
                for (call_id, text) in read_results(&entry["body"]) {
                    if let Some(a) = find_action(&mut run.steps, &call_id) {
                        a.result = Some(text);
                    }
                }
            }
            Some("response") => {
                let mut step = StepView {
                    step: step_no,
                    model_ms: entry["ms"].as_u64(),
                    text: Vec::new(),
                    actions: Vec::new(),
                    handoff: None,
                    t_ms: entry["t_ms"].as_u64(),
                };
                read_response(&entry["body"], &mut step);
                for a in &mut step.actions {
                    a.image_before = last_image.clone();
                    a.image_before_size = last_size;
                }
                run.steps.push(step);
            }
            Some("action") => {
                let call_id = entry["call_id"].as_str().unwrap_or("");
                if let Some(a) = find_action(&mut run.steps, call_id) {
                    a.ms = entry["ms"].as_f64();
                    a.is_error = entry["is_error"].as_bool();
                    if a.result.is_none() {
                        a.result = entry["summary"].as_str().map(str::to_owned);
                    }
                }
            }
            Some("image") => {
                let file = entry["file"].as_str().unwrap_or("").to_owned();
                let call_id = entry["call_id"].as_str().unwrap_or("");
                if let Some(a) = find_action(&mut run.steps, call_id) {
                    a.image_after = Some(file.clone());
                }
                last_image = Some(file);
                last_size = entry["size"].as_str().and_then(|s| {
                    let (w, h) = s.split_once('x')?;
                    Some([w.trim().parse().ok()?, h.trim().parse().ok()?])
                });
            }
            Some("network") => {
                let call_id = entry["call_id"].as_str().unwrap_or("");
                if let (Some(a), Some(requests)) = (
                    find_action(&mut run.steps, call_id),
                    entry["requests"].as_array(),
                ) {
                    a.network.extend(requests.iter().cloned());
                }
            }
            Some("dom") => {
                let call_id = entry["call_id"].as_str().unwrap_or("");
                let file = entry["file"].as_str().and_then(|f| f.strip_prefix("dom/"));
                if let (Some(a), Some(file)) = (find_action(&mut run.steps, call_id), file)
                    && dom_name_ok(file)
                {
                    a.dom = Some(file.to_owned());
                }
            }
            Some("handoff") => {
                if let Some(step) = run.steps.iter_mut().rev().find(|s| s.step <= step_no) {
                    step.handoff = entry["note"].as_str().map(str::to_owned);
                }
            }
            _ => {}
        }
    }
    run
}

fn find_action<'a>(steps: &'a mut [StepView], call_id: &str) -> Option<&'a mut ActionView> {
    steps
        .iter_mut()
        .rev()
        .flat_map(|s| s.actions.iter_mut())
        .find(|a| a.call_id == call_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_anthropic_run_becomes_steps_with_points_images_and_results() {
        let log = [
            json!({"kind": "start", "task": "Write a note"}),
            json!({"kind": "request", "step": 1, "body": {"messages": []}}),
            json!({"kind": "response", "step": 1, "ms": 900, "body": {"content": [
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "toolu_1", "name": "screenshot", "input": {}}]}}),
            json!({"kind": "action", "step": 1, "call_id": "toolu_1", "name": "screenshot",
                   "is_error": false, "ms": 40.5, "summary": ""}),
            json!({"kind": "image", "step": 1, "call_id": "toolu_1", "file": "images/001.png"}),
            json!({"kind": "request", "step": 2, "body": {"messages": [{"role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": []}]}]}}),
            json!({"kind": "response", "step": 2, "ms": 700, "body": {"content": [
                {"type": "tool_use", "id": "toolu_2", "name": "left_click",
                 "input": {"coordinate": [10, 20]}},
                {"type": "tool_use", "id": "toolu_3", "name": "left_click_drag",
                 "input": {"start_coordinate": [1, 2], "coordinate": [3, 4]}}]}}),
            json!({"kind": "action", "step": 2, "call_id": "toolu_2", "name": "left_click",
                   "is_error": true, "ms": 3.0, "summary": "refused"}),
            json!({"kind": "image", "step": 2, "call_id": "toolu_3", "file": "images/002.png"}),
            json!({"kind": "request", "step": 3, "body": {"messages": [{"role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_2",
                             "content": "Error: the person refused"}]}]}}),
        ]
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n")
            + "\n{\"kind\": \"act"; // a half-written last line
        let run = read_log(&log);
        assert_eq!(run.start.unwrap()["task"], "Write a note");
        assert_eq!(run.steps.len(), 2);
        assert_eq!(run.steps[0].text, ["Looking."]);
        assert_eq!(run.steps[0].model_ms, Some(900));
        let shot = &run.steps[0].actions[0];
        assert_eq!(shot.image_after.as_deref(), Some("images/001.png"));
        assert_eq!(shot.ms, Some(40.5));
        let click = &run.steps[1].actions[0];
        assert_eq!(click.point, Some([10.0, 20.0]));
        assert_eq!(click.is_error, Some(true));
        assert_eq!(click.image_before.as_deref(), Some("images/001.png"));
        assert_eq!(click.result.as_deref(), Some("Error: the person refused"));
        let drag = &run.steps[1].actions[1];
        assert_eq!(drag.path, Some(vec![[1.0, 2.0], [3.0, 4.0]]));
        assert_eq!(drag.image_after.as_deref(), Some("images/002.png"));
    }

    #[test]
    fn openai_items_are_read_too() {
        let log = [
            json!({"kind": "response", "step": 1, "body": {"output": [
                {"type": "message", "content": [{"type": "output_text", "text": "On it."}]},
                {"type": "computer_call", "call_id": "c1", "action": {"type": "click", "x": 5, "y": 6}},
                {"type": "function_call", "call_id": "f1", "name": "browser_click",
                 "arguments": "{\"target\":\"e3\",\"tab_id\":null}"}]}}),
            json!({"kind": "request", "step": 2, "body": {"input": [
                {"type": "function_call_output", "call_id": "f1", "output": "{\"ok\":true}"}]}}),
        ]
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n");
        let run = read_log(&log);
        let step = &run.steps[0];
        assert_eq!(step.text, ["On it."]);
        assert_eq!(step.actions[0].name, "click");
        assert_eq!(step.actions[0].point, Some([5.0, 6.0]));
        assert_eq!(step.actions[1].arguments["target"], "e3");
        assert_eq!(step.actions[1].result.as_deref(), Some("{\"ok\":true}"));
    }

    #[test]
    fn the_video_line_gives_the_file_and_its_start_and_steps_their_time() {
        let log = [
            json!({"kind": "video", "file": "video.webm", "fps": 5, "t_ms": 120}),
            json!({"kind": "response", "step": 1, "t_ms": 2500, "body": {"content": []}}),
        ]
        .map(|v| v.to_string())
        .join("\n");
        let run = read_log(&log);
        assert_eq!(
            run.video,
            Some(VideoView {
                file: "video.webm".into(),
                t_ms: 120
            })
        );
        assert_eq!(run.steps[0].t_ms, Some(2500));
        // A name that is not a run's video is not served.
        let bad = json!({"kind": "video", "file": "../secret.webm", "t_ms": 0}).to_string();
        assert_eq!(read_log(&bad).video, None);
        for ok in ["video.webm", "video-2.webm"] {
            assert!(video_name_ok(ok), "{ok}");
        }
        for bad in [
            "video-.webm",
            "video-a.webm",
            "x/video.webm",
            "video.webm.png",
            "video",
        ] {
            assert!(!video_name_ok(bad), "{bad}");
        }
    }
}
