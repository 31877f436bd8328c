//! Shared machinery for wire values kept byte for byte: a raw JSON text and its type name.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

/// Reads only the `type` field of a JSON object.
#[derive(Deserialize)]
struct TypeOnly<'a> {
    #[serde(borrow, rename = "type", default)]
    kind: Option<Cow<'a, str>>,
}

/// The `type` of a JSON object, or an error when the text is not an object.
pub(crate) fn type_of(json: &str) -> Result<Option<String>, serde_json::Error> {
    let head: TypeOnly<'_> = serde_json::from_str(json)?;
    Ok(head.kind.map(Cow::into_owned))
}

/// Serialises a value once into raw JSON.
pub(crate) fn to_raw(value: &impl serde::Serialize) -> Box<RawValue> {
    // Serialising the plain structs, strings and `Value`s of this crate into a string cannot
    // fail (every map key is a string and no `Serialize` here errors); `null` keeps this total.
    serde_json::value::to_raw_value(value).unwrap_or_default()
}

/// Sets (or removes, with `None`) one top-level key of a raw JSON object.
pub(crate) fn with_key(
    raw: &RawValue,
    key: &str,
    value: Option<serde_json::Value>,
) -> Result<Box<RawValue>, serde_json::Error> {
    let mut map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(raw.get())?;
    match value {
        Some(value) => {
            map.insert(key.to_owned(), value);
        }
        None => {
            map.remove(key);
        }
    }
    serde_json::value::to_raw_value(&map)
}
