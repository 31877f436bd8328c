//! The rig every test uses: a spawned Xvfb, a recorder window on it, and a toolset over an
//! `X11Desktop`; plus helpers to build blocks and read results.

use std::io::Cursor;

use hands_core::CancellationToken;
use hands_core::geometry::{ImageTier, ScreenshotSizing, Size};
use hands_testkit::{InputEvent, InputRecorder, RecorderConfig};
use hands_toolset::computer::{ComputerConfig, ComputerToolset};
use hands_toolset::wire::{ToolResult, ToolUse, user_message};
use hands_x11::{X11Desktop, XvfbConfig};
use serde_json::{Value, json};

/// A sizing that really downscales every screen used here, so coordinate scaling is exercised.
pub const SIZING: ScreenshotSizing = ScreenshotSizing {
    tier: ImageTier::Standard,
    max_long_edge: Some(1024),
};

/// The toolset configuration of most tests: downscaling sizing, no closing screenshot.
pub fn config() -> ComputerConfig {
    ComputerConfig {
        sizing: SIZING,
        append_screenshot: false,
        ..ComputerConfig::default()
    }
}

/// A desktop, a recorder on it, and the toolset under test.
pub struct Rig {
    // Fields drop in order: the recorder leaves while its display still runs.
    pub recorder: InputRecorder,
    pub toolset: ComputerToolset<X11Desktop>,
    n_blocks: u32,
}

/// One answered block: its wire JSON and the typed result.
#[derive(Debug)]
pub struct Answer {
    pub json: Value,
    pub result: ToolResult,
}

/// A decoded PNG.
pub struct Image {
    pub width: u32,
    pub height: u32,
    rgb: Vec<u8>,
}

impl Image {
    pub fn rgb_at(&self, x: u32, y: u32) -> [u8; 3] {
        assert!(
            x < self.width && y < self.height,
            "({x}, {y}) outside the image"
        );
        let i = ((y * self.width + x) * 3) as usize;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }
}

impl Answer {
    pub fn is_error(&self) -> bool {
        self.json.get("is_error") == Some(&Value::Bool(true))
    }

    /// The text: the plain-string content of an error, or the first text block.
    pub fn text(&self) -> String {
        match &self.json["content"] {
            Value::String(s) => s.clone(),
            Value::Array(blocks) => blocks
                .iter()
                .find(|b| b["type"] == "text")
                .and_then(|b| b["text"].as_str())
                .unwrap_or_default()
                .to_owned(),
            other => panic!("content is neither a string nor an array: {other}"),
        }
    }

    /// The images, decoded.
    pub fn images(&self) -> Vec<Image> {
        self.result
            .images()
            .map(|encoded| {
                assert_eq!(encoded.media_type.mime(), "image/png");
                let decoder = png::Decoder::new(Cursor::new(encoded.bytes()));
                let mut reader = decoder.read_info().expect("a PNG");
                let mut buf = vec![0; reader.output_buffer_size().expect("a size")];
                let info = reader.next_frame(&mut buf).expect("a frame");
                assert_eq!(info.color_type, png::ColorType::Rgb);
                assert_eq!(info.bit_depth, png::BitDepth::Eight);
                buf.truncate(info.buffer_size());
                assert_eq!(
                    (info.width, info.height),
                    (encoded.size.width, encoded.size.height)
                );
                Image {
                    width: info.width,
                    height: info.height,
                    rgb: buf,
                }
            })
            .collect()
    }

    /// The single image of an image result.
    pub fn image(&self) -> Image {
        let mut images = self.images();
        assert_eq!(images.len(), 1, "one image in {}", self.summary());
        images.remove(0)
    }

    /// The JSON without image data, for assertion messages.
    pub fn summary(&self) -> String {
        let mut json = self.json.clone();
        if let Some(blocks) = json["content"].as_array_mut() {
            for block in blocks {
                if block["type"] == "image" {
                    block["source"]["data"] = json!("…");
                }
            }
        }
        json.to_string()
    }

    /// Asserts a plain action's success: exactly `[{"type":"text","text":"OK"}]`.
    pub fn assert_ok(&self) {
        assert!(!self.is_error(), "{}", self.summary());
        assert_eq!(
            self.json["content"],
            json!([{"type": "text", "text": "OK"}]),
            "{}",
            self.summary()
        );
    }
}

impl Rig {
    /// A `width`×`height` screen with a full-screen recorder and the default test config.
    pub fn new(width: u32, height: u32) -> Rig {
        Rig::with(width, height, config(), &RecorderConfig::default())
    }

    pub fn with(width: u32, height: u32, config: ComputerConfig, recorder: &RecorderConfig) -> Rig {
        let size = Size::new(width, height).expect("a non-empty screen");
        let desktop = X11Desktop::spawn(&XvfbConfig::new(size)).expect("Xvfb starts");
        let recorder =
            InputRecorder::start_with(desktop.display(), recorder).expect("the recorder starts");
        let toolset = ComputerToolset::new(desktop, config).expect("a valid declaration");
        Rig {
            recorder,
            toolset,
            n_blocks: 0,
        }
    }

    pub fn display(&mut self) -> String {
        self.toolset.desktop().display().to_owned()
    }

    /// The screenshot size the model sees.
    pub fn shot(&self) -> Size {
        self.toolset.frame().shot()
    }

    /// The screen size in input pixels.
    pub fn screen(&self) -> Size {
        self.toolset.frame().screen()
    }

    fn next_id(&mut self) -> String {
        self.n_blocks += 1;
        format!("toolu_{:04}", self.n_blocks)
    }

    /// A block calling a member of the computer toolset.
    pub fn call(&mut self, name: &str, input: Value) -> Value {
        json!({"type": "tool_use", "id": self.next_id(), "name": name,
               "toolset_name": "computer", "input": input})
    }

    /// A block of a tool that is not a toolset member (a custom tool, or a legacy `computer`).
    pub fn plain(&mut self, name: &str, input: Value) -> Value {
        json!({"type": "tool_use", "id": self.next_id(), "name": name, "input": input})
    }

    /// Runs one assistant turn (a text block first, as models write) and returns one answer per
    /// block the toolset owns, after checking the answers pair with those blocks in order and
    /// echo their `toolset_name`.
    pub async fn turn(&mut self, blocks: Vec<Value>) -> Vec<Answer> {
        let mut content = vec![json!({"type": "text", "text": "Let me do that."})];
        content.extend(blocks);
        let message = json!({"role": "assistant", "content": content});
        let uses = ToolUse::from_message(&message).expect("tool_use blocks");
        let outcome = self
            .toolset
            .run_turn(&uses, &CancellationToken::new())
            .await;
        assert!(outcome.fault.is_none(), "driver fault: {:?}", outcome.fault);
        let owned: Vec<&ToolUse> = uses.iter().filter(|u| self.toolset.owns(u)).collect();
        let reply = user_message(&outcome.results);
        assert_eq!(reply["role"], "user");
        let wire = reply["content"]
            .as_array()
            .expect("a content array")
            .clone();
        assert_eq!(wire.len(), owned.len(), "one result per owned block");
        assert_eq!(outcome.results.len(), owned.len());
        wire.into_iter()
            .zip(outcome.results)
            .zip(owned)
            .map(|((json, result), tool_use)| {
                assert_eq!(json["type"], "tool_result");
                assert_eq!(json["tool_use_id"], tool_use.id.as_str());
                assert_eq!(
                    json.get("toolset_name").and_then(Value::as_str),
                    tool_use.toolset_name.as_deref()
                );
                Answer { json, result }
            })
            .collect()
    }

    /// Runs a turn of one member call.
    pub async fn one(&mut self, name: &str, input: Value) -> Answer {
        let block = self.call(name, input);
        let mut answers = self.turn(vec![block]).await;
        assert_eq!(answers.len(), 1);
        answers.remove(0)
    }

    /// Forgets the events received so far (all of them: it syncs first).
    pub fn reset(&self) {
        self.recorder.clear().expect("the recorder answers");
    }

    /// Every event the recorder received so far (after a round trip through the server).
    pub fn events(&self) -> Vec<InputEvent> {
        self.recorder.sync().expect("the recorder answers")
    }

    /// The text the window received so far (after a round trip through the server).
    pub fn typed(&self) -> String {
        hands_testkit::typed_text(&self.events())
    }

    /// The screen pixel holding the centre of screenshot pixel `(x, y)`: where a click at
    /// `[x, y]` must land.
    pub fn expected_screen(&self, x: u32, y: u32) -> (i32, i32) {
        let (shot, screen) = (self.shot(), self.screen());
        let map = |v: u32, from: u32, to: u32| {
            ((2 * u64::from(v) + 1) * u64::from(to) / (2 * u64::from(from))) as i32
        };
        (
            map(x, shot.width, screen.width),
            map(y, shot.height, screen.height),
        )
    }

    /// The screenshot size, read from a real screenshot (as a model learns it).
    pub async fn screenshot_size(&mut self) -> Size {
        let answer = self.one("screenshot", json!({})).await;
        let image = answer.image();
        let size = Size::new(image.width, image.height).expect("a non-empty image");
        assert_eq!(size, self.shot());
        size
    }
}

/// The button and key events of `events` (motion dropped), as (kind, detail, position).
pub fn presses(events: &[InputEvent]) -> Vec<(hands_testkit::EventKind, u8, (i32, i32))> {
    events
        .iter()
        .filter(|e| e.is_button() || e.is_key())
        .map(|e| (e.kind, e.detail, e.position()))
        .collect()
}

/// The key events of `events` as (kind, keysym).
pub fn keys(events: &[InputEvent]) -> Vec<(hands_testkit::EventKind, u32)> {
    events
        .iter()
        .filter(|e| e.is_key())
        .map(|e| (e.kind, e.keysym.unwrap_or(0)))
        .collect()
}
