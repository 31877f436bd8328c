//! The answer to one browser call: a JSON text `{"ok", "result" | "error", "state"}` and, for
//! `screenshot` and `zoom`, a native image, rendered as an OpenAI `function_call_output` item or
//! an Anthropic `tool_result` block.
//!
//! Spec: openai-browser-desktop-drivers, "Devolver imágenes del navegador" (`input_image` with
//! `image_url` and an optional `detail` of auto, low, high or original), "Devolver lecturas
//! estructuradas"; api-contracts B, "Function tools" (the output is a string or a list of
//! `input_text` / `input_image` items).

use hands_core::browser::read::{BrowserRead, BrowserScopedRead};
use hands_core::image::EncodedImage;
use serde_json::{Value, json};

use super::state::StateView;
use crate::errtext::error_line;
use crate::wire::{ResultBlock, ToolResult};

/// `detail` of an `input_image`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageDetail {
    /// `auto`.
    Auto,
    /// `low`.
    Low,
    /// `high`.
    High,
    /// `original`.
    Original,
}

impl ImageDetail {
    /// The wire name.
    pub const fn name(self) -> &'static str {
        match self {
            ImageDetail::Auto => "auto",
            ImageDetail::Low => "low",
            ImageDetail::High => "high",
            ImageDetail::Original => "original",
        }
    }
}

/// The answer to one call, in call order.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutput {
    /// The call answered.
    pub call_id: String,
    body: Value,
    image: Option<EncodedImage>,
    detail: Option<ImageDetail>,
    read: Option<TypedRead>,
}

/// The structured read behind a result, as the driver returned it after the toolset's value
/// rules: for callers that show a read in another form than the `BrowserReadV1` JSON the
/// function tools answer (`hands mcp` shows [`BrowserRead::to_compact`], which also keeps what
/// the JSON cannot hold: each element's kind and its place in the page text).
#[derive(Debug, Clone, PartialEq)]
pub enum TypedRead {
    /// `read_page`, `find`, `get_page_text`, `read_diagnostics`.
    Page(BrowserRead),
    /// `read_page_scoped`.
    Scoped(BrowserScopedRead),
}

impl CallOutput {
    /// A refusal before anything was read: `{"ok": false, "error"}`, no state.
    pub(crate) fn refusal(call_id: &str, error: impl Into<String>) -> CallOutput {
        CallOutput::from_body(
            call_id,
            json!({"ok": false, "error": error_line(&error.into())}),
        )
    }

    /// The answer to a call not run because an earlier browser call of the same response was
    /// not ok: [`BROWSER_CALL_SKIPPED`](crate::strings::BROWSER_CALL_SKIPPED), no state. For
    /// callers that hand the toolset one call at a time.
    pub fn skipped(call_id: &str) -> CallOutput {
        CallOutput::refusal(call_id, crate::strings::BROWSER_CALL_SKIPPED)
    }

    /// A failure or denial, with the state read for it.
    pub(crate) fn failure(
        call_id: &str,
        error: impl Into<String>,
        state: &StateView,
    ) -> CallOutput {
        CallOutput::from_body(
            call_id,
            json!({"ok": false, "error": error_line(&error.into()), "state": state.to_json()}),
        )
    }

    /// A result (`None`: only the state), with the state after the call.
    pub(crate) fn success(
        call_id: &str,
        ok: bool,
        result: Option<Value>,
        state: &StateView,
    ) -> CallOutput {
        let mut body = json!({"ok": ok});
        if let Some(result) = result {
            body["result"] = result;
        }
        body["state"] = state.to_json();
        CallOutput::from_body(call_id, body)
    }

    /// Attaches an image (screenshot, zoom); its size goes into the text as `image`.
    pub(crate) fn with_image(
        mut self,
        image: EncodedImage,
        detail: Option<ImageDetail>,
    ) -> CallOutput {
        self.body["image"] = json!({
            "width": image.size.width,
            "height": image.size.height,
            "media_type": image.media_type.mime(),
        });
        self.image = Some(image);
        self.detail = detail;
        self
    }

    /// Keeps the typed read the result's JSON was made from.
    pub(crate) fn with_read(mut self, read: TypedRead) -> CallOutput {
        self.read = Some(read);
        self
    }

    /// The typed read behind a successful read result.
    pub fn read(&self) -> Option<&TypedRead> {
        self.read.as_ref()
    }

    fn from_body(call_id: &str, body: Value) -> CallOutput {
        CallOutput {
            call_id: call_id.to_owned(),
            body,
            image: None,
            detail: None,
            read: None,
        }
    }

    /// Whether the call succeeded (`ok: true`). A file outcome other than `completed` is not ok.
    pub fn ok(&self) -> bool {
        self.body["ok"] == json!(true)
    }

    /// The JSON object of the text part.
    pub fn body(&self) -> &Value {
        &self.body
    }

    /// The text part, as sent: the JSON body on one line, page text included, with line-breaking
    /// and bidi characters escaped ([`crate::errtext::json_line`]; the SDK escapes every
    /// non-ASCII character, `ensure_ascii=True`).
    pub fn text(&self) -> String {
        crate::errtext::json_line(&self.body)
    }

    /// The error text, on a failure.
    pub fn error(&self) -> Option<&str> {
        self.body.get("error").and_then(Value::as_str)
    }

    /// The state sent with the answer, if any.
    pub fn state(&self) -> Option<&Value> {
        self.body.get("state")
    }

    /// The image, for screenshot and zoom.
    pub fn image(&self) -> Option<&EncodedImage> {
        self.image.as_ref()
    }

    /// The OpenAI Responses input item:
    /// `{"type": "function_call_output", "call_id", "output"}`, where `output` is the text, or
    /// `[{"type": "input_text"}, {"type": "input_image", "image_url": "data:…"}]` with an image.
    pub fn to_openai(&self) -> Value {
        let output = match &self.image {
            None => json!(self.text()),
            Some(image) => {
                let mut item = json!({"type": "input_image", "image_url": image.data_url()});
                if let Some(detail) = self.detail {
                    item["detail"] = json!(detail.name());
                }
                json!([{"type": "input_text", "text": self.text()}, item])
            }
        };
        json!({"type": "function_call_output", "call_id": self.call_id, "output": output})
    }

    /// The Anthropic `tool_result` block answering the custom tool's `tool_use` (whose `id` is
    /// the call id): a text block, then the image; `is_error` when not ok.
    pub fn to_anthropic(&self) -> Value {
        let mut content = vec![ResultBlock::Text(self.text())];
        if let Some(image) = &self.image {
            content.push(ResultBlock::Image(image.clone()));
        }
        ToolResult {
            tool_use_id: self.call_id.clone(),
            toolset_name: None,
            is_error: !self.ok(),
            content,
        }
        .to_json()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hands_core::geometry::Size;
    use hands_core::image::MediaType;

    fn image() -> EncodedImage {
        EncodedImage {
            size: Size::new(2, 1).unwrap(),
            media_type: MediaType::Png,
            base64: "iVBORw0KGgo=".into(),
        }
    }

    #[test]
    fn text_only_outputs_are_strings() {
        let out = CallOutput::success("call_1", true, Some(json!("")), &StateView::default());
        assert_eq!(
            out.body(),
            &json!({"ok": true, "result": "", "state": {"tabs": []}})
        );
        assert_eq!(
            out.to_openai(),
            json!({"type": "function_call_output", "call_id": "call_1",
                   "output": r#"{"ok":true,"result":"","state":{"tabs":[]}}"#})
        );
        let refused = CallOutput::refusal("call_2", "Refused: no.");
        assert!(!refused.ok());
        assert!(refused.state().is_none());
        assert_eq!(
            refused.to_anthropic(),
            json!({"type": "tool_result", "tool_use_id": "call_2", "is_error": true,
                   "content": r#"{"error":"Refused: no.","ok":false}"#})
        );
        // No result at all: only the state.
        let state_only = CallOutput::success("c", true, None, &StateView::default());
        assert!(state_only.body().get("result").is_none());
    }

    #[test]
    fn images_go_as_native_items() {
        let out = CallOutput::success("call_3", true, None, &StateView::default())
            .with_image(image(), Some(ImageDetail::Original));
        assert_eq!(
            out.body()["image"],
            json!({"width": 2, "height": 1, "media_type": "image/png"})
        );
        let openai = out.to_openai();
        assert_eq!(openai["output"][0]["type"], "input_text");
        assert_eq!(
            openai["output"][1],
            json!({"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=",
                   "detail": "original"})
        );
        let anthropic = out.to_anthropic();
        assert!(anthropic.get("is_error").is_none());
        assert_eq!(anthropic["content"][0]["type"], "text");
        assert_eq!(
            anthropic["content"][1],
            json!({"type": "image", "source": {"type": "base64", "media_type": "image/png",
                   "data": "iVBORw0KGgo="}})
        );
        let no_detail =
            CallOutput::success("c", true, None, &StateView::default()).with_image(image(), None);
        assert!(no_detail.to_openai()["output"][1].get("detail").is_none());
    }
}
