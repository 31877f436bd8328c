//! The token budget of one tool response, counted the way MCP clients count: text by its length
//! (about four bytes a token) and images by their pixel size (width × height / 750, Anthropic's
//! vision formula), never by the base64 text of an image.
//!
//! Claude Code refuses a tool response over `MAX_MCP_OUTPUT_TOKENS` (25,000 by default); other
//! clients cut or refuse at similar sizes. Every response this server sends is fitted here last
//! ([`Budget::fit`]), so no tool can exceed the budget, whatever its driver returned.

use hands_core::geometry::Size;
use rmcp::model::ContentBlock;

/// The default budget: Claude Code's default `MAX_MCP_OUTPUT_TOKENS`.
pub const DEFAULT_MAX_TOKENS: u32 = 25_000;

/// The smallest budget the server accepts: one browser viewport screenshot (1280x800 is 1,366
/// tokens) with its caption and a few lines of state.
pub const MIN_MAX_TOKENS: u32 = 2_000;

/// Tokens kept free for the closing note a cut response carries ("… N more lines: call … with
/// cursor …").
pub const NOTE_RESERVE: u32 = 120;

/// Tokens a text costs: one per four bytes of UTF-8, rounded up. Clients divide the length of
/// the text by four (in UTF-16 units); counting UTF-8 bytes is never less, so a response under
/// this count is under theirs.
pub fn text_tokens(text: &str) -> u32 {
    u32::try_from(text.len().div_ceil(4)).unwrap_or(u32::MAX)
}

/// Tokens an image costs: `ceil(width × height / 750)`.
pub fn image_tokens(size: Size) -> u32 {
    u32::try_from(size.pixels().div_ceil(750)).unwrap_or(u32::MAX)
}

/// The longest text of at most `tokens` tokens, cut on a character boundary.
pub fn cut_to_tokens(text: &str, tokens: u32) -> &str {
    hands_core::browser::truncate_utf8(text, tokens as usize * 4)
}

/// The budget of every tool response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    max_tokens: u32,
}

/// A budget below [`MIN_MAX_TOKENS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a response budget of {0} tokens is too small: use at least {MIN_MAX_TOKENS}")]
pub struct BudgetTooSmall(pub u32);

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            max_tokens: DEFAULT_MAX_TOKENS,
        }
    }
}

impl Budget {
    /// A budget of `max_tokens` per response.
    pub fn new(max_tokens: u32) -> Result<Budget, BudgetTooSmall> {
        if max_tokens < MIN_MAX_TOKENS {
            return Err(BudgetTooSmall(max_tokens));
        }
        Ok(Budget { max_tokens })
    }

    /// The most tokens one response may cost.
    pub fn max_tokens(self) -> u32 {
        self.max_tokens
    }

    /// The longest edge an image may have so that any aspect ratio fits in `share` of the budget:
    /// `w × h ≤ L²`, so `L = sqrt(750 × tokens)`.
    pub fn image_long_edge(self, share: f64) -> u32 {
        let tokens = f64::from(self.max_tokens) * share.clamp(0.0, 1.0);
        (750.0 * tokens).sqrt().floor() as u32
    }

    /// What a list of content blocks costs.
    pub fn cost(blocks: &[ContentBlock]) -> u32 {
        blocks
            .iter()
            .map(block_tokens)
            .fold(0u32, u32::saturating_add)
    }

    /// Makes `blocks` fit: images are kept while they fit (an image that does not is replaced by
    /// a line saying so), then text blocks are cut, the last ones first, each ending with a note
    /// of what was cut. The result never costs more than the budget.
    pub fn fit(self, blocks: Vec<ContentBlock>) -> Vec<ContentBlock> {
        if Budget::cost(&blocks) <= self.max_tokens {
            return blocks;
        }
        let mut images_cost = 0u32;
        let mut kept = Vec::with_capacity(blocks.len());
        for block in blocks {
            let cost = block_tokens(&block);
            let is_image = matches!(block, ContentBlock::Image(_));
            if is_image {
                if images_cost.saturating_add(cost) + NOTE_RESERVE > self.max_tokens {
                    kept.push(ContentBlock::text(format!(
                        "[an image of {cost} tokens was left out: it does not fit the response \
                         budget of {} tokens; ask for a zoom on a smaller region]",
                        self.max_tokens
                    )));
                    continue;
                }
                images_cost += cost;
            }
            kept.push(block);
        }
        let mut left = self.max_tokens - images_cost;
        // Text blocks in order, each getting what is left.
        let mut out = Vec::with_capacity(kept.len());
        for block in kept {
            match &block {
                ContentBlock::Text(text) => {
                    let cost = text_tokens(&text.text);
                    if cost <= left {
                        left -= cost;
                        out.push(block);
                    } else if left > NOTE_RESERVE {
                        let note = format!(
                            "\n[cut: {} more bytes left out to fit the response budget of {} \
                             tokens]",
                            text.text.len(),
                            self.max_tokens
                        );
                        let room = left - text_tokens(&note) - 1;
                        let head = cut_to_tokens(&text.text, room);
                        let note = note.replace(
                            &format!("{} more", text.text.len()),
                            &format!("{} more", text.text.len() - head.len()),
                        );
                        let cut = format!("{head}{note}");
                        left = left.saturating_sub(text_tokens(&cut));
                        out.push(ContentBlock::text(cut));
                    } else {
                        left = 0;
                    }
                }
                _ => out.push(block),
            }
        }
        out
    }
}

fn block_tokens(block: &ContentBlock) -> u32 {
    match &block {
        ContentBlock::Text(text) => text_tokens(&text.text),
        ContentBlock::Image(image) => image_size_from_png_or_jpeg(&image.data)
            .map(image_tokens)
            // An image whose size cannot be read counts as the largest a model takes.
            .unwrap_or(4_784),
        // Other content kinds are never produced here; count their JSON.
        other => serde_json::to_string(other)
            .map(|s| text_tokens(&s))
            .unwrap_or(u32::MAX),
    }
}

/// Reads the pixel size of a base64 PNG or JPEG from its header.
pub fn image_size_from_png_or_jpeg(base64_data: &str) -> Option<Size> {
    use base64::Engine as _;
    // A PNG's size is in its first 24 bytes; a JPEG's SOF marker can come later, so decode the
    // first 48 KiB (whole 4-character groups), not the whole image.
    let prefix = &base64_data.as_bytes()[..base64_data.len().min(64 * 1024) / 4 * 4];
    let head = base64::engine::general_purpose::STANDARD
        .decode(prefix)
        .ok()?;
    if head.len() >= 24 && head.starts_with(b"\x89PNG\r\n\x1a\n") {
        let w = u32::from_be_bytes(head[16..20].try_into().ok()?);
        let h = u32::from_be_bytes(head[20..24].try_into().ok()?);
        return Size::new(w, h);
    }
    if head.starts_with(&[0xFF, 0xD8]) {
        let mut i = 2;
        while i + 9 < head.len() {
            if head[i] != 0xFF {
                return None;
            }
            let marker = head[i + 1];
            let len = usize::from(u16::from_be_bytes([head[i + 2], head[i + 3]]));
            // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC).
            if (0xC0..=0xCF).contains(&marker) && ![0xC4, 0xC8, 0xCC].contains(&marker) {
                let h = u32::from(u16::from_be_bytes([head[i + 5], head[i + 6]]));
                let w = u32::from(u16::from_be_bytes([head[i + 7], head[i + 8]]));
                return Size::new(w, h);
            }
            i += 2 + len;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_counted_by_bytes_over_four() {
        assert_eq!(text_tokens(""), 0);
        assert_eq!(text_tokens("abcd"), 1);
        assert_eq!(text_tokens("abcde"), 2);
        // Three bytes a character: never fewer tokens than a client's length / 4.
        assert_eq!(text_tokens("日本語日"), 3);
    }

    #[test]
    fn images_are_counted_by_pixels() {
        assert_eq!(image_tokens(Size::new(1280, 800).unwrap()), 1366);
        assert_eq!(image_tokens(Size::new(1920, 1080).unwrap()), 2765);
    }

    #[test]
    fn budgets_below_the_floor_are_refused() {
        assert_eq!(Budget::new(1999), Err(BudgetTooSmall(1999)));
        assert_eq!(Budget::new(2000).unwrap().max_tokens(), 2000);
        // A 1:1 image of the whole budget: 750 × 2000 = 1,500,000 = 1224².
        assert_eq!(Budget::new(2000).unwrap().image_long_edge(1.0), 1224);
    }

    #[test]
    fn a_text_over_the_budget_is_cut_with_a_note() {
        let budget = Budget::new(2000).unwrap();
        let text = "x".repeat(20_000);
        let fitted = budget.fit(vec![ContentBlock::text("head"), ContentBlock::text(text)]);
        assert!(Budget::cost(&fitted) <= 2000, "{}", Budget::cost(&fitted));
        let ContentBlock::Text(last) = &fitted[1] else {
            panic!("text expected")
        };
        assert!(last.text.contains("more bytes left out"), "{}", last.text);
        // What was kept plus what the note says was cut is the whole text.
        let kept = last.text.find('\n').unwrap();
        let said: usize = last.text[kept..]
            .split_whitespace()
            .find_map(|w| w.parse().ok())
            .unwrap();
        assert_eq!(kept + said, 20_000);
    }

    #[test]
    fn a_response_under_the_budget_is_untouched() {
        let budget = Budget::default();
        let blocks = vec![ContentBlock::text("ok")];
        assert_eq!(budget.fit(blocks.clone()), blocks);
    }

    #[test]
    fn image_sizes_are_read_from_png_and_jpeg_headers() {
        // 1x1 PNG and a JPEG whose SOF0 says 3x2.
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
        assert_eq!(image_size_from_png_or_jpeg(png), Size::new(1, 1));
        let jpeg_bytes: Vec<u8> = vec![
            0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x00, 0x00, 0xFF, 0xC0, 0x00, 0x0B, 0x08, 0x00,
            0x02, 0x00, 0x03, 0x01, 0x01, 0x11, 0x00, 0xFF, 0xD9, 0x00,
        ];
        let b64 = encode_for_test(&jpeg_bytes);
        assert_eq!(image_size_from_png_or_jpeg(&b64), Size::new(3, 2));
        assert_eq!(image_size_from_png_or_jpeg("not an image"), None);
    }

    fn encode_for_test(bytes: &[u8]) -> String {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    #[test]
    fn an_image_over_the_budget_is_replaced_by_a_line() {
        // A PNG header claiming 4000x4000 (21,334 tokens) in a 2,000-token budget.
        let mut header = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        header.extend_from_slice(&4000u32.to_be_bytes());
        header.extend_from_slice(&4000u32.to_be_bytes());
        let image = ContentBlock::image(encode_for_test(&header), "image/png");
        let budget = Budget::new(2000).unwrap();
        let fitted = budget.fit(vec![image]);
        assert!(Budget::cost(&fitted) <= 2000);
        assert!(matches!(fitted[0], ContentBlock::Text(_)));
    }
}
