//! Reading a member's `input` object field by field, with errors that name the member, the field,
//! what was expected and what came.

use crate::errtext::{SHOWN_CHARS, allowed_list, show};
use std::time::Duration;

use hands_core::geometry::{BoundsError, Frame, ShotPoint, ShotRegion};
use hands_core::input::KeyError;
use serde_json::{Map, Value};

use super::members::Member;

/// Why a member's input was refused. Every variant becomes an `is_error` result the model reads.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// `input` is not a JSON object.
    #[error("`{member}` takes a JSON object as input, got {got}")]
    NotAnObject {
        /// The member.
        member: Member,
        /// What came instead.
        got: String,
    },
    /// A required field is absent.
    #[error("`{member}` requires `{field}` ({expected})")]
    Missing {
        /// The member.
        member: Member,
        /// The field.
        field: &'static str,
        /// What it should hold.
        expected: &'static str,
    },
    /// A field has the wrong shape.
    #[error("`{member}`: `{field}` must be {expected}, got {got}")]
    WrongType {
        /// The member.
        member: Member,
        /// The field.
        field: &'static str,
        /// What it should hold.
        expected: &'static str,
        /// What came, abbreviated.
        got: String,
    },
    /// A field the member does not take.
    #[error("`{member}` does not take `{field}`; it takes {}", allowed_list(.allowed))]
    UnknownField {
        /// The member.
        member: Member,
        /// The field, as [`crate::errtext::name`] echoes it.
        field: String,
        /// The fields it takes.
        allowed: &'static [&'static str],
    },
    /// A coordinate or region outside the screenshot.
    #[error("`{member}`: {source}")]
    Bounds {
        /// The member.
        member: Member,
        /// The bounds failure.
        source: BoundsError,
    },
    /// A key name or modifier text that does not parse.
    #[error("`{member}`: {source}")]
    Key {
        /// The member.
        member: Member,
        /// The key failure.
        source: KeyError,
    },
    /// A text no key can type (a control character other than newline, return and tab).
    #[error("`{member}`: {source}")]
    Text {
        /// The member.
        member: Member,
        /// Which character, and what to do instead.
        source: hands_core::input::TextError,
    },
}

/// A member's input object, read field by field. [`Args::finish`] refuses fields nobody read.
pub(crate) struct Args<'a> {
    member: Member,
    map: &'a Map<String, Value>,
    allowed: &'static [&'static str],
    frame: Frame,
}

impl<'a> Args<'a> {
    /// `ignore` lists keys the surface itself consumed (the legacy `action`).
    pub(crate) fn new(
        member: Member,
        input: &'a Value,
        frame: Frame,
        ignore: &[&str],
    ) -> Result<Args<'a>, InputError> {
        let Value::Object(map) = input else {
            return Err(InputError::NotAnObject {
                member,
                got: show(input, SHOWN_CHARS),
            });
        };
        let allowed = member.fields();
        if let Some(field) = map.iter().find_map(|(k, v)| {
            let known = allowed.contains(&k.as_str()) || ignore.contains(&k.as_str());
            // A null stands for an absent optional field.
            (!known && !v.is_null()).then_some(k)
        }) {
            return Err(InputError::UnknownField {
                member,
                field: crate::errtext::name(field),
                allowed,
            });
        }
        Ok(Args {
            member,
            map,
            allowed,
            frame,
        })
    }

    fn get(&self, field: &'static str) -> Option<&'a Value> {
        debug_assert!(self.allowed.contains(&field), "{field} not declared");
        self.map.get(field).filter(|v| !v.is_null())
    }

    fn wrong(&self, field: &'static str, expected: &'static str, got: &Value) -> InputError {
        InputError::WrongType {
            member: self.member,
            field,
            expected,
            got: show(got, SHOWN_CHARS),
        }
    }

    fn missing(&self, field: &'static str, expected: &'static str) -> InputError {
        InputError::Missing {
            member: self.member,
            field,
            expected,
        }
    }

    /// A non-negative integer; integral floats such as `3.0` are accepted.
    fn integer(value: &Value) -> Option<u64> {
        value.as_u64().or_else(|| {
            value
                .as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= 9.0e15)
                .map(|f| f as u64)
        })
    }

    /// An optional `[x, y]` checked against the screenshot.
    pub(crate) fn point(&self, field: &'static str) -> Result<Option<ShotPoint>, InputError> {
        const EXPECTED: &str = "an array of two non-negative integers [x, y] in screenshot pixels";
        let Some(value) = self.get(field) else {
            return Ok(None);
        };
        let pair = value
            .as_array()
            .filter(|a| a.len() == 2)
            .and_then(|a| Some([Self::integer(&a[0])?, Self::integer(&a[1])?]))
            .ok_or_else(|| self.wrong(field, EXPECTED, value))?;
        self.frame
            .point(pair[0], pair[1])
            .map(Some)
            .map_err(|source| InputError::Bounds {
                member: self.member,
                source,
            })
    }

    /// A required `[x, y]`.
    pub(crate) fn required_point(&self, field: &'static str) -> Result<ShotPoint, InputError> {
        self.point(field)?
            .ok_or_else(|| self.missing(field, "an array of two non-negative integers [x, y]"))
    }

    /// A required `[x0, y0, x1, y1]` checked against the screenshot.
    pub(crate) fn region(&self, field: &'static str) -> Result<ShotRegion, InputError> {
        const EXPECTED: &str =
            "an array of four non-negative integers [x0, y0, x1, y1] (top-left, bottom-right)";
        let value = self
            .get(field)
            .ok_or_else(|| self.missing(field, EXPECTED))?;
        let edges = value
            .as_array()
            .filter(|a| a.len() == 4)
            .and_then(|a| {
                Some([
                    Self::integer(&a[0])?,
                    Self::integer(&a[1])?,
                    Self::integer(&a[2])?,
                    Self::integer(&a[3])?,
                ])
            })
            .ok_or_else(|| self.wrong(field, EXPECTED, value))?;
        self.frame
            .region(edges)
            .map_err(|source| InputError::Bounds {
                member: self.member,
                source,
            })
    }

    /// An optional string.
    pub(crate) fn string(&self, field: &'static str) -> Result<Option<&'a str>, InputError> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.wrong(field, "a string", other)),
        }
    }

    /// A required string.
    pub(crate) fn required_string(
        &self,
        field: &'static str,
        expected: &'static str,
    ) -> Result<&'a str, InputError> {
        self.string(field)?
            .ok_or_else(|| self.missing(field, expected))
    }

    /// An optional integer within `min..=max`.
    pub(crate) fn integer_in(
        &self,
        field: &'static str,
        min: u64,
        max: u64,
        expected: &'static str,
    ) -> Result<Option<u64>, InputError> {
        let Some(value) = self.get(field) else {
            return Ok(None);
        };
        match Self::integer(value) {
            Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(self.wrong(field, expected, value)),
        }
    }

    /// A required duration in seconds, `0 ≤ d ≤ max_seconds`.
    pub(crate) fn seconds(
        &self,
        field: &'static str,
        max_seconds: f64,
        expected: &'static str,
    ) -> Result<Duration, InputError> {
        let value = self
            .get(field)
            .ok_or_else(|| self.missing(field, expected))?;
        match value.as_f64() {
            Some(s) if s.is_finite() && (0.0..=max_seconds).contains(&s) => {
                Ok(Duration::from_secs_f64(s))
            }
            _ => Err(self.wrong(field, expected, value)),
        }
    }

    /// A required whole number of seconds, `0 ≤ d ≤ max_seconds` (`3.0` counts as 3).
    pub(crate) fn whole_seconds(
        &self,
        field: &'static str,
        max_seconds: u64,
        expected: &'static str,
    ) -> Result<Duration, InputError> {
        let value = self
            .get(field)
            .ok_or_else(|| self.missing(field, expected))?;
        match Self::integer(value) {
            Some(s) if s <= max_seconds => Ok(Duration::from_secs(s)),
            _ => Err(self.wrong(field, expected, value)),
        }
    }

    /// Wraps a key parsing error.
    pub(crate) fn key_error(&self, source: KeyError) -> InputError {
        InputError::Key {
            member: self.member,
            source,
        }
    }
}
