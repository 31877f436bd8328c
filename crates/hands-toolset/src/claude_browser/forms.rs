//! `form_input`: which driver call sets a field, chosen from the field's role in a read.
//!
//! The toolset remembers the role of every element its reads (`read_page`, `find`) reported;
//! a ref it has not seen is looked up with one interactive `read_page` of the tab. Refs are
//! unique for the whole session and never reused across documents (the driver contract), so a
//! remembered role cannot describe another element; the driver still checks the ref when it acts.
//!
//! | role | value | driver call |
//! |---|---|---|
//! | `textbox`, `combobox` without options (editable) | string or number | `type` into the ref (the driver replaces the field's text) |
//! | `combobox` with options, `listbox` | string (an option's value or label) | `select_option` |
//! | `checkbox`, `radio` | boolean (or `"true"`/`"false"`, `"on"`/`"off"`, `"checked"`/`"unchecked"`) | `set_checked` |
//! | `slider`, `button` | — | refused, naming the member to use instead |

use std::collections::HashMap;

use hands_core::browser::args::{ArgError, BrowserCall};
use hands_core::browser::read::{BrowserRead, Ref, Role};
use hands_core::browser::state::TabId;

use super::input::FieldValue;

/// What `form_input` needs to know of an element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The element's role.
    pub role: Role,
    /// Whether the read listed options (a `<select>`, not an editable combo box).
    pub has_options: bool,
}

/// Most remembered refs; past it the memory starts over (a later `form_input` reads again).
const MAX_REMEMBERED: usize = 50_000;

/// Roles of the refs the toolset's reads reported.
#[derive(Debug, Default)]
pub struct Fields(HashMap<Ref, Field>);

impl Fields {
    /// Remembers every element of a read, as the driver reported it (before any value is
    /// withheld from the model: whether options exist is not private).
    pub fn remember(&mut self, read: &BrowserRead) {
        if self.0.len() + read.elements().len() > MAX_REMEMBERED {
            self.0.clear();
        }
        for element in read.elements() {
            self.0.insert(
                element.reference().clone(),
                Field {
                    role: element.role(),
                    has_options: element.options().is_some(),
                },
            );
        }
    }

    /// The remembered field, if any.
    pub fn get(&self, target: &Ref) -> Option<Field> {
        self.0.get(target).copied()
    }
}

/// Why `form_input` cannot set a field: the text the model reads.
pub fn no_field(target: &Ref) -> String {
    format!(
        "`form_input`: `target` {target} is not a form field on the page now; call read_page or find again and use a current ref"
    )
}

/// The driver call that sets `field` to `value`, or the text that says why not.
pub fn call_for(
    field: Field,
    target: Ref,
    value: FieldValue,
    tab: Option<TabId>,
) -> Result<BrowserCall, String> {
    let wrong = |wanted: &str| {
        format!(
            "`form_input`: `target` {target} is a {role}; its `value` must be {wanted}",
            role = field.role
        )
    };
    let built =
        |result: Result<BrowserCall, ArgError>| result.map_err(|e| format!("`form_input`: {e}"));
    match (field.role, field.has_options) {
        (Role::Textbox, _) | (Role::Combobox, false) => match value {
            FieldValue::Text(text) => built(BrowserCall::type_text(&text, Some(target), tab)),
            _ => Err(wrong("a string")),
        },
        (Role::Combobox, true) | (Role::Listbox, _) => {
            let FieldValue::Text(text) = value else {
                return Err(wrong("an option's value or label"));
            };
            built(BrowserCall::select_option(target, &[text.as_str()], tab))
        }
        (Role::Checkbox | Role::Radio, _) => {
            let checked = match &value {
                FieldValue::Checked(checked) => Some(*checked),
                FieldValue::Text(text) => match text.to_ascii_lowercase().as_str() {
                    "true" | "on" | "checked" => Some(true),
                    "false" | "off" | "unchecked" => Some(false),
                    _ => None,
                },
            };
            match checked {
                Some(checked) => Ok(BrowserCall::SetChecked {
                    tab,
                    target,
                    checked,
                }),
                None => Err(wrong("true or false")),
            }
        }
        (Role::Slider, _) => Err(format!(
            "`form_input` cannot set the slider {target}: click it, then move it with key (\"Right\", \"Left\", \"Home\", \"End\")"
        )),
        (Role::Button, _) => Err(format!(
            "`form_input`: `target` {target} is a button, not a field: use left_click to press it"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hands_core::browser::read::{ReadElement, ReadOption};

    fn r(text: &str) -> Ref {
        Ref::new(text).unwrap()
    }

    fn field(role: Role, has_options: bool) -> Field {
        Field { role, has_options }
    }

    #[test]
    fn the_role_chooses_the_call() {
        let text = || FieldValue::Text("Ada".into());
        assert_eq!(
            call_for(field(Role::Textbox, false), r("e1"), text(), None),
            BrowserCall::type_text("Ada", Some(r("e1")), None).map_err(|e| e.to_string())
        );
        // An editable combo box is typed into; a select chooses.
        assert!(matches!(
            call_for(field(Role::Combobox, false), r("e2"), text(), None),
            Ok(BrowserCall::Type { .. })
        ));
        assert_eq!(
            call_for(field(Role::Combobox, true), r("e2"), text(), None),
            BrowserCall::select_option(r("e2"), &["Ada"], None).map_err(|e| e.to_string())
        );
        assert_eq!(
            call_for(
                field(Role::Listbox, true),
                r("e3"),
                FieldValue::Text("b".into()),
                None
            ),
            BrowserCall::select_option(r("e3"), &["b"], None).map_err(|e| e.to_string())
        );
        for (value, checked) in [
            (FieldValue::Checked(true), true),
            (FieldValue::Text("off".into()), false),
            (FieldValue::Text("Checked".into()), true),
        ] {
            assert_eq!(
                call_for(field(Role::Checkbox, false), r("e4"), value, None),
                Ok(BrowserCall::SetChecked {
                    tab: None,
                    target: r("e4"),
                    checked
                })
            );
        }
    }

    #[test]
    fn mismatched_values_and_roles_say_what_to_do() {
        let err = call_for(
            field(Role::Checkbox, false),
            r("e4"),
            FieldValue::Text("maybe".into()),
            None,
        )
        .unwrap_err();
        assert_eq!(
            err,
            "`form_input`: `target` e4 is a checkbox; its `value` must be true or false"
        );
        assert!(
            call_for(
                field(Role::Textbox, false),
                r("e1"),
                FieldValue::Checked(true),
                None
            )
            .unwrap_err()
            .contains("must be a string")
        );
        assert!(
            call_for(
                field(Role::Slider, false),
                r("e5"),
                FieldValue::Text("5".into()),
                None
            )
            .unwrap_err()
            .contains("key")
        );
        assert!(
            call_for(
                field(Role::Button, false),
                r("e6"),
                FieldValue::Text("x".into()),
                None
            )
            .unwrap_err()
            .contains("left_click")
        );
        assert!(
            call_for(
                field(Role::Listbox, true),
                r("e3"),
                FieldValue::Checked(true),
                None
            )
            .unwrap_err()
            .contains("an option's value or label")
        );
    }

    #[test]
    fn reads_are_remembered() {
        let read = BrowserRead::new(
            String::new(),
            vec![
                ReadElement::new(r("e1"), "Name".into(), Role::Textbox).unwrap(),
                ReadElement::new(r("e2"), "Size".into(), Role::Combobox)
                    .unwrap()
                    .with_options(vec![ReadOption::new("S".into(), "s".into()).unwrap()])
                    .unwrap(),
            ],
            vec![],
        )
        .unwrap();
        let mut fields = Fields::default();
        fields.remember(&read);
        assert_eq!(fields.get(&r("e1")), Some(field(Role::Textbox, false)));
        assert_eq!(fields.get(&r("e2")), Some(field(Role::Combobox, true)));
        assert_eq!(fields.get(&r("e9")), None);
    }
}
