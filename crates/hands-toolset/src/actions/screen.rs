//! `screenshot` and `zoom`: settle, capture at full resolution, scale to the model's frame,
//! encode within the payload limit.
//!
//! Spec: claude-computer-use-tool, "Acciones disponibles" (zoom) and "Dimensiona las capturas de
//! pantalla para ajustarse a los límites de imagen".

use std::time::{Duration, Instant};

use hands_core::CancellationToken;
use hands_core::desktop::{Desktop, DesktopError, SettleBudget};
use hands_core::geometry::{Frame, ScreenshotSizing, ShotRegion, fit_inside};
use hands_core::image::{EncodedImage, ImageFormat, Pixels, encode_within};

/// The frame a model's coordinates refer to: the natural one for the screen and the sizing, or
/// the frame of the last screenshot when that one had to shrink further to fit the payload limit
/// (later coordinates are in the pixels the model saw).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ShotFrames {
    /// Capture pixels per screen pixel, when set instead of what the driver reports.
    device_pixel_ratio: Option<f64>,
    /// The last screenshot's frame, when it differs from the natural one.
    shrunk: Option<Frame>,
}

impl ShotFrames {
    /// Frames at the driver's pixel ratio, or at `device_pixel_ratio` when set.
    pub(crate) fn new(device_pixel_ratio: Option<f64>) -> ShotFrames {
        ShotFrames {
            device_pixel_ratio,
            shrunk: None,
        }
    }

    fn natural<D: Desktop>(&self, desktop: &D, sizing: ScreenshotSizing) -> Frame {
        let info = desktop.screen();
        let ratio = self.device_pixel_ratio.unwrap_or(info.device_pixel_ratio);
        Frame::new(info.capture, ratio, sizing)
    }

    /// The current frame.
    pub(crate) fn current<D: Desktop>(&self, desktop: &D, sizing: ScreenshotSizing) -> Frame {
        let natural = self.natural(desktop, sizing);
        match self.shrunk {
            Some(shrunk) if shrunk.capture() == natural.capture() => shrunk,
            _ => natural,
        }
    }

    /// Records the frame of the screenshot just sent.
    pub(crate) fn seen<D: Desktop>(&mut self, desktop: &D, sizing: ScreenshotSizing, seen: Frame) {
        let natural = self.natural(desktop, sizing);
        self.shrunk = (seen.shot() != natural.shot()).then_some(seen);
    }
}

/// Where the time of one image went.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ImageTimings {
    pub settle: Duration,
    pub capture: Duration,
    pub encode: Duration,
    pub settled: bool,
}

/// Settles, then captures the whole screen at full resolution.
async fn settled_capture<D: Desktop>(
    desktop: &mut D,
    settle: SettleBudget,
    cancel: &CancellationToken,
    timings: &mut ImageTimings,
) -> Result<Pixels, DesktopError> {
    let start = Instant::now();
    let report = desktop.settle(settle, cancel).await?;
    timings.settle = start.elapsed();
    timings.settled = report.settled;
    let start = Instant::now();
    let pixels = desktop.capture().await?;
    timings.capture = start.elapsed();
    Ok(pixels)
}

fn encode_fitted(
    pixels: &Pixels,
    target: hands_core::geometry::Size,
    format: ImageFormat,
    limit: usize,
) -> Result<EncodedImage, DesktopError> {
    let scaled = pixels
        .resize(target)
        .map_err(|e| DesktopError::Capture(e.to_string()))?;
    encode_within(&scaled, format, limit).map_err(|e| DesktopError::Capture(e.to_string()))
}

/// The full screen at the frame's screenshot size. Returns the frame the image really has: a
/// screenshot shrunk further to fit the payload limit changes it, and later coordinates follow.
pub(crate) async fn screenshot<D: Desktop>(
    desktop: &mut D,
    frame: Frame,
    settle: SettleBudget,
    format: ImageFormat,
    limit: usize,
    cancel: &CancellationToken,
) -> Result<(EncodedImage, Frame, ImageTimings), DesktopError> {
    let mut timings = ImageTimings::default();
    let pixels = settled_capture(desktop, settle, cancel, &mut timings).await?;
    // The screen may have been resized since the frame was computed: trust the capture.
    if pixels.size() != frame.capture() {
        return Err(DesktopError::Capture(format!(
            "the screen changed size from {} to {} during the capture; take another screenshot",
            frame.capture(),
            pixels.size()
        )));
    }
    let start = Instant::now();
    let image = encode_fitted(&pixels, frame.shot(), format, limit)?;
    timings.encode = start.elapsed();
    let frame = frame.with_shot(image.size);
    Ok((image, frame, timings))
}

/// The capture pixels under `region`, scaled to fit the usual screenshot size with their aspect
/// ratio kept (so small regions gain detail).
pub(crate) async fn zoom<D: Desktop>(
    desktop: &mut D,
    frame: Frame,
    region: ShotRegion,
    settle: SettleBudget,
    format: ImageFormat,
    limit: usize,
    cancel: &CancellationToken,
) -> Result<(EncodedImage, ImageTimings), DesktopError> {
    let mut timings = ImageTimings::default();
    let pixels = settled_capture(desktop, settle, cancel, &mut timings).await?;
    if pixels.size() != frame.capture() {
        return Err(DesktopError::Capture(format!(
            "the screen changed size from {} to {}; take a new screenshot before zooming",
            frame.capture(),
            pixels.size()
        )));
    }
    let start = Instant::now();
    let rect = frame.to_capture(region);
    let crop = pixels
        .crop(rect)
        .map_err(|e| DesktopError::Capture(e.to_string()))?;
    let target = fit_inside(rect.size, frame.shot());
    let image = encode_fitted(&crop, target, format, limit)?;
    timings.encode = start.elapsed();
    Ok((image, timings))
}
