//! The booking vocabulary: the form's fields, the validated values a saved booking is made of,
//! and the rules that turn a submitted form into a [`NewBooking`] or a list of [`FieldError`]s.

use std::fmt;

/// The longest full name accepted, in characters.
pub const MAX_NAME_CHARS: usize = 200;
/// The longest email address accepted, in characters (RFC 5321's path limit).
pub const MAX_EMAIL_CHARS: usize = 254;
/// The longest "special requests" text accepted, in characters.
pub const MAX_REQUESTS_CHARS: usize = 1000;
/// The fewest nights a booking may have.
pub const MIN_NIGHTS: u8 = 1;
/// The most nights a booking may have.
pub const MAX_NIGHTS: u8 = 30;
/// What a saved booking's reference starts with: `HH-000042` for booking 42.
pub const REFERENCE_PREFIX: &str = "HH-";

/// One control of the booking form, with the `id`, `name` and label text the page gives it,
/// so a drill can script against the page without copying strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    /// The guest's full name (`<input type="text" required>`).
    Name,
    /// The guest's email address (`<input type="email" required>`).
    Email,
    /// The check-in date (`<input type="date" required>`), `YYYY-MM-DD` on the wire.
    CheckIn,
    /// The number of nights (`<input type="number" min="1" max="30" required>`).
    Nights,
    /// The room type (`<select required>`, one option per [`Room`]).
    Room,
    /// Breakfast included (`<input type="checkbox" value="yes">`).
    Breakfast,
    /// Special requests (`<textarea>`, optional).
    Requests,
}

impl Field {
    /// Every field, in the order the form shows them.
    pub const ALL: [Field; 7] = [
        Field::Name,
        Field::Email,
        Field::CheckIn,
        Field::Nights,
        Field::Room,
        Field::Breakfast,
        Field::Requests,
    ];

    /// The control's `name` attribute: the key in the submitted form body.
    pub const fn name(self) -> &'static str {
        match self {
            Field::Name => "name",
            Field::Email => "email",
            Field::CheckIn => "check_in",
            Field::Nights => "nights",
            Field::Room => "room",
            Field::Breakfast => "breakfast",
            Field::Requests => "requests",
        }
    }

    /// The control's `id` attribute (its `<label for>` points at it).
    pub const fn id(self) -> &'static str {
        match self {
            Field::Name => "full-name",
            Field::Email => "email",
            Field::CheckIn => "check-in",
            Field::Nights => "nights",
            Field::Room => "room",
            Field::Breakfast => "breakfast",
            Field::Requests => "requests",
        }
    }

    /// The text of the control's `<label>`: its accessible name.
    pub const fn label(self) -> &'static str {
        match self {
            Field::Name => "Full name",
            Field::Email => "Email",
            Field::CheckIn => "Check-in date",
            Field::Nights => "Nights",
            Field::Room => "Room type",
            Field::Breakfast => "Include breakfast",
            Field::Requests => "Special requests (optional)",
        }
    }
}

/// A room type the hotel offers. The option's value and its visible label differ on purpose,
/// so a drill can tell selecting by label from selecting by value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Room {
    /// `standard`: "Standard double".
    Standard,
    /// `sea-view`: "Sea-view double".
    SeaView,
    /// `suite`: "Harbour suite".
    Suite,
}

impl Room {
    /// Every room type, in the order the `<select>` lists them.
    pub const ALL: [Room; 3] = [Room::Standard, Room::SeaView, Room::Suite];

    /// The `<option value>`, and what the database stores.
    pub const fn value(self) -> &'static str {
        match self {
            Room::Standard => "standard",
            Room::SeaView => "sea-view",
            Room::Suite => "suite",
        }
    }

    /// The option's visible label.
    pub const fn label(self) -> &'static str {
        match self {
            Room::Standard => "Standard double",
            Room::SeaView => "Sea-view double",
            Room::Suite => "Harbour suite",
        }
    }

    /// The room whose option value is `value`, exactly.
    pub fn from_value(value: &str) -> Option<Room> {
        Room::ALL.into_iter().find(|room| room.value() == value)
    }
}

/// A calendar date written `YYYY-MM-DD`, as an `<input type="date">` submits it. It holds
/// only real dates (no 2031-02-29), years 0001 to 9999.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    year: u16,
    month: u8,
    day: u8,
}

/// Why a text is not a [`Date`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateError {
    /// Not of the shape `YYYY-MM-DD` (four, two and two ASCII digits).
    Format,
    /// The right shape, but no such day (month 13, 31 April, 29 February of a common year).
    NoSuchDay,
}

impl Date {
    /// The date `year-month-day`, when that day exists.
    pub fn new(year: u16, month: u8, day: u8) -> Option<Date> {
        let real = (1..=9999).contains(&year)
            && (1..=12).contains(&month)
            && day >= 1
            && day <= days_in_month(year, month);
        real.then_some(Date { year, month, day })
    }

    /// Parses exactly `YYYY-MM-DD`: no surrounding spaces, no other separators or widths.
    pub fn parse(text: &str) -> Result<Date, DateError> {
        let bytes = text.as_bytes();
        let shape_ok = bytes.len() == 10
            && bytes[4] == b'-'
            && bytes[7] == b'-'
            && bytes
                .iter()
                .enumerate()
                .all(|(idx, b)| idx == 4 || idx == 7 || b.is_ascii_digit());
        if !shape_ok {
            return Err(DateError::Format);
        }
        let number = |range: std::ops::Range<usize>| {
            bytes[range]
                .iter()
                .fold(0u16, |acc, b| acc * 10 + u16::from(b - b'0'))
        };
        let (year, month, day) = (number(0..4), number(5..7), number(8..10));
        // Month and day are at most 99 here, so the narrowing cannot lose anything.
        let month = u8::try_from(month).map_err(|_| DateError::Format)?;
        let day = u8::try_from(day).map_err(|_| DateError::Format)?;
        Date::new(year, month, day).ok_or(DateError::NoSuchDay)
    }

    /// The year, 1 to 9999.
    pub fn year(self) -> u16 {
        self.year
    }

    /// The month, 1 to 12.
    pub fn month(self) -> u8 {
        self.month
    }

    /// The day of the month, 1 to 31.
    pub fn day(self) -> u8 {
        self.day
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => {
            29
        }
        2 => 28,
        _ => 0,
    }
}

/// A number of nights, [`MIN_NIGHTS`] to [`MAX_NIGHTS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Nights(u8);

impl Nights {
    /// `n` nights, when `n` is within the allowed range.
    pub fn new(n: u8) -> Option<Nights> {
        (MIN_NIGHTS..=MAX_NIGHTS).contains(&n).then_some(Nights(n))
    }

    /// The number of nights.
    pub fn get(self) -> u8 {
        self.0
    }
}

impl fmt::Display for Nights {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The form as submitted: every value as the browser sent it (absent fields are empty), kept
/// so a rejected form can be shown again with what the guest typed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BookingForm {
    /// The `name` field.
    pub name: String,
    /// The `email` field.
    pub email: String,
    /// The `check_in` field.
    pub check_in: String,
    /// The `nights` field.
    pub nights: String,
    /// The `room` field: an option value.
    pub room: String,
    /// Whether the `breakfast` checkbox was sent (a browser sends a checkbox only when ticked).
    pub breakfast: bool,
    /// The `requests` field.
    pub requests: String,
}

impl BookingForm {
    /// Reads an `application/x-www-form-urlencoded` body. When a key repeats, the first value
    /// counts, as a form has one control per name; unknown keys are ignored. Bytes that are not
    /// UTF-8 become U+FFFD.
    pub fn from_urlencoded(body: &[u8]) -> BookingForm {
        let mut form = BookingForm::default();
        let mut seen = [false; Field::ALL.len()];
        for (key, value) in url::form_urlencoded::parse(body) {
            let Some(field_idx) = Field::ALL.iter().position(|f| f.name() == key) else {
                continue;
            };
            if std::mem::replace(&mut seen[field_idx], true) {
                continue;
            }
            let value = value.into_owned();
            match Field::ALL[field_idx] {
                Field::Name => form.name = value,
                Field::Email => form.email = value,
                Field::CheckIn => form.check_in = value,
                Field::Nights => form.nights = value,
                Field::Room => form.room = value,
                Field::Breakfast => form.breakfast = true,
                Field::Requests => form.requests = value,
            }
        }
        form
    }

    /// The server-side rules: every required field present, the name and email sensible, the
    /// date a real `YYYY-MM-DD` day, nights a whole number in range, the room one on offer.
    /// The name and email are trimmed of surrounding white space; the requests' line breaks
    /// become `\n` (browsers submit a textarea's as `\r\n`), and are otherwise kept exactly.
    /// Returns every problem found, in the form's order, not just the first.
    pub fn validate(&self) -> Result<NewBooking, Vec<FieldError>> {
        let mut errors = Vec::new();

        let name = self.name.trim();
        if name.is_empty() {
            errors.push(FieldError::Missing(Field::Name));
        } else if name.chars().count() > MAX_NAME_CHARS {
            errors.push(FieldError::TooLong {
                field: Field::Name,
                max: MAX_NAME_CHARS,
            });
        } else if name.chars().any(char::is_control) {
            errors.push(FieldError::NameControlChars);
        }

        let email = self.email.trim();
        if email.is_empty() {
            errors.push(FieldError::Missing(Field::Email));
        } else if email.chars().count() > MAX_EMAIL_CHARS {
            errors.push(FieldError::TooLong {
                field: Field::Email,
                max: MAX_EMAIL_CHARS,
            });
        } else if !is_plausible_email(email) {
            errors.push(FieldError::EmailInvalid {
                got: email.to_owned(),
            });
        }

        let check_in = if self.check_in.is_empty() {
            errors.push(FieldError::Missing(Field::CheckIn));
            None
        } else {
            let got = || self.check_in.clone();
            match Date::parse(&self.check_in) {
                Ok(date) => Some(date),
                Err(DateError::Format) => {
                    errors.push(FieldError::DateFormat { got: got() });
                    None
                }
                Err(DateError::NoSuchDay) => {
                    errors.push(FieldError::DateNoSuchDay { got: got() });
                    None
                }
            }
        };

        let nights_text = self.nights.trim();
        let nights = if nights_text.is_empty() {
            errors.push(FieldError::Missing(Field::Nights));
            None
        } else if !nights_text.bytes().all(|b| b.is_ascii_digit()) {
            errors.push(FieldError::NightsNotWhole {
                got: self.nights.clone(),
            });
            None
        } else {
            let nights = nights_text.parse::<u8>().ok().and_then(Nights::new);
            if nights.is_none() {
                errors.push(FieldError::NightsOutOfRange {
                    got: self.nights.clone(),
                });
            }
            nights
        };

        let room = if self.room.is_empty() {
            errors.push(FieldError::Missing(Field::Room));
            None
        } else {
            let room = Room::from_value(&self.room);
            if room.is_none() {
                errors.push(FieldError::RoomUnknown {
                    got: self.room.clone(),
                });
            }
            room
        };

        let requests = self.requests.replace("\r\n", "\n");
        if requests.chars().count() > MAX_REQUESTS_CHARS {
            errors.push(FieldError::TooLong {
                field: Field::Requests,
                max: MAX_REQUESTS_CHARS,
            });
        }

        match (check_in, nights, room) {
            (Some(check_in), Some(nights), Some(room)) if errors.is_empty() => Ok(NewBooking {
                name: name.to_owned(),
                email: email.to_owned(),
                check_in,
                nights,
                room,
                breakfast: self.breakfast,
                requests,
            }),
            _ => Err(errors),
        }
    }
}

/// One `@` with something before it and a dotless-or-dotted domain after it, no white space:
/// the check the brief asks for, a little stricter than "contains @", far from RFC 5322.
fn is_plausible_email(email: &str) -> bool {
    match email.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && !domain.is_empty()
                && !domain.contains('@')
                && !email.chars().any(char::is_whitespace)
        }
        None => false,
    }
}

/// What is wrong with one field of a submitted form. The `Display` text is the sentence the
/// page shows next to the field and in the error summary.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FieldError {
    /// A required field was empty or absent.
    #[error("{} is required.", .0.label())]
    Missing(Field),
    /// A text longer than the field allows.
    #[error("{} is too long: at most {max} characters.", field.label())]
    TooLong {
        /// Which field.
        field: Field,
        /// Its limit, in characters.
        max: usize,
    },
    /// A name holding control characters (tabs, line breaks).
    #[error("Full name must be on one line, without tabs or control characters.")]
    NameControlChars,
    /// An email without exactly one `@` between two non-empty parts, or with spaces.
    #[error("Email must be an address like name@example.com (you entered \"{got}\").")]
    EmailInvalid {
        /// The trimmed value submitted.
        got: String,
    },
    /// A date not written `YYYY-MM-DD`.
    #[error("Check-in date must be written YYYY-MM-DD, like 2030-06-14 (you entered \"{got}\").")]
    DateFormat {
        /// The value submitted.
        got: String,
    },
    /// A `YYYY-MM-DD` text naming no real day.
    #[error("Check-in date {got} is not a day of the calendar.")]
    DateNoSuchDay {
        /// The value submitted.
        got: String,
    },
    /// Nights not written as a whole number.
    #[error("Nights must be a whole number from 1 to 30 (you entered \"{got}\").")]
    NightsNotWhole {
        /// The value submitted.
        got: String,
    },
    /// A whole number of nights outside 1 to 30.
    #[error("Nights must be from 1 to 30 (you entered \"{got}\").")]
    NightsOutOfRange {
        /// The value submitted.
        got: String,
    },
    /// A room value that is not one of [`Room::ALL`].
    #[error("Room type must be one of the rooms listed (there is no room \"{got}\").")]
    RoomUnknown {
        /// The value submitted.
        got: String,
    },
}

impl FieldError {
    /// The field the error is about.
    pub fn field(&self) -> Field {
        match self {
            FieldError::Missing(field) | FieldError::TooLong { field, .. } => *field,
            FieldError::NameControlChars => Field::Name,
            FieldError::EmailInvalid { .. } => Field::Email,
            FieldError::DateFormat { .. } | FieldError::DateNoSuchDay { .. } => Field::CheckIn,
            FieldError::NightsNotWhole { .. } | FieldError::NightsOutOfRange { .. } => {
                Field::Nights
            }
            FieldError::RoomUnknown { .. } => Field::Room,
        }
    }
}

/// A booking that passed validation and is about to be saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewBooking {
    /// The guest's full name, trimmed.
    pub name: String,
    /// The guest's email address, trimmed.
    pub email: String,
    /// The first night.
    pub check_in: Date,
    /// How many nights.
    pub nights: Nights,
    /// Which room type.
    pub room: Room,
    /// Whether breakfast is included.
    pub breakfast: bool,
    /// Special requests, line breaks as `\n`; empty when none.
    pub requests: String,
}

/// A saved booking, as read back from the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Booking {
    /// The row id (`INTEGER PRIMARY KEY`), from 1.
    pub id: i64,
    /// The guest's full name.
    pub name: String,
    /// The guest's email address.
    pub email: String,
    /// The first night.
    pub check_in: Date,
    /// How many nights.
    pub nights: Nights,
    /// Which room type.
    pub room: Room,
    /// Whether breakfast is included.
    pub breakfast: bool,
    /// Special requests, line breaks as `\n`; empty when none.
    pub requests: String,
    /// When the row was written, UTC, `YYYY-MM-DDTHH:MM:SSZ` (SQLite's clock).
    pub created_at: String,
}

impl Booking {
    /// The reference the confirmation page shows: [`REFERENCE_PREFIX`] and the id in six
    /// digits, `HH-000042`.
    pub fn reference(&self) -> String {
        reference(self.id)
    }
}

/// The reference of booking `id`.
pub(crate) fn reference(id: i64) -> String {
    format!("{REFERENCE_PREFIX}{id:06}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(pairs: &[(&str, &str)]) -> BookingForm {
        let body: String = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish();
        BookingForm::from_urlencoded(body.as_bytes())
    }

    fn valid() -> Vec<(&'static str, &'static str)> {
        vec![
            ("name", "Ada Lovelace"),
            ("email", "ada@example.com"),
            ("check_in", "2030-06-14"),
            ("nights", "3"),
            ("room", "sea-view"),
        ]
    }

    /// `valid()` with `key` replaced by `value` (or removed when `value` is `None`).
    fn with(key: &'static str, value: Option<&'static str>) -> Vec<(&'static str, &'static str)> {
        let mut pairs: Vec<_> = valid().into_iter().filter(|(k, _)| *k != key).collect();
        pairs.extend(value.map(|value| (key, value)));
        pairs
    }

    #[test]
    fn a_valid_form_becomes_a_new_booking() {
        let booking = form(&valid()).validate();
        assert_eq!(
            booking,
            Ok(NewBooking {
                name: "Ada Lovelace".to_owned(),
                email: "ada@example.com".to_owned(),
                check_in: Date::new(2030, 6, 14).unwrap(),
                nights: Nights::new(3).unwrap(),
                room: Room::SeaView,
                breakfast: false,
                requests: String::new(),
            })
        );
    }

    #[test]
    fn each_rule_rejects_with_its_own_error() {
        let cases: Vec<(&str, Option<&'static str>, FieldError)> = vec![
            ("name", None, FieldError::Missing(Field::Name)),
            ("name", Some("   "), FieldError::Missing(Field::Name)),
            ("name", Some("Ada\tLovelace"), FieldError::NameControlChars),
            ("email", None, FieldError::Missing(Field::Email)),
            (
                "email",
                Some("ada.example.com"),
                FieldError::EmailInvalid {
                    got: "ada.example.com".into(),
                },
            ),
            (
                "email",
                Some("@example.com"),
                FieldError::EmailInvalid {
                    got: "@example.com".into(),
                },
            ),
            (
                "email",
                Some("ada@"),
                FieldError::EmailInvalid { got: "ada@".into() },
            ),
            (
                "email",
                Some("a da@example.com"),
                FieldError::EmailInvalid {
                    got: "a da@example.com".into(),
                },
            ),
            ("check_in", None, FieldError::Missing(Field::CheckIn)),
            (
                "check_in",
                Some("14/06/2030"),
                FieldError::DateFormat {
                    got: "14/06/2030".into(),
                },
            ),
            (
                "check_in",
                Some("2030-6-14"),
                FieldError::DateFormat {
                    got: "2030-6-14".into(),
                },
            ),
            (
                "check_in",
                Some(" 2030-06-14"),
                FieldError::DateFormat {
                    got: " 2030-06-14".into(),
                },
            ),
            (
                "check_in",
                Some("2030-02-29"),
                FieldError::DateNoSuchDay {
                    got: "2030-02-29".into(),
                },
            ),
            (
                "check_in",
                Some("2030-13-01"),
                FieldError::DateNoSuchDay {
                    got: "2030-13-01".into(),
                },
            ),
            (
                "check_in",
                Some("0000-01-01"),
                FieldError::DateNoSuchDay {
                    got: "0000-01-01".into(),
                },
            ),
            ("nights", None, FieldError::Missing(Field::Nights)),
            (
                "nights",
                Some("0"),
                FieldError::NightsOutOfRange { got: "0".into() },
            ),
            (
                "nights",
                Some("31"),
                FieldError::NightsOutOfRange { got: "31".into() },
            ),
            (
                "nights",
                Some("99999999999"),
                FieldError::NightsOutOfRange {
                    got: "99999999999".into(),
                },
            ),
            (
                "nights",
                Some("2.5"),
                FieldError::NightsNotWhole { got: "2.5".into() },
            ),
            (
                "nights",
                Some("-1"),
                FieldError::NightsNotWhole { got: "-1".into() },
            ),
            (
                "nights",
                Some("three"),
                FieldError::NightsNotWhole {
                    got: "three".into(),
                },
            ),
            ("room", None, FieldError::Missing(Field::Room)),
            (
                "room",
                Some("Sea-view double"),
                FieldError::RoomUnknown {
                    got: "Sea-view double".into(),
                },
            ),
            (
                "room",
                Some("penthouse"),
                FieldError::RoomUnknown {
                    got: "penthouse".into(),
                },
            ),
        ];
        for (key, value, expected) in cases {
            let got = form(&with(key, value)).validate();
            assert_eq!(got, Err(vec![expected]), "{key} = {value:?}");
        }
    }

    #[test]
    fn every_problem_is_reported_in_form_order() {
        let got = form(&[("nights", "45"), ("room", "attic")]).validate();
        let fields: Vec<Field> = got.unwrap_err().iter().map(FieldError::field).collect();
        assert_eq!(
            fields,
            [
                Field::Name,
                Field::Email,
                Field::CheckIn,
                Field::Nights,
                Field::Room
            ]
        );
    }

    #[test]
    fn accepted_values_at_the_edges() {
        let cases: Vec<(&str, &'static str)> = vec![
            ("nights", "1"),
            ("nights", "30"),
            ("nights", " 7 "),
            ("nights", "007"),
            ("check_in", "2028-02-29"),
            ("check_in", "2000-02-29"),
            ("check_in", "9999-12-31"),
            ("room", "standard"),
            ("room", "suite"),
            ("email", "zoë@bücher.example"),
        ];
        for (key, value) in cases {
            let got = form(&with(key, Some(value))).validate();
            assert!(got.is_ok(), "{key} = {value:?}: {got:?}");
        }
        assert_eq!(Date::parse("1900-02-29"), Err(DateError::NoSuchDay));
    }

    #[test]
    fn names_and_requests_are_kept_exactly_but_trimmed_and_newline_normalised() {
        let got = form(&[
            ("name", "  Zoë Ågren-Müller "),
            ("email", " zoe@example.com\t"),
            ("check_in", "2030-06-14"),
            ("nights", "2"),
            ("room", "suite"),
            ("breakfast", "yes"),
            (
                "requests",
                "Quiet room, please.\r\nLate arrival: ~23:00 <b>&</b>",
            ),
        ])
        .validate();
        let booking = got.unwrap();
        assert_eq!(booking.name, "Zoë Ågren-Müller");
        assert_eq!(booking.email, "zoe@example.com");
        assert!(booking.breakfast);
        assert_eq!(
            booking.requests,
            "Quiet room, please.\nLate arrival: ~23:00 <b>&</b>"
        );
    }

    #[test]
    fn the_first_value_of_a_repeated_key_counts_and_unknown_keys_are_ignored() {
        let got = BookingForm::from_urlencoded(b"room=suite&room=standard&coupon=FREE&breakfast=");
        assert_eq!(got.room, "suite");
        assert!(
            got.breakfast,
            "a sent checkbox means ticked, whatever its value"
        );
        assert!(!BookingForm::from_urlencoded(b"").breakfast);
    }

    #[test]
    fn too_long_texts_are_refused() {
        let long_name = "x".repeat(MAX_NAME_CHARS + 1);
        let long_requests = "é".repeat(MAX_REQUESTS_CHARS + 1);
        let mut pairs = valid();
        pairs.retain(|(k, _)| *k != "name");
        pairs.push(("name", long_name.as_str()));
        pairs.push(("requests", long_requests.as_str()));
        assert_eq!(
            form(&pairs).validate(),
            Err(vec![
                FieldError::TooLong {
                    field: Field::Name,
                    max: MAX_NAME_CHARS
                },
                FieldError::TooLong {
                    field: Field::Requests,
                    max: MAX_REQUESTS_CHARS
                },
            ])
        );
        let exactly = "é".repeat(MAX_REQUESTS_CHARS);
        let mut pairs = valid();
        pairs.push(("requests", exactly.as_str()));
        assert!(form(&pairs).validate().is_ok());
    }

    #[test]
    fn field_ids_names_and_labels_are_distinct() {
        for (a_idx, a) in Field::ALL.iter().enumerate() {
            for b in &Field::ALL[a_idx + 1..] {
                assert_ne!(a.id(), b.id());
                assert_ne!(a.name(), b.name());
                assert_ne!(a.label(), b.label());
            }
        }
        for room in Room::ALL {
            assert_eq!(Room::from_value(room.value()), Some(room));
            assert_eq!(Room::from_value(room.label()), None);
        }
    }

    #[test]
    fn dates_print_as_they_parse_and_references_pad_to_six_digits() {
        for text in ["2030-06-14", "0001-01-01", "2024-02-29"] {
            assert_eq!(
                Date::parse(text).map(|d| d.to_string()),
                Ok(text.to_owned())
            );
        }
        assert_eq!(reference(42), "HH-000042");
        assert_eq!(reference(1_234_567), "HH-1234567");
    }
}
