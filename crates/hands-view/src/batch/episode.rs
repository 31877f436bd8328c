//! An episode read from a ledger's checkpoints (not a run directory): its conversation made into
//! the steps the run page shows, and the screenshots it held as images.
//!
//! The latest checkpoint's conversation gives the steps (the model's text and calls, each call's
//! result); the screenshots come from every checkpoint, because the runner drops old ones from
//! the conversation as the run goes on (a call's screenshot is in the checkpoints saved before
//! it was dropped). Both APIs' shapes are read: Anthropic `messages` (`tool_use`, `tool_result`
//! with `image` blocks) and OpenAI `items` (`computer_call` and its `computer_call_output`
//! screenshot, `function_call` and its output, assistant `message`s).

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::{Value, json};

use crate::steps::{RunView, StepView, text_of};

/// A screenshot of the episode, ready to serve.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    /// Its MIME type.
    pub mime: &'static str,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// An episode's steps and the screenshots they name (`images/<n>.<ext>` → image).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EpisodeRun {
    /// The steps, as [`crate::steps::read_log`] gives a run directory's.
    pub run: Option<RunView>,
    /// The screenshots by file name.
    pub images: BTreeMap<String, Image>,
}

/// Reads an episode from its checkpoints' conversations, oldest first (the last is the latest).
pub fn read_conversations(conversations: &[Value]) -> EpisodeRun {
    // The first screenshot each call got back, from whichever checkpoint still held it.
    let mut shots: BTreeMap<String, Image> = BTreeMap::new();
    for conversation in conversations {
        for (call_id, image) in results(conversation).into_iter().filter_map(|r| {
            let image = r.image?;
            Some((r.call_id, image))
        }) {
            shots.entry(call_id).or_insert(image);
        }
    }
    let Some(latest) = conversations.last() else {
        return EpisodeRun::default();
    };
    let mut run = RunView {
        start: None,
        steps: Vec::new(),
        video: None,
    };
    let mut images = BTreeMap::new();
    let mut last_image: Option<String> = None;
    let mut results: BTreeMap<String, CallResult> = results(latest)
        .into_iter()
        .map(|r| (r.call_id.clone(), r))
        .collect();
    for turn in turns(latest) {
        match turn {
            Turn::Task(text) if run.start.is_none() => run.start = Some(json!({"task": text})),
            Turn::Task(_) => {}
            Turn::Model { text, calls } => {
                let mut step = StepView {
                    step: run.steps.len() as u64 + 1,
                    model_ms: None,
                    text,
                    actions: Vec::new(),
                    handoff: None,
                    t_ms: None,
                };
                for (call_id, name, arguments) in calls {
                    let mut action = crate::steps::action(&call_id, &name, arguments);
                    action.image_before = last_image.clone();
                    if let Some(result) = results.remove(&call_id) {
                        action.result = Some(result.text);
                        action.is_error = Some(result.is_error);
                    }
                    if let Some(image) = shots.remove(&call_id) {
                        let ext = if image.mime == "image/png" {
                            "png"
                        } else {
                            "jpg"
                        };
                        let file = format!("images/{:03}.{ext}", images.len() + 1);
                        images.insert(file.trim_start_matches("images/").to_owned(), image);
                        action.image_after = Some(file.clone());
                        last_image = Some(file);
                    }
                    step.actions.push(action);
                }
                run.steps.push(step);
            }
        }
    }
    EpisodeRun {
        run: Some(run),
        images,
    }
}

/// A call's answer as the model got it.
struct CallResult {
    call_id: String,
    text: String,
    is_error: bool,
    image: Option<Image>,
}

/// A call the model made: id, name, arguments.
type Call = (String, String, Value);

/// One turn of the conversation.
enum Turn {
    /// A person's text (the task, a note).
    Task(String),
    /// The model's text and calls (id, name, arguments).
    Model { text: Vec<String>, calls: Vec<Call> },
}

/// The image of an Anthropic `image` block or an OpenAI `data:` URL.
fn image_of(value: &Value) -> Option<Image> {
    let (mime, data) = if let Some(source) = value.get("source") {
        (source["media_type"].as_str()?, source["data"].as_str()?)
    } else {
        let url = value
            .get("image_url")
            .and_then(|u| u.as_str().or_else(|| u.get("url")?.as_str()))?;
        let (head, data) = url.strip_prefix("data:")?.split_once(";base64,")?;
        (head, data)
    };
    let mime = match mime {
        "image/png" => "image/png",
        "image/jpeg" => "image/jpeg",
        _ => return None,
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .ok()?;
    Some(Image { mime, bytes })
}

/// Every call's answer in `conversation`.
fn results(conversation: &Value) -> Vec<CallResult> {
    let mut out = Vec::new();
    for message in conversation["messages"].as_array().into_iter().flatten() {
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] != "tool_result" {
                continue;
            }
            let image = block["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|b| b["type"] == "image")
                .find_map(image_of);
            out.push(CallResult {
                call_id: block["tool_use_id"].as_str().unwrap_or("").to_owned(),
                text: text_of(&block["content"]),
                is_error: block["is_error"].as_bool() == Some(true),
                image,
            });
        }
    }
    for item in conversation["items"].as_array().into_iter().flatten() {
        let call_id = item["call_id"].as_str().unwrap_or("").to_owned();
        match item["type"].as_str() {
            Some("computer_call_output") => out.push(CallResult {
                call_id,
                text: String::new(),
                is_error: false,
                image: image_of(&item["output"]),
            }),
            Some("function_call_output") => out.push(CallResult {
                call_id,
                text: text_of(&item["output"]),
                is_error: false,
                image: None,
            }),
            _ => {}
        }
    }
    out
}

/// The conversation's turns, in order.
fn turns(conversation: &Value) -> Vec<Turn> {
    let mut turns = Vec::new();
    for message in conversation["messages"].as_array().into_iter().flatten() {
        let content = &message["content"];
        if message["role"] == "assistant" {
            let mut text = Vec::new();
            let mut calls = Vec::new();
            for block in content.as_array().into_iter().flatten() {
                match block["type"].as_str() {
                    Some("text") => text.push(block["text"].as_str().unwrap_or("").to_owned()),
                    Some("tool_use") => calls.push((
                        block["id"].as_str().unwrap_or("").to_owned(),
                        block["name"].as_str().unwrap_or("").to_owned(),
                        block["input"].clone(),
                    )),
                    _ => {}
                }
            }
            if let Value::String(s) = content {
                text.push(s.clone());
            }
            turns.push(Turn::Model { text, calls });
        } else {
            let said: String = match content {
                Value::String(s) => s.clone(),
                Value::Array(blocks) => blocks
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => String::new(),
            };
            if !said.is_empty() {
                turns.push(Turn::Task(said));
            }
        }
    }
    // OpenAI: the model's items between two inputs make one turn.
    let mut model: Option<(Vec<String>, Vec<Call>)> = None;
    for item in conversation["items"].as_array().into_iter().flatten() {
        let kind = item["type"].as_str().unwrap_or("message");
        let from_model = match kind {
            "message" => item["role"] == "assistant",
            "computer_call" | "function_call" | "reasoning" => true,
            _ => false,
        };
        if !from_model {
            if let Some((text, calls)) = model.take() {
                turns.push(Turn::Model { text, calls });
            }
            if kind == "message" {
                let said = text_of(&item["content"]);
                if !said.is_empty() {
                    turns.push(Turn::Task(said));
                }
            }
            continue;
        }
        let (text, calls) = model.get_or_insert_with(Default::default);
        let call_id = item["call_id"].as_str().unwrap_or("").to_owned();
        match kind {
            "message" => text.push(text_of(&item["content"])),
            "computer_call" => {
                let arguments = match (item.get("action"), item.get("actions")) {
                    (Some(a), _) => json!({"action": a}),
                    (None, Some(all)) => json!({"actions": all}),
                    _ => Value::Null,
                };
                let name = item["action"]["type"].as_str().unwrap_or("computer_call");
                calls.push((call_id, name.to_owned(), arguments));
            }
            "function_call" => {
                let arguments = item["arguments"]
                    .as_str()
                    .and_then(|a| serde_json::from_str(a).ok())
                    .unwrap_or(Value::Null);
                let name = item["name"].as_str().unwrap_or("").to_owned();
                calls.push((call_id, name, arguments));
            }
            _ => {}
        }
    }
    if let Some((text, calls)) = model {
        turns.push(Turn::Model { text, calls });
    }
    turns
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\nnot really";

    fn shot() -> Value {
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png",
            "data": base64::engine::general_purpose::STANDARD.encode(PNG)}})
    }

    #[test]
    fn anthropic_checkpoints_become_steps_with_screenshots_kept_from_older_checkpoints() {
        let early = json!({"messages": [
            {"role": "user", "content": "Write a note"},
            {"role": "assistant", "content": [{"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "t1", "name": "screenshot", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [shot()]}]},
        ]});
        let late = json!({"messages": [
            {"role": "user", "content": "Write a note"},
            {"role": "assistant", "content": [{"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "t1", "name": "screenshot", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                "content": [{"type": "text", "text": "[screenshot dropped]"}]}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t2", "name": "left_click", "toolset_name": "computer",
                 "input": {"coordinate": [3, 4]}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2",
                "is_error": true, "content": "refused"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
        ]});
        let episode = read_conversations(&[early, late]);
        let run = episode.run.unwrap();
        assert_eq!(run.start.unwrap()["task"], "Write a note");
        assert_eq!(run.steps.len(), 3);
        assert_eq!(run.steps[0].text, ["Looking."]);
        let first = &run.steps[0].actions[0];
        assert_eq!(first.image_after.as_deref(), Some("images/001.png"));
        assert_eq!(episode.images["001.png"].bytes, PNG);
        let click = &run.steps[1].actions[0];
        assert_eq!(click.point, Some([3.0, 4.0]));
        assert_eq!(click.image_before.as_deref(), Some("images/001.png"));
        assert_eq!(click.result.as_deref(), Some("refused"));
        assert_eq!(click.is_error, Some(true));
        assert_eq!(run.steps[2].text, ["Done."]);
    }

    #[test]
    fn openai_items_become_steps() {
        let url = format!(
            "data:image/png;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(PNG)
        );
        let items = json!({"items": [
            {"role": "user", "content": "Book a room"},
            {"type": "reasoning", "summary": []},
            {"type": "computer_call", "call_id": "c1", "action": {"type": "click", "x": 5, "y": 6}},
            {"type": "computer_call_output", "call_id": "c1",
             "output": {"type": "computer_screenshot", "image_url": url}},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Booked."}]},
        ]});
        let episode = read_conversations(&[items]);
        let run = episode.run.unwrap();
        assert_eq!(run.start.unwrap()["task"], "Book a room");
        assert_eq!(run.steps.len(), 2);
        assert_eq!(run.steps[0].actions[0].name, "click");
        assert_eq!(
            run.steps[0].actions[0].image_after.as_deref(),
            Some("images/001.png")
        );
        assert_eq!(run.steps[1].text, ["Booked."]);
    }

    #[test]
    fn nothing_stored_reads_as_no_run() {
        assert_eq!(read_conversations(&[]), EpisodeRun::default());
        let odd = read_conversations(&[json!({"messages": 7})]);
        assert_eq!(odd.run.unwrap().steps, Vec::new());
    }
}
