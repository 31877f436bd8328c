//! Messages API wire types: the request, content blocks kept verbatim for replay, the message.
//!
//! Spec: api-contracts A, "Request fields", "Response", "tool_result rules".

use std::fmt;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::verbatim;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user (and tool results).
    User,
    /// The model.
    Assistant,
}

/// A Messages API request. Build one with [`MessagesRequest::new`] and set the fields needed.
///
/// `tools` are kept as JSON values: the toolsets build their own entries (the computer
/// toolset, `bash_20250124`, `text_editor_20250728`, the browser toolset); [`CustomTool`]
/// builds a plain custom tool. Fields this type does not model go in `extra`.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct MessagesRequest {
    /// The model name.
    pub model: String,
    /// Output token limit.
    pub max_tokens: u32,
    /// The system prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<System>,
    /// The conversation, oldest first.
    pub messages: Vec<MessageParam>,
    /// Tool entries, verbatim.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Value>,
    /// How the model may use tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Extended thinking.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking: Option<ThinkingConfig>,
    /// Automatic cache breakpoint for the whole request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
    /// `stream`; the client sets it for streamed calls when left `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// Effort and output format.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_config: Option<OutputConfig>,
    /// Server-side context editing (`{"edits":[…]}`), verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_management: Option<Value>,
    /// Request metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Custom stop sequences.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stop_sequences: Vec<String>,
    /// Sampling temperature (some models reject sampling parameters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// `auto` or `standard_only`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_tier: Option<String>,
    /// Fields not modelled above, sent as given.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// `anthropic-beta` names for this request, added to the client's; not part of the body.
    #[serde(skip)]
    pub betas: Vec<String>,
}

impl MessagesRequest {
    /// A request with the three required fields and nothing else.
    pub fn new(
        model: impl Into<String>,
        max_tokens: u32,
        messages: Vec<MessageParam>,
    ) -> MessagesRequest {
        MessagesRequest {
            model: model.into(),
            max_tokens,
            system: None,
            messages,
            tools: Vec::new(),
            tool_choice: None,
            thinking: None,
            cache_control: None,
            stream: None,
            output_config: None,
            context_management: None,
            metadata: None,
            stop_sequences: Vec::new(),
            temperature: None,
            service_tier: None,
            extra: Map::new(),
            betas: Vec::new(),
        }
    }
}

/// The system prompt: a string or text blocks (which may carry `cache_control`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum System {
    /// A plain string.
    Text(String),
    /// Text blocks.
    Blocks(Vec<SystemBlock>),
}

/// One `{"type":"text","text","cache_control"?}` block of the system prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "text")]
pub struct SystemBlock {
    /// The text.
    pub text: String,
    /// A cache breakpoint after this block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

/// `{"type":"ephemeral","ttl"?}`: a prompt-cache breakpoint (at most 4 per request).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "ephemeral")]
pub struct CacheControl {
    /// Cache lifetime; the API's default is 5 minutes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<CacheTtl>,
}

impl CacheControl {
    /// A breakpoint with the default lifetime.
    pub const EPHEMERAL: CacheControl = CacheControl { ttl: None };
}

/// A cache lifetime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CacheTtl {
    /// `"5m"`.
    #[serde(rename = "5m")]
    FiveMinutes,
    /// `"1h"`.
    #[serde(rename = "1h")]
    OneHour,
}

/// `tool_choice`. `disable_parallel_tool_use` on `auto` means at most one tool use; on `any`
/// and `tool` exactly one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides.
    Auto {
        /// At most one tool use per turn.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        disable_parallel_tool_use: Option<bool>,
    },
    /// The model must use some tool.
    Any {
        /// Exactly one tool use.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        disable_parallel_tool_use: Option<bool>,
    },
    /// The model must use this tool.
    Tool {
        /// The tool's name.
        name: String,
        /// Exactly one tool use.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        disable_parallel_tool_use: Option<bool>,
    },
    /// No tool use.
    None,
}

/// `thinking`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ThinkingConfig {
    /// The model decides how much to think.
    Adaptive {
        /// Whether thinking text comes back.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        display: Option<ThinkingDisplay>,
    },
    /// A fixed budget (≥ 1024, below `max_tokens`).
    Enabled {
        /// Thinking token budget.
        budget_tokens: u32,
        /// Whether thinking text comes back.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        display: Option<ThinkingDisplay>,
    },
    /// No thinking.
    Disabled,
}

/// `thinking.display`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThinkingDisplay {
    /// Thinking text is summarised (needed to see it with toolset models).
    Summarized,
    /// Thinking text is omitted; only the signature comes back.
    Omitted,
    /// Any other value, sent as given.
    #[serde(untagged)]
    Other(String),
}

/// `output_config`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OutputConfig {
    /// `low|medium|high|xhigh|max`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    /// Structured output format, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<Value>,
}

/// `metadata`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metadata {
    /// An opaque user id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
}

/// A custom tool entry `{name, description, input_schema}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CustomTool {
    /// The tool's name.
    pub name: String,
    /// What the tool does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the input.
    pub input_schema: Value,
    /// A cache breakpoint after this tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

impl CustomTool {
    /// A custom tool.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> CustomTool {
        CustomTool {
            name: name.into(),
            description: Some(description.into()),
            input_schema,
            cache_control: None,
        }
    }

    /// The entry for [`MessagesRequest::tools`].
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageParam {
    /// Who wrote it.
    pub role: Role,
    /// What it says.
    pub content: MessageContent,
}

impl MessageParam {
    /// A user message of plain text.
    pub fn user_text(text: impl Into<String>) -> MessageParam {
        MessageParam {
            role: Role::User,
            content: MessageContent::Text(text.into()),
        }
    }

    /// A user message of blocks (tool results first, then any text).
    pub fn user(blocks: Vec<ContentBlock>) -> MessageParam {
        MessageParam {
            role: Role::User,
            content: MessageContent::Blocks(blocks),
        }
    }

    /// An assistant message replaying blocks the model returned, unchanged.
    pub fn assistant(blocks: Vec<ContentBlock>) -> MessageParam {
        MessageParam {
            role: Role::Assistant,
            content: MessageContent::Blocks(blocks),
        }
    }
}

/// A message's content: a string or blocks.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageContent {
    /// Plain text.
    Text(String),
    /// Content blocks.
    Blocks(Vec<ContentBlock>),
}

impl Serialize for MessageContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            MessageContent::Text(text) => serializer.serialize_str(text),
            MessageContent::Blocks(blocks) => blocks.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for MessageContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ContentVisitor;
        impl<'de> Visitor<'de> for ContentVisitor {
            type Value = MessageContent;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of content blocks")
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<MessageContent, E> {
                Ok(MessageContent::Text(text.to_owned()))
            }
            fn visit_string<E: de::Error>(self, text: String) -> Result<MessageContent, E> {
                Ok(MessageContent::Text(text))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<MessageContent, A::Error> {
                let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(block) = seq.next_element::<ContentBlock>()? {
                    blocks.push(block);
                }
                Ok(MessageContent::Blocks(blocks))
            }
        }
        deserializer.deserialize_any(ContentVisitor)
    }
}

/// `type` of a text block.
pub const BLOCK_TEXT: &str = "text";
/// `type` of a tool use block.
pub const BLOCK_TOOL_USE: &str = "tool_use";
/// `type` of a tool result block.
pub const BLOCK_TOOL_RESULT: &str = "tool_result";
/// `type` of a thinking block.
pub const BLOCK_THINKING: &str = "thinking";
/// `type` of a redacted thinking block.
pub const BLOCK_REDACTED_THINKING: &str = "redacted_thinking";
/// `type` of an image block.
pub const BLOCK_IMAGE: &str = "image";

/// A content block, kept as the exact JSON text it was received (or built) as, with a typed
/// view of it.
///
/// Serialising a block writes that text unchanged, byte for byte: thinking signatures,
/// redacted thinking data and blocks of types this crate does not know are replayed exactly
/// (api-contracts.md A, "thinking": "Replay them unmodified in the assistant turn").
///
/// Deserialising needs `serde_json` driving directly (`from_str`, `from_slice`, `from_value`);
/// it fails inside `#[serde(flatten)]` or untagged enums, which buffer values first.
#[derive(Clone)]
pub struct ContentBlock {
    raw: Box<RawValue>,
    view: Block,
}

/// The typed view of a [`ContentBlock`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Block {
    /// `text`.
    Text(TextBlock),
    /// `tool_use`.
    ToolUse(ToolUseBlock),
    /// `thinking`.
    Thinking(ThinkingBlock),
    /// `redacted_thinking`.
    RedactedThinking(RedactedThinkingBlock),
    /// `tool_result` (the content is left in the raw JSON: it may hold large images).
    ToolResult(ToolResultHead),
    /// `image` (the data is left in the raw JSON).
    Image(ImageHead),
    /// Any other block type, as a JSON value.
    Other(Value),
}

/// A `text` block.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct TextBlock {
    /// The text.
    #[serde(default)]
    pub text: String,
    /// Citations, verbatim.
    #[serde(default)]
    pub citations: Option<Vec<Value>>,
}

/// A `tool_use` block.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct ToolUseBlock {
    /// `toolu_…`, answered by a `tool_result` with this `tool_use_id`.
    pub id: String,
    /// The tool, or the toolset member.
    pub name: String,
    /// The arguments.
    pub input: Value,
    /// Set only for toolset members (`"computer"`, `"browser"`).
    #[serde(default)]
    pub toolset_name: Option<String>,
}

/// A `thinking` block.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct ThinkingBlock {
    /// The thinking text (empty when display is omitted).
    #[serde(default)]
    pub thinking: String,
    /// The signature that must come back unchanged.
    #[serde(default)]
    pub signature: String,
}

/// A `redacted_thinking` block.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct RedactedThinkingBlock {
    /// Encrypted thinking, replayed unchanged.
    pub data: String,
}

/// The head of a `tool_result` block.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct ToolResultHead {
    /// The `tool_use` this answers.
    pub tool_use_id: String,
    /// Echoed for toolset members.
    #[serde(default)]
    pub toolset_name: Option<String>,
    /// Whether the tool failed.
    #[serde(default)]
    pub is_error: bool,
}

/// The head of an `image` block.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ImageHead {
    /// `base64`, `url` or `file`.
    pub source_type: String,
    /// `image/png`... for base64 sources.
    pub media_type: Option<String>,
}

#[derive(Deserialize)]
struct ImageWire {
    source: ImageSourceHead,
}

#[derive(Deserialize)]
struct ImageSourceHead {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    media_type: Option<String>,
}

impl Block {
    /// Parses the view of a block's JSON text. A known type with missing required fields is
    /// an error; an unknown type is [`Block::Other`].
    fn parse(json: &str) -> Result<Block, serde_json::Error> {
        let kind = verbatim::type_of(json)?;
        Ok(match kind.as_deref() {
            Some(BLOCK_TEXT) => Block::Text(serde_json::from_str(json)?),
            Some(BLOCK_TOOL_USE) => Block::ToolUse(serde_json::from_str(json)?),
            Some(BLOCK_THINKING) => Block::Thinking(serde_json::from_str(json)?),
            Some(BLOCK_REDACTED_THINKING) => Block::RedactedThinking(serde_json::from_str(json)?),
            Some(BLOCK_TOOL_RESULT) => Block::ToolResult(serde_json::from_str(json)?),
            Some(BLOCK_IMAGE) => {
                let image: ImageWire = serde_json::from_str(json)?;
                Block::Image(ImageHead {
                    source_type: image.source.kind,
                    media_type: image.source.media_type,
                })
            }
            _ => Block::Other(serde_json::from_str(json)?),
        })
    }
}

impl ContentBlock {
    /// A block from raw JSON, kept exactly.
    pub fn from_raw(raw: Box<RawValue>) -> Result<ContentBlock, serde_json::Error> {
        let view = Block::parse(raw.get())?;
        Ok(ContentBlock { raw, view })
    }

    /// A block from JSON text, kept exactly.
    pub fn from_json(json: &str) -> Result<ContentBlock, serde_json::Error> {
        ContentBlock::from_raw(RawValue::from_string(json.to_owned())?)
    }

    /// A block from a JSON value.
    pub fn from_value(value: &Value) -> Result<ContentBlock, serde_json::Error> {
        ContentBlock::from_raw(serde_json::value::to_raw_value(value)?)
    }

    fn from_serialize(value: &impl Serialize) -> ContentBlock {
        let raw = verbatim::to_raw(value);
        // The structs serialised here all produce valid blocks of a known type.
        let view = Block::parse(raw.get()).unwrap_or(Block::Other(Value::Null));
        ContentBlock { raw, view }
    }

    /// `{"type":"text","text":…}`.
    pub fn text(text: &str) -> ContentBlock {
        #[derive(Serialize)]
        struct Wire<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            text: &'a str,
        }
        ContentBlock::from_serialize(&Wire {
            kind: BLOCK_TEXT,
            text,
        })
    }

    /// `{"type":"image","source":{"type":"base64","media_type","data"}}`.
    pub fn image_base64(media_type: &str, data: &str) -> ContentBlock {
        #[derive(Serialize)]
        struct Source<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            media_type: &'a str,
            data: &'a str,
        }
        #[derive(Serialize)]
        struct Wire<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            source: Source<'a>,
        }
        ContentBlock::from_serialize(&Wire {
            kind: BLOCK_IMAGE,
            source: Source {
                kind: "base64",
                media_type,
                data,
            },
        })
    }

    /// A `tool_result` block.
    pub fn tool_result(result: &ToolResult) -> ContentBlock {
        ContentBlock::from_serialize(result)
    }

    /// The typed view.
    pub fn view(&self) -> &Block {
        &self.view
    }

    /// The tool use, when this is one.
    pub fn as_tool_use(&self) -> Option<&ToolUseBlock> {
        match &self.view {
            Block::ToolUse(tool_use) => Some(tool_use),
            _ => None,
        }
    }

    /// The exact JSON text.
    pub fn raw_json(&self) -> &str {
        self.raw.get()
    }

    /// The block as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::from_str(self.raw.get()).unwrap_or(Value::Null)
    }

    /// This block with `cache_control` set (or removed with `None`). The other keys keep
    /// their values; the text is rewritten.
    pub fn with_cache_control(&self, cache_control: Option<CacheControl>) -> ContentBlock {
        let value = cache_control.map(|cc| serde_json::to_value(cc).unwrap_or(Value::Null));
        match verbatim::with_key(&self.raw, "cache_control", value) {
            Ok(raw) => ContentBlock {
                raw,
                view: self.view.clone(),
            },
            // The raw text is always a JSON object (checked at construction).
            Err(_) => self.clone(),
        }
    }
}

impl PartialEq for ContentBlock {
    /// Blocks are equal when their JSON texts are byte-identical.
    fn eq(&self, other: &ContentBlock) -> bool {
        self.raw.get() == other.raw.get()
    }
}

impl fmt::Debug for ContentBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.view.fmt(f)
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.raw.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        ContentBlock::from_raw(raw).map_err(de::Error::custom)
    }
}

/// A `tool_result` to build: answers one `tool_use` (api-contracts.md A, "tool_result rules").
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename = "tool_result")]
pub struct ToolResult {
    /// The `tool_use` it answers.
    pub tool_use_id: String,
    /// Echo of the call's `toolset_name` (required for toolset members).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub toolset_name: Option<String>,
    /// The result.
    pub content: MessageContent,
    /// Marks a failed call.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// A cache breakpoint after this block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

/// The Messages API's `stop_reason`: why the model ended its answer, as the API sent it.
///
/// Not why a hands run stopped: that is `hands_runner::StopReason`, which keeps this value,
/// provider-neutral, in `ApiStop` when the model's answer ends the run.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MessagesStopReason {
    /// `end_turn`.
    EndTurn,
    /// `max_tokens`.
    MaxTokens,
    /// `stop_sequence`.
    StopSequence,
    /// `tool_use`: answer every tool use.
    ToolUse,
    /// `pause_turn`: send the turn back to let the model continue.
    PauseTurn,
    /// `refusal` (with `stop_details`).
    Refusal,
    /// `model_context_window_exceeded`.
    ModelContextWindowExceeded,
    /// `compaction`: the answer is a `compaction` block alone (a compaction request, or
    /// `pause_after_compaction`); send it back to let the turn go on.
    Compaction,
    /// A value this crate does not know.
    Unknown(String),
}

impl MessagesStopReason {
    /// Every known reason with its exact string.
    pub const KNOWN: [(MessagesStopReason, &'static str); 8] = [
        (MessagesStopReason::EndTurn, "end_turn"),
        (MessagesStopReason::MaxTokens, "max_tokens"),
        (MessagesStopReason::StopSequence, "stop_sequence"),
        (MessagesStopReason::ToolUse, "tool_use"),
        (MessagesStopReason::PauseTurn, "pause_turn"),
        (MessagesStopReason::Refusal, "refusal"),
        (
            MessagesStopReason::ModelContextWindowExceeded,
            "model_context_window_exceeded",
        ),
        (MessagesStopReason::Compaction, "compaction"),
    ];

    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            MessagesStopReason::Unknown(other) => other,
            known => MessagesStopReason::KNOWN
                .iter()
                .find(|(reason, _)| reason == known)
                .map_or("", |(_, text)| text),
        }
    }

    /// Parses a wire string.
    pub fn parse(text: &str) -> MessagesStopReason {
        MessagesStopReason::KNOWN
            .iter()
            .find(|(_, known)| *known == text)
            .map_or_else(
                || MessagesStopReason::Unknown(text.to_owned()),
                |(reason, _)| reason.clone(),
            )
    }
}

impl Serialize for MessagesStopReason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for MessagesStopReason {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Ok(MessagesStopReason::parse(&text))
    }
}

/// Token usage. Total input = `input_tokens` + `cache_creation_input_tokens` +
/// `cache_read_input_tokens`. An explicit `null` count reads as absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Uncached input tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Output tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Input tokens written to the cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    /// Input tokens read from the cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u64>,
    /// Cache writes by lifetime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation: Option<CacheCreation>,
    /// Output breakdown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens_details: Option<OutputTokensDetails>,
    /// `standard`, `priority`, `batch`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_tier: Option<String>,
    /// Other usage fields, verbatim (`server_tool_use`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Usage {
    /// All input tokens, cached or not.
    pub fn total_input_tokens(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_creation_input_tokens.unwrap_or(0))
            .saturating_add(self.cache_read_input_tokens.unwrap_or(0))
    }
}

/// `usage.cache_creation`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheCreation {
    /// Tokens written with a 5-minute lifetime.
    #[serde(default)]
    pub ephemeral_5m_input_tokens: u64,
    /// Tokens written with a 1-hour lifetime.
    #[serde(default)]
    pub ephemeral_1h_input_tokens: u64,
    /// Other fields, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `usage.output_tokens_details`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OutputTokensDetails {
    /// Tokens spent thinking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_tokens: Option<u64>,
    /// Other fields, verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A model answer: `{"id","type":"message","role":"assistant","model","content",
/// "stop_reason","stop_sequence","usage",…}`. Every other top-level field stays in `extra`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Message {
    /// `msg_…`.
    pub id: String,
    /// The model that answered.
    pub model: String,
    /// Always the assistant.
    pub role: Role,
    /// The blocks, verbatim.
    pub content: Vec<ContentBlock>,
    /// Why it stopped (`None` while streaming).
    pub stop_reason: Option<MessagesStopReason>,
    /// The stop sequence that matched.
    pub stop_sequence: Option<String>,
    /// Token usage.
    pub usage: Usage,
    /// Other top-level fields (`stop_details`, `container`, `context_management`…), verbatim.
    pub extra: Map<String, Value>,
}

/// `type` of a message.
pub const MESSAGE_TYPE: &str = "message";

impl Message {
    /// The tool uses to answer, in order.
    pub fn tool_uses(&self) -> impl Iterator<Item = &ToolUseBlock> {
        self.content.iter().filter_map(ContentBlock::as_tool_use)
    }

    /// The text blocks joined.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|block| match block.view() {
                Block::Text(text) => Some(text.text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The assistant message that replays this answer unchanged.
    pub fn to_param(&self) -> MessageParam {
        MessageParam::assistant(self.content.clone())
    }

    /// `stop_details` (set on refusals).
    pub fn stop_details(&self) -> Option<&Value> {
        self.extra.get("stop_details").filter(|v| !v.is_null())
    }

    /// `context_management` (the edits the server applied).
    pub fn context_management(&self) -> Option<&Value> {
        self.extra
            .get("context_management")
            .filter(|v| !v.is_null())
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(8 + self.extra.len()))?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("type", MESSAGE_TYPE)?;
        map.serialize_entry("role", &self.role)?;
        map.serialize_entry("model", &self.model)?;
        map.serialize_entry("content", &self.content)?;
        map.serialize_entry("stop_reason", &self.stop_reason)?;
        map.serialize_entry("stop_sequence", &self.stop_sequence)?;
        map.serialize_entry("usage", &self.usage)?;
        for (key, value) in &self.extra {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MessageVisitor;
        impl<'de> Visitor<'de> for MessageVisitor {
            type Value = Message;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a Messages API message object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Message, A::Error> {
                let mut id = None;
                let mut model = None;
                let mut role = None;
                let mut content = None;
                let mut stop_reason = None;
                let mut stop_sequence = None;
                let mut usage = None;
                let mut extra = Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "id" => id = Some(map.next_value::<String>()?),
                        "type" => {
                            let kind = map.next_value::<String>()?;
                            if kind != MESSAGE_TYPE {
                                return Err(de::Error::custom(format!(
                                    "expected type \"message\", got {kind:?}"
                                )));
                            }
                        }
                        "model" => model = Some(map.next_value::<String>()?),
                        "role" => role = Some(map.next_value::<Role>()?),
                        "content" => content = Some(map.next_value::<Vec<ContentBlock>>()?),
                        "stop_reason" => {
                            stop_reason = map.next_value::<Option<MessagesStopReason>>()?
                        }
                        "stop_sequence" => stop_sequence = map.next_value::<Option<String>>()?,
                        "usage" => usage = Some(map.next_value::<Usage>()?),
                        _ => {
                            let value = map.next_value::<Value>()?;
                            extra.insert(key, value);
                        }
                    }
                }
                Ok(Message {
                    id: id.ok_or_else(|| de::Error::missing_field("id"))?,
                    model: model.ok_or_else(|| de::Error::missing_field("model"))?,
                    role: role.unwrap_or(Role::Assistant),
                    content: content.ok_or_else(|| de::Error::missing_field("content"))?,
                    stop_reason,
                    stop_sequence,
                    usage: usage.unwrap_or_default(),
                    extra,
                })
            }
        }
        deserializer.deserialize_map(MessageVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stop_reasons_round_trip_their_exact_strings() {
        for (reason, text) in MessagesStopReason::KNOWN {
            assert_eq!(reason.as_str(), text);
            assert_eq!(MessagesStopReason::parse(text), reason);
        }
        assert_eq!(
            MessagesStopReason::parse("new_reason"),
            MessagesStopReason::Unknown("new_reason".into())
        );
        assert_eq!(
            MessagesStopReason::parse("new_reason").as_str(),
            "new_reason"
        );
    }

    #[test]
    fn block_text_is_kept_byte_for_byte() {
        // Odd spacing, key order, escapes and a float: all must survive.
        let cases = [
            r#"{"type":"thinking","signature":"EqQBCkgIARABGAIiQL+/abc==","thinking":"Let me \u00e9 think"}"#,
            r#"{ "type" : "redacted_thinking", "data" : "EmwKAhgBEgy3va" }"#,
            r#"{"type":"tool_use","id":"toolu_1","name":"left_click","toolset_name":"computer","input":{"coordinate":[512,742.50]}}"#,
            r#"{"type":"future_block","payload":{"z":1,"a":[true,null]}}"#,
        ];
        for json in cases {
            let block: ContentBlock = serde_json::from_str(json).unwrap();
            assert_eq!(serde_json::to_string(&block).unwrap(), json);
        }
    }

    #[test]
    fn views_of_known_blocks() {
        let block = ContentBlock::from_json(
            r#"{"type":"tool_use","id":"toolu_1","name":"key","toolset_name":"computer","input":{"text":"ctrl+s"}}"#,
        )
        .unwrap();
        let tool_use = block.as_tool_use().unwrap();
        assert_eq!(tool_use.toolset_name.as_deref(), Some("computer"));
        assert_eq!(tool_use.input, json!({"text":"ctrl+s"}));

        let block = ContentBlock::from_json(r#"{"type":"mystery","x":1}"#).unwrap();
        assert_eq!(block.view(), &Block::Other(json!({"type":"mystery","x":1})));

        let err =
            ContentBlock::from_json(r#"{"type":"tool_use","name":"key","input":{}}"#).unwrap_err();
        assert!(err.to_string().contains("missing field `id`"), "{err}");
    }

    #[test]
    fn tool_result_builder_shapes() {
        let result = ToolResult {
            tool_use_id: "toolu_1".into(),
            toolset_name: Some("computer".into()),
            content: MessageContent::Blocks(vec![
                ContentBlock::text("Clicked."),
                ContentBlock::image_base64("image/png", "iVBORw0KGgo="),
            ]),
            is_error: false,
            cache_control: Some(CacheControl::EPHEMERAL),
        };
        let block = ContentBlock::tool_result(&result);
        assert_eq!(
            block.to_value(),
            json!({"type":"tool_result","tool_use_id":"toolu_1","toolset_name":"computer",
                "content":[{"type":"text","text":"Clicked."},
                    {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}],
                "cache_control":{"type":"ephemeral"}})
        );
        match block.view() {
            Block::ToolResult(head) => {
                assert_eq!(head.tool_use_id, "toolu_1");
                assert!(!head.is_error);
            }
            other => panic!("unexpected view {other:?}"),
        }
        let halted = ContentBlock::tool_result(&ToolResult {
            tool_use_id: "toolu_2".into(),
            toolset_name: Some("computer".into()),
            content: MessageContent::Text(
                "Not executed: an earlier computer action in this turn failed.".into(),
            ),
            is_error: true,
            cache_control: None,
        });
        assert_eq!(
            halted.to_value(),
            json!({"type":"tool_result","tool_use_id":"toolu_2","toolset_name":"computer","is_error":true,
                "content":"Not executed: an earlier computer action in this turn failed."})
        );
    }

    #[test]
    fn cache_control_moves_without_touching_other_keys() {
        let block = ContentBlock::text("hi").with_cache_control(Some(CacheControl {
            ttl: Some(CacheTtl::OneHour),
        }));
        assert_eq!(
            block.to_value(),
            json!({"type":"text","text":"hi","cache_control":{"type":"ephemeral","ttl":"1h"}})
        );
        assert_eq!(
            block.with_cache_control(None).to_value(),
            json!({"type":"text","text":"hi"})
        );
    }

    #[test]
    fn request_fields_serialise_as_the_api_expects() {
        let mut req = MessagesRequest::new("claude-x", 1024, vec![MessageParam::user_text("hi")]);
        req.tool_choice = Some(ToolChoice::Auto {
            disable_parallel_tool_use: Some(true),
        });
        req.thinking = Some(ThinkingConfig::Adaptive {
            display: Some(ThinkingDisplay::Summarized),
        });
        req.system = Some(System::Blocks(vec![SystemBlock {
            text: "sys".into(),
            cache_control: Some(CacheControl::EPHEMERAL),
        }]));
        req.extra.insert("inference_geo".into(), json!("us"));
        req.betas.push("context-management-2025-06-27".into());
        assert_eq!(
            serde_json::to_value(&req).unwrap(),
            json!({"model":"claude-x","max_tokens":1024,
                "system":[{"type":"text","text":"sys","cache_control":{"type":"ephemeral"}}],
                "messages":[{"role":"user","content":"hi"}],
                "tool_choice":{"type":"auto","disable_parallel_tool_use":true},
                "thinking":{"type":"adaptive","display":"summarized"},
                "inference_geo":"us"})
        );
        let cases = [
            (ToolChoice::None, json!({"type":"none"})),
            (
                ToolChoice::Any {
                    disable_parallel_tool_use: None,
                },
                json!({"type":"any"}),
            ),
            (
                ToolChoice::Tool {
                    name: "get_weather".into(),
                    disable_parallel_tool_use: Some(true),
                },
                json!({"type":"tool","name":"get_weather","disable_parallel_tool_use":true}),
            ),
        ];
        for (choice, expect) in cases {
            assert_eq!(serde_json::to_value(&choice).unwrap(), expect);
        }
        let thinking = [
            (
                ThinkingConfig::Enabled {
                    budget_tokens: 2048,
                    display: None,
                },
                json!({"type":"enabled","budget_tokens":2048}),
            ),
            (ThinkingConfig::Disabled, json!({"type":"disabled"})),
            (
                ThinkingConfig::Adaptive {
                    display: Some(ThinkingDisplay::Other("updates".into())),
                },
                json!({"type":"adaptive","display":"updates"}),
            ),
        ];
        for (config, expect) in thinking {
            assert_eq!(serde_json::to_value(&config).unwrap(), expect);
        }
    }

    #[test]
    fn custom_tool_entry() {
        let tool = CustomTool::new(
            "get_weather",
            "Weather for a city",
            json!({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}),
        );
        assert_eq!(
            tool.to_value(),
            json!({"name":"get_weather","description":"Weather for a city",
                "input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}})
        );
    }

    #[test]
    fn message_content_string_or_blocks() {
        let param: MessageParam =
            serde_json::from_str(r#"{"role":"user","content":"plain"}"#).unwrap();
        assert_eq!(param.content, MessageContent::Text("plain".into()));
        let param: MessageParam =
            serde_json::from_str(r#"{"role":"assistant","content":[{"type":"text","text":"a"}]}"#)
                .unwrap();
        assert_eq!(
            param.content,
            MessageContent::Blocks(vec![
                ContentBlock::from_json(r#"{"type":"text","text":"a"}"#).unwrap()
            ])
        );
    }
}
