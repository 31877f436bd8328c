//! The saved sign-in file (issue 22, "saved sign-ins"): a [`StorageState`] sealed with
//! AES-256-GCM under a key derived from a passphrase by Argon2id.
//!
//! Layout (every number little-endian):
//!
//! | bytes | what |
//! | --- | --- |
//! | 8 | [`MAGIC`] `HANDSST\0` |
//! | 1 | format version, [`FORMAT_VERSION`] |
//! | 12 | Argon2id memory (KiB), passes, lanes: three `u32` |
//! | 16 | random salt |
//! | 16 | key check: the second half of the derived 64 bytes (tells a wrong key from a change) |
//! | 12 | random nonce |
//! | rest | ciphertext and its 16-byte tag; the header above is the associated data |
//!
//! The first 32 derived bytes are the AES key, the next 16 the key check. Any changed byte is
//! caught: in the magic or version (not a state file), in the KDF parameters, salt or key check
//! (the check no longer matches: reported as a wrong key, which it then is for this file), in
//! the nonce, the ciphertext or the tag (authentication fails: reported as a changed file).

use aes_gcm::aead::rand_core::RngCore;
use aes_gcm::aead::{Aead, KeyInit, OsRng, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use serde::{Deserialize, Serialize};

/// The variable the passphrase is read from.
pub const STATE_KEY_ENV: &str = "HANDS_STATE_KEY";
/// The first bytes of every state file.
pub const MAGIC: &[u8; 8] = b"HANDSST\0";
/// The format version this build writes and reads.
pub const FORMAT_VERSION: u8 = 1;
/// The shortest passphrase accepted.
pub const MIN_PASSPHRASE_CHARS: usize = 8;

const SALT_LEN: usize = 16;
const CHECK_LEN: usize = 16;
const NONCE_LEN: usize = 12;
const PARAMS_LEN: usize = 12;
const HEADER_LEN: usize = MAGIC.len() + 1 + PARAMS_LEN + SALT_LEN + CHECK_LEN + NONCE_LEN;
const TAG_LEN: usize = 16;

/// Argon2id cost, stored in each file so a later build can raise it and still read old files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KdfParams {
    /// Memory in KiB.
    pub memory_kib: u32,
    /// Passes.
    pub passes: u32,
    /// Lanes.
    pub lanes: u32,
}

impl Default for KdfParams {
    /// OWASP's first Argon2id choice: 19 MiB, 2 passes, 1 lane.
    fn default() -> Self {
        Self {
            memory_kib: 19 * 1024,
            passes: 2,
            lanes: 1,
        }
    }
}

/// A passphrase, kept out of `Debug` output.
#[derive(Clone)]
pub struct StateKey(String);

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateKey(..)")
    }
}

impl StateKey {
    /// A passphrase of at least [`MIN_PASSPHRASE_CHARS`] characters.
    pub fn new(passphrase: impl Into<String>) -> Result<Self, StateFileError> {
        let passphrase = passphrase.into();
        if passphrase.chars().count() < MIN_PASSPHRASE_CHARS {
            return Err(StateFileError::WeakKey);
        }
        Ok(Self(passphrase))
    }

    /// The passphrase from [`STATE_KEY_ENV`].
    pub fn from_env() -> Result<Self, StateFileError> {
        match std::env::var(STATE_KEY_ENV) {
            Ok(value) => Self::new(value),
            Err(_) => Err(StateFileError::NoKey),
        }
    }
}

/// One cookie as CDP's `Storage.getCookies` reports it and `Storage.setCookies` takes it
/// (the fields hands restores; the rest are dropped).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SavedCookie {
    /// Name.
    pub name: String,
    /// Value (never shown to the model).
    pub value: String,
    /// Domain, with a leading dot for a domain cookie.
    pub domain: String,
    /// Path.
    pub path: String,
    /// Expiry in seconds since the epoch; negative or absent: a session cookie.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<f64>,
    /// `HttpOnly`.
    #[serde(default)]
    pub http_only: bool,
    /// `Secure`.
    #[serde(default)]
    pub secure: bool,
    /// `SameSite` (`Strict`, `Lax`, `None`), when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_site: Option<String>,
}

/// The localStorage of one origin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedOrigin {
    /// The origin, serialized (`http://127.0.0.1:8000`).
    pub origin: String,
    /// Its localStorage items, key and value, in the page's order.
    pub local_storage: Vec<(String, String)>,
}

/// The IndexedDB databases of one origin, as the page-side copy reads them
/// ([`crate::storage_state`]). Keys and values are kept in the copy's tagged JSON form (every
/// structured-clone type it can rebuild: see `idb.js`), never as text a log could show.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedIdbOrigin {
    /// The origin, serialized (`http://127.0.0.1:8000`).
    pub origin: String,
    /// Its databases.
    pub databases: Vec<SavedDatabase>,
}

/// One IndexedDB database.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedDatabase {
    /// Name.
    pub name: String,
    /// Version.
    pub version: u64,
    /// Its object stores.
    pub stores: Vec<SavedObjectStore>,
}

/// One object store: its shape and every record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SavedObjectStore {
    /// Name.
    pub name: String,
    /// Key path: `null`, a string or an array of strings.
    pub key_path: serde_json::Value,
    /// Whether keys are generated.
    pub auto_increment: bool,
    /// Its indexes.
    pub indexes: Vec<SavedIndex>,
    /// Records: the key and the value, each tagged JSON.
    pub records: Vec<(serde_json::Value, serde_json::Value)>,
}

/// One index of an object store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SavedIndex {
    /// Name.
    pub name: String,
    /// Key path: a string or an array of strings.
    pub key_path: serde_json::Value,
    /// Unique.
    pub unique: bool,
    /// Multi-entry.
    pub multi_entry: bool,
}

/// What a state file holds: cookies, localStorage and IndexedDB of the allowed origins.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StorageState {
    /// Cookies.
    pub cookies: Vec<SavedCookie>,
    /// localStorage per origin.
    pub origins: Vec<SavedOrigin>,
    /// IndexedDB per origin (absent in files saved before it was kept).
    #[serde(default)]
    pub indexed_db: Vec<SavedIdbOrigin>,
}

/// What went wrong reading or writing a state file.
#[derive(Debug, thiserror::Error)]
pub enum StateFileError {
    /// No passphrase.
    #[error(
        "no state key: set {STATE_KEY_ENV} to a passphrase of at least {MIN_PASSPHRASE_CHARS} characters (the same one for every run that uses the state)"
    )]
    NoKey,
    /// A passphrase too short.
    #[error(
        "the state key in {STATE_KEY_ENV} is too short: use at least {MIN_PASSPHRASE_CHARS} characters"
    )]
    WeakKey,
    /// Not a state file (or one of another format version).
    #[error(
        "not a hands state file ({0}); delete it with `hands state delete NAME` and sign in again"
    )]
    NotAStateFile(String),
    /// The key check failed.
    #[error(
        "wrong state key: {STATE_KEY_ENV} is not the passphrase this state was saved with (or the file's header was changed)"
    )]
    WrongKey,
    /// Authentication failed with the right key.
    #[error(
        "the state file was changed after it was saved (authentication failed); delete it and sign in again"
    )]
    Tampered,
    /// The KDF refused its parameters.
    #[error("key derivation failed: {0}")]
    Kdf(String),
    /// The decrypted content is not a state.
    #[error("the state file's content is not valid: {0}")]
    Content(String),
}

struct Derived {
    key: [u8; 32],
    check: [u8; CHECK_LEN],
}

fn derive(key: &StateKey, params: KdfParams, salt: &[u8]) -> Result<Derived, StateFileError> {
    let argon_params = argon2::Params::new(
        params.memory_kib,
        params.passes,
        params.lanes,
        Some(32 + CHECK_LEN),
    )
    .map_err(|e| StateFileError::Kdf(e.to_string()))?;
    let argon = argon2::Argon2::new(
        argon2::Algorithm::Argon2id,
        argon2::Version::V0x13,
        argon_params,
    );
    let mut out = [0u8; 32 + CHECK_LEN];
    argon
        .hash_password_into(key.0.as_bytes(), salt, &mut out)
        .map_err(|e| StateFileError::Kdf(e.to_string()))?;
    let mut derived = Derived {
        key: [0; 32],
        check: [0; CHECK_LEN],
    };
    derived.key.copy_from_slice(&out[..32]);
    derived.check.copy_from_slice(&out[32..]);
    Ok(derived)
}

/// Seals a state with a fresh salt and nonce.
pub fn seal(
    state: &StorageState,
    key: &StateKey,
    params: KdfParams,
) -> Result<Vec<u8>, StateFileError> {
    let mut salt = [0u8; SALT_LEN];
    let mut nonce = [0u8; NONCE_LEN];
    OsRng.fill_bytes(&mut salt);
    OsRng.fill_bytes(&mut nonce);
    let derived = derive(key, params, &salt)?;
    let mut header = Vec::with_capacity(HEADER_LEN);
    header.extend_from_slice(MAGIC);
    header.push(FORMAT_VERSION);
    for n in [params.memory_kib, params.passes, params.lanes] {
        header.extend_from_slice(&n.to_le_bytes());
    }
    header.extend_from_slice(&salt);
    header.extend_from_slice(&derived.check);
    header.extend_from_slice(&nonce);
    let plain = serde_json::to_vec(state).map_err(|e| StateFileError::Content(e.to_string()))?;
    let cipher = Aes256Gcm::new_from_slice(&derived.key).expect("a 32-byte key");
    let sealed = cipher
        .encrypt(
            Nonce::from_slice(&nonce),
            Payload {
                msg: &plain,
                aad: &header,
            },
        )
        .map_err(|_| StateFileError::Content("encryption failed".into()))?;
    header.extend_from_slice(&sealed);
    Ok(header)
}

/// Opens a sealed state: refuses a wrong key and any changed byte.
pub fn open(bytes: &[u8], key: &StateKey) -> Result<StorageState, StateFileError> {
    if bytes.len() < HEADER_LEN + TAG_LEN {
        return Err(StateFileError::NotAStateFile(format!(
            "{} bytes, shorter than a header and a tag",
            bytes.len()
        )));
    }
    if &bytes[..MAGIC.len()] != MAGIC {
        return Err(StateFileError::NotAStateFile(
            "its first bytes differ".into(),
        ));
    }
    let version = bytes[MAGIC.len()];
    if version != FORMAT_VERSION {
        return Err(StateFileError::NotAStateFile(format!(
            "format version {version}, this build reads {FORMAT_VERSION}"
        )));
    }
    let mut at = MAGIC.len() + 1;
    let mut word = || {
        let n = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        at += 4;
        n
    };
    let params = KdfParams {
        memory_kib: word(),
        passes: word(),
        lanes: word(),
    };
    // A changed cost could make the derivation take hours or all memory: accept only what
    // this build could have written, up to 16 times the default.
    let max = KdfParams::default();
    if params.memory_kib > max.memory_kib * 16
        || params.passes > max.passes * 16
        || params.lanes > 16
    {
        return Err(StateFileError::WrongKey);
    }
    let salt = &bytes[at..at + SALT_LEN];
    at += SALT_LEN;
    let check = &bytes[at..at + CHECK_LEN];
    at += CHECK_LEN;
    let nonce = &bytes[at..at + NONCE_LEN];
    let derived = derive(key, params, salt).map_err(|_| StateFileError::WrongKey)?;
    if derived.check.as_slice() != check {
        return Err(StateFileError::WrongKey);
    }
    let cipher = Aes256Gcm::new_from_slice(&derived.key).expect("a 32-byte key");
    let plain = cipher
        .decrypt(
            Nonce::from_slice(nonce),
            Payload {
                msg: &bytes[HEADER_LEN..],
                aad: &bytes[..HEADER_LEN],
            },
        )
        .map_err(|_| StateFileError::Tampered)?;
    serde_json::from_slice(&plain).map_err(|e| StateFileError::Content(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cheap() -> KdfParams {
        KdfParams {
            memory_kib: 64,
            passes: 1,
            lanes: 1,
        }
    }

    fn sample() -> StorageState {
        StorageState {
            cookies: vec![SavedCookie {
                name: "session".into(),
                value: "s3cr3t-token".into(),
                domain: "127.0.0.1".into(),
                path: "/".into(),
                expires: Some(2e9),
                http_only: true,
                secure: false,
                same_site: Some("Lax".into()),
            }],
            origins: vec![SavedOrigin {
                origin: "http://127.0.0.1:8000".into(),
                local_storage: vec![("user".into(), "ada".into())],
            }],
            indexed_db: Vec::new(),
        }
    }

    #[test]
    fn a_sealed_state_opens_with_its_key_and_hides_its_values() {
        let key = StateKey::new("correct horse battery").unwrap();
        let sealed = seal(&sample(), &key, KdfParams::default()).unwrap();
        assert_eq!(&sealed[..8], MAGIC);
        let text = String::from_utf8_lossy(&sealed);
        assert!(!text.contains("s3cr3t-token") && !text.contains("ada"));
        assert_eq!(open(&sealed, &key).unwrap(), sample());
        // Fresh salt and nonce each time.
        assert_ne!(
            seal(&sample(), &key, cheap()).unwrap(),
            seal(&sample(), &key, cheap()).unwrap()
        );
    }

    #[test]
    fn a_wrong_key_refuses_with_a_clear_error() {
        let sealed = seal(
            &sample(),
            &StateKey::new("correct horse battery").unwrap(),
            cheap(),
        )
        .unwrap();
        let err = open(&sealed, &StateKey::new("wrong horse battery").unwrap()).unwrap_err();
        assert!(matches!(err, StateFileError::WrongKey), "{err}");
        assert!(err.to_string().contains(STATE_KEY_ENV), "{err}");
        assert!(matches!(
            StateKey::new("short"),
            Err(StateFileError::WeakKey)
        ));
    }

    #[test]
    fn one_changed_byte_anywhere_is_detected() {
        let key = StateKey::new("correct horse battery").unwrap();
        let sealed = seal(&sample(), &key, cheap()).unwrap();
        for i in 0..sealed.len() {
            for flip in [0x01u8, 0x80] {
                let mut bad = sealed.clone();
                bad[i] ^= flip;
                match open(&bad, &key) {
                    Err(
                        StateFileError::NotAStateFile(_)
                        | StateFileError::WrongKey
                        | StateFileError::Tampered,
                    ) => {}
                    other => panic!("byte {i} flipped by {flip:#x} was not detected: {other:?}"),
                }
            }
        }
        // A change past the header is reported as a change, not as a wrong key.
        let mut bad = sealed.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert!(matches!(open(&bad, &key), Err(StateFileError::Tampered)));
        // Cut short, or extended.
        assert!(open(&sealed[..sealed.len() - 1], &key).is_err());
        let mut longer = sealed.clone();
        longer.push(0);
        assert!(open(&longer, &key).is_err());
        assert!(open(&sealed[..10], &key).is_err());
    }
}
