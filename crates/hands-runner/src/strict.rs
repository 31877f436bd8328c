//! Strict function schemas: a schemars schema rewritten into what OpenAI's `strict: true`
//! accepts, or refused with where it cannot be.
//!
//! Strict mode needs every object closed (`additionalProperties: false`) with every property
//! listed in `required`; a field the model may leave out is expressed as nullable instead.
//! Spec: openai-browser-desktop-drivers, "Combinar acciones del navegador con otras
//! herramientas" (typed function tools).

use serde_json::{Map, Value};

/// The string formats strict mode accepts; schemars' numeric formats (`uint32`, `double`, …)
/// are dropped, since their bounds are already `minimum`/`maximum`.
const STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Why a schema cannot be strict, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("this schema cannot be strict at `{path}`: {why}")]
pub struct StrictSchemaError {
    /// A JSON pointer into the generated schema.
    pub path: String,
    /// What strict mode cannot express.
    pub why: String,
}

/// Why a field that may be absent but not null is refused.
pub const NOT_NULLABLE: &str = "an optional field must accept null in strict mode (declare it as an Option, without a non-null default)";
/// Why an open map is refused.
pub const OPEN_OBJECT: &str =
    "an object with free keys (a map) cannot be strict; declare a struct with named fields";
/// Why a value of any type is refused.
pub const ANY_VALUE: &str = "a value of any type cannot be strict; give it a concrete type";
/// Why `allOf` is refused.
pub const ALL_OF: &str = "allOf with several schemas cannot be strict";

/// `schema` made strict (see the module doc), or where it cannot be.
pub fn strict_schema(schema: &Value) -> Result<Value, StrictSchemaError> {
    let mut schema = schema.clone();
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
    }
    rewrite(&mut schema, "")?;
    Ok(schema)
}

fn refuse(path: &str, why: &str) -> StrictSchemaError {
    StrictSchemaError {
        path: if path.is_empty() {
            "/".to_owned()
        } else {
            path.to_owned()
        },
        why: why.to_owned(),
    }
}

/// Whether a schema accepts `null`.
fn accepts_null(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        _ => {
            ["anyOf", "oneOf"].iter().any(|key| {
                schema
                    .get(*key)
                    .and_then(Value::as_array)
                    .is_some_and(|variants| variants.iter().any(accepts_null))
            }) || schema.get("const") == Some(&Value::Null)
        }
    }
}

fn rewrite(schema: &mut Value, path: &str) -> Result<(), StrictSchemaError> {
    let map = match schema {
        Value::Bool(_) => return Err(refuse(path, ANY_VALUE)),
        Value::Object(map) => map,
        _ => return Ok(()),
    };
    // A schema that constrains nothing (`{}`, or only a title or description: schemars'
    // `serde_json::Value`) accepts any value.
    const CONSTRAINING: &[&str] = &[
        "type",
        "properties",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "enum",
        "const",
        "items",
    ];
    if !CONSTRAINING.iter().any(|key| map.contains_key(*key)) {
        return Err(refuse(path, ANY_VALUE));
    }
    if let Some(Value::String(format)) = map.get("format")
        && !STRICT_FORMATS.contains(&format.as_str())
    {
        map.remove("format");
    }
    // A lone `allOf` (schemars wraps a described `$ref` so) is its one schema.
    if let Some(Value::Array(all)) = map.get("allOf") {
        if all.len() != 1 {
            return Err(refuse(path, ALL_OF));
        }
        let only = all[0].clone();
        map.remove("allOf");
        if let Value::Object(inner) = only {
            for (key, value) in inner {
                map.entry(key).or_insert(value);
            }
        }
    }
    // Variants are disjoint in what serde derives (tagged enums): `oneOf` reads as `anyOf`.
    if let Some(one) = map.remove("oneOf") {
        map.insert("anyOf".to_owned(), one);
    }
    for key in ["anyOf", "prefixItems"] {
        if let Some(Value::Array(variants)) = map.get_mut(key) {
            for (idx, variant) in variants.iter_mut().enumerate() {
                rewrite(variant, &format!("{path}/{key}/{idx}"))?;
            }
        }
    }
    if let Some(items) = map.get_mut("items") {
        rewrite(items, &format!("{path}/items"))?;
    }
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(defs)) = map.get_mut(key) {
            for (name, def) in defs.iter_mut() {
                rewrite(def, &format!("{path}/{key}/{name}"))?;
            }
        }
    }
    let is_object = match map.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        _ => map.contains_key("properties"),
    };
    if is_object {
        close_object(map, path)?;
    }
    Ok(())
}

fn close_object(map: &mut Map<String, Value>, path: &str) -> Result<(), StrictSchemaError> {
    match map.get("additionalProperties") {
        None | Some(Value::Bool(false)) => {}
        Some(_) => return Err(refuse(path, OPEN_OBJECT)),
    }
    let required: Vec<String> = match map.get("required") {
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    let Some(Value::Object(properties)) = map.get_mut("properties") else {
        return Err(refuse(path, OPEN_OBJECT));
    };
    let mut names = Vec::with_capacity(properties.len());
    for (name, property) in properties.iter_mut() {
        let here = format!("{path}/properties/{name}");
        rewrite(property, &here)?;
        if !required.contains(name) && !accepts_null(property) {
            return Err(refuse(&here, NOT_NULLABLE));
        }
        // A default the model cannot omit any more says nothing.
        if let Value::Object(p) = property {
            p.remove("default");
        }
        names.push(Value::String(name.clone()));
    }
    map.insert("required".to_owned(), Value::Array(names));
    map.insert("additionalProperties".to_owned(), Value::Bool(false));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;
    use std::collections::BTreeMap;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code, reason = "only the schema is read")]
    struct Booking {
        reference: String,
        nights: Option<u32>,
        guest: Guest,
        rooms: Vec<Room>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code, reason = "only the schema is read")]
    struct Guest {
        name: String,
        email: Option<String>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code, reason = "only the schema is read")]
    enum Room {
        Single,
        Double { beds: u8 },
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code, reason = "only the schema is read")]
    struct WithDefault {
        #[serde(default)]
        count: u32,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code, reason = "only the schema is read")]
    struct WithMap {
        tags: BTreeMap<String, String>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code, reason = "only the schema is read")]
    struct WithAny {
        anything: Value,
    }

    fn strict_of<T: JsonSchema>() -> Result<Value, StrictSchemaError> {
        strict_schema(&serde_json::to_value(schemars::schema_for!(T)).unwrap())
    }

    /// Every object of a strict schema is closed and requires all its properties.
    fn assert_closed(schema: &Value) {
        match schema {
            Value::Object(map) => {
                if let Some(Value::Object(props)) = map.get("properties") {
                    assert_eq!(map["additionalProperties"], json!(false), "{schema}");
                    let required: Vec<&str> = map["required"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_str().unwrap())
                        .collect();
                    for name in props.keys() {
                        assert!(required.contains(&name.as_str()), "{name} in {schema}");
                    }
                }
                assert!(!map.contains_key("oneOf"), "{schema}");
                map.values().for_each(assert_closed);
            }
            Value::Array(values) => values.iter().for_each(assert_closed),
            _ => {}
        }
    }

    #[test]
    fn every_object_is_closed_and_optional_fields_are_nullable() {
        let schema = strict_of::<Booking>().unwrap();
        assert_closed(&schema);
        assert!(schema.get("$schema").is_none());
        assert!(accepts_null(&schema["properties"]["nights"]));
        assert!(!accepts_null(&schema["properties"]["reference"]));
        // Numeric formats are not strict formats.
        assert!(schema["properties"]["nights"].get("format").is_none());
    }

    #[test]
    fn what_strict_mode_cannot_express_is_refused_with_where() {
        let check = |got: Result<Value, StrictSchemaError>, path: &str, why: &str| {
            let err = got.unwrap_err();
            assert_eq!((err.path.as_str(), err.why.as_str()), (path, why));
        };
        check(
            strict_of::<WithDefault>(),
            "/properties/count",
            NOT_NULLABLE,
        );
        check(strict_of::<WithMap>(), "/properties/tags", OPEN_OBJECT);
        check(strict_of::<WithAny>(), "/properties/anything", ANY_VALUE);
        check(strict_schema(&json!(true)), "/", ANY_VALUE);
        check(strict_of::<Value>(), "/", ANY_VALUE);
        check(
            strict_schema(&json!({"allOf": [{"type": "string"}, {"type": "number"}]})),
            "/",
            ALL_OF,
        );
    }
}
