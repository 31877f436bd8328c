//! The `tools` entry for Claude's browser toolset, built so that one the API would reject cannot
//! leave this crate, and checked the same way when read from JSON. It mirrors the computer
//! toolset's entry ([`crate::computer::declaration`]), whose per-member settings and cache
//! breakpoint it shares; only the defaults differ: four members are off until enabled.
//!
//! Spec: api-contracts A, "Browser use: `browser_toolset_20260801`" ("Entry", "Members (31)")
//! and, for the rules the two toolsets share ("configs", "Conflicts"), "Computer use".

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::members::Member;
use crate::computer::declaration::{
    CacheTtl, ConfigsRule, MemberConfig, cache_control_json, check_configs, configs_json,
    parse_cache_control, parse_member_config,
};
use crate::strings::BROWSER_TOOLSET_TYPE;

/// Why a browser toolset entry would be rejected by the API.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DeclarationError {
    /// The entry is not a JSON object.
    #[error("a tools entry must be a JSON object")]
    NotAnObject,
    /// A field the entry does not take.
    #[error(
        "{BROWSER_TOOLSET_TYPE} does not take `{field}` (it takes type, configs, cache_control, allowed_callers){hint}"
    )]
    UnknownField {
        /// The field.
        field: String,
        /// What to do instead, when there is something (starts with "; ").
        hint: &'static str,
    },
    /// `configs` is not an object.
    #[error("configs must be an object of member names to {{\"enabled\", \"defer_loading\"}}")]
    ConfigsNotAnObject,
    /// A `configs` key that is not a member.
    #[error("configs names `{name}`, which is not a browser toolset member")]
    UnknownMember {
        /// The key.
        name: String,
    },
    /// A per-member key other than `enabled` / `defer_loading`, or a non-boolean value.
    #[error(
        "configs.{member}.{key} is not valid: members take only `enabled` and `defer_loading`, as booleans"
    )]
    BadMemberConfig {
        /// The member.
        member: String,
        /// The key.
        key: String,
    },
    /// Every member disabled.
    #[error("configs disables every member: enable at least one")]
    AllDisabled,
    /// Enabled members disagree on `defer_loading`.
    #[error("all enabled members must share the same defer_loading value")]
    MixedDeferLoading,
    /// `allowed_callers` other than `["direct"]`.
    #[error("allowed_callers may only be [\"direct\"]")]
    BadAllowedCallers,
    /// `cache_control` that is not `{type: "ephemeral", ttl?}`.
    #[error(
        "cache_control must be {{\"type\": \"ephemeral\"}} with an optional ttl of \"5m\" or \"1h\""
    )]
    BadCacheControl,
    /// Two browser toolset entries in one request.
    #[error("a request may declare {BROWSER_TOOLSET_TYPE} only once")]
    SecondBrowserToolset,
}

/// The `browser_toolset_20260801` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowserToolsetDeclaration {
    configs: BTreeMap<Member, MemberConfig>,
    cache_control: Option<Option<CacheTtl>>,
    allowed_callers_direct: bool,
}

impl Default for BrowserToolsetDeclaration {
    fn default() -> BrowserToolsetDeclaration {
        BrowserToolsetDeclaration::new()
    }
}

/// A member's setting when `configs` does not name it.
fn default_config(member: Member) -> MemberConfig {
    MemberConfig {
        enabled: member.enabled_by_default(),
        defer_loading: false,
    }
}

/// The members a list names, refusing a name that is none.
fn members_named(names: &[impl AsRef<str>]) -> Result<Vec<Member>, DeclarationError> {
    names
        .iter()
        .map(|name| {
            Member::from_name(name.as_ref()).ok_or_else(|| DeclarationError::UnknownMember {
                name: crate::errtext::name(name.as_ref()),
            })
        })
        .collect()
}

impl BrowserToolsetDeclaration {
    /// The API's defaults: the 27 default members on, `file_upload`, `read_console`,
    /// `read_network` and `javascript_exec` off, nothing deferred, no breakpoint.
    pub fn new() -> BrowserToolsetDeclaration {
        BrowserToolsetDeclaration {
            configs: Member::ALL
                .iter()
                .map(|m| (*m, default_config(*m)))
                .collect(),
            cache_control: None,
            allowed_callers_direct: false,
        }
    }

    /// Sets one member's config.
    pub fn member(mut self, member: Member, config: MemberConfig) -> BrowserToolsetDeclaration {
        self.configs.insert(member, config);
        self
    }

    /// Exactly the named members enabled, every other one disabled (the function-tool
    /// toolset's `members` list, for Claude's toolset); an unknown name is refused.
    pub fn with_members(
        self,
        names: &[impl AsRef<str>],
    ) -> Result<BrowserToolsetDeclaration, DeclarationError> {
        let chosen = members_named(names)?;
        Ok(Member::ALL.iter().fold(self, |decl, m| {
            if chosen.contains(m) {
                decl.enable(*m)
            } else {
                decl.disable(*m)
            }
        }))
    }

    /// The named members enabled besides the others (the function-tool toolset's
    /// `additional_members`: `javascript_exec`, `read_console` …); an unknown name is refused.
    pub fn with_extra_members(
        self,
        names: &[impl AsRef<str>],
    ) -> Result<BrowserToolsetDeclaration, DeclarationError> {
        Ok(members_named(names)?
            .into_iter()
            .fold(self, BrowserToolsetDeclaration::enable))
    }

    /// Enables a member (e.g. `javascript_exec`).
    pub fn enable(self, member: Member) -> BrowserToolsetDeclaration {
        let config = MemberConfig {
            enabled: true,
            ..self.config(member)
        };
        self.member(member, config)
    }

    /// Disables a member (e.g. `left_mouse_down`, for a driver that cannot keep a button down).
    pub fn disable(self, member: Member) -> BrowserToolsetDeclaration {
        let config = MemberConfig {
            enabled: false,
            ..self.config(member)
        };
        self.member(member, config)
    }

    /// Sets `defer_loading` on every member.
    pub fn defer_loading(mut self, defer: bool) -> BrowserToolsetDeclaration {
        for c in self.configs.values_mut() {
            c.defer_loading = defer;
        }
        self
    }

    /// Adds a `cache_control` breakpoint on the entry.
    pub fn cache_control(mut self, ttl: Option<CacheTtl>) -> BrowserToolsetDeclaration {
        self.cache_control = Some(ttl);
        self
    }

    /// Adds `allowed_callers: ["direct"]`.
    pub fn allowed_callers_direct(mut self) -> BrowserToolsetDeclaration {
        self.allowed_callers_direct = true;
        self
    }

    /// A member's config.
    pub fn config(&self, member: Member) -> MemberConfig {
        self.configs
            .get(&member)
            .copied()
            .unwrap_or_else(|| default_config(member))
    }

    /// Whether the model may call `member`.
    pub fn is_enabled(&self, member: Member) -> bool {
        self.config(member).enabled
    }

    /// The enabled members, in the spec's order.
    pub fn enabled(&self) -> impl Iterator<Item = Member> + '_ {
        Member::ALL.into_iter().filter(|m| self.is_enabled(*m))
    }

    /// Checks the rules the API enforces on `configs`.
    pub fn validate(&self) -> Result<(), DeclarationError> {
        check_configs(self.configs.values().copied()).map_err(|rule| match rule {
            ConfigsRule::AllDisabled => DeclarationError::AllDisabled,
            ConfigsRule::MixedDeferLoading => DeclarationError::MixedDeferLoading,
        })
    }

    /// The wire entry; only settings that differ from a member's default are written.
    pub fn to_json(&self) -> Result<Value, DeclarationError> {
        self.validate()?;
        let mut entry = json!({"type": BROWSER_TOOLSET_TYPE});
        let configs = configs_json(
            self.configs.iter().map(|(m, c)| (*m, *c)),
            default_config,
            Member::name,
        );
        if !configs.is_empty() {
            entry["configs"] = Value::Object(configs);
        }
        if let Some(ttl) = self.cache_control {
            entry["cache_control"] = cache_control_json(ttl);
        }
        if self.allowed_callers_direct {
            entry["allowed_callers"] = json!(["direct"]);
        }
        Ok(entry)
    }

    /// Reads an entry as the API would, refusing what it refuses.
    pub fn from_json(entry: &Value) -> Result<BrowserToolsetDeclaration, DeclarationError> {
        let Value::Object(map) = entry else {
            return Err(DeclarationError::NotAnObject);
        };
        let mut decl = BrowserToolsetDeclaration::new();
        for (key, value) in map {
            match key.as_str() {
                "type" => {}
                "configs" => {
                    let Value::Object(configs) = value else {
                        return Err(DeclarationError::ConfigsNotAnObject);
                    };
                    for (name, cfg) in configs {
                        let member = Member::from_name(name).ok_or_else(|| {
                            DeclarationError::UnknownMember { name: name.clone() }
                        })?;
                        let config =
                            parse_member_config(cfg, default_config(member)).map_err(|key| {
                                DeclarationError::BadMemberConfig {
                                    member: name.clone(),
                                    key,
                                }
                            })?;
                        decl.configs.insert(member, config);
                    }
                }
                "cache_control" => {
                    decl.cache_control =
                        Some(parse_cache_control(value).ok_or(DeclarationError::BadCacheControl)?);
                }
                "allowed_callers" => {
                    if value != &json!(["direct"]) {
                        return Err(DeclarationError::BadAllowedCallers);
                    }
                    decl.allowed_callers_direct = true;
                }
                other => {
                    let hint = match other {
                        "name" => "; member names are fixed by the toolset version",
                        "defer_loading" => {
                            "; move defer_loading into configs, the same value on every enabled member"
                        }
                        _ => "",
                    };
                    return Err(DeclarationError::UnknownField {
                        field: other.to_owned(),
                        hint,
                    });
                }
            }
        }
        decl.validate()?;
        Ok(decl)
    }
}

/// Checks a whole `tools` array for the browser toolset: at most one `browser_toolset_20260801`
/// entry, and that entry valid. (It may sit beside the computer toolset; check that one with
/// [`crate::computer::declaration::check_tools`].)
pub fn check_tools(tools: &[Value]) -> Result<(), DeclarationError> {
    let mut seen = false;
    for tool in tools {
        if tool.get("type").and_then(Value::as_str) == Some(BROWSER_TOOLSET_TYPE) {
            if seen {
                return Err(DeclarationError::SecondBrowserToolset);
            }
            BrowserToolsetDeclaration::from_json(tool)?;
            seen = true;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejects(entry: Value) -> DeclarationError {
        BrowserToolsetDeclaration::from_json(&entry).unwrap_err()
    }

    #[test]
    fn members_are_chosen_by_name() {
        let decl = BrowserToolsetDeclaration::new()
            .with_members(&["navigate", "read_page"])
            .unwrap();
        assert_eq!(
            decl.enabled().collect::<Vec<_>>(),
            [Member::Navigate, Member::ReadPage]
        );
        let decl = BrowserToolsetDeclaration::new()
            .with_extra_members(&["javascript_exec"])
            .unwrap();
        assert!(decl.is_enabled(Member::JavascriptExec));
        assert_eq!(decl.enabled().count(), 28);
        assert_eq!(
            BrowserToolsetDeclaration::new().with_members(&["teleport"]),
            Err(DeclarationError::UnknownMember {
                name: "teleport".into()
            })
        );
        let none: [&str; 0] = [];
        assert_eq!(
            BrowserToolsetDeclaration::new()
                .with_members(&none)
                .unwrap()
                .validate(),
            Err(DeclarationError::AllDisabled)
        );
    }

    #[test]
    fn builds_the_spec_example() {
        let decl = BrowserToolsetDeclaration::new().enable(Member::JavascriptExec);
        assert_eq!(
            decl.to_json().unwrap(),
            json!({"type": "browser_toolset_20260801",
                   "configs": {"javascript_exec": {"enabled": true}}})
        );
        assert_eq!(
            BrowserToolsetDeclaration::from_json(&decl.to_json().unwrap()).unwrap(),
            decl
        );
        let plain = BrowserToolsetDeclaration::new();
        assert_eq!(
            plain.to_json().unwrap(),
            json!({"type": "browser_toolset_20260801"})
        );
        assert_eq!(plain.enabled().count(), 27);
        assert!(!plain.is_enabled(Member::FileUpload));
        assert!(plain.is_enabled(Member::Navigate));
        let everything = BrowserToolsetDeclaration::from_json(&json!({
            "type": "browser_toolset_20260801",
            "configs": {"file_upload": {"enabled": true}, "read_console": {"enabled": true},
                        "read_network": {"enabled": true}, "javascript_exec": {"enabled": true},
                        "left_mouse_down": {"enabled": false}},
            "cache_control": {"type": "ephemeral", "ttl": "1h"},
            "allowed_callers": ["direct"],
        }))
        .unwrap();
        assert_eq!(everything.enabled().count(), 30);
        assert_eq!(
            everything.to_json().unwrap()["cache_control"],
            json!({"type": "ephemeral", "ttl": "1h"})
        );
    }

    #[test]
    fn rejects_what_the_api_rejects() {
        assert!(matches!(
            rejects(json!({"type": "browser_toolset_20260801", "configs": {"teleport": {"enabled": true}}})),
            DeclarationError::UnknownMember { name } if name == "teleport"
        ));
        // A computer member is not a browser member.
        assert!(matches!(
            rejects(
                json!({"type": "browser_toolset_20260801", "configs": {"cursor_position": {"enabled": true}}})
            ),
            DeclarationError::UnknownMember { .. }
        ));
        assert!(matches!(
            rejects(
                json!({"type": "browser_toolset_20260801", "configs": {"zoom": {"visible": true}}})
            ),
            DeclarationError::BadMemberConfig { .. }
        ));
        assert!(matches!(
            rejects(
                json!({"type": "browser_toolset_20260801", "configs": {"zoom": {"enabled": "yes"}}})
            ),
            DeclarationError::BadMemberConfig { .. }
        ));
        assert_eq!(
            rejects(json!({"type": "browser_toolset_20260801", "configs": []})),
            DeclarationError::ConfigsNotAnObject
        );
        // Disabling the 27 defaults leaves nothing: the four opt-ins are off already.
        let defaults_off: serde_json::Map<String, Value> = Member::ALL
            .iter()
            .filter(|m| m.enabled_by_default())
            .map(|m| (m.name().to_owned(), json!({"enabled": false})))
            .collect();
        assert_eq!(
            rejects(json!({"type": "browser_toolset_20260801", "configs": defaults_off})),
            DeclarationError::AllDisabled
        );
        assert_eq!(
            rejects(json!({"type": "browser_toolset_20260801",
                           "configs": {"zoom": {"defer_loading": true}}})),
            DeclarationError::MixedDeferLoading
        );
        // A disabled member may differ; deferring every enabled member is fine.
        assert!(
            BrowserToolsetDeclaration::from_json(&json!({"type": "browser_toolset_20260801",
                "configs": {"file_upload": {"defer_loading": true}}}))
            .is_ok()
        );
        assert!(
            BrowserToolsetDeclaration::new()
                .defer_loading(true)
                .to_json()
                .is_ok()
        );
        assert_eq!(
            BrowserToolsetDeclaration::new()
                .enable(Member::JavascriptExec)
                .member(
                    Member::JavascriptExec,
                    MemberConfig {
                        enabled: true,
                        defer_loading: true
                    }
                )
                .to_json(),
            Err(DeclarationError::MixedDeferLoading)
        );
        for field in ["name", "defer_loading", "display_width_px", "strict"] {
            let mut entry = json!({"type": "browser_toolset_20260801"});
            entry[field] = json!(1);
            assert!(
                matches!(rejects(entry), DeclarationError::UnknownField { .. }),
                "{field}"
            );
        }
        assert!(
            rejects(json!({"type": "browser_toolset_20260801", "defer_loading": true}))
                .to_string()
                .contains("move defer_loading into configs")
        );
        assert_eq!(
            rejects(json!({"type": "browser_toolset_20260801", "allowed_callers": ["code"]})),
            DeclarationError::BadAllowedCallers
        );
        assert_eq!(
            rejects(json!({"type": "browser_toolset_20260801", "cache_control": {"type": "x"}})),
            DeclarationError::BadCacheControl
        );
        assert_eq!(rejects(json!("browser")), DeclarationError::NotAnObject);
    }

    #[test]
    fn one_browser_toolset_per_request() {
        let toolset = json!({"type": "browser_toolset_20260801"});
        let computer = json!({"type": "computer_toolset_20260801"});
        assert!(check_tools(&[toolset.clone(), computer.clone()]).is_ok());
        assert_eq!(
            check_tools(&[toolset.clone(), computer, toolset.clone()]),
            Err(DeclarationError::SecondBrowserToolset)
        );
        assert_eq!(
            check_tools(&[json!({"type": "browser_toolset_20260801", "configs": {"x": {}}})]),
            Err(DeclarationError::UnknownMember { name: "x".into() })
        );
    }
}
