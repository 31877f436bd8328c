//! Responses API wire types: the request, items kept verbatim for replay, the response.
//!
//! Spec: api-contracts B.

use std::fmt;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::actions::ComputerAction;
use crate::verbatim;

/// `include` value that returns reasoning's `encrypted_content` (needed with `store: false`).
pub const INCLUDE_REASONING_ENCRYPTED_CONTENT: &str = "reasoning.encrypted_content";
/// `include` value that returns screenshot URLs of computer call outputs.
pub const INCLUDE_COMPUTER_OUTPUT_IMAGE_URL: &str = "computer_call_output.output.image_url";

/// A Responses API request. Build one with [`ResponsesRequest::new`] and set the fields
/// needed; fields not modelled go in `extra`.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ResponsesRequest {
    /// The model name.
    pub model: String,
    /// A string, or items (full history in stateless mode, new items after
    /// `previous_response_id`).
    pub input: Input,
    /// System-level instructions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Tool entries, verbatim ([`computer_tool`], [`ComputerUsePreview`], [`FunctionTool`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Value>,
    /// How the model may use tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Continue from a stored response, sending only new items.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_response_id: Option<String>,
    /// Whether the response is stored server-side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<bool>,
    /// Extra output to include ([`INCLUDE_REASONING_ENCRYPTED_CONTENT`]...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<String>,
    /// `auto` or `disabled`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncation: Option<Truncation>,
    /// Reasoning effort and summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<ReasoningConfig>,
    /// Output token limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Whether the model may call several tools in one turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// `stream`; the client sets it for streamed calls when left `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// Server-side compaction, verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_management: Option<Value>,
    /// Prompt cache routing key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache_key: Option<String>,
    /// Fields not modelled above, sent as given.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ResponsesRequest {
    /// A request with a model and an input, nothing else.
    pub fn new(model: impl Into<String>, input: Input) -> ResponsesRequest {
        ResponsesRequest {
            model: model.into(),
            input,
            instructions: None,
            tools: Vec::new(),
            tool_choice: None,
            previous_response_id: None,
            store: None,
            include: Vec::new(),
            truncation: None,
            reasoning: None,
            max_output_tokens: None,
            parallel_tool_calls: None,
            stream: None,
            context_management: None,
            prompt_cache_key: None,
            extra: Map::new(),
        }
    }
}

/// `truncation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Truncation {
    /// Drop old items to fit the context window.
    Auto,
    /// Fail with a 400 on overflow (the default).
    Disabled,
}

/// `reasoning`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReasoningConfig {
    /// `none|minimal|low|medium|high|xhigh`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    /// `auto|concise|detailed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

/// `tool_choice`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ToolChoice {
    /// `"none"`.
    None,
    /// `"auto"`.
    Auto,
    /// `"required"`.
    Required,
    /// `{"type":"function","name"}`.
    Function(String),
    /// A built-in tool: `{"type":"computer"}`, `{"type":"computer_use_preview"}`...
    BuiltIn(String),
    /// Anything else, verbatim.
    Other(Value),
}

impl Serialize for ToolChoice {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ToolChoice::None => serializer.serialize_str("none"),
            ToolChoice::Auto => serializer.serialize_str("auto"),
            ToolChoice::Required => serializer.serialize_str("required"),
            ToolChoice::Function(name) => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("type", "function")?;
                map.serialize_entry("name", name)?;
                map.end()
            }
            ToolChoice::BuiltIn(kind) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("type", kind)?;
                map.end()
            }
            ToolChoice::Other(value) => value.serialize(serializer),
        }
    }
}

/// `{"type":"computer"}`: the GA computer tool, with no other fields.
pub fn computer_tool() -> Value {
    let mut map = Map::new();
    map.insert("type".into(), Value::String("computer".into()));
    Value::Object(map)
}

/// The preview computer tool declaration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename = "computer_use_preview")]
pub struct ComputerUsePreview {
    /// Screenshot width in pixels.
    pub display_width: u32,
    /// Screenshot height in pixels.
    pub display_height: u32,
    /// `windows|mac|linux|ubuntu|browser`.
    pub environment: String,
}

impl ComputerUsePreview {
    /// The entry for [`ResponsesRequest::tools`].
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// A function tool `{"type":"function","name","description","parameters","strict"}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename = "function")]
pub struct FunctionTool {
    /// The function's name.
    pub name: String,
    /// What it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments.
    pub parameters: Value,
    /// Strict schema adherence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

impl FunctionTool {
    /// A function tool.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
    ) -> FunctionTool {
        FunctionTool {
            name: name.into(),
            description: Some(description.into()),
            parameters,
            strict: None,
        }
    }

    /// The entry for [`ResponsesRequest::tools`].
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// `input`: a string or items.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// A user message as plain text.
    Text(String),
    /// Items.
    Items(Vec<Item>),
}

impl Serialize for Input {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Input::Text(text) => serializer.serialize_str(text),
            Input::Items(items) => items.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Input {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct InputVisitor;
        impl<'de> Visitor<'de> for InputVisitor {
            type Value = Input;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of items")
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<Input, E> {
                Ok(Input::Text(text.to_owned()))
            }
            fn visit_string<E: de::Error>(self, text: String) -> Result<Input, E> {
                Ok(Input::Text(text))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Input, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(item) = seq.next_element::<Item>()? {
                    items.push(item);
                }
                Ok(Input::Items(items))
            }
        }
        deserializer.deserialize_any(InputVisitor)
    }
}

/// `type` of a message item.
pub const ITEM_MESSAGE: &str = "message";
/// `type` of a reasoning item.
pub const ITEM_REASONING: &str = "reasoning";
/// `type` of a function call item.
pub const ITEM_FUNCTION_CALL: &str = "function_call";
/// `type` of a computer call item.
pub const ITEM_COMPUTER_CALL: &str = "computer_call";
/// `type` of a function call output item.
pub const ITEM_FUNCTION_CALL_OUTPUT: &str = "function_call_output";
/// `type` of a computer call output item.
pub const ITEM_COMPUTER_CALL_OUTPUT: &str = "computer_call_output";
/// `output.type` of a computer call output.
pub const COMPUTER_SCREENSHOT: &str = "computer_screenshot";

/// An input or output item, kept as the exact JSON text it was received (or built) as, with
/// a typed view. Replaying an output item sends that text unchanged: reasoning
/// `encrypted_content`, computer calls and unknown item types go back byte for byte.
///
/// Deserialising needs `serde_json` driving directly (`from_str`, `from_slice`, `from_value`).
#[derive(Clone)]
pub struct Item {
    raw: Box<RawValue>,
    view: ItemView,
}

/// The typed view of an [`Item`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ItemView {
    /// `message` (also an input message without `type`).
    Message(MessageItem),
    /// `reasoning`.
    Reasoning(ReasoningItem),
    /// `function_call`.
    FunctionCall(FunctionCall),
    /// `computer_call`.
    ComputerCall(ComputerCall),
    /// `function_call_output` (the output is left in the raw JSON).
    FunctionCallOutput(OutputHead),
    /// `computer_call_output` (the screenshot is left in the raw JSON).
    ComputerCallOutput(OutputHead),
    /// Any other item, as a JSON value.
    Other(Value),
}

/// A message item.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct MessageItem {
    /// `msg_…` (absent on input messages).
    pub id: Option<String>,
    /// `user`, `assistant`, `system`, `developer`.
    pub role: String,
    /// `completed`, `in_progress`, `incomplete`.
    pub status: Option<String>,
    /// The parts, text only (images stay in the raw JSON).
    pub content: Vec<MessagePart>,
}

/// A part of a message's content.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MessagePart {
    /// `output_text`.
    OutputText(String),
    /// `input_text` (or a plain string content).
    InputText(String),
    /// `refusal`.
    Refusal(String),
    /// Any other part, by type.
    Other(String),
}

#[derive(Deserialize)]
struct MessageWire {
    #[serde(default)]
    id: Option<String>,
    role: String,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    content: Option<PartsWire>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum PartsWire {
    Text(String),
    Parts(Vec<PartWire>),
}

#[derive(Deserialize)]
struct PartWire {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
}

/// A reasoning item.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReasoningItem {
    /// `rs_…`.
    pub id: Option<String>,
    /// The `summary_text` texts.
    pub summary: Vec<String>,
    /// The opaque reasoning, replayed unchanged in stateless mode.
    pub encrypted_content: Option<String>,
}

#[derive(Deserialize)]
struct ReasoningWire {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    summary: Vec<SummaryWire>,
    #[serde(default)]
    encrypted_content: Option<String>,
}

#[derive(Deserialize)]
struct SummaryWire {
    #[serde(default)]
    text: String,
}

/// A `function_call` item.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct FunctionCall {
    /// `fc_…`.
    #[serde(default)]
    pub id: Option<String>,
    /// `call_…`, answered by a `function_call_output` with this `call_id`.
    pub call_id: String,
    /// The function's name.
    pub name: String,
    /// The arguments as a JSON text.
    pub arguments: String,
    /// `completed`, `in_progress`, `incomplete`.
    #[serde(default)]
    pub status: Option<String>,
}

/// A pending safety check, acknowledged only when a person approved it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SafetyCheck {
    /// `cu_sc_…`.
    pub id: String,
    /// `malicious_instructions`, `irrelevant_domain`, `sensitive_domain`...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Text for the person approving.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A `computer_call` item: one `action` (preview) or an `actions` batch (GA).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct ComputerCall {
    /// `cu_…`.
    #[serde(default)]
    pub id: Option<String>,
    /// `call_…`, answered by a `computer_call_output` with this `call_id`.
    pub call_id: String,
    /// `completed`, `in_progress`, `incomplete`.
    #[serde(default)]
    pub status: Option<String>,
    /// The single action (preview shape).
    #[serde(default)]
    pub action: Option<ComputerAction>,
    /// The batch (GA shape).
    #[serde(default)]
    pub actions: Option<Vec<ComputerAction>>,
    /// Checks to approve before acting.
    #[serde(default)]
    pub pending_safety_checks: Vec<SafetyCheck>,
}

/// Which of `action` / `actions` a computer call carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionShape {
    /// `action` only.
    Single,
    /// `actions` only.
    Batch,
    /// Both: ambiguous, the runner should refuse the call.
    Both,
    /// Neither: nothing to run but the final screenshot.
    Neither,
}

impl ComputerCall {
    /// The actions to run in order: `actions` when present, else the single `action`.
    pub fn actions(&self) -> &[ComputerAction] {
        match (&self.actions, &self.action) {
            (Some(actions), _) => actions,
            (None, Some(action)) => std::slice::from_ref(action),
            (None, None) => &[],
        }
    }

    /// Which fields carried the actions.
    pub fn shape(&self) -> ActionShape {
        match (self.action.is_some(), self.actions.is_some()) {
            (true, false) => ActionShape::Single,
            (false, true) => ActionShape::Batch,
            (true, true) => ActionShape::Both,
            (false, false) => ActionShape::Neither,
        }
    }
}

/// The head of an output item sent back.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct OutputHead {
    /// The call it answers.
    pub call_id: String,
}

impl ItemView {
    fn parse(json: &str) -> Result<ItemView, serde_json::Error> {
        let kind = verbatim::type_of(json)?;
        Ok(match kind.as_deref() {
            Some(ITEM_MESSAGE) => ItemView::Message(parse_message(json)?),
            None => {
                // An input message may omit `type` (`{"role":"user","content":"…"}`).
                let value: Value = serde_json::from_str(json)?;
                if value.get("role").is_some() {
                    ItemView::Message(parse_message(json)?)
                } else {
                    ItemView::Other(value)
                }
            }
            Some(ITEM_REASONING) => {
                let wire: ReasoningWire = serde_json::from_str(json)?;
                ItemView::Reasoning(ReasoningItem {
                    id: wire.id,
                    summary: wire.summary.into_iter().map(|s| s.text).collect(),
                    encrypted_content: wire.encrypted_content,
                })
            }
            Some(ITEM_FUNCTION_CALL) => ItemView::FunctionCall(serde_json::from_str(json)?),
            Some(ITEM_COMPUTER_CALL) => ItemView::ComputerCall(serde_json::from_str(json)?),
            Some(ITEM_FUNCTION_CALL_OUTPUT) => {
                ItemView::FunctionCallOutput(serde_json::from_str(json)?)
            }
            Some(ITEM_COMPUTER_CALL_OUTPUT) => {
                ItemView::ComputerCallOutput(serde_json::from_str(json)?)
            }
            Some(_) => ItemView::Other(serde_json::from_str(json)?),
        })
    }
}

fn parse_message(json: &str) -> Result<MessageItem, serde_json::Error> {
    let wire: MessageWire = serde_json::from_str(json)?;
    let content = match wire.content {
        None => Vec::new(),
        Some(PartsWire::Text(text)) => vec![MessagePart::InputText(text)],
        Some(PartsWire::Parts(parts)) => parts
            .into_iter()
            .map(|part| match (part.kind.as_str(), part.text, part.refusal) {
                ("output_text", Some(text), _) => MessagePart::OutputText(text),
                ("input_text", Some(text), _) => MessagePart::InputText(text),
                ("refusal", _, Some(refusal)) => MessagePart::Refusal(refusal),
                _ => MessagePart::Other(part.kind),
            })
            .collect(),
    };
    Ok(MessageItem {
        id: wire.id,
        role: wire.role,
        status: wire.status,
        content,
    })
}

impl Item {
    /// An item from raw JSON, kept exactly.
    pub fn from_raw(raw: Box<RawValue>) -> Result<Item, serde_json::Error> {
        let view = ItemView::parse(raw.get())?;
        Ok(Item { raw, view })
    }

    /// An item from JSON text, kept exactly.
    pub fn from_json(json: &str) -> Result<Item, serde_json::Error> {
        Item::from_raw(RawValue::from_string(json.to_owned())?)
    }

    /// An item from a JSON value.
    pub fn from_value(value: &Value) -> Result<Item, serde_json::Error> {
        Item::from_raw(serde_json::value::to_raw_value(value)?)
    }

    fn from_serialize(value: &impl Serialize) -> Item {
        let raw = verbatim::to_raw(value);
        let view = ItemView::parse(raw.get()).unwrap_or(ItemView::Other(Value::Null));
        Item { raw, view }
    }

    /// A user message `{"type":"message","role":"user","content":[{"type":"input_text",…}]}`.
    pub fn user_text(text: &str) -> Item {
        #[derive(Serialize)]
        struct Part<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            text: &'a str,
        }
        #[derive(Serialize)]
        struct Wire<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            role: &'static str,
            content: [Part<'a>; 1],
        }
        Item::from_serialize(&Wire {
            kind: ITEM_MESSAGE,
            role: "user",
            content: [Part {
                kind: "input_text",
                text,
            }],
        })
    }

    /// A `computer_call_output` item.
    pub fn computer_call_output(output: &ComputerCallOutput) -> Item {
        Item::from_serialize(output)
    }

    /// A `function_call_output` item.
    pub fn function_call_output(output: &FunctionCallOutput) -> Item {
        Item::from_serialize(output)
    }

    /// The typed view.
    pub fn view(&self) -> &ItemView {
        &self.view
    }

    /// The item's `type` (`message` for an input message without one).
    pub fn item_type(&self) -> &str {
        match &self.view {
            ItemView::Message(_) => ITEM_MESSAGE,
            ItemView::Reasoning(_) => ITEM_REASONING,
            ItemView::FunctionCall(_) => ITEM_FUNCTION_CALL,
            ItemView::ComputerCall(_) => ITEM_COMPUTER_CALL,
            ItemView::FunctionCallOutput(_) => ITEM_FUNCTION_CALL_OUTPUT,
            ItemView::ComputerCallOutput(_) => ITEM_COMPUTER_CALL_OUTPUT,
            ItemView::Other(value) => value.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// The function call, when this is one.
    pub fn as_function_call(&self) -> Option<&FunctionCall> {
        match &self.view {
            ItemView::FunctionCall(call) => Some(call),
            _ => None,
        }
    }

    /// The computer call, when this is one.
    pub fn as_computer_call(&self) -> Option<&ComputerCall> {
        match &self.view {
            ItemView::ComputerCall(call) => Some(call),
            _ => None,
        }
    }

    /// The exact JSON text.
    pub fn raw_json(&self) -> &str {
        self.raw.get()
    }

    /// The item as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::from_str(self.raw.get()).unwrap_or(Value::Null)
    }
}

impl PartialEq for Item {
    /// Items are equal when their JSON texts are byte-identical.
    fn eq(&self, other: &Item) -> bool {
        self.raw.get() == other.raw.get()
    }
}

impl fmt::Debug for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.view.fmt(f)
    }
}

impl Serialize for Item {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.raw.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Item {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        Item::from_raw(raw).map_err(de::Error::custom)
    }
}

/// Where a screenshot is: a URL (a `data:` URL works) or an uploaded file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScreenshotSource {
    /// `image_url`.
    ImageUrl(String),
    /// `file_id`.
    FileId(String),
}

impl ScreenshotSource {
    /// A `data:{media_type};base64,{data}` URL.
    pub fn data_url(media_type: &str, base64: &str) -> ScreenshotSource {
        ScreenshotSource::ImageUrl(format!("data:{media_type};base64,{base64}"))
    }
}

/// A `computer_call_output` to build: the screenshot after the call's actions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComputerCallOutput {
    /// The call it answers.
    pub call_id: String,
    /// The final screenshot.
    pub screenshot: ScreenshotSource,
    /// Only the checks a person approved.
    pub acknowledged_safety_checks: Vec<SafetyCheck>,
}

impl Serialize for ComputerCallOutput {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Output<'a>(&'a ScreenshotSource);
        impl Serialize for Output<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("type", COMPUTER_SCREENSHOT)?;
                match self.0 {
                    ScreenshotSource::ImageUrl(url) => map.serialize_entry("image_url", url)?,
                    ScreenshotSource::FileId(id) => map.serialize_entry("file_id", id)?,
                }
                map.end()
            }
        }
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", ITEM_COMPUTER_CALL_OUTPUT)?;
        map.serialize_entry("call_id", &self.call_id)?;
        map.serialize_entry("output", &Output(&self.screenshot))?;
        if !self.acknowledged_safety_checks.is_empty() {
            map.serialize_entry(
                "acknowledged_safety_checks",
                &self.acknowledged_safety_checks,
            )?;
        }
        map.end()
    }
}

/// A `function_call_output` to build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename = "function_call_output")]
pub struct FunctionCallOutput {
    /// The call it answers.
    pub call_id: String,
    /// The result.
    pub output: FunctionOutput,
}

/// A function result: text, or text and image parts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum FunctionOutput {
    /// Plain text.
    Text(String),
    /// Parts.
    Parts(Vec<FunctionOutputPart>),
}

/// A part of a function result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FunctionOutputPart {
    /// `input_text`.
    InputText {
        /// The text.
        text: String,
    },
    /// `input_image`, by URL (a `data:` URL works) or file id.
    InputImage {
        /// The image URL.
        #[serde(skip_serializing_if = "Option::is_none")]
        image_url: Option<String>,
        /// An uploaded file.
        #[serde(skip_serializing_if = "Option::is_none")]
        file_id: Option<String>,
        /// `low`, `high`, `auto`.
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
}

/// `status` of a response.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ResponseStatus {
    /// `completed`.
    Completed,
    /// `failed` (see `error`).
    Failed,
    /// `in_progress`.
    InProgress,
    /// `cancelled`.
    Cancelled,
    /// `queued`.
    Queued,
    /// `incomplete` (see `incomplete_details`).
    Incomplete,
    /// A value this crate does not know.
    Unknown(String),
}

impl ResponseStatus {
    /// Every known status with its exact string.
    pub const KNOWN: [(ResponseStatus, &'static str); 6] = [
        (ResponseStatus::Completed, "completed"),
        (ResponseStatus::Failed, "failed"),
        (ResponseStatus::InProgress, "in_progress"),
        (ResponseStatus::Cancelled, "cancelled"),
        (ResponseStatus::Queued, "queued"),
        (ResponseStatus::Incomplete, "incomplete"),
    ];

    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            ResponseStatus::Unknown(other) => other,
            known => ResponseStatus::KNOWN
                .iter()
                .find(|(status, _)| status == known)
                .map_or("", |(_, text)| text),
        }
    }

    /// Parses a wire string.
    pub fn parse(text: &str) -> ResponseStatus {
        ResponseStatus::KNOWN
            .iter()
            .find(|(_, known)| *known == text)
            .map_or_else(
                || ResponseStatus::Unknown(text.to_owned()),
                |(status, _)| status.clone(),
            )
    }
}

impl Serialize for ResponseStatus {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ResponseStatus {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Ok(ResponseStatus::parse(&text))
    }
}

/// `error` of a failed response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseError {
    /// `server_error`, `rate_limit_exceeded`, `invalid_prompt`…
    #[serde(default)]
    pub code: Option<String>,
    /// What went wrong.
    #[serde(default)]
    pub message: Option<String>,
    /// Other fields, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `incomplete_details`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IncompleteDetails {
    /// `max_output_tokens` or `content_filter`.
    #[serde(default)]
    pub reason: Option<String>,
    /// Other fields, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Token usage of a response.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResponsesUsage {
    /// All input tokens (cached included).
    #[serde(default)]
    pub input_tokens: u64,
    /// Input breakdown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens_details: Option<InputTokensDetails>,
    /// Output tokens (reasoning included).
    #[serde(default)]
    pub output_tokens: u64,
    /// Output breakdown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens_details: Option<OutputTokensDetails>,
    /// Input plus output.
    #[serde(default)]
    pub total_tokens: u64,
    /// Other fields, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `usage.input_tokens_details`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InputTokensDetails {
    /// Input tokens read from the cache.
    #[serde(default)]
    pub cached_tokens: u64,
    /// Input tokens written to the cache (a 2026 addition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
    /// Other fields, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `usage.output_tokens_details`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OutputTokensDetails {
    /// Reasoning tokens.
    #[serde(default)]
    pub reasoning_tokens: u64,
    /// Other fields, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `object` of a response.
pub const RESPONSE_OBJECT: &str = "response";

/// A response: `{id, object:"response", status, output, error, incomplete_details, usage, …}`.
/// Every other top-level field stays in `extra`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Response {
    /// `resp_…`.
    pub id: String,
    /// The status.
    pub status: Option<ResponseStatus>,
    /// Output items, verbatim.
    pub output: Vec<Item>,
    /// Set when `status` is `failed`.
    pub error: Option<ResponseError>,
    /// Set when `status` is `incomplete`.
    pub incomplete_details: Option<IncompleteDetails>,
    /// Token usage (absent while in progress).
    pub usage: Option<ResponsesUsage>,
    /// Other top-level fields (`created_at`, `model`, `tools`…), verbatim.
    pub extra: Map<String, Value>,
}

impl Response {
    /// The assistant's output text, joined.
    pub fn output_text(&self) -> String {
        self.output
            .iter()
            .filter_map(|item| match item.view() {
                ItemView::Message(message) => Some(&message.content),
                _ => None,
            })
            .flatten()
            .filter_map(|part| match part {
                MessagePart::OutputText(text) => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The calls to answer (function and computer calls), in order.
    pub fn calls(&self) -> impl Iterator<Item = &Item> {
        self.output.iter().filter(|item| {
            matches!(
                item.view(),
                ItemView::FunctionCall(_) | ItemView::ComputerCall(_)
            )
        })
    }
}

impl Serialize for Response {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(7 + self.extra.len()))?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("object", RESPONSE_OBJECT)?;
        if let Some(status) = &self.status {
            map.serialize_entry("status", status)?;
        }
        map.serialize_entry("output", &self.output)?;
        map.serialize_entry("error", &self.error)?;
        map.serialize_entry("incomplete_details", &self.incomplete_details)?;
        map.serialize_entry("usage", &self.usage)?;
        for (key, value) in &self.extra {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Response {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ResponseVisitor;
        impl<'de> Visitor<'de> for ResponseVisitor {
            type Value = Response;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a Responses API response object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Response, A::Error> {
                let mut id = None;
                let mut status = None;
                let mut output = Vec::new();
                let mut error = None;
                let mut incomplete_details = None;
                let mut usage = None;
                let mut extra = Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "id" => id = Some(map.next_value::<String>()?),
                        "object" => {
                            let object = map.next_value::<String>()?;
                            if object != RESPONSE_OBJECT {
                                return Err(de::Error::custom(format!(
                                    "expected object \"response\", got {object:?}"
                                )));
                            }
                        }
                        "status" => status = map.next_value::<Option<ResponseStatus>>()?,
                        "output" => output = map.next_value::<Vec<Item>>()?,
                        "error" => error = map.next_value::<Option<ResponseError>>()?,
                        "incomplete_details" => {
                            incomplete_details = map.next_value::<Option<IncompleteDetails>>()?;
                        }
                        "usage" => usage = map.next_value::<Option<ResponsesUsage>>()?,
                        _ => {
                            let value = map.next_value::<Value>()?;
                            extra.insert(key, value);
                        }
                    }
                }
                Ok(Response {
                    id: id.ok_or_else(|| de::Error::missing_field("id"))?,
                    status,
                    output,
                    error,
                    incomplete_details,
                    usage,
                    extra,
                })
            }
        }
        deserializer.deserialize_map(ResponseVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn statuses_round_trip_their_exact_strings() {
        for (status, text) in ResponseStatus::KNOWN {
            assert_eq!(status.as_str(), text);
            assert_eq!(ResponseStatus::parse(text), status);
        }
        assert_eq!(ResponseStatus::parse("paused").as_str(), "paused");
    }

    #[test]
    fn items_are_kept_byte_for_byte() {
        let cases = [
            r#"{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAAB+/xyz=="}"#,
            r#"{ "type":"computer_call","id":"cu_1","call_id":"call_1","status":"completed","actions":[{"type":"wait"}],"pending_safety_checks":[] }"#,
            r#"{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q"}}"#,
            r#"{"role":"user","content":"plain"}"#,
        ];
        for json in cases {
            let item: Item = serde_json::from_str(json).unwrap();
            assert_eq!(serde_json::to_string(&item).unwrap(), json);
        }
    }

    #[test]
    fn computer_call_shapes() {
        let single = Item::from_json(
            r#"{"type":"computer_call","call_id":"c","action":{"type":"click","button":"left","x":1,"y":2}}"#,
        )
        .unwrap();
        let call = single.as_computer_call().unwrap();
        assert_eq!(call.shape(), ActionShape::Single);
        assert_eq!(call.actions().len(), 1);
        let both = Item::from_json(
            r#"{"type":"computer_call","call_id":"c","action":{"type":"wait"},"actions":[{"type":"wait"},{"type":"screenshot"}]}"#,
        )
        .unwrap();
        let call = both.as_computer_call().unwrap();
        assert_eq!(call.shape(), ActionShape::Both);
        assert_eq!(call.actions().len(), 2);
        let neither = Item::from_json(r#"{"type":"computer_call","call_id":"c"}"#).unwrap();
        assert_eq!(
            neither.as_computer_call().unwrap().shape(),
            ActionShape::Neither
        );
    }

    #[test]
    fn outputs_to_send_back() {
        let item = Item::computer_call_output(&ComputerCallOutput {
            call_id: "call_1".into(),
            screenshot: ScreenshotSource::data_url("image/png", "iVBO"),
            acknowledged_safety_checks: vec![SafetyCheck {
                id: "cu_sc_1".into(),
                code: Some("malicious_instructions".into()),
                message: Some("m".into()),
            }],
        });
        assert_eq!(
            item.to_value(),
            json!({"type":"computer_call_output","call_id":"call_1",
                "output":{"type":"computer_screenshot","image_url":"data:image/png;base64,iVBO"},
                "acknowledged_safety_checks":[{"id":"cu_sc_1","code":"malicious_instructions","message":"m"}]})
        );
        assert_eq!(
            item.view(),
            &ItemView::ComputerCallOutput(OutputHead {
                call_id: "call_1".into()
            })
        );
        let item = Item::computer_call_output(&ComputerCallOutput {
            call_id: "call_2".into(),
            screenshot: ScreenshotSource::FileId("file_1".into()),
            acknowledged_safety_checks: vec![],
        });
        assert_eq!(
            item.to_value(),
            json!({"type":"computer_call_output","call_id":"call_2",
                "output":{"type":"computer_screenshot","file_id":"file_1"}})
        );
        let item = Item::function_call_output(&FunctionCallOutput {
            call_id: "call_3".into(),
            output: FunctionOutput::Parts(vec![
                FunctionOutputPart::InputText {
                    text: "Clicked.".into(),
                },
                FunctionOutputPart::InputImage {
                    image_url: Some("data:image/png;base64,AA==".into()),
                    file_id: None,
                    detail: Some("high".into()),
                },
            ]),
        });
        assert_eq!(
            item.to_value(),
            json!({"type":"function_call_output","call_id":"call_3","output":[
                {"type":"input_text","text":"Clicked."},
                {"type":"input_image","image_url":"data:image/png;base64,AA==","detail":"high"}]})
        );
        let item = Item::function_call_output(&FunctionCallOutput {
            call_id: "call_4".into(),
            output: FunctionOutput::Text("ok".into()),
        });
        assert_eq!(
            item.to_value(),
            json!({"type":"function_call_output","call_id":"call_4","output":"ok"})
        );
        assert_eq!(
            Item::user_text("hi").to_value(),
            json!({"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]})
        );
    }

    #[test]
    fn tool_entries_and_choices() {
        assert_eq!(computer_tool(), json!({"type":"computer"}));
        assert_eq!(
            ComputerUsePreview {
                display_width: 1024,
                display_height: 768,
                environment: "linux".into()
            }
            .to_value(),
            json!({"type":"computer_use_preview","display_width":1024,"display_height":768,"environment":"linux"})
        );
        let mut tool = FunctionTool::new("browser_click", "Click", json!({"type":"object"}));
        tool.strict = Some(true);
        assert_eq!(
            tool.to_value(),
            json!({"type":"function","name":"browser_click","description":"Click","parameters":{"type":"object"},"strict":true})
        );
        let cases = [
            (ToolChoice::Auto, json!("auto")),
            (ToolChoice::None, json!("none")),
            (ToolChoice::Required, json!("required")),
            (
                ToolChoice::Function("f".into()),
                json!({"type":"function","name":"f"}),
            ),
            (
                ToolChoice::BuiltIn("computer".into()),
                json!({"type":"computer"}),
            ),
        ];
        for (choice, expect) in cases {
            assert_eq!(serde_json::to_value(&choice).unwrap(), expect);
        }
    }
}
