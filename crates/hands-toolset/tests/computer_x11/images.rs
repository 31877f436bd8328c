//! `screenshot` and `zoom`, checked pixel by pixel against the pattern the recorder's window shows.

use hands_testkit::{Pattern, RecorderConfig, channel_distance};
use serde_json::json;

use crate::support::{Image, Rig, config};

/// Compares `image`, which shows the capture rectangle `rect` = (x, y, width, height) scaled to
/// the image's size, with the pattern: every sampled image pixel whose source lies at least
/// `inset` capture pixels inside a cell (away from the blur of scaling at cell edges) must have
/// the cell's colour, within `tolerance` per channel. Returns (samples checked, samples matching).
fn compare(
    image: &Image,
    rect: (f64, f64, f64, f64),
    pattern: Pattern,
    inset: f64,
    tolerance: u8,
) -> (usize, usize) {
    let (rx, ry, rw, rh) = rect;
    let (sx, sy) = (rw / f64::from(image.width), rh / f64::from(image.height));
    let (mut n_checked, mut n_matching) = (0, 0);
    for v in (0..image.height).step_by(3) {
        for u in (0..image.width).step_by(3) {
            let (x, y) = (
                rx + (f64::from(u) + 0.5) * sx,
                ry + (f64::from(v) + 0.5) * sy,
            );
            if pattern.inset(x, y) < inset {
                continue;
            }
            n_checked += 1;
            let want = pattern.rgb_at(x as u32, y as u32);
            if channel_distance(image.rgb_at(u, v), want) <= tolerance {
                n_matching += 1;
            }
        }
    }
    (n_checked, n_matching)
}

async fn screenshot_is_the_whole_screen_scaled_to_the_frame(width: u32, height: u32) {
    let mut rig = Rig::new(width, height);
    let answer = rig.one("screenshot", json!({})).await;
    assert!(!answer.is_error(), "{}", answer.summary());
    // Only the image: no text block.
    assert_eq!(answer.json["content"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        answer.json["content"][0]["source"]["media_type"],
        "image/png"
    );
    let image = answer.image();
    let shot = rig.shot();
    assert_eq!((image.width, image.height), (shot.width, shot.height));
    assert_eq!(shot.long_edge(), 1024);
    let rect = (0.0, 0.0, f64::from(width), f64::from(height));
    let (n_checked, n_matching) = compare(&image, rect, rig.recorder.pattern(), 3.0, 4);
    assert!(n_checked > 5_000, "{n_checked} samples");
    assert_eq!(
        n_matching, n_checked,
        "screenshot of {width}x{height} as {shot}"
    );
}

#[tokio::test]
async fn screenshot_is_the_whole_screen_scaled_1280x800() {
    screenshot_is_the_whole_screen_scaled_to_the_frame(1280, 800).await;
}

#[tokio::test]
async fn screenshot_is_the_whole_screen_scaled_1000x1700_portrait() {
    screenshot_is_the_whole_screen_scaled_to_the_frame(1000, 1700).await;
}

#[tokio::test]
async fn zoom_returns_the_full_resolution_pixels_of_the_region() {
    // Cells of 2 screen pixels: the screenshot, scaled by 1/1.875, blurs them together, so only a
    // crop of the full-resolution capture can show them.
    let mut rig = Rig::with(
        1920,
        1080,
        config(),
        &RecorderConfig {
            cell: 2,
            ..RecorderConfig::default()
        },
    );
    let pattern = rig.recorder.pattern();
    assert_eq!((rig.shot().width, rig.shot().height), (1024, 576));
    let scale = 1920.0 / 1024.0;

    // Regions on multiples of 8 screenshot pixels map to whole capture pixels (× 1.875).
    let cases = [
        // 64×32 → capture 120×60, shown at 1024×512 (wide: width-bound).
        ([512u32, 288, 576, 320], (1024, 512)),
        // 96×192 → capture 180×360, shown at 288×576 (tall: height-bound).
        ([8, 16, 104, 208], (288, 576)),
    ];
    for (region, (zw, zh)) in cases {
        let answer = rig.one("zoom", json!({"region": region})).await;
        assert!(!answer.is_error(), "{}", answer.summary());
        let image = answer.image();
        assert_eq!((image.width, image.height), (zw, zh), "zoom {region:?}");
        let rect = (
            f64::from(region[0]) * scale,
            f64::from(region[1]) * scale,
            f64::from(region[2] - region[0]) * scale,
            f64::from(region[3] - region[1]) * scale,
        );
        // Enlarged 1.6–8.5×: a pixel whose source lies half a capture pixel inside a cell is
        // interpolated between two pixels of that cell.
        let (n_checked, n_matching) = compare(&image, rect, pattern, 0.6, 3);
        assert!(n_checked > 2_000, "{n_checked} samples");
        assert_eq!(n_matching, n_checked, "zoom {region:?}");
    }

    // The same region in the screenshot does not hold that detail: a zoom that enlarged the
    // screenshot would have failed the check above.
    let screenshot = rig.one("screenshot", json!({})).await.image();
    let (n_checked, n_matching) = compare(&screenshot, (0.0, 0.0, 1920.0, 1080.0), pattern, 0.6, 3);
    assert!(
        n_matching * 2 < n_checked,
        "{n_matching} of {n_checked} screenshot samples match the 2-pixel cells"
    );
}
