//! The simulator's configuration: limits with the spec's numbers as defaults, keys, turn
//! sources and faults to start with.

use std::fmt;

use crate::faults::Fault;
use crate::policy::{Policy, Turn};

/// Requests over this many bytes get 413 `request_too_large` (api-contracts A, "Errors").
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 32 * 1024 * 1024;
/// The model named in the real 400 for legacy computer tools on Claude 5.5 (api-contracts A).
pub const OPUS_5_5: &str = "claude-opus-5-5";
/// The default signing key of thinking signatures and encrypted reasoning.
pub const DEFAULT_SIGNING_KEY: &[u8] = b"hands-sim signing key";

/// An image-size tier of Claude models.
///
/// Spec: claude-computer-use-tool, "Dimensiona las capturas de pantalla…"; api-contracts A,
/// "Image limits".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageTier {
    /// Longest side in pixels.
    pub max_long_edge: u32,
    /// Most visual tokens `⌈w/28⌉·⌈h/28⌉`, when the tier counts them.
    pub max_visual_tokens: Option<u64>,
    /// Most pixels `w·h`, when the tier counts them.
    pub max_pixels: Option<u64>,
}

impl ImageTier {
    /// Opus 4.7 and later, every toolset model: 2576 px long edge, 4784 visual tokens.
    pub const HIGH_RES: ImageTier = ImageTier {
        max_long_edge: 2576,
        max_visual_tokens: Some(4784),
        max_pixels: None,
    };
    /// Earlier models: 1568 px long edge, about 1.15 megapixels.
    pub const STANDARD: ImageTier = ImageTier {
        max_long_edge: 1568,
        max_visual_tokens: None,
        max_pixels: Some(1_150_000),
    };

    /// The limits in words, for error messages.
    pub fn describe(&self) -> String {
        let mut out = format!("long edge <= {} px", self.max_long_edge);
        if let Some(t) = self.max_visual_tokens {
            out.push_str(&format!(", ceil(w/28)*ceil(h/28) <= {t} visual tokens"));
        }
        if let Some(p) = self.max_pixels {
            out.push_str(&format!(", w*h <= {p} pixels"));
        }
        out
    }
}

/// Settings of the Anthropic Messages side.
#[derive(Clone, Debug)]
pub struct AnthropicConfig {
    /// The only API key accepted, in `x-api-key` or as `Authorization: Bearer` (anthropic
    /// 2.10 sends it there); `None` accepts any non-empty key.
    pub api_key: Option<String>,
    /// How long a `thread` is held after its last answer (the real lifetime is not published;
    /// default one hour). A `continue` after it is `thread_not_found`.
    pub thread_ttl: std::time::Duration,
    /// Check that every toolset member call a policy answers with has the input shape the API
    /// declares for it (anthropic 2.10's generated `beta_<toolset>_<member>_input.py`), as a
    /// model's call does (default on); a breach is a policy failure. Turn it off to script a
    /// malformed call on purpose.
    pub member_input_schemas: bool,
    /// Image limits of the model, enforced on computer toolset results (the toolset API does
    /// not downscale).
    pub image_tier: ImageTier,
    /// Models that accept only the toolset ("5.5-class"): a legacy computer tool is a 400.
    pub toolset_only_models: Vec<String>,
    /// Most images in one request (100 on 200k-context models).
    pub max_images: usize,
    /// Prefixes shorter than this are not cached.
    pub min_cacheable_tokens: u64,
    /// Whether an assistant message may come last (prefill). Toolset-era models refuse it.
    pub allow_prefill: bool,
    /// Also check hands' own answer contract, which the real API does not enforce (default
    /// on): a toolset member's error text is one line without control or bidi characters and
    /// at most 4,096 characters, and no computer result but a zoom carries an image while the
    /// toolset's `screenshot` member is disabled. A breach is a 400 whose message starts
    /// `hands-sim contract:`.
    pub hands_contract: bool,
}

impl Default for AnthropicConfig {
    fn default() -> Self {
        AnthropicConfig {
            api_key: None,
            thread_ttl: std::time::Duration::from_secs(3600),
            member_input_schemas: true,
            image_tier: ImageTier::HIGH_RES,
            toolset_only_models: vec![OPUS_5_5.to_owned()],
            max_images: 100,
            min_cacheable_tokens: 1024,
            allow_prefill: false,
            hands_contract: true,
        }
    }
}

/// Settings of the OpenAI Responses side.
#[derive(Clone, Debug)]
pub struct OpenAiConfig {
    /// The only bearer key accepted; `None` accepts any non-empty key.
    pub api_key: Option<String>,
    /// Most decoded image bytes in one request (50 MB).
    pub max_image_bytes: usize,
    /// Prompts shorter than this are not cached (1024 tokens).
    pub min_cacheable_tokens: u64,
    /// Also check hands' own contract, which the real API does not enforce (default on): a
    /// server tool's item (web search, file search, code interpreter, image generation, MCP)
    /// is replayed exactly as emitted, its native content and container id kept. A breach is
    /// a 400 whose message starts `hands-sim contract:`.
    pub hands_contract: bool,
}

impl Default for OpenAiConfig {
    fn default() -> Self {
        OpenAiConfig {
            api_key: None,
            max_image_bytes: 50 * 1024 * 1024,
            min_cacheable_tokens: 1024,
            hands_contract: true,
        }
    }
}

/// How streams are cut into events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamConfig {
    /// Characters per `text_delta` / `output_text.delta` / `thinking_delta`.
    pub text_chunk_chars: usize,
    /// Bytes per `input_json_delta` / `function_call_arguments.delta` for tools that are not
    /// toolset members (toolset members get one complete delta).
    pub json_chunk_bytes: usize,
    /// A `ping` after every this many events (Anthropic), besides the one after
    /// `message_start`; 0 for none.
    pub ping_every: usize,
}

impl Default for StreamConfig {
    fn default() -> Self {
        StreamConfig {
            text_chunk_chars: 24,
            json_chunk_bytes: 16,
            ping_every: 8,
        }
    }
}

/// Everything [`crate::SimServer::start`] needs.
pub struct SimConfig {
    /// The Messages side.
    pub anthropic: AnthropicConfig,
    /// The Responses side.
    pub openai: OpenAiConfig,
    /// Stream cutting.
    pub stream: StreamConfig,
    /// Bodies over this many bytes are refused with 413.
    pub max_request_bytes: usize,
    /// Key of thinking signatures and encrypted reasoning.
    pub signing_key: Vec<u8>,
    /// Scripted turns, served first.
    pub script: Vec<Turn>,
    /// The policy asked once the script is empty.
    pub policy: Option<Box<dyn Policy>>,
    /// Faults for the first requests, in order.
    pub faults: Vec<Fault>,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            anthropic: AnthropicConfig::default(),
            openai: OpenAiConfig::default(),
            stream: StreamConfig::default(),
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            signing_key: DEFAULT_SIGNING_KEY.to_vec(),
            script: Vec::new(),
            policy: None,
            faults: Vec::new(),
        }
    }
}

impl SimConfig {
    /// A configuration serving these turns in order.
    pub fn scripted(turns: Vec<Turn>) -> SimConfig {
        SimConfig {
            script: turns,
            ..SimConfig::default()
        }
    }

    /// A configuration asking `policy` for every turn.
    pub fn with_policy(policy: impl Policy + 'static) -> SimConfig {
        SimConfig {
            policy: Some(Box::new(policy)),
            ..SimConfig::default()
        }
    }
}

impl fmt::Debug for SimConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimConfig")
            .field("anthropic", &self.anthropic)
            .field("openai", &self.openai)
            .field("stream", &self.stream)
            .field("max_request_bytes", &self.max_request_bytes)
            .field("script", &self.script.len())
            .field("policy", &self.policy.is_some())
            .field("faults", &self.faults)
            .finish_non_exhaustive()
    }
}
