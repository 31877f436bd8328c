//! The desktop tools: each call is one block of `hands-toolset`'s computer toolset
//! (`computer_toolset_20260801`: coordinates in screenshot pixels, screenshots sized to the
//! model's image limits and to the response budget), without the batch's closing screenshot.
//! An action answers one line of what changed on the screen — the box of pixels that differ
//! between a capture before and a settled capture after, in screenshot pixels — and a screenshot
//! only when asked.

use async_trait::async_trait;
use hands_core::desktop::{Desktop, DesktopError, SettleBudget};
use hands_core::geometry::{ImageTier, ScreenshotSizing, Size};
use hands_core::image::Pixels;
use hands_core::{CancellationToken, image::ImageFormat};
use hands_toolset::actions::DesktopAction;
use hands_toolset::computer::declaration::DeclarationError;
use hands_toolset::computer::members::Member;
use hands_toolset::computer::{ComputerConfig, ComputerToolset, MemberError};
use hands_toolset::errtext::error_line;
use hands_toolset::wire::ResultBlock;
use rmcp::model::ContentBlock;
use serde_json::{Map, Value};

use crate::budget::Budget;
use crate::tools::SCREENSHOT_ARG;

/// A computer toolset with its desktop type erased: parse a member's input into a
/// [`DesktopAction`], run a parsed action.
#[async_trait]
pub trait DesktopCalls: Send {
    /// Reads a call of `member` without running it: the action, or what is wrong with it.
    fn parse(&self, member: Member, input: &Value) -> Result<DesktopAction, MemberError>;
    /// Runs a parsed action: its content, or why it did not do its work (typed: a driver
    /// fault is told apart by [`DesktopError::is_fault`]).
    async fn act(
        &mut self,
        action: &DesktopAction,
        cancel: &CancellationToken,
    ) -> Result<Vec<ResultBlock>, DesktopError>;
    /// A capture of the whole screen, after waiting for it to settle.
    async fn settled_capture(
        &mut self,
        settle: SettleBudget,
        cancel: &CancellationToken,
    ) -> Result<Pixels, DesktopError>;
    /// The size of the screenshots the model sees.
    fn shot_size(&self) -> Size;
}

#[async_trait]
impl<D: Desktop + 'static> DesktopCalls for ComputerToolset<D> {
    fn parse(&self, member: Member, input: &Value) -> Result<DesktopAction, MemberError> {
        self.parse_member(member, input)
    }

    async fn act(
        &mut self,
        action: &DesktopAction,
        cancel: &CancellationToken,
    ) -> Result<Vec<ResultBlock>, DesktopError> {
        ComputerToolset::act(self, action, cancel).await
    }

    async fn settled_capture(
        &mut self,
        settle: SettleBudget,
        cancel: &CancellationToken,
    ) -> Result<Pixels, DesktopError> {
        self.desktop().settle(settle, cancel).await?;
        self.desktop().capture().await
    }

    fn shot_size(&self) -> Size {
        self.frame().shot()
    }
}

/// What to add to an action's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Then {
    /// The line of what changed, only.
    Nothing,
    /// A screenshot too (the call's `screenshot: true`).
    Screenshot,
}

/// A desktop call read once: the member, the action it means, and whether a screenshot
/// follows. The person is asked about this; running it parses nothing again.
#[derive(Debug, Clone, PartialEq)]
pub struct DesktopRequest {
    /// The member called.
    pub member: Member,
    /// Its validated action.
    pub action: DesktopAction,
    /// What follows it.
    pub then: Then,
}

/// The share of the budget a screenshot may take, leaving room for its caption and for the
/// text of an action that asked for one.
pub const IMAGE_SHARE: f64 = 0.8;

/// The computer toolset configuration for a budget: the high-resolution tier, further capped so
/// a screenshot of any aspect ratio fits [`IMAGE_SHARE`] of the budget; no closing screenshot.
pub fn computer_config(budget: Budget, image_format: ImageFormat) -> ComputerConfig {
    let long_edge = budget
        .image_long_edge(IMAGE_SHARE)
        .min(ImageTier::HighRes.max_long_edge());
    ComputerConfig {
        sizing: ScreenshotSizing {
            tier: ImageTier::HighRes,
            max_long_edge: Some(long_edge),
        },
        image_format,
        append_screenshot: false,
        ..ComputerConfig::default()
    }
}

/// The desktop surface of the server.
pub struct DesktopSurface {
    toolset: Box<dyn DesktopCalls>,
}

impl std::fmt::Debug for DesktopSurface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DesktopSurface").finish_non_exhaustive()
    }
}

/// The answer of one desktop call, before the budget's last fit.
#[derive(Debug)]
pub struct DesktopAnswer {
    /// The content.
    pub content: Vec<ContentBlock>,
    /// Whether it failed.
    pub is_error: bool,
    /// Set when the display is gone.
    pub fault: Option<DesktopError>,
}

impl DesktopSurface {
    /// A surface over `desktop`, its screenshots sized to `budget`.
    pub fn new<D: Desktop + 'static>(
        desktop: D,
        budget: Budget,
        image_format: ImageFormat,
    ) -> Result<DesktopSurface, DeclarationError> {
        let toolset = ComputerToolset::new(desktop, computer_config(budget, image_format))?;
        Ok(DesktopSurface {
            toolset: Box::new(toolset),
        })
    }

    /// Reads a call of `member` with the client's `arguments` without running it: `Err` is the
    /// answer to send (what is wrong; nothing ran), so nobody is asked about a call that cannot
    /// run.
    pub fn prepare(
        &self,
        member: Member,
        arguments: &Map<String, Value>,
    ) -> Result<DesktopRequest, String> {
        let mut input = arguments.clone();
        let observes = crate::tools::computer_is_observation(member);
        let then = match input.remove(SCREENSHOT_ARG) {
            None | Some(Value::Null) | Some(Value::Bool(false)) => Then::Nothing,
            Some(Value::Bool(true)) if !observes => Then::Screenshot,
            Some(other) => {
                return Err(format!(
                    "`{SCREENSHOT_ARG}` must be true or false on an action, got {other}"
                ));
            }
        };
        let action = self
            .toolset
            .parse(member, &Value::Object(input))
            .map_err(|e| error_line(&format!("Error: {e}")))?;
        Ok(DesktopRequest {
            member,
            action,
            then,
        })
    }

    /// Runs a prepared call. Consent is the caller's: this runs the action.
    pub async fn call(
        &mut self,
        request: &DesktopRequest,
        cancel: &CancellationToken,
    ) -> DesktopAnswer {
        let member = request.member;
        let observes = crate::tools::computer_is_observation(member);
        let before = if observes {
            None
        } else {
            // What the screen looked like, to say what the action changed. A failed capture only
            // loses the "what changed" line.
            self.toolset
                .settled_capture(SettleBudget::default(), cancel)
                .await
                .ok()
        };
        let (blocks, is_error, fault) = self.run(&request.action, cancel).await;
        let mut content: Vec<ContentBlock> = blocks.into_iter().map(to_mcp).collect();
        if fault.is_some() || is_error {
            return DesktopAnswer {
                content,
                is_error: true,
                fault,
            };
        }
        if let Some(before) = before {
            let line = match self
                .toolset
                .settled_capture(SettleBudget::default(), cancel)
                .await
            {
                Ok(after) => change_line(&before, &after, self.toolset.shot_size()),
                Err(e) => format!("Done; the screen could not be captured after it: {e}"),
            };
            content = vec![ContentBlock::text(line)];
        }
        if request.then == Then::Screenshot {
            let (blocks, failed, fault) = self.run(&DesktopAction::Screenshot, cancel).await;
            content.extend(blocks.into_iter().map(to_mcp));
            return DesktopAnswer {
                content,
                is_error: failed,
                fault,
            };
        }
        if let Some(size) = observes
            .then(|| member.returns_image())
            .filter(|b| *b)
            .map(|_| self.toolset.shot_size())
        {
            content.push(ContentBlock::text(format!(
                "{member}: the screen as {}x{} screenshot pixels (the coordinates of the other \
                 tools)",
                size.width, size.height
            )));
        }
        DesktopAnswer {
            content,
            is_error: false,
            fault: None,
        }
    }

    async fn run(
        &mut self,
        action: &DesktopAction,
        cancel: &CancellationToken,
    ) -> (Vec<ResultBlock>, bool, Option<DesktopError>) {
        match self.toolset.act(action, cancel).await {
            Ok(content) => (content, false, None),
            Err(e) => {
                // The client reads what went wrong as the model would; a driver fault (or a
                // cancellation) also stops the server's use of the display.
                let text = error_line(&format!("Error: {e}"));
                let fault = (e.is_fault() || matches!(e, DesktopError::Cancelled)).then_some(e);
                (vec![ResultBlock::Text(text)], true, fault)
            }
        }
    }
}

fn to_mcp(block: ResultBlock) -> ContentBlock {
    match block {
        ResultBlock::Text(text) => ContentBlock::text(text),
        ResultBlock::Image(image) => ContentBlock::image(image.base64, image.media_type.mime()),
    }
}

/// The box of pixels that differ between two captures of the same size, in capture pixels
/// `[x0, y0, x1, y1)`; `None` when none differ (or the sizes differ).
pub fn changed_box(before: &Pixels, after: &Pixels) -> Option<[u32; 4]> {
    if before.size() != after.size() || before.format() != after.format() {
        return None;
    }
    let size = before.size();
    let bpp = before.format().bytes_per_pixel();
    let row = size.width as usize * bpp;
    let (mut x0, mut y0, mut x1, mut y1) = (u32::MAX, u32::MAX, 0u32, 0u32);
    for (y, (a, b)) in before
        .data()
        .chunks_exact(row)
        .zip(after.data().chunks_exact(row))
        .enumerate()
    {
        if a == b {
            continue;
        }
        let y = y as u32;
        let first = a
            .chunks_exact(bpp)
            .zip(b.chunks_exact(bpp))
            .position(|(p, q)| p != q)
            .unwrap_or(0) as u32;
        let last = a
            .chunks_exact(bpp)
            .zip(b.chunks_exact(bpp))
            .rposition(|(p, q)| p != q)
            .unwrap_or(0) as u32;
        x0 = x0.min(first);
        x1 = x1.max(last + 1);
        y0 = y0.min(y);
        y1 = y1.max(y + 1);
    }
    (x0 != u32::MAX).then_some([x0, y0, x1, y1])
}

/// One line saying where the screen changed, in screenshot pixels.
pub fn change_line(before: &Pixels, after: &Pixels, shot: Size) -> String {
    let capture = after.size();
    match changed_box(before, after) {
        None => "Done; nothing on the screen changed.".to_owned(),
        Some([x0, y0, x1, y1]) => {
            let sx = |x: u32| u64::from(x) * u64::from(shot.width) / u64::from(capture.width);
            let sy = |y: u32| u64::from(y) * u64::from(shot.height) / u64::from(capture.height);
            let area = u64::from(x1 - x0) * u64::from(y1 - y0);
            let percent = area * 100 / capture.pixels().max(1);
            format!(
                "Done; the screen changed inside [{}, {}, {}, {}] (screenshot pixels, {percent}% \
                 of the screen). Take a screenshot or zoom there to see it.",
                sx(x0),
                sy(y0),
                sx(x1),
                sy(y1)
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hands_core::image::PixelFormat;

    fn pixels(w: u32, h: u32, dots: &[(u32, u32)]) -> Pixels {
        let mut data = vec![0u8; (w * h * 3) as usize];
        for (x, y) in dots {
            data[((y * w + x) * 3) as usize] = 255;
        }
        Pixels::new(Size::new(w, h).unwrap(), PixelFormat::Rgb, data).unwrap()
    }

    #[test]
    fn the_changed_box_bounds_every_changed_pixel() {
        let before = pixels(100, 50, &[]);
        assert_eq!(changed_box(&before, &before), None);
        let after = pixels(100, 50, &[(10, 5), (40, 30), (12, 7)]);
        assert_eq!(changed_box(&before, &after), Some([10, 5, 41, 31]));
    }

    #[test]
    fn the_change_line_speaks_screenshot_pixels() {
        let before = pixels(200, 100, &[]);
        let after = pixels(200, 100, &[(100, 50), (199, 99)]);
        // The model sees a half-size screenshot.
        let line = change_line(&before, &after, Size::new(100, 50).unwrap());
        assert!(line.contains("[50, 25, 100, 50]"), "{line}");
        assert_eq!(
            change_line(&before, &before, Size::new(100, 50).unwrap()),
            "Done; nothing on the screen changed."
        );
    }

    #[test]
    fn screenshots_fit_the_budget() {
        let config = computer_config(Budget::default(), ImageFormat::Png);
        let shot = config.sizing.fit(Size::new(1920, 1080).unwrap());
        assert!(crate::budget::image_tokens(shot) <= 20_000);
        let small = computer_config(Budget::new(2_000).unwrap(), ImageFormat::Png);
        let shot = small.sizing.fit(Size::new(1920, 1080).unwrap());
        assert!(
            crate::budget::image_tokens(shot) <= 1_600,
            "{shot} is {} tokens",
            crate::budget::image_tokens(shot)
        );
    }
}
