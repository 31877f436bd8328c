//! Claude's computer toolset (`computer_toolset_20260801`) and the legacy `computer_20251124` /
//! `computer_20250124` shapes, over any [`Desktop`].
//!
//! A turn's blocks run in order; the first failure is answered with what went wrong and every
//! later block with [`NOT_EXECUTED`]; every block gets exactly one result, echoing
//! `toolset_name`; results hold only text and images.
//!
//! Spec: claude-computer-use-tool, "Acciones por lotes", "Maneja los errores", "Migrar desde
//! `computer_20251124`".

pub mod args;
pub mod declaration;
pub mod members;

use std::time::{Duration, Instant};

use hands_core::CancellationToken;
use hands_core::desktop::{Desktop, DesktopError, SettleBudget};
use hands_core::geometry::{Frame, ScreenshotSizing};
use hands_core::image::{ImageFormat, MAX_IMAGE_BASE64_BYTES};
use serde_json::{Value, json};

use crate::actions::{DesktopAction, DesktopActor, DesktopOutcome, ScreenConfig};
use crate::errtext::error_line;
use crate::strings::{
    COMPUTER_TOOLSET_NAME, LEGACY_20250124_BETA, LEGACY_20250124_TYPE, LEGACY_20251124_BETA,
    LEGACY_20251124_TYPE, LEGACY_TOOL_NAME, NOT_EXECUTED, OK, cursor_position_text,
};
use crate::wire::{ResultBlock, ToolResult, ToolUse, TurnBlock};
use args::InputError;
use declaration::{DeclarationError, ToolsetDeclaration};
use members::{InputShape, Member};

/// Which tool shape the model was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// `computer_toolset_20260801`: members are tools, blocks carry `toolset_name`.
    Toolset(ToolsetDeclaration),
    /// `computer_20251124`: one tool named `computer`, the member in `input.action`; zoom only
    /// with `enable_zoom`.
    Legacy20251124 {
        /// Whether `zoom` is available.
        enable_zoom: bool,
    },
    /// `computer_20250124`: like 20251124, without zoom.
    Legacy20250124,
}

impl Default for Shape {
    fn default() -> Shape {
        Shape::Toolset(ToolsetDeclaration::new())
    }
}

/// How the toolset behaves. Defaults follow the spec.
#[derive(Debug, Clone, PartialEq)]
pub struct ComputerConfig {
    /// The tool shape declared to the model.
    pub shape: Shape,
    /// Screenshot sizing for the model's image tier.
    pub sizing: ScreenshotSizing,
    /// PNG (default) or JPEG.
    pub image_format: ImageFormat,
    /// How long to wait for the screen to settle before a capture.
    pub settle: SettleBudget,
    /// Append a fresh screenshot to the last result of a batch that does not end with one
    /// (default on: saves the model a round trip).
    pub append_screenshot: bool,
    /// Largest base64 text of one image (the API's 5 MB).
    pub max_image_base64: usize,
    /// Capture pixels per screen (input) pixel — 2 for a HiDPI display captured at twice its
    /// logical size; `None`: what the driver reports (1 on X11).
    pub device_pixel_ratio: Option<f64>,
    /// Members that run only after a confirmation: the runner refuses to start without an
    /// approver and asks it before each such block, whatever else it reviews. Empty by
    /// default; [`Member::KEYBOARD`] is what the SDK's toolset requires.
    pub confirm_members: Vec<Member>,
}

impl ComputerConfig {
    /// How the toolset's screenshots are taken (a `wait` member pauses; it never settles).
    pub fn screen(&self) -> ScreenConfig {
        ScreenConfig {
            sizing: self.sizing,
            image_format: self.image_format,
            settle: self.settle,
            max_image_base64: self.max_image_base64,
            device_pixel_ratio: self.device_pixel_ratio,
            ..ScreenConfig::default()
        }
    }
}

impl Default for ComputerConfig {
    fn default() -> ComputerConfig {
        ComputerConfig {
            shape: Shape::default(),
            sizing: ScreenshotSizing::default(),
            image_format: ImageFormat::Png,
            settle: SettleBudget::default(),
            append_screenshot: true,
            max_image_base64: MAX_IMAGE_BASE64_BYTES,
            device_pixel_ratio: None,
            confirm_members: Vec::new(),
        }
    }
}

/// The answer to a turn's computer blocks.
#[derive(Debug)]
pub struct TurnOutcome {
    /// One result per computer block, in block order.
    pub results: Vec<ToolResult>,
    /// Set when the driver itself broke (display gone, cancelled): every block is still
    /// answered, but the run must stop.
    pub fault: Option<DesktopError>,
}

/// The progress of one turn's computer blocks (see [`ComputerToolset::run_block`]).
#[derive(Debug, Default)]
pub struct Batch {
    failed: bool,
    /// Where the caller keeps the last successful result: the one that gets the closing
    /// screenshot (an `is_error` result may hold only text).
    target: Option<usize>,
    /// Whether the last successful block was a `screenshot`.
    ended_with_screenshot: bool,
    /// Whether the failed block may have acted on the screen (a driver error mid-action), so
    /// a screenshot taken before it is stale.
    failure_acted: bool,
    fault: Option<DesktopError>,
}

impl Batch {
    /// Whether a block of this batch failed (later blocks are not executed).
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// Whether the driver broke during the batch (the run must stop).
    pub fn has_fault(&self) -> bool {
        self.fault.is_some()
    }
}

/// Why one block failed.
#[derive(Debug, thiserror::Error)]
enum BlockError {
    #[error("{0}")]
    Input(#[from] InputError),
    #[error("unknown computer member `{name}`: the toolset has {}", member_list())]
    UnknownMember { name: String },
    #[error("the `{0}` member is disabled in this toolset's configs")]
    Disabled(Member),
    #[error(
        "the legacy `computer` tool needs `input.action`, one of {}",
        member_list()
    )]
    NoAction,
    #[error("{0}")]
    Desktop(#[from] DesktopError),
    /// A block read before (its reading's text).
    #[error("{0}")]
    Read(String),
}

/// A block of this toolset read once: the member it names and its action, validated against
/// the current screenshot frame. Approvers are shown this; running it parses nothing again.
///
/// Spec: claude-computer-use-tool, "Acciones por lotes" (every action is validated before it
/// runs); anthropic 2.10's toolsets show `confirm` the member and its parsed input.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedBlock {
    /// The enabled member.
    pub member: Member,
    /// Its validated action.
    pub action: DesktopAction,
}

/// Why a call of a member did not do its work, for callers that are not a model (MCP, Python):
/// typed, so nobody reads it back out of a model's text.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemberError {
    /// The call cannot run as written (an unknown or disabled member, invalid input): nothing
    /// ran, and the text says what to change.
    #[error("{0}")]
    Invalid(String),
    /// The desktop failed the action, was cancelled, or is gone ([`DesktopError::is_fault`]).
    #[error("{0}")]
    Desktop(DesktopError),
}

impl From<BlockError> for MemberError {
    fn from(e: BlockError) -> MemberError {
        match e {
            BlockError::Desktop(e) => MemberError::Desktop(e),
            other => MemberError::Invalid(other.to_string()),
        }
    }
}

/// The refusal of a block that needs a confirmation nobody can give: the wording of the SDK's
/// `ConfirmFailedError`.
pub fn confirm_unavailable_text(member: Member) -> String {
    format!(
        "Permission to run '{}' could not be obtained (the confirmation prompt failed). Do not retry it unless the user asks you to.",
        member.name()
    )
}

fn member_list() -> String {
    Member::ALL
        .iter()
        .map(|m| m.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The computer toolset over a desktop: a codec between Claude's wire and the
/// [`DesktopActor`].
pub struct ComputerToolset<D> {
    actor: DesktopActor<D>,
    config: ComputerConfig,
}

impl<D: Desktop> ComputerToolset<D> {
    /// A toolset over `desktop`; refuses a declaration the API would reject.
    pub fn new(desktop: D, config: ComputerConfig) -> Result<ComputerToolset<D>, DeclarationError> {
        if let Shape::Toolset(decl) = &config.shape {
            decl.validate()?;
        }
        Ok(ComputerToolset {
            actor: DesktopActor::new(desktop, config.screen()),
            config,
        })
    }

    /// The driver.
    pub fn desktop(&mut self) -> &mut D {
        self.actor.desktop()
    }

    /// The configuration.
    pub fn config(&self) -> &ComputerConfig {
        &self.config
    }

    /// The current mapping between screenshot and screen.
    pub fn frame(&self) -> Frame {
        self.actor.frame()
    }

    /// The `tools` entry to send.
    pub fn declaration(&self) -> Value {
        let shot = self.frame().shot();
        match &self.config.shape {
            // validated in `new`
            Shape::Toolset(decl) => decl
                .to_json()
                .unwrap_or_else(|_| json!({"type": crate::strings::COMPUTER_TOOLSET_TYPE})),
            Shape::Legacy20251124 { enable_zoom } => json!({
                "type": LEGACY_20251124_TYPE, "name": LEGACY_TOOL_NAME,
                "display_width_px": shot.width, "display_height_px": shot.height,
                "enable_zoom": enable_zoom,
            }),
            Shape::Legacy20250124 => json!({
                "type": LEGACY_20250124_TYPE, "name": LEGACY_TOOL_NAME,
                "display_width_px": shot.width, "display_height_px": shot.height,
            }),
        }
    }

    /// The `anthropic-beta` header the shape needs, if any.
    pub fn beta_header(&self) -> Option<&'static str> {
        match self.config.shape {
            Shape::Toolset(_) => None,
            Shape::Legacy20251124 { .. } => Some(LEGACY_20251124_BETA),
            Shape::Legacy20250124 => Some(LEGACY_20250124_BETA),
        }
    }

    /// Whether a block is this toolset's: dispatch is on the pair (`toolset_name`, `name`), so a
    /// custom tool that shares a member's name is not routed here.
    pub fn owns(&self, tool_use: &ToolUse) -> bool {
        match self.config.shape {
            Shape::Toolset(_) => tool_use.toolset_name.as_deref() == Some(COMPUTER_TOOLSET_NAME),
            Shape::Legacy20251124 { .. } | Shape::Legacy20250124 => {
                tool_use.toolset_name.is_none() && tool_use.name == LEGACY_TOOL_NAME
            }
        }
    }

    /// The enabled member a block of this toolset names, if any.
    pub fn member(&self, tool_use: &ToolUse) -> Option<Member> {
        self.resolve(tool_use).ok()
    }

    /// Whether a block may run only after a confirmation ([`ComputerConfig::confirm_members`]).
    pub fn requires_confirm(&self, tool_use: &ToolUse) -> bool {
        self.member(tool_use)
            .is_some_and(|m| self.config.confirm_members.contains(&m))
    }

    /// Reads a block of this toolset once: its member (enabled) and its action, validated.
    /// An `Err` is what the model is told; nothing ran.
    pub fn parse_block(&self, tool_use: &ToolUse) -> Result<ParsedBlock, MemberError> {
        Ok(self.parse_inner(tool_use)?)
    }

    fn parse_inner(&self, tool_use: &ToolUse) -> Result<ParsedBlock, BlockError> {
        let member = self.resolve(tool_use)?;
        let shape = match self.config.shape {
            Shape::Toolset(_) => InputShape::Toolset,
            _ => InputShape::Legacy,
        };
        let action = members::parse(member, &tool_use.input, self.frame(), shape)?;
        Ok(ParsedBlock { member, action })
    }

    /// Reads a call of `member` with `input` (the member's input object of
    /// `computer_toolset_20260801`), as a caller that is not a model makes it.
    pub fn parse_member(
        &self,
        member: Member,
        input: &Value,
    ) -> Result<DesktopAction, MemberError> {
        let tool_use = ToolUse {
            id: String::new(),
            name: member.name().to_owned(),
            toolset_name: Some(COMPUTER_TOOLSET_NAME.to_owned()),
            input: input.clone(),
        };
        match self.config.shape {
            Shape::Toolset(_) => self.parse_block(&tool_use).map(|parsed| parsed.action),
            Shape::Legacy20251124 { .. } | Shape::Legacy20250124 => Err(MemberError::Invalid(
                "this toolset has the legacy `computer` shape: call it by `action`".to_owned(),
            )),
        }
    }

    /// Runs one validated action and returns its typed outcome, for callers that present it
    /// themselves (the Python package).
    pub async fn perform(
        &mut self,
        action: &DesktopAction,
        cancel: &CancellationToken,
    ) -> Result<DesktopOutcome, DesktopError> {
        self.actor.run(action, cancel).await
    }

    /// Runs one validated action and answers with what it gave: `ok`, the cursor's position, or
    /// an image. No batch: a caller that is not a model runs one action at a time.
    pub async fn act(
        &mut self,
        action: &DesktopAction,
        cancel: &CancellationToken,
    ) -> Result<Vec<ResultBlock>, DesktopError> {
        let outcome = self.perform(action, cancel).await?;
        Ok(vec![match outcome {
            DesktopOutcome::Done => ResultBlock::Text(OK.to_owned()),
            DesktopOutcome::Image(image) => ResultBlock::Image(image),
            DesktopOutcome::Pointer(p) => ResultBlock::Text(cursor_position_text(p.x(), p.y())),
        }])
    }

    /// Runs this toolset's blocks of a turn in order (blocks it does not own are skipped) and
    /// answers each. Nobody can confirm here: a block whose member requires a confirmation
    /// ([`ComputerConfig::confirm_members`]) is refused with [`confirm_unavailable_text`] and
    /// stops the batch; use a runner with an approver to run them.
    pub async fn run_turn(
        &mut self,
        blocks: &[ToolUse],
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        let mut batch = Batch::default();
        let mut results = Vec::with_capacity(blocks.len());
        let mine: Vec<&ToolUse> = blocks.iter().filter(|b| self.owns(b)).collect();
        for tool_use in mine {
            let index = results.len();
            let result = match self.member(tool_use) {
                Some(member) if self.config.confirm_members.contains(&member) => {
                    let text = confirm_unavailable_text(member);
                    self.refuse_block(&mut batch, tool_use, index, &text)
                }
                _ => self.run_block(&mut batch, tool_use, index, cancel).await,
            };
            results.push(result);
        }
        let fault = self.finish_batch(batch, &mut results, cancel).await;
        TurnOutcome { results, fault }
    }

    /// Whether a turn block is this toolset's, readable or not ([`ComputerToolset::owns`] on
    /// what could be read of it).
    pub fn owns_block(&self, block: &TurnBlock) -> bool {
        self.owns(block.tool_use())
    }

    /// [`ComputerToolset::run_turn`] for blocks read one at a time
    /// ([`ToolUse::blocks_from_text`]): an unreadable block of this toolset is answered with
    /// what was wrong and stops the batch like any failed block; the others run as usual.
    pub async fn run_turn_blocks(
        &mut self,
        blocks: &[TurnBlock],
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        let mut batch = Batch::default();
        let mut results = Vec::with_capacity(blocks.len());
        let mine: Vec<&TurnBlock> = blocks.iter().filter(|b| self.owns_block(b)).collect();
        for block in mine {
            let index = results.len();
            let result = match block {
                TurnBlock::Use(tool_use) => {
                    self.run_block(&mut batch, tool_use, index, cancel).await
                }
                TurnBlock::Unreadable { tool_use, why } => {
                    self.refuse_block(&mut batch, tool_use, index, &format!("Error: {why}"))
                }
            };
            results.push(result);
        }
        let fault = self.finish_batch(batch, &mut results, cancel).await;
        TurnOutcome { results, fault }
    }

    /// Runs one block of a batch. `index` is where the caller will keep its result, so the
    /// batch's closing screenshot can find it: callers that interleave computer blocks with
    /// other tools (bash, the browser) pass their own result positions. After the batch's first
    /// failure every block is answered with exactly [`NOT_EXECUTED`] and nothing runs.
    pub async fn run_block(
        &mut self,
        batch: &mut Batch,
        tool_use: &ToolUse,
        index: usize,
        cancel: &CancellationToken,
    ) -> ToolResult {
        if batch.failed {
            return ToolResult::error(tool_use, NOT_EXECUTED);
        }
        let parsed = self.parse_inner(tool_use);
        self.run_read(batch, tool_use, parsed, index, cancel).await
    }

    /// [`ComputerToolset::run_block`] for a block already read ([`ComputerToolset::parse_block`]
    /// of the same block): nothing is parsed again. A block that could not be read is answered
    /// with what was wrong, and the batch stops there.
    pub async fn run_parsed(
        &mut self,
        batch: &mut Batch,
        tool_use: &ToolUse,
        parsed: Result<ParsedBlock, MemberError>,
        index: usize,
        cancel: &CancellationToken,
    ) -> ToolResult {
        if batch.failed {
            return ToolResult::error(tool_use, NOT_EXECUTED);
        }
        let parsed = parsed.map_err(|e| match e {
            MemberError::Desktop(e) => BlockError::Desktop(e),
            MemberError::Invalid(why) => BlockError::Read(why),
        });
        self.run_read(batch, tool_use, parsed, index, cancel).await
    }

    async fn run_read(
        &mut self,
        batch: &mut Batch,
        tool_use: &ToolUse,
        parsed: Result<ParsedBlock, BlockError>,
        index: usize,
        cancel: &CancellationToken,
    ) -> ToolResult {
        let ran = match parsed {
            Ok(parsed) => {
                let start = Instant::now();
                let member = parsed.member;
                let ran = self.act(&parsed.action, cancel).await;
                tracing::debug!(target: "hands::action", %member, id = %tool_use.id,
                    total_ms = ms(start.elapsed()), "action done");
                ran.map(|content| (member, content))
                    .map_err(BlockError::from)
            }
            Err(e) => Err(e),
        };
        match ran {
            Ok((member, content)) => {
                batch.target = Some(index);
                batch.ended_with_screenshot = member == Member::Screenshot;
                ToolResult::ok(tool_use, content)
            }
            Err(err) => {
                tracing::info!(target: "hands::action", id = %tool_use.id, error = %err, "action failed");
                let result = ToolResult::error(tool_use, error_line(&format!("Error: {err}")));
                if let BlockError::Desktop(e) = err {
                    batch.failure_acted = true;
                    if e.is_fault() || matches!(e, DesktopError::Cancelled) {
                        batch.fault = Some(e);
                    }
                }
                batch.failed = true;
                result
            }
        }
    }

    /// Answers a block that a person (or a policy) refused before it ran: an error with
    /// `reason`, and the batch stops there as after any failure.
    /// `index` is where the caller keeps the result; unused now that a refused block's
    /// `is_error` result never gets the closing screenshot, and kept so callers need not change.
    pub fn refuse_block(
        &mut self,
        batch: &mut Batch,
        tool_use: &ToolUse,
        index: usize,
        reason: &str,
    ) -> ToolResult {
        let _ = index;
        if batch.failed {
            return ToolResult::error(tool_use, NOT_EXECUTED);
        }
        batch.failed = true;
        ToolResult::error(tool_use, error_line(reason))
    }

    /// Ends a batch: when it did not end with a screenshot (and the option is on, and the
    /// `screenshot` member is enabled), a fresh one is appended to its last successful result.
    /// After a failure that is the result before the failed block — an `is_error` result may
    /// hold only text, and the later stop texts stay exactly as specified — and nothing is
    /// taken when the first block failed, or when the last success was a screenshot the
    /// failure cannot have made stale. Returns the driver fault, if the run must stop.
    pub async fn finish_batch(
        &mut self,
        batch: Batch,
        results: &mut [ToolResult],
        cancel: &CancellationToken,
    ) -> Option<DesktopError> {
        let mut fault = batch.fault;
        let current = batch.ended_with_screenshot && !(batch.failed && batch.failure_acted);
        if self.config.append_screenshot
            && self.screenshot_enabled()
            && !current
            && fault.is_none()
            && let Some(result) = batch.target.and_then(|i| results.get_mut(i))
            && !result.is_error
        {
            match self.actor.screenshot(cancel).await {
                Ok(image) => result.content.push(ResultBlock::Image(image)),
                Err(e) => {
                    tracing::warn!(error = %e, "could not append the batch's closing screenshot");
                    if e.is_fault() || matches!(e, DesktopError::Cancelled) {
                        fault = Some(e);
                    }
                }
            }
        }
        fault
    }

    /// Whether the model was given `screenshot`: a disabled member means no screenshot is
    /// ever attached, the batch's closing one included.
    fn screenshot_enabled(&self) -> bool {
        match &self.config.shape {
            Shape::Toolset(decl) => decl.is_enabled(Member::Screenshot),
            Shape::Legacy20251124 { .. } | Shape::Legacy20250124 => true,
        }
    }

    /// The member a block names, by shape.
    fn resolve(&self, tool_use: &ToolUse) -> Result<Member, BlockError> {
        let name = match self.config.shape {
            Shape::Toolset(_) => tool_use.name.as_str(),
            Shape::Legacy20251124 { .. } | Shape::Legacy20250124 => tool_use
                .input
                .get("action")
                .and_then(Value::as_str)
                .ok_or(BlockError::NoAction)?,
        };
        let member = Member::from_name(name).ok_or_else(|| BlockError::UnknownMember {
            name: crate::errtext::name(name),
        })?;
        let enabled = match &self.config.shape {
            Shape::Toolset(decl) => decl.is_enabled(member),
            Shape::Legacy20251124 { enable_zoom } => member != Member::Zoom || *enable_zoom,
            Shape::Legacy20250124 => member != Member::Zoom,
        };
        if enabled {
            Ok(member)
        } else {
            Err(BlockError::Disabled(member))
        }
    }
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e5).round() / 100.0
}
