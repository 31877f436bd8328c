//! Content-addressed encoding of checkpoints, so a save writes only what is new.
//!
//! Strings of [`LARGE_STRING`] bytes or more (base64 screenshots, long page reads) are stored
//! once each, by SHA-256, and replaced in the JSON by a placeholder: a NUL character and the
//! hash in hex. A string that itself begins with NUL is escaped with a second NUL, so nothing a
//! model or page writes can pose as a placeholder. Each element of the conversation's arrays
//! (a message, an item) is stored the same way, once per distinct content; a checkpoint then
//! says, per array, how many elements it keeps from the checkpoint before it and which element
//! hashes follow. The conversation only grows at its end, and the elements rewritten by
//! screenshot pruning and cache breakpoints are few and recent, so what a save writes stays
//! flat as the run grows instead of growing with it.
//!
//! Public so that ledgers kept by other crates (hands-fleet's PostgreSQL one) store exactly the
//! same encoding as [`super::SqliteLedger`].

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha256};

use super::LedgerError;
use super::identity::hex;

/// Strings at least this long are stored once, by hash.
pub const LARGE_STRING: usize = 1024;

/// A SHA-256 digest.
pub type Hash = [u8; 32];

/// Where new blobs go: `(hash, bytes)`; a blob already stored is ignored by the store.
pub type PutBlob<'a> = dyn FnMut(&Hash, &[u8]) -> Result<(), LedgerError> + 'a;
/// Where blobs come from.
pub type GetBlob<'a> = dyn FnMut(&Hash) -> Result<Vec<u8>, LedgerError> + 'a;

fn sha256(bytes: &[u8]) -> Hash {
    Sha256::digest(bytes).into()
}

fn invalid(why: impl Into<String>) -> LedgerError {
    LedgerError::Invalid {
        path: "(checkpoint encoding)".into(),
        why: why.into(),
    }
}

/// `value` with its large strings stored as blobs and replaced by placeholders.
pub fn extract(value: &Value, put: &mut PutBlob<'_>) -> Result<Value, LedgerError> {
    Ok(match value {
        Value::String(text) if text.len() >= LARGE_STRING => {
            let hash = sha256(text.as_bytes());
            put(&hash, text.as_bytes())?;
            Value::String(format!("\0{}", hex(&hash)))
        }
        Value::String(text) if text.starts_with('\0') => Value::String(format!("\0{text}")),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| extract(v, put))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), extract(v, put)?)))
                .collect::<Result<Map<_, _>, LedgerError>>()?,
        ),
        other => other.clone(),
    })
}

/// The inverse of [`extract`].
pub fn restore(value: Value, get: &mut GetBlob<'_>) -> Result<Value, LedgerError> {
    Ok(match value {
        Value::String(text) if text.starts_with("\0\0") => Value::String(text[1..].to_owned()),
        Value::String(text) if text.starts_with('\0') => {
            let hash = parse_hash(&text[1..])?;
            let bytes = get(&hash)?;
            Value::String(
                String::from_utf8(bytes).map_err(|_| invalid("a stored string is not UTF-8"))?,
            )
        }
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|v| restore(v, get))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| Ok((k, restore(v, get)?)))
                .collect::<Result<Map<_, _>, LedgerError>>()?,
        ),
        other => other,
    })
}

fn parse_hash(text: &str) -> Result<Hash, LedgerError> {
    if text.len() != 64 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(invalid(format!("not a blob reference: {text:?}")));
    }
    let mut hash = [0u8; 32];
    for (i, byte) in hash.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16)
            .map_err(|_| invalid("not a blob reference"))?;
    }
    Ok(hash)
}

/// The conversation's arrays as last saved: each element with its hash.
pub type Arrays = BTreeMap<String, Vec<(Value, Hash)>>;

/// Encodes conversations against the one saved before, by the same writer.
#[derive(Debug, Default)]
pub struct Encoder {
    /// The revision last saved and its arrays; `None` before the first save (or after a failed
    /// one), so the next save is whole.
    base: Option<(u64, Arrays)>,
}

/// One encoded conversation, ready to be committed.
pub struct Encoded {
    /// The JSON document stored with the checkpoint.
    pub doc: Value,
    /// The arrays, for the next save's base.
    pub arrays: Arrays,
}

impl Encoder {
    /// Forgets the base: the next save is whole.
    pub fn reset(&mut self) {
        self.base = None;
    }

    /// Takes `arrays` as the base of the next save, once `revision` is committed.
    pub fn committed(&mut self, revision: u64, arrays: Arrays) {
        self.base = Some((revision, arrays));
    }

    /// Encodes `conversation`, storing new blobs through `put`.
    pub fn encode(
        &self,
        conversation: &Value,
        put: &mut PutBlob<'_>,
    ) -> Result<Encoded, LedgerError> {
        let Value::Object(fields) = conversation else {
            return Ok(Encoded {
                doc: json!({"base": null, "whole": extract(conversation, put)?}),
                arrays: Arrays::new(),
            });
        };
        let empty = Arrays::new();
        let (base_revision, base) = match &self.base {
            Some((revision, arrays)) => (Some(*revision), arrays),
            None => (None, &empty),
        };
        let mut arrays = Arrays::new();
        let mut encoded = Map::new();
        for (name, value) in fields {
            let Value::Array(items) = value else {
                encoded.insert(name.clone(), json!({"value": extract(value, put)?}));
                continue;
            };
            let before = base.get(name).map(Vec::as_slice).unwrap_or(&[]);
            // Equal elements compare by content, a memcmp for the long strings: cheap next to
            // hashing them again.
            let keep = items
                .iter()
                .zip(before)
                .take_while(|(item, (old, _))| *item == old)
                .count();
            let mut now: Vec<(Value, Hash)> = before[..keep].to_vec();
            let mut added = Vec::with_capacity(items.len() - keep);
            for item in &items[keep..] {
                let bytes = extract(item, put)?.to_string().into_bytes();
                let hash = sha256(&bytes);
                put(&hash, &bytes)?;
                added.push(Value::String(hex(&hash)));
                now.push((item.clone(), hash));
            }
            encoded.insert(name.clone(), json!({"keep": keep, "add": added}));
            arrays.insert(name.clone(), now);
        }
        Ok(Encoded {
            doc: json!({"base": base_revision, "fields": encoded}),
            arrays,
        })
    }
}

/// The revision a document is encoded against, if any.
pub fn base_of(doc: &Value) -> Option<u64> {
    doc.get("base").and_then(Value::as_u64)
}

/// Rebuilds a conversation from its documents, oldest first: the first has no base, and each
/// later one is encoded against the one before it.
pub fn decode(chain: &[Value], get: &mut GetBlob<'_>) -> Result<Value, LedgerError> {
    let mut arrays: BTreeMap<String, Vec<Hash>> = BTreeMap::new();
    let mut values: Map<String, Value> = Map::new();
    let mut order: Vec<String> = Vec::new();
    let Some(last) = chain.last() else {
        return Err(invalid("no checkpoint document"));
    };
    if let Some(whole) = last.get("whole") {
        return restore(whole.clone(), get);
    }
    for doc in chain {
        let fields = doc
            .get("fields")
            .and_then(Value::as_object)
            .ok_or_else(|| invalid("a checkpoint document has no fields"))?;
        order = fields.keys().cloned().collect();
        for (name, field) in fields {
            if let Some(value) = field.get("value") {
                values.insert(name.clone(), value.clone());
                arrays.remove(name);
                continue;
            }
            let keep = field
                .get("keep")
                .and_then(Value::as_u64)
                .ok_or_else(|| invalid("an array field has no keep"))?
                as usize;
            let added = field
                .get("add")
                .and_then(Value::as_array)
                .ok_or_else(|| invalid("an array field has no add"))?;
            let hashes = arrays.entry(name.clone()).or_default();
            if keep > hashes.len() {
                return Err(invalid(format!(
                    "field {name} keeps {keep} elements of {}",
                    hashes.len()
                )));
            }
            hashes.truncate(keep);
            for hash in added {
                hashes.push(parse_hash(
                    hash.as_str().ok_or_else(|| invalid("a hash is not text"))?,
                )?);
            }
            values.remove(name);
        }
    }
    let mut conversation = Map::new();
    for name in order {
        let value = if let Some(hashes) = arrays.get(&name) {
            let mut items = Vec::with_capacity(hashes.len());
            for hash in hashes {
                let bytes = get(hash)?;
                let item: Value = serde_json::from_slice(&bytes)
                    .map_err(|e| invalid(format!("a stored element does not parse: {e}")))?;
                items.push(restore(item, get)?);
            }
            Value::Array(items)
        } else if let Some(value) = values.remove(&name) {
            restore(value, get)?
        } else {
            continue;
        };
        conversation.insert(name, value);
    }
    Ok(Value::Object(conversation))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[derive(Default)]
    struct Store {
        blobs: HashMap<Hash, Vec<u8>>,
        written: usize,
    }

    impl Store {
        fn put(&mut self) -> impl FnMut(&Hash, &[u8]) -> Result<(), LedgerError> + '_ {
            |hash, bytes| {
                if !self.blobs.contains_key(hash) {
                    self.written += bytes.len();
                    self.blobs.insert(*hash, bytes.to_vec());
                }
                Ok(())
            }
        }

        fn get(&self) -> impl FnMut(&Hash) -> Result<Vec<u8>, LedgerError> + '_ {
            |hash| {
                self.blobs
                    .get(hash)
                    .cloned()
                    .ok_or_else(|| invalid("missing"))
            }
        }
    }

    fn message(n: usize, image: &str) -> Value {
        json!({"role": "user", "content": [{"type": "text", "text": format!("turn {n}")},
            {"type": "image", "source": {"type": "base64", "data": image}}]})
    }

    #[test]
    fn each_save_writes_only_what_is_new_and_decodes_whole() {
        let mut store = Store::default();
        let mut encoder = Encoder::default();
        let mut docs = Vec::new();
        let mut messages = Vec::new();
        let mut written = Vec::new();
        for n in 0..30 {
            messages.push(message(n, &format!("{n:04}").repeat(5000)));
            if n == 20 {
                // A rewrite in the middle (screenshot pruning): only that element is new.
                messages[3] = json!({"role": "user", "content": "[dropped]"});
            }
            let conversation = json!({"messages": messages, "unanswered": n % 2 == 0});
            let before = store.written;
            let encoded = encoder.encode(&conversation, &mut store.put()).unwrap();
            encoder.committed(n as u64 + 1, encoded.arrays);
            written.push(store.written - before);
            docs.push(encoded.doc);
            let decoded = decode(&docs, &mut store.get()).unwrap();
            assert_eq!(decoded, conversation);
        }
        // One image and one small message per save, the same at the 5th save as at the 30th.
        assert!(written[4] > 20_000 && written[4] < 21_000, "{written:?}");
        assert!(written[4].abs_diff(written[29]) <= 2, "{written:?}");
        // The document lists only the new element's hash.
        assert_eq!(docs[29]["fields"]["messages"]["keep"], json!(29));
        assert_eq!(docs[20]["fields"]["messages"]["keep"], json!(3));
    }

    #[test]
    fn nothing_a_model_writes_can_pose_as_a_blob_reference() {
        let mut store = Store::default();
        let fake = format!("\0{}", "ab".repeat(32));
        let value = json!({"a": fake, "b": "\0\0x", "c": "y".repeat(LARGE_STRING)});
        let extracted = extract(&value, &mut store.put()).unwrap();
        assert_eq!(store.blobs.len(), 1);
        assert_eq!(restore(extracted, &mut store.get()).unwrap(), value);
    }
}
