//! The deterministic "model" of the browser drill: it reads the booking page, finds each field's
//! ref by its label in the structured read, fills the form, submits it, and reads the
//! confirmation — the way a careful model would, from what the tools returned. On the Messages
//! API it uses Claude's browser toolset (`toolset_name: "browser"` members such as `form_input`);
//! on the Responses API, the driver spec's function tools (`browser_type`, `browser_click` …).
//!
//! It sees only the requests the runner sends (tool results included) and decides from them; the
//! drill then checks the app's database, never this policy's claim.

use hands_sim::Turn;
use hands_sim::policy::{function_call, message, text, toolset_use};
use serde_json::{Value, json};

/// The booking the drill asks for.
#[derive(Debug, Clone)]
pub struct BookingTask {
    /// The guest's name.
    pub name: String,
    /// Their email.
    pub email: String,
    /// Check-in, `YYYY-MM-DD`.
    pub check_in: String,
    /// Nights.
    pub nights: u32,
    /// The room's option value.
    pub room: String,
    /// Breakfast wanted.
    pub breakfast: bool,
}

impl BookingTask {
    /// The task as the user states it.
    pub fn prompt(&self) -> String {
        format!(
            "Book a room on the open page for {} ({}), checking in on {} for {} nights, room \
             type {}, {}breakfast. Confirm the booking is saved.",
            self.name,
            self.email,
            self.check_in,
            self.nights,
            self.room,
            if self.breakfast { "with " } else { "without " }
        )
    }
}

/// Each tool result's text in the newest answer of a request, for either API, and the first
/// error among them (an `is_error` result, or a function output saying `"ok": false`).
fn latest_results(request: &Value) -> (Vec<String>, Option<String>) {
    let mut texts = Vec::new();
    let mut error = None;
    if let Some(messages) = request["messages"].as_array() {
        if let Some(last) = messages.last()
            && let Some(blocks) = last["content"].as_array()
        {
            for block in blocks.iter().filter(|b| b["type"] == "tool_result") {
                if block["is_error"] == json!(true) && error.is_none() {
                    error = Some(block["content"].to_string());
                }
                match &block["content"] {
                    Value::String(s) => texts.push(s.clone()),
                    Value::Array(items) => texts.extend(
                        items
                            .iter()
                            .filter_map(|i| i["text"].as_str().map(str::to_owned)),
                    ),
                    _ => {}
                }
            }
        }
    } else if let Some(items) = request["input"].as_array() {
        for item in items.iter().filter(|i| i["type"] == "function_call_output") {
            match &item["output"] {
                Value::String(s) => texts.push(s.clone()),
                Value::Array(parts) => texts.extend(
                    parts
                        .iter()
                        .filter_map(|p| p["text"].as_str().map(str::to_owned)),
                ),
                _ => {}
            }
        }
        error = texts
            .iter()
            .filter_map(|t| serde_json::from_str::<Value>(t).ok())
            .find(|r| r["ok"] == json!(false))
            .map(|r| r["error"].to_string());
    }
    (texts, error)
}

/// A read in the compact form (what Claude's browser toolset answers), as the elements of a
/// `BrowserReadV1`-like value: `{"elements": [{"ref", "label"}]}`, from its element lines
/// (`[e12] textbox Display name = Ada`, a quoted name as a JSON string).
fn compact_read(text: &str) -> Option<Value> {
    let elements: Vec<Value> = text
        .lines()
        .filter_map(|line| {
            let (reference, rest) = line.strip_prefix('[')?.split_once("] ")?;
            let (_kind, rest) = rest.split_once(' ')?;
            let rest = rest
                .strip_prefix("[x] ")
                .or_else(|| rest.strip_prefix("[ ] "))
                .unwrap_or(rest);
            let label = if rest.starts_with('"') {
                let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<String>();
                stream.next()?.ok()?
            } else {
                let end = [" = ", " {"]
                    .iter()
                    .filter_map(|d| rest.find(d))
                    .min()
                    .unwrap_or(rest.len());
                rest[..end].to_owned()
            };
            Some(json!({"ref": reference, "label": label}))
        })
        .collect();
    (!elements.is_empty()).then(|| json!({ "elements": elements }))
}

/// The elements of a read: a function output wraps the read in `result`; Claude's toolset
/// answers with the read itself (in the compact form, see [`compact_read`]).
fn elements(read: &Value) -> Option<&Vec<Value>> {
    read["result"]["elements"]
        .as_array()
        .or_else(|| read["elements"].as_array())
}

/// The ref of the element whose label starts with `label`, in a read.
fn ref_of(read: &Value, label: &str) -> Option<String> {
    elements(read)?
        .iter()
        .find(|e| {
            e["label"]
                .as_str()
                .is_some_and(|l| l.trim().to_lowercase().starts_with(&label.to_lowercase()))
        })
        .and_then(|e| e["ref"].as_str())
        .map(str::to_owned)
}

/// Where the policy is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Read,
    Fill,
    Confirm,
    Done,
}

/// The labels of the form's controls, in the order the refs are used.
const LABELS: [&str; 7] = [
    "Full name",
    "Email",
    "Check-in",
    "Nights",
    "Room type",
    "Include breakfast",
    "Book now",
];

/// The policy, for both APIs (it answers in the protocol the request came in).
pub fn policy(task: BookingTask) -> impl FnMut(&Value) -> Turn + Send {
    let mut step = Step::Read;
    move |request: &Value| {
        let anthropic = request.get("messages").is_some();
        let finish = |words: &str| {
            if anthropic {
                Turn::text(words)
            } else {
                Turn::Items(vec![message(words)])
            }
        };
        let (results, failed) = latest_results(request);
        if let Some(failed) = failed {
            return finish(&format!("A browser call failed, so I stop: {failed}"));
        }
        let batch = match step {
            Step::Read => {
                step = Step::Fill;
                vec![if anthropic {
                    toolset_use("browser", "read_page", json!({"filter": "interactive"}))
                } else {
                    function_call(
                        "browser_read_page",
                        json!({"filter": "interactive", "tab_id": null}),
                    )
                }]
            }
            Step::Fill => {
                let Some(read) = results
                    .iter()
                    .filter_map(|r| {
                        serde_json::from_str::<Value>(r)
                            .ok()
                            .or_else(|| compact_read(r))
                    })
                    .find(|r| elements(r).is_some())
                else {
                    return finish("The page read came back without elements, so I stop.");
                };
                let refs: Option<Vec<String>> =
                    LABELS.iter().map(|label| ref_of(&read, label)).collect();
                let Some(refs) = refs else {
                    return finish("I could not find every field of the booking form.");
                };
                step = Step::Confirm;
                if anthropic {
                    fill_with_claude_toolset(&task, &refs)
                } else {
                    fill_with_functions(&task, &refs)
                }
            }
            Step::Confirm => {
                step = Step::Done;
                let confirmed = results.iter().any(|r| r.contains("Booking confirmed"));
                return finish(if confirmed {
                    "The booking is confirmed."
                } else {
                    "The confirmation page did not appear."
                });
            }
            Step::Done => return finish("Done."),
        };
        if anthropic {
            let mut blocks = vec![text("Working on the booking form.")];
            blocks.extend(batch);
            Turn::Blocks(blocks)
        } else {
            Turn::Items(batch)
        }
    }
}

/// Claude's browser toolset: `form_input` sets each field by its role, `left_click` a ref.
fn fill_with_claude_toolset(task: &BookingTask, refs: &[String]) -> Vec<Value> {
    let b = |member: &str, input: Value| toolset_use("browser", member, input);
    let set = |r: &str, value: Value| b("form_input", json!({"ref": r, "value": value}));
    vec![
        set(&refs[0], json!(task.name)),
        set(&refs[1], json!(task.email)),
        set(&refs[2], json!(task.check_in)),
        set(&refs[3], json!(task.nights.to_string())),
        set(&refs[4], json!(task.room)),
        set(&refs[5], json!(task.breakfast)),
        b(
            "left_click",
            json!({"target": {"type": "ref", "ref": refs[6]}}),
        ),
        b("get_page_text", json!({})),
    ]
}

/// The driver spec's function tools: `browser_type`, `browser_select_option`, `browser_click`.
fn fill_with_functions(task: &BookingTask, refs: &[String]) -> Vec<Value> {
    let t = |target: &str, value: &str| {
        function_call(
            "browser_type",
            json!({"text": value, "target": target, "tab_id": null}),
        )
    };
    let mut batch = vec![
        t(&refs[0], &task.name),
        t(&refs[1], &task.email),
        t(&refs[2], &task.check_in),
        t(&refs[3], &task.nights.to_string()),
        function_call(
            "browser_select_option",
            json!({"target": refs[4], "values": [task.room], "tab_id": null}),
        ),
    ];
    if task.breakfast {
        batch.push(function_call(
            "browser_click",
            json!({"target": refs[5], "tab_id": null}),
        ));
    }
    batch.push(function_call(
        "browser_click",
        json!({"target": refs[6], "tab_id": null}),
    ));
    batch.push(function_call(
        "browser_get_page_text",
        json!({"tab_id": null}),
    ));
    batch
}
