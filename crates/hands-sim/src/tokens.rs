//! Plausible token counts (about four bytes a token, images by their size) and a prefix-hash
//! model of prompt caching.

use std::collections::HashSet;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use crate::images;
use crate::sign::{fingerprint, hash64};

/// What one image costs when its size cannot be read.
const UNKNOWN_IMAGE_TOKENS: u64 = 1500;
/// Base64 characters decoded to find an image's size: headers sit at the front.
const HEADER_BASE64_CHARS: usize = 64 * 1024;

/// Tokens of a text: about four bytes a token, at least one for non-empty text.
pub(crate) fn text_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

/// Tokens of one image from its base64 data: `⌈w/28⌉·⌈h/28⌉`.
pub(crate) fn image_tokens(base64_data: &str) -> u64 {
    let mut end = base64_data.len().min(HEADER_BASE64_CHARS);
    end -= end % 4;
    let head = STANDARD.decode(&base64_data.as_bytes()[..end]).ok();
    head.and_then(|bytes| images::inspect(&bytes).ok())
        .map(|info| info.visual_tokens())
        .unwrap_or(UNKNOWN_IMAGE_TOKENS)
}

/// Tokens of any JSON value: its text at four bytes a token, with every base64 image
/// (Anthropic `source.data`, OpenAI `image_url` data URLs) counted by its size instead.
pub(crate) fn value_tokens(value: &Value) -> u64 {
    let mut image_total = 0;
    let stripped = strip_images(value, &mut image_total);
    text_tokens(&stripped.to_string()) + image_total
}

fn strip_images(value: &Value, image_total: &mut u64) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = serde_json::Map::new();
            for (key, v) in map {
                if key == "cache_control" {
                    continue;
                }
                let replaced = match (key.as_str(), v) {
                    ("data", Value::String(s)) if map.get("type") == Some(&"base64".into()) => {
                        *image_total += image_tokens(s);
                        Some(Value::Null)
                    }
                    ("image_url", Value::String(s)) if s.starts_with("data:") => {
                        let data = s.split_once(',').map(|(_, d)| d).unwrap_or("");
                        *image_total += image_tokens(data);
                        Some(Value::Null)
                    }
                    _ => None,
                };
                out.insert(
                    key.clone(),
                    replaced.unwrap_or_else(|| strip_images(v, image_total)),
                );
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| strip_images(item, image_total))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Hashes a value as the cache sees it (`cache_control` markers ignored), walking it rather
/// than serializing it: image data is hashed in place, never copied.
pub(crate) fn cache_hash(seed: u64, value: &Value) -> u64 {
    match value {
        Value::Null => hash64(seed, b"n"),
        Value::Bool(b) => hash64(seed, if *b { b"t" } else { b"f" }),
        Value::Number(n) => hash64(seed ^ 1, n.to_string().as_bytes()),
        Value::String(s) => fingerprint(seed ^ 2, s.as_bytes()),
        Value::Array(items) => items.iter().fold(hash64(seed, b"["), cache_hash),
        Value::Object(map) => map
            .iter()
            .filter(|(k, _)| *k != "cache_control")
            .fold(hash64(seed, b"{"), |h, (k, v)| {
                cache_hash(hash64(h, k.as_bytes()), v)
            }),
    }
}

/// One piece of a prompt in order: a tool, a system block, a message block, an input item.
#[derive(Clone, Debug)]
pub(crate) struct Segment {
    /// Hash of the prompt up to and including this segment.
    pub(crate) prefix_hash: u64,
    /// Tokens of the prompt up to and including this segment.
    pub(crate) prefix_tokens: u64,
    /// Whether a `cache_control` breakpoint sits on this segment, and its ttl is 1h.
    pub(crate) breakpoint: Option<bool>,
}

/// Builds [`Segment`]s from pieces in prompt order.
#[derive(Debug, Clone)]
pub(crate) struct Prompt {
    hash: u64,
    tokens: u64,
    pub(crate) segments: Vec<Segment>,
}

impl Prompt {
    /// An empty prompt for `model` (caches are per model).
    pub(crate) fn new(model: &str) -> Prompt {
        Prompt {
            hash: hash64(0, model.as_bytes()),
            tokens: 0,
            segments: Vec::new(),
        }
    }

    /// Appends one piece costing `tokens`, with its breakpoint if it has one.
    pub(crate) fn push(&mut self, piece: &Value, tokens: u64, breakpoint: Option<bool>) {
        self.hash = cache_hash(self.hash, piece);
        self.tokens += tokens;
        self.segments.push(Segment {
            prefix_hash: self.hash,
            prefix_tokens: self.tokens,
            breakpoint,
        });
    }

    /// Total tokens.
    pub(crate) fn total(&self) -> u64 {
        self.tokens
    }
}

/// How a prompt's input tokens split between fresh, written and read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CacheUse {
    pub(crate) input: u64,
    pub(crate) read: u64,
    pub(crate) written_5m: u64,
    pub(crate) written_1h: u64,
}

/// Remembered prefixes.
#[derive(Debug, Default)]
pub(crate) struct PrefixCache {
    known: HashSet<u64>,
}

/// How far before a breakpoint the cache looks for an earlier hit (Anthropic's lookback).
const LOOKBACK_SEGMENTS: usize = 20;

impl PrefixCache {
    /// Anthropic's model: each breakpoint reads the longest remembered prefix within the 20
    /// segments before it; the prompt up to the last breakpoint is written.
    pub(crate) fn explicit(&mut self, prompt: &Prompt, min_tokens: u64) -> CacheUse {
        let segments = &prompt.segments;
        let mut read = 0;
        let mut last_breakpoint = None;
        for (idx, segment) in segments.iter().enumerate() {
            let Some(ttl_1h) = segment.breakpoint else {
                continue;
            };
            last_breakpoint = Some((segment.prefix_tokens, ttl_1h));
            let from = idx.saturating_sub(LOOKBACK_SEGMENTS - 1);
            if let Some(hit) = segments[from..=idx]
                .iter()
                .rev()
                .find(|s| self.known.contains(&s.prefix_hash))
            {
                read = read.max(hit.prefix_tokens);
            }
        }
        let mut usage = CacheUse {
            read,
            ..CacheUse::default()
        };
        if let Some((tokens, ttl_1h)) = last_breakpoint
            && tokens >= min_tokens
            && tokens > read
        {
            if ttl_1h {
                usage.written_1h = tokens - read;
            } else {
                usage.written_5m = tokens - read;
            }
        }
        for segment in segments {
            if segment.breakpoint.is_some() && segment.prefix_tokens >= min_tokens {
                self.known.insert(segment.prefix_hash);
            }
        }
        usage.input = prompt.total() - usage.read - usage.written_5m - usage.written_1h;
        usage
    }

    /// OpenAI's model: automatic; the longest remembered prefix at a segment boundary is read,
    /// counted in whole 128-token steps, from `min_tokens` up; every prefix is remembered.
    pub(crate) fn automatic(&mut self, prompt: &Prompt, min_tokens: u64) -> CacheUse {
        let hit = prompt
            .segments
            .iter()
            .rev()
            .find(|s| s.prefix_tokens >= min_tokens && self.known.contains(&s.prefix_hash))
            .map(|s| s.prefix_tokens / 128 * 128)
            .unwrap_or(0);
        for segment in &prompt.segments {
            if segment.prefix_tokens >= min_tokens {
                self.known.insert(segment.prefix_hash);
            }
        }
        CacheUse {
            input: prompt.total() - hit,
            read: hit,
            ..CacheUse::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn prompt(pieces: &[(&str, Option<bool>)]) -> Prompt {
        let mut prompt = Prompt::new("m");
        for (text, breakpoint) in pieces {
            prompt.push(&json!(text), 1000, *breakpoint);
        }
        prompt
    }

    #[test]
    fn explicit_cache_writes_then_reads_the_prefix() {
        let mut cache = PrefixCache::default();
        let first = cache.explicit(&prompt(&[("tools", Some(false)), ("turn 1", None)]), 1024);
        // The 1000-token prefix is under the minimum: nothing cached.
        assert_eq!(first.read + first.written_5m, 0);

        let mut cache = PrefixCache::default();
        let pieces = [("sys", None), ("tools", Some(false)), ("turn 1", None)];
        let first = cache.explicit(&prompt(&pieces), 1024);
        assert_eq!(
            first,
            CacheUse {
                input: 1000,
                read: 0,
                written_5m: 2000,
                written_1h: 0
            }
        );
        let second = cache.explicit(
            &prompt(&[
                ("sys", None),
                ("tools", Some(false)),
                ("turn 1", None),
                ("turn 2", Some(false)),
            ]),
            1024,
        );
        assert_eq!(
            second,
            CacheUse {
                input: 0,
                read: 2000,
                written_5m: 2000,
                written_1h: 0
            }
        );
        // A changed prefix reads nothing.
        let changed = cache.explicit(&prompt(&[("SYS", None), ("tools", Some(true))]), 1024);
        assert_eq!(changed.read, 0);
        assert_eq!(changed.written_1h, 2000);
    }

    #[test]
    fn automatic_cache_counts_128_token_steps() {
        let mut cache = PrefixCache::default();
        let p = prompt(&[("a", None), ("b", None)]);
        assert_eq!(cache.automatic(&p, 1024).read, 0);
        let p = prompt(&[("a", None), ("b", None), ("c", None)]);
        let used = cache.automatic(&p, 1024);
        assert_eq!(used.read, 1920);
        assert_eq!(used.input, 1080);
    }

    #[test]
    fn images_count_by_size_not_bytes() {
        let png = STANDARD.encode(images::fixtures::png(1280, 800));
        let block = json!({"type": "image", "source": {"type": "base64",
            "media_type": "image/png", "data": png}});
        let tokens = value_tokens(&block);
        assert!((46 * 29..46 * 29 + 40).contains(&tokens), "{tokens}");
        assert_eq!(text_tokens("abcdefgh"), 2);
    }
}
