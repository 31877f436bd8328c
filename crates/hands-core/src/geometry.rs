//! Sizes, points in screen and screenshot space, screenshot sizing for the model's image tiers,
//! and the exact mapping between the two spaces.
//!
//! Three pixel spaces meet here:
//! - **capture** pixels: what the driver's framebuffer holds (physical pixels);
//! - **screen** pixels: where input lands (logical pixels; capture / device-pixel ratio);
//! - **shot** pixels: the screenshot the model sees, after downscaling to its image limits.
//!
//! Spec: claude-computer-use-tool, "Dimensiona las capturas de pantalla para ajustarse a los
//! límites de imagen": the model answers in shot pixels, so every coordinate is mapped back.

use std::fmt;

/// A width and a height in pixels, both at least 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Size {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl Size {
    /// A size; `None` when either side is zero.
    pub fn new(width: u32, height: u32) -> Option<Size> {
        (width > 0 && height > 0).then_some(Size { width, height })
    }

    /// The longer side.
    pub fn long_edge(self) -> u32 {
        self.width.max(self.height)
    }

    /// Width times height.
    pub fn pixels(self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }

    /// The visual-token count of the high-resolution tier: `⌈w/28⌉·⌈h/28⌉`.
    pub fn visual_tokens(self) -> u64 {
        u64::from(self.width.div_ceil(28)) * u64::from(self.height.div_ceil(28))
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.width, self.height)
    }
}

impl std::str::FromStr for Size {
    type Err = String;

    /// Parses `WIDTHxHEIGHT`, e.g. `1280x800`.
    fn from_str(s: &str) -> Result<Size, String> {
        let (w, h) = s
            .split_once(['x', 'X'])
            .ok_or_else(|| format!("expected WIDTHxHEIGHT such as 1280x800, got {s:?}"))?;
        let parse = |part: &str| {
            part.trim()
                .parse::<u32>()
                .map_err(|_| format!("expected WIDTHxHEIGHT such as 1280x800, got {s:?}"))
        };
        Size::new(parse(w)?, parse(h)?)
            .ok_or_else(|| format!("a screen size must not be zero: {s:?}"))
    }
}

/// A point in screen (input) pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScreenPoint {
    /// Pixels from the left edge.
    pub x: u32,
    /// Pixels from the top edge.
    pub y: u32,
}

/// A point in screenshot pixels, known to lie inside the frame it was checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShotPoint {
    x: u32,
    y: u32,
}

impl ShotPoint {
    /// Pixels from the left edge of the screenshot.
    pub fn x(self) -> u32 {
        self.x
    }
    /// Pixels from the top edge of the screenshot.
    pub fn y(self) -> u32 {
        self.y
    }
}

/// A rectangle in screenshot pixels `[x0, y0, x1, y1)` with positive width and height, inside the
/// frame it was checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShotRegion {
    x0: u32,
    y0: u32,
    x1: u32,
    y1: u32,
}

impl ShotRegion {
    /// The four edges `[x0, y0, x1, y1]`.
    pub fn edges(self) -> [u32; 4] {
        [self.x0, self.y0, self.x1, self.y1]
    }
    /// Width and height.
    pub fn size(self) -> Size {
        Size {
            width: self.x1 - self.x0,
            height: self.y1 - self.y0,
        }
    }
}

/// A rectangle in capture pixels, non-empty and inside the capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CaptureRect {
    /// Left edge.
    pub x: u32,
    /// Top edge.
    pub y: u32,
    /// Width and height.
    pub size: Size,
}

/// Why a coordinate or region does not fit the current screenshot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BoundsError {
    /// A point lies outside `[0, width) × [0, height)` of the screenshot.
    #[error(
        "coordinate [{x}, {y}] is outside the screenshot, which is {frame} pixels: x must be 0..={max_x} and y 0..={max_y}"
    )]
    PointOutside {
        /// The x the model sent.
        x: u64,
        /// The y the model sent.
        y: u64,
        /// The screenshot size.
        frame: Size,
        /// Largest valid x.
        max_x: u32,
        /// Largest valid y.
        max_y: u32,
    },
    /// A region has zero or negative width or height.
    #[error(
        "region [{x0}, {y0}, {x1}, {y1}] must have x0 < x1 and y0 < y1 (top-left then bottom-right corner)"
    )]
    EmptyRegion {
        /// Left.
        x0: u64,
        /// Top.
        y0: u64,
        /// Right.
        x1: u64,
        /// Bottom.
        y1: u64,
    },
    /// A region reaches past the screenshot's edges.
    #[error(
        "region [{x0}, {y0}, {x1}, {y1}] reaches outside the screenshot, which is {frame} pixels (x1 at most {}, y1 at most {})",
        frame.width, frame.height
    )]
    RegionOutside {
        /// Left.
        x0: u64,
        /// Top.
        y0: u64,
        /// Right.
        x1: u64,
        /// Bottom.
        y1: u64,
        /// The screenshot size.
        frame: Size,
    },
}

/// The image limits of a model family.
///
/// Spec: claude-computer-use-tool, note under "Dimensiona las capturas de pantalla…".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ImageTier {
    /// Models before Opus 4.7: long edge ≤ 1568 px and ≤ 1.15 megapixels.
    Standard,
    /// Opus 4.7 and later, every `computer_toolset_20260801` model: long edge ≤ 2576 px and
    /// ≤ 4784 visual tokens (`⌈w/28⌉·⌈h/28⌉`).
    #[default]
    HighRes,
}

impl ImageTier {
    /// Longest edge the tier accepts.
    pub const fn max_long_edge(self) -> u32 {
        match self {
            ImageTier::Standard => 1568,
            ImageTier::HighRes => 2576,
        }
    }

    /// Whether an image of `size` is within the tier's limits.
    pub fn accepts(self, size: Size) -> bool {
        size.long_edge() <= self.max_long_edge()
            && match self {
                ImageTier::Standard => size.pixels() <= 1_150_000,
                ImageTier::HighRes => size.visual_tokens() <= 4784,
            }
    }
}

/// How screenshots are sized for the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ScreenshotSizing {
    /// The model's image limits.
    pub tier: ImageTier,
    /// An extra cap on the long edge, below the tier's (e.g. 1024 for fewer tokens per screenshot,
    /// or 2000 when a request will carry more than 20 images).
    pub max_long_edge: Option<u32>,
}

impl ScreenshotSizing {
    /// The largest size with `source`'s aspect ratio that fits every limit; never larger than
    /// `source` (screenshots are only ever scaled down).
    ///
    /// Works for any screen shape: the long edge is searched, the short edge follows from the
    /// aspect ratio (rounded, at least 1 px).
    pub fn fit(self, source: Size) -> Size {
        let cap = self
            .max_long_edge
            .unwrap_or(u32::MAX)
            .min(self.tier.max_long_edge())
            .max(1);
        let long = source.long_edge();
        let short = source.width.min(source.height);
        let shape = |l: u32| -> Size {
            // short' = round(l * short / long), at least 1.
            let s = ((u64::from(l) * u64::from(short) * 2 + u64::from(long))
                / (u64::from(long) * 2))
                .max(1) as u32;
            if source.width >= source.height {
                Size {
                    width: l,
                    height: s,
                }
            } else {
                Size {
                    width: s,
                    height: l,
                }
            }
        };
        let upper = long.min(cap);
        if self.tier.accepts(shape(upper)) {
            return shape(upper);
        }
        // The limits are monotone in the long edge: binary search the largest that fits.
        let (mut lo, mut hi) = (1u32, upper);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if self.tier.accepts(shape(mid)) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        shape(lo)
    }
}

/// The correspondence between the screenshot the model sees, the screen where input lands, and
/// the capture the pixels come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Frame {
    capture: Size,
    screen: Size,
    shot: Size,
}

impl Frame {
    /// A frame for a capture of `capture` pixels at `device_pixel_ratio` (capture pixels per
    /// screen pixel; 1 on X11, 2 on a Retina-like page), sized for the model by `sizing`.
    pub fn new(capture: Size, device_pixel_ratio: f64, sizing: ScreenshotSizing) -> Frame {
        let dpr = if device_pixel_ratio.is_finite() && device_pixel_ratio > 0.0 {
            device_pixel_ratio
        } else {
            1.0
        };
        let logical = |v: u32| ((f64::from(v) / dpr).round() as u32).max(1);
        Frame {
            capture,
            screen: Size {
                width: logical(capture.width),
                height: logical(capture.height),
            },
            shot: sizing.fit(capture),
        }
    }

    /// The same capture and screen, with the screenshot resized to `shot` (used when an image had
    /// to be downscaled further to fit the payload limit).
    pub fn with_shot(self, shot: Size) -> Frame {
        Frame { shot, ..self }
    }

    /// Capture size in physical pixels.
    pub fn capture(self) -> Size {
        self.capture
    }
    /// Screen size in input pixels.
    pub fn screen(self) -> Size {
        self.screen
    }
    /// Screenshot size in the model's pixels.
    pub fn shot(self) -> Size {
        self.shot
    }

    /// Checks a model coordinate against the screenshot.
    pub fn point(self, x: u64, y: u64) -> Result<ShotPoint, BoundsError> {
        if x < u64::from(self.shot.width) && y < u64::from(self.shot.height) {
            Ok(ShotPoint {
                x: x as u32,
                y: y as u32,
            })
        } else {
            Err(BoundsError::PointOutside {
                x,
                y,
                frame: self.shot,
                max_x: self.shot.width - 1,
                max_y: self.shot.height - 1,
            })
        }
    }

    /// Checks a model region `[x0, y0, x1, y1]` against the screenshot: positive width and height,
    /// and `x1 ≤ width`, `y1 ≤ height` (the bottom-right corner may sit on the far edge).
    pub fn region(self, [x0, y0, x1, y1]: [u64; 4]) -> Result<ShotRegion, BoundsError> {
        if x0 >= x1 || y0 >= y1 {
            return Err(BoundsError::EmptyRegion { x0, y0, x1, y1 });
        }
        if x1 > u64::from(self.shot.width) || y1 > u64::from(self.shot.height) {
            return Err(BoundsError::RegionOutside {
                x0,
                y0,
                x1,
                y1,
                frame: self.shot,
            });
        }
        Ok(ShotRegion {
            x0: x0 as u32,
            y0: y0 as u32,
            x1: x1 as u32,
            y1: y1 as u32,
        })
    }

    /// The screen pixel whose area holds the centre of screenshot pixel `p`.
    pub fn to_screen(self, p: ShotPoint) -> ScreenPoint {
        ScreenPoint {
            x: map_center(p.x, self.shot.width, self.screen.width),
            y: map_center(p.y, self.shot.height, self.screen.height),
        }
    }

    /// The screenshot pixel whose area holds the centre of screen pixel `p` (clamped to the
    /// screenshot, for a pointer that sits outside the screen's nominal size).
    pub fn to_shot(self, p: ScreenPoint) -> ShotPoint {
        ShotPoint {
            x: map_center(
                p.x.min(self.screen.width - 1),
                self.screen.width,
                self.shot.width,
            ),
            y: map_center(
                p.y.min(self.screen.height - 1),
                self.screen.height,
                self.shot.height,
            ),
        }
    }

    /// The capture pixels that a screenshot region covers: edges scale outwards so the crop always
    /// contains the whole region.
    pub fn to_capture(self, region: ShotRegion) -> CaptureRect {
        let scale_down =
            |v: u32, from: u32, to: u32| (u64::from(v) * u64::from(to) / u64::from(from)) as u32;
        let scale_up = |v: u32, from: u32, to: u32| {
            (u64::from(v) * u64::from(to)).div_ceil(u64::from(from)) as u32
        };
        let (sw, sh) = (self.shot.width, self.shot.height);
        let (cw, ch) = (self.capture.width, self.capture.height);
        let x = scale_down(region.x0, sw, cw).min(cw - 1);
        let y = scale_down(region.y0, sh, ch).min(ch - 1);
        let x1 = scale_up(region.x1, sw, cw).clamp(x + 1, cw);
        let y1 = scale_up(region.y1, sh, ch).clamp(y + 1, ch);
        CaptureRect {
            x,
            y,
            size: Size {
                width: x1 - x,
                height: y1 - y,
            },
        }
    }
}

/// Maps pixel index `v` of a `from`-wide axis to the pixel of a `to`-wide axis that contains its
/// centre: `⌊(v + ½)·to / from⌋`, in integers.
fn map_center(v: u32, from: u32, to: u32) -> u32 {
    let mapped = (u64::from(v) * 2 + 1) * u64::from(to) / (u64::from(from) * 2);
    (mapped as u32).min(to - 1)
}

/// Fits `inner` inside `bounds`, keeping `inner`'s aspect ratio, scaling up or down; each side at
/// least 1 px. Used for zoom images, which are shown at the usual screenshot size.
pub fn fit_inside(inner: Size, bounds: Size) -> Size {
    let (iw, ih) = (u64::from(inner.width), u64::from(inner.height));
    let (bw, bh) = (u64::from(bounds.width), u64::from(bounds.height));
    // Compare aspect ratios without floats: iw/ih >= bw/bh  <=>  iw*bh >= bw*ih.
    if iw * bh >= bw * ih {
        let h = ((bw * ih * 2 + iw) / (iw * 2)).clamp(1, bh);
        Size {
            width: bounds.width,
            height: h as u32,
        }
    } else {
        let w = ((bh * iw * 2 + ih) / (ih * 2)).clamp(1, bw);
        Size {
            width: w as u32,
            height: bounds.height,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn size(w: u32, h: u32) -> Size {
        Size {
            width: w,
            height: h,
        }
    }

    fn check_fit(tier: ImageTier, cap: Option<u32>, src: Size, expect: Size) {
        let got = ScreenshotSizing {
            tier,
            max_long_edge: cap,
        }
        .fit(src);
        assert_eq!(got, expect, "fit {src} in {tier:?} cap {cap:?}");
        assert!(tier.accepts(got));
    }

    #[test]
    fn fit_table() {
        use ImageTier::*;
        check_fit(Standard, None, size(1024, 768), size(1024, 768));
        check_fit(Standard, None, size(1280, 800), size(1280, 800));
        check_fit(Standard, Some(1024), size(1280, 800), size(1024, 640));
        check_fit(Standard, None, size(1920, 1080), size(1430, 804));
        check_fit(Standard, None, size(1512, 982), size(1331, 864));
        check_fit(HighRes, None, size(1920, 1080), size(1920, 1080));
        check_fit(HighRes, None, size(3840, 2160), size(2576, 1449));
        check_fit(HighRes, None, size(2560, 1600), size(2419, 1512));
        check_fit(Standard, None, size(5000, 300), size(1568, 94));
        check_fit(HighRes, Some(2000), size(3000, 3000), size(1932, 1932));
    }

    #[test]
    fn fit_keeps_aspect_for_odd_shapes() {
        for src in [
            size(1366, 768),
            size(2880, 1800),
            size(800, 1280),
            size(3440, 1440),
            size(7, 3000),
        ] {
            for tier in [ImageTier::Standard, ImageTier::HighRes] {
                let shot = ScreenshotSizing {
                    tier,
                    max_long_edge: None,
                }
                .fit(src);
                assert!(tier.accepts(shot), "{src} -> {shot}");
                let want = f64::from(src.width) / f64::from(src.height);
                let got = f64::from(shot.width) / f64::from(shot.height);
                // Rounding the short side moves the ratio by at most half a pixel of it.
                let tolerance =
                    0.5 / f64::from(shot.width.min(shot.height)) * want.max(1.0 / want) + 1e-9;
                assert!(
                    (got / want - 1.0).abs() <= tolerance * 2.0,
                    "{src} -> {shot}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn region_rules() {
        let frame = Frame::new(size(1280, 800), 1.0, ScreenshotSizing::default());
        assert!(frame.region([0, 0, 1280, 800]).is_ok());
        assert!(matches!(
            frame.region([10, 10, 10, 20]),
            Err(BoundsError::EmptyRegion { .. })
        ));
        assert!(matches!(
            frame.region([0, 0, 1281, 800]),
            Err(BoundsError::RegionOutside { .. })
        ));
        assert_eq!(
            frame.point(1280, 0).unwrap_err().to_string(),
            "coordinate [1280, 0] is outside the screenshot, which is 1280x800 pixels: x must be 0..=1279 and y 0..=799"
        );
    }

    #[test]
    fn zoom_crop_is_in_capture_pixels() {
        let sizing = ScreenshotSizing {
            tier: ImageTier::Standard,
            max_long_edge: Some(1024),
        };
        let frame = Frame::new(size(1280, 800), 1.0, sizing);
        let region = frame.region([100, 200, 400, 350]).unwrap();
        assert_eq!(
            frame.to_capture(region),
            CaptureRect {
                x: 125,
                y: 250,
                size: size(375, 188)
            }
        );
    }

    #[test]
    fn device_pixel_ratio_halves_screen() {
        let frame = Frame::new(size(2880, 1800), 2.0, ScreenshotSizing::default());
        assert_eq!(frame.screen(), size(1440, 900));
        let p = frame.point(0, 0).unwrap();
        assert_eq!(frame.to_screen(p), ScreenPoint { x: 0, y: 0 });
    }

    #[test]
    fn fit_inside_keeps_ratio() {
        assert_eq!(fit_inside(size(300, 150), size(1024, 640)), size(1024, 512));
        assert_eq!(fit_inside(size(100, 400), size(1024, 640)), size(160, 640));
    }

    proptest! {
        /// Every screenshot pixel maps inside the screen, and back within one pixel.
        #[test]
        fn shot_to_screen_round_trip(w in 1u32..5000, h in 1u32..5000, dpr in prop::sample::select(vec![1.0, 1.25, 1.5, 2.0]),
                                     tier in prop::sample::select(vec![ImageTier::Standard, ImageTier::HighRes]),
                                     cap in prop::option::of(200u32..3000), fx in 0.0f64..1.0, fy in 0.0f64..1.0) {
            let frame = Frame::new(size(w, h), dpr, ScreenshotSizing { tier, max_long_edge: cap });
            let shot = frame.shot();
            prop_assert!(tier.accepts(shot));
            let x = ((f64::from(shot.width) * fx) as u32).min(shot.width - 1);
            let y = ((f64::from(shot.height) * fy) as u32).min(shot.height - 1);
            for (x, y) in [(x, y), (0, 0), (shot.width - 1, shot.height - 1)] {
                let p = frame.point(u64::from(x), u64::from(y)).unwrap();
                let s = frame.to_screen(p);
                prop_assert!(s.x < frame.screen().width && s.y < frame.screen().height);
                let back = frame.to_shot(s);
                prop_assert!(back.x().abs_diff(x) <= 1 && back.y().abs_diff(y) <= 1,
                    "{x},{y} -> {s:?} -> {back:?} in {frame:?}");
            }
        }

        /// A zoom region's crop stays inside the capture and covers the region.
        #[test]
        fn zoom_crop_inside_capture(w in 1u32..4000, h in 1u32..4000, a in 0.0f64..1.0, b in 0.0f64..1.0, c in 0.0f64..1.0, d in 0.0f64..1.0) {
            let frame = Frame::new(size(w, h), 1.0, ScreenshotSizing { tier: ImageTier::Standard, max_long_edge: None });
            let shot = frame.shot();
            let xs = [(f64::from(shot.width) * a) as u64, (f64::from(shot.width) * b) as u64 + 1];
            let ys = [(f64::from(shot.height) * c) as u64, (f64::from(shot.height) * d) as u64 + 1];
            let (x0, x1) = (xs[0].min(xs[1]), xs[0].max(xs[1]).min(u64::from(shot.width)));
            let (y0, y1) = (ys[0].min(ys[1]), ys[0].max(ys[1]).min(u64::from(shot.height)));
            if let Ok(region) = frame.region([x0, y0, x1, y1]) {
                let rect = frame.to_capture(region);
                prop_assert!(rect.x + rect.size.width <= w && rect.y + rect.size.height <= h);
            }
        }
    }
}
