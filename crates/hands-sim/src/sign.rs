//! Deterministic ids and the keyed hash that signs what the simulator emits (thinking
//! signatures, redacted thinking, OpenAI `encrypted_content`), so a replay that changed a byte
//! is caught.
//!
//! The hash is FNV-1a over the key and the data in four lanes with a splitmix64 finish: keyed,
//! deterministic across builds and platforms, and **not** cryptographic. It only has to catch
//! clients that edit or fabricate what they must replay verbatim.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// A 64-bit keyed hash, eight bytes a step with a splitmix64 finish: the simulator's hash of
/// bodies, prefixes and MAC lanes. Word-wise so that hashing megabytes of screenshots stays
/// cheap even in unoptimized test builds.
pub(crate) fn hash64(seed: u64, data: &[u8]) -> u64 {
    let mut h = FNV_OFFSET ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut words = data.chunks_exact(8);
    for word in &mut words {
        let mut buf = [0u8; 8];
        buf.copy_from_slice(word);
        h = (h ^ u64::from_le_bytes(buf)).wrapping_mul(FNV_PRIME);
        h ^= h >> 29;
    }
    for &b in words.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(FNV_PRIME);
    }
    mix(h ^ data.len() as u64)
}

/// Strings longer than this are fingerprinted by sample.
const SAMPLE_ABOVE: usize = 64 * 1024;

/// A hash of `data` that reads all of a short value but only a sample of a long one (its
/// length, first and last 4 KiB, and one 8-byte word in 256): screenshots that differ differ
/// almost everywhere, and the answer only feeds cache estimates and memo keys, never a
/// verdict on what a client sent.
pub(crate) fn fingerprint(seed: u64, data: &[u8]) -> u64 {
    if data.len() <= SAMPLE_ABOVE {
        return hash64(seed, data);
    }
    let mut h = hash64(seed ^ data.len() as u64, &data[..4096]);
    h = hash64(h, &data[data.len() - 4096..]);
    let mut sample = Vec::with_capacity(data.len() / 256 + 8);
    for word in data.chunks_exact(256) {
        sample.extend_from_slice(&word[..8]);
    }
    hash64(h, &sample)
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Signs and verifies the opaque values the simulator emits.
#[derive(Clone, Debug)]
pub(crate) struct Signer {
    key: Vec<u8>,
}

/// The prefix of every thinking signature, so a foreign one is told apart at a glance.
const SIGNATURE_TAG: &[u8] = b"hsim1";
/// OpenAI's encrypted reasoning blobs start with `gAAAA`; ours do too.
const ENCRYPTED_PREFIX: &str = "gAAAAA";

impl Signer {
    pub(crate) fn new(key: &[u8]) -> Signer {
        Signer { key: key.to_vec() }
    }

    fn mac(&self, domain: &str, data: &[u8]) -> [u8; 32] {
        let mut out = [0u8; 32];
        let mut input = Vec::with_capacity(self.key.len() + domain.len() + data.len() + 2);
        input.extend_from_slice(&self.key);
        input.push(0xff);
        input.extend_from_slice(domain.as_bytes());
        input.push(0);
        input.extend_from_slice(data);
        for (lane, chunk) in out.chunks_exact_mut(8).enumerate() {
            chunk.copy_from_slice(&hash64(lane as u64 + 1, &input).to_le_bytes());
        }
        out
    }

    /// The `signature` of a thinking block with this text.
    pub(crate) fn thinking_signature(&self, thinking: &str) -> String {
        let mut raw = SIGNATURE_TAG.to_vec();
        raw.extend_from_slice(&self.mac("thinking", thinking.as_bytes()));
        STANDARD.encode(raw)
    }

    /// Whether `signature` is the one this server gave `thinking`.
    pub(crate) fn verify_thinking(&self, thinking: &str, signature: &str) -> bool {
        signature == self.thinking_signature(thinking)
    }

    /// The `signature` of a compaction block with this summary.
    pub(crate) fn compaction_signature(&self, summary: &str) -> String {
        let mut raw = SIGNATURE_TAG.to_vec();
        raw.extend_from_slice(&self.mac("compaction", summary.as_bytes()));
        STANDARD.encode(raw)
    }

    /// Seals `payload` into an opaque base64 value (redacted thinking `data`).
    pub(crate) fn seal(&self, domain: &str, payload: &[u8]) -> String {
        let mut raw = self.mac(domain, payload).to_vec();
        raw.extend_from_slice(payload);
        STANDARD.encode(raw)
    }

    /// Opens a value made by [`Signer::seal`]; `None` when it was altered or is foreign.
    pub(crate) fn open(&self, domain: &str, sealed: &str) -> Option<Vec<u8>> {
        let raw = STANDARD.decode(sealed).ok()?;
        if raw.len() < 32 {
            return None;
        }
        let (mac, payload) = raw.split_at(32);
        (mac == self.mac(domain, payload)).then(|| payload.to_vec())
    }

    /// OpenAI `encrypted_content` for a reasoning item.
    pub(crate) fn encrypt(&self, payload: &[u8]) -> String {
        let mut raw = self.mac("encrypted_content", payload).to_vec();
        raw.extend_from_slice(payload);
        format!("{ENCRYPTED_PREFIX}{}", URL_SAFE_NO_PAD.encode(raw))
    }

    /// Opens `encrypted_content`; `None` when it was altered or is foreign.
    pub(crate) fn decrypt(&self, blob: &str) -> Option<Vec<u8>> {
        let raw = URL_SAFE_NO_PAD
            .decode(blob.strip_prefix(ENCRYPTED_PREFIX)?)
            .ok()?;
        if raw.len() < 32 {
            return None;
        }
        let (mac, payload) = raw.split_at(32);
        (mac == self.mac("encrypted_content", payload)).then(|| payload.to_vec())
    }
}

/// Hands out ids in the shape of the real ones (`toolu_01…`, `msg_01…`, `resp_…`), derived
/// from a counter so two runs of one test get the same ids.
#[derive(Debug, Default)]
pub(crate) struct IdGen {
    counter: u64,
}

const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz123456789";

impl IdGen {
    /// A fresh id: `prefix` then 24 characters.
    pub(crate) fn next(&mut self, prefix: &str) -> String {
        self.counter += 1;
        let mut id = String::with_capacity(prefix.len() + 24);
        id.push_str(prefix);
        let mut state = hash64(self.counter, prefix.as_bytes());
        for i in 0..24 {
            if i % 10 == 0 {
                state = hash64(state ^ i, prefix.as_bytes());
            }
            let idx = (state % ALPHABET.len() as u64) as usize;
            state /= ALPHABET.len() as u64;
            id.push(char::from(ALPHABET[idx]));
        }
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinking_signature_catches_any_edit() {
        let signer = Signer::new(b"key");
        let sig = signer.thinking_signature("I should click Save.");
        assert!(signer.verify_thinking("I should click Save.", &sig));
        assert!(!signer.verify_thinking("I should click Save!", &sig));
        assert!(!Signer::new(b"other").verify_thinking("I should click Save.", &sig));
        assert!(!signer.verify_thinking("I should click Save.", ""));
    }

    #[test]
    fn sealed_values_open_only_unchanged() {
        let signer = Signer::new(b"key");
        let sealed = signer.seal("redacted", b"secret thoughts");
        assert_eq!(
            signer.open("redacted", &sealed).as_deref(),
            Some(&b"secret thoughts"[..])
        );
        let mut tampered = sealed.into_bytes();
        let last = tampered.len() - 3;
        tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(tampered).expect("ascii");
        assert_eq!(signer.open("redacted", &tampered), None);

        let blob = signer.encrypt(b"{\"id\":\"rs_1\"}");
        assert!(blob.starts_with("gAAAAA"));
        assert_eq!(
            signer.decrypt(&blob).as_deref(),
            Some(&b"{\"id\":\"rs_1\"}"[..])
        );
        assert_eq!(signer.decrypt(&blob.replace('g', "h")), None);
        assert_eq!(signer.decrypt("gAAAAAnotours"), None);
    }

    #[test]
    fn fingerprints_tell_long_values_apart() {
        let long: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut other = long.clone();
        other[100_000 - 100_000 % 256] ^= 1;
        assert_eq!(fingerprint(1, &long), fingerprint(1, &long.clone()));
        assert_ne!(fingerprint(1, &long), fingerprint(1, &other));
        assert_ne!(fingerprint(1, &long[..199_999]), fingerprint(1, &long));
        assert_eq!(fingerprint(1, b"short"), hash64(1, b"short"));
    }

    #[test]
    fn ids_are_deterministic_and_distinct() {
        let mut a = IdGen::default();
        let mut b = IdGen::default();
        let first = a.next("toolu_01");
        assert_eq!(first, b.next("toolu_01"));
        assert_eq!(first.len(), "toolu_01".len() + 24);
        assert_ne!(first, a.next("toolu_01"));
    }
}
