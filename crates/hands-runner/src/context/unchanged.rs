//! A screenshot identical to the last one the model sees is answered with
//! [`super::UNCHANGED_SCREENSHOT`] instead of the same image again.
//!
//! Why here and not in the driver: the toolset encodes every screenshot the same way (the same
//! pixels give the same PNG bytes), so comparing the encoded image is exact and needs nothing of
//! the desktop; and only the runner knows which screenshot the model still sees — the last one
//! sent, unless the API's own clearing may have removed it. The comparison is of the whole
//! encoded image (no hash that a page could aim a collision at).

use hands_toolset::wire::{ResultBlock, ToolResult};

use super::UNCHANGED_SCREENSHOT;

/// The last screenshot the model was sent, and how many tool results came after it.
#[derive(Debug, Default)]
pub(crate) struct LastScreenshot {
    base64: Option<String>,
    results_since: usize,
}

impl LastScreenshot {
    /// Forgets the last screenshot (a restored or rewritten conversation).
    pub(crate) fn forget(&mut self) {
        *self = LastScreenshot::default();
    }

    /// Replaces, in `results` (in order), each screenshot equal to the last one the model sees
    /// with the unchanged text. `is_screenshot[i]` says whether result `i` holds screenshots (a
    /// zoom does not). With `visible_for`, the last screenshot is trusted to be visible only
    /// while fewer than that many tool results followed it (the API clears older ones).
    /// Returns how many images were replaced.
    pub(crate) fn dedupe(
        &mut self,
        results: &mut [ToolResult],
        is_screenshot: &[bool],
        visible_for: Option<usize>,
    ) -> usize {
        let mut replaced = 0;
        for (result, screenshot) in results.iter_mut().zip(is_screenshot) {
            self.results_since += 1;
            for block in &mut result.content {
                let ResultBlock::Image(image) = block else {
                    continue;
                };
                if !screenshot {
                    continue;
                }
                let visible = visible_for.is_none_or(|n| self.results_since < n);
                if visible && self.base64.as_deref() == Some(image.base64.as_str()) {
                    *block = ResultBlock::Text(UNCHANGED_SCREENSHOT.to_owned());
                    replaced += 1;
                } else {
                    self.base64 = Some(image.base64.clone());
                    self.results_since = 0;
                }
            }
        }
        replaced
    }
}

#[cfg(test)]
mod tests {
    use hands_core::geometry::Size;
    use hands_core::image::{EncodedImage, MediaType};
    use hands_toolset::wire::ToolUse;
    use serde_json::json;

    use super::*;

    fn shot(data: &str) -> ResultBlock {
        ResultBlock::Image(EncodedImage {
            size: Size::new(4, 4).expect("a size"),
            media_type: MediaType::Png,
            base64: data.to_owned(),
        })
    }

    fn result(id: &str, blocks: Vec<ResultBlock>) -> ToolResult {
        let tool_use = ToolUse {
            id: id.to_owned(),
            name: "screenshot".into(),
            toolset_name: Some("computer".into()),
            input: json!({}),
        };
        ToolResult::ok(&tool_use, blocks)
    }

    fn texts(results: &[ToolResult]) -> Vec<bool> {
        results
            .iter()
            .map(|r| matches!(&r.content[..], [ResultBlock::Text(t)] if t == UNCHANGED_SCREENSHOT))
            .collect()
    }

    #[test]
    fn only_a_repeat_of_the_last_screenshot_becomes_text() {
        let mut last = LastScreenshot::default();
        let mut results = vec![
            result("a", vec![shot("AAAA")]),
            result("b", vec![shot("AAAA")]),
            result("c", vec![shot("BBBB")]),
            result("d", vec![shot("AAAA")]),
            result("e", vec![shot("AAAA")]),
        ];
        assert_eq!(last.dedupe(&mut results, &[true; 5], None), 2);
        assert_eq!(texts(&results), [false, true, false, false, true]);
        // A zoom is neither replaced nor remembered.
        let mut zoom = vec![
            result("f", vec![shot("AAAA")]),
            result("g", vec![shot("ZZZZ")]),
        ];
        assert_eq!(last.dedupe(&mut zoom, &[true, false], None), 1);
        let mut again = vec![result("h", vec![shot("AAAA")])];
        assert_eq!(last.dedupe(&mut again, &[true], None), 1);
    }

    #[test]
    fn under_server_clearing_an_old_last_screenshot_is_sent_again() {
        let mut last = LastScreenshot::default();
        let mut results: Vec<ToolResult> = (0..5)
            .map(|i| result(&format!("t{i}"), vec![shot("SAME")]))
            .collect();
        last.dedupe(&mut results, &[true; 5], Some(3));
        // The image, two texts, the image again (three results after it), a text.
        assert_eq!(texts(&results), [false, true, true, false, true]);
    }
}
