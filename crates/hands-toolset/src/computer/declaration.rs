//! The `tools` entry for the computer toolset (and the legacy tools), built so that one the API
//! would reject cannot leave this crate, and checked the same way when read from JSON.
//!
//! Spec: claude-computer-use-tool, "Parámetros de la herramienta"; api-contracts A, "Computer use".

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::members::Member;
use crate::strings::{
    COMPUTER_TOOLSET_TYPE, LEGACY_20250124_TYPE, LEGACY_20251124_TYPE, LEGACY_TOOL_NAME,
};

/// Per-member settings of `configs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemberConfig {
    /// Whether the model may call the member (default true for all 17, zoom included).
    pub enabled: bool,
    /// Deferred loading for tool search (default false).
    pub defer_loading: bool,
}

impl Default for MemberConfig {
    fn default() -> MemberConfig {
        MemberConfig {
            enabled: true,
            defer_loading: false,
        }
    }
}

/// Why a declaration would be rejected by the API.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DeclarationError {
    /// The entry is not a JSON object.
    #[error("a tools entry must be a JSON object")]
    NotAnObject,
    /// A field of an earlier tool version.
    #[error(
        "`{field}` belongs to the legacy computer tools and is rejected by {COMPUTER_TOOLSET_TYPE}: {why}"
    )]
    LegacyField {
        /// The field.
        field: String,
        /// What to do instead.
        why: &'static str,
    },
    /// Another field the toolset entry does not take.
    #[error(
        "{COMPUTER_TOOLSET_TYPE} does not take `{field}` (it takes type, configs, cache_control, allowed_callers)"
    )]
    UnknownField {
        /// The field.
        field: String,
    },
    /// A `configs` key that is not a member.
    #[error("configs names `{name}`, which is not a computer member")]
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
    /// Two computer tools in one request.
    #[error("{what}: a request may declare only one computer tool")]
    SecondComputerTool {
        /// What clashes.
        what: String,
    },
}

/// A `cache_control` breakpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheTtl {
    /// The default five minutes.
    FiveMinutes,
    /// One hour.
    OneHour,
}

/// The `computer_toolset_20260801` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolsetDeclaration {
    configs: BTreeMap<Member, MemberConfig>,
    cache_control: Option<Option<CacheTtl>>,
    allowed_callers_direct: bool,
}

impl Default for ToolsetDeclaration {
    fn default() -> ToolsetDeclaration {
        ToolsetDeclaration::new()
    }
}

impl ToolsetDeclaration {
    /// Every member enabled, nothing deferred, no breakpoint.
    pub fn new() -> ToolsetDeclaration {
        ToolsetDeclaration {
            configs: Member::ALL
                .iter()
                .map(|m| (*m, MemberConfig::default()))
                .collect(),
            cache_control: None,
            allowed_callers_direct: false,
        }
    }

    /// Sets one member's config.
    pub fn member(mut self, member: Member, config: MemberConfig) -> ToolsetDeclaration {
        self.configs.insert(member, config);
        self
    }

    /// Disables a member (e.g. `zoom` for an environment that cannot produce zoom images).
    pub fn disable(self, member: Member) -> ToolsetDeclaration {
        let config = MemberConfig {
            enabled: false,
            ..self.config(member)
        };
        self.member(member, config)
    }

    /// Sets `defer_loading` on every member.
    pub fn defer_loading(mut self, defer: bool) -> ToolsetDeclaration {
        for c in self.configs.values_mut() {
            c.defer_loading = defer;
        }
        self
    }

    /// Adds a `cache_control` breakpoint on the entry.
    pub fn cache_control(mut self, ttl: Option<CacheTtl>) -> ToolsetDeclaration {
        self.cache_control = Some(ttl);
        self
    }

    /// Adds `allowed_callers: ["direct"]`.
    pub fn allowed_callers_direct(mut self) -> ToolsetDeclaration {
        self.allowed_callers_direct = true;
        self
    }

    /// A member's config.
    pub fn config(&self, member: Member) -> MemberConfig {
        self.configs.get(&member).copied().unwrap_or_default()
    }

    /// Whether the model may call `member`.
    pub fn is_enabled(&self, member: Member) -> bool {
        self.config(member).enabled
    }

    /// Checks the rules the API enforces on `configs`.
    pub fn validate(&self) -> Result<(), DeclarationError> {
        check_configs(self.configs.values().copied()).map_err(|rule| match rule {
            ConfigsRule::AllDisabled => DeclarationError::AllDisabled,
            ConfigsRule::MixedDeferLoading => DeclarationError::MixedDeferLoading,
        })
    }

    /// The wire entry; only non-default member settings are written.
    pub fn to_json(&self) -> Result<Value, DeclarationError> {
        self.validate()?;
        let mut entry = json!({"type": COMPUTER_TOOLSET_TYPE});
        let configs = configs_json(
            self.configs.iter().map(|(m, c)| (*m, *c)),
            |_| MemberConfig::default(),
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
    pub fn from_json(entry: &Value) -> Result<ToolsetDeclaration, DeclarationError> {
        let Value::Object(map) = entry else {
            return Err(DeclarationError::NotAnObject);
        };
        let mut decl = ToolsetDeclaration::new();
        for (key, value) in map {
            match key.as_str() {
                "type" => {}
                "name" => return Err(legacy(key, "member names are fixed by the toolset version")),
                "display_width_px" | "display_height_px" | "display_number" => {
                    return Err(legacy(
                        key,
                        "coordinates are always in the pixel space of the screenshots you return",
                    ));
                }
                "enable_zoom" => {
                    return Err(legacy(key, "zoom is a member, controlled through configs"));
                }
                "defer_loading" => {
                    return Err(legacy(
                        key,
                        "move defer_loading into configs, the same value on every enabled member",
                    ));
                }
                "configs" => {
                    let Value::Object(configs) = value else {
                        return Err(DeclarationError::UnknownField {
                            field: "configs (not an object)".into(),
                        });
                    };
                    for (name, cfg) in configs {
                        let member = Member::from_name(name).ok_or_else(|| {
                            DeclarationError::UnknownMember { name: name.clone() }
                        })?;
                        let config =
                            parse_member_config(cfg, MemberConfig::default()).map_err(|key| {
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
                    return Err(DeclarationError::UnknownField {
                        field: other.to_owned(),
                    });
                }
            }
        }
        decl.validate()?;
        Ok(decl)
    }
}

/// The wire `cache_control` of a toolset entry: `{"type": "ephemeral", "ttl"?}`.
pub(crate) fn cache_control_json(ttl: Option<CacheTtl>) -> Value {
    match ttl {
        None => json!({"type": "ephemeral"}),
        Some(CacheTtl::FiveMinutes) => json!({"type": "ephemeral", "ttl": "5m"}),
        Some(CacheTtl::OneHour) => json!({"type": "ephemeral", "ttl": "1h"}),
    }
}

/// Reads a toolset entry's `cache_control`: `Some(ttl)` for `{"type": "ephemeral"}` with an
/// optional ttl of `"5m"` or `"1h"`, `None` for anything else.
pub(crate) fn parse_cache_control(value: &Value) -> Option<Option<CacheTtl>> {
    let ttl = value.get("ttl").and_then(Value::as_str);
    let ok_type = value.get("type").and_then(Value::as_str) == Some("ephemeral");
    let extra = value
        .as_object()
        .is_some_and(|o| o.keys().any(|k| k != "type" && k != "ttl"));
    match (ok_type, extra, ttl, value.get("ttl")) {
        (true, false, None, None) => Some(None),
        (true, false, Some("5m"), _) => Some(Some(CacheTtl::FiveMinutes)),
        (true, false, Some("1h"), _) => Some(Some(CacheTtl::OneHour)),
        _ => None,
    }
}

/// Which `configs` rule the API would refuse a toolset entry for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConfigsRule {
    /// Every member disabled.
    AllDisabled,
    /// Enabled members disagree on `defer_loading`.
    MixedDeferLoading,
}

/// The rules every toolset entry's `configs` follows: at least one member enabled, and one
/// `defer_loading` value among the enabled ones.
pub(crate) fn check_configs(
    configs: impl Iterator<Item = MemberConfig>,
) -> Result<(), ConfigsRule> {
    let mut enabled = configs.filter(|c| c.enabled);
    let first = enabled.next().ok_or(ConfigsRule::AllDisabled)?;
    if enabled.any(|c| c.defer_loading != first.defer_loading) {
        return Err(ConfigsRule::MixedDeferLoading);
    }
    Ok(())
}

/// The wire `configs` object: only the members whose settings differ from their default, with
/// only the keys that differ (`defer_loading` defaults to false).
pub(crate) fn configs_json<M: Copy>(
    configs: impl Iterator<Item = (M, MemberConfig)>,
    default: impl Fn(M) -> MemberConfig,
    name: impl Fn(M) -> &'static str,
) -> Map<String, Value> {
    configs
        .filter(|(m, c)| *c != default(*m))
        .map(|(m, c)| {
            let mut o = Map::new();
            if c.enabled != default(m).enabled {
                o.insert("enabled".into(), json!(c.enabled));
            }
            if c.defer_loading {
                o.insert("defer_loading".into(), json!(true));
            }
            (name(m).to_owned(), Value::Object(o))
        })
        .collect()
}

/// Reads one member's `{"enabled"?, "defer_loading"?}` over its default; `Err` names the key
/// that is not valid (`(not an object)` when the value is not an object).
pub(crate) fn parse_member_config(
    value: &Value,
    default: MemberConfig,
) -> Result<MemberConfig, String> {
    let Value::Object(fields) = value else {
        return Err("(not an object)".to_owned());
    };
    let mut config = default;
    for (key, v) in fields {
        let flag = v.as_bool().ok_or_else(|| key.clone())?;
        match key.as_str() {
            "enabled" => config.enabled = flag,
            "defer_loading" => config.defer_loading = flag,
            _ => return Err(key.clone()),
        }
    }
    Ok(config)
}

fn legacy(field: &str, why: &'static str) -> DeclarationError {
    DeclarationError::LegacyField {
        field: field.to_owned(),
        why,
    }
}

/// Checks a whole `tools` array: at most one computer tool of any kind — one toolset entry, no
/// `computer_20251124` / `computer_20250124` beside it, no other tool named `computer` — and
/// every toolset entry valid.
pub fn check_tools(tools: &[Value]) -> Result<(), DeclarationError> {
    let mut computer: Option<String> = None;
    for tool in tools {
        let ty = tool.get("type").and_then(Value::as_str).unwrap_or("custom");
        let name = tool.get("name").and_then(Value::as_str);
        let this = if ty == COMPUTER_TOOLSET_TYPE {
            ToolsetDeclaration::from_json(tool)?;
            Some(format!("a {COMPUTER_TOOLSET_TYPE} entry"))
        } else if ty == LEGACY_20251124_TYPE || ty == LEGACY_20250124_TYPE {
            Some(format!("a {ty} entry"))
        } else if name == Some(LEGACY_TOOL_NAME) {
            Some("a tool named `computer`".to_owned())
        } else {
            None
        };
        if let Some(this) = this {
            if let Some(first) = &computer {
                return Err(DeclarationError::SecondComputerTool {
                    what: format!("{this} beside {first}"),
                });
            }
            computer = Some(this);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejects(entry: Value) -> DeclarationError {
        ToolsetDeclaration::from_json(&entry).unwrap_err()
    }

    #[test]
    fn builds_the_spec_example() {
        let decl = ToolsetDeclaration::new()
            .disable(Member::Zoom)
            .cache_control(None);
        assert_eq!(
            decl.to_json().unwrap(),
            json!({"type": "computer_toolset_20260801", "configs": {"zoom": {"enabled": false}},
                   "cache_control": {"type": "ephemeral"}})
        );
        assert_eq!(
            ToolsetDeclaration::new().to_json().unwrap(),
            json!({"type": "computer_toolset_20260801"})
        );
        assert_eq!(
            ToolsetDeclaration::from_json(&decl.to_json().unwrap()).unwrap(),
            decl
        );
    }

    #[test]
    fn rejects_what_the_api_rejects() {
        for field in [
            "name",
            "display_width_px",
            "display_height_px",
            "display_number",
            "enable_zoom",
            "defer_loading",
        ] {
            let mut entry = json!({"type": "computer_toolset_20260801"});
            entry[field] = json!(1);
            assert!(
                matches!(rejects(entry), DeclarationError::LegacyField { .. }),
                "{field}"
            );
        }
        assert!(matches!(
            rejects(json!({"type": "computer_toolset_20260801", "strict": true})),
            DeclarationError::UnknownField { .. }
        ));
        assert!(matches!(
            rejects(
                json!({"type": "computer_toolset_20260801", "configs": {"teleport": {"enabled": true}}})
            ),
            DeclarationError::UnknownMember { .. }
        ));
        assert!(matches!(
            rejects(
                json!({"type": "computer_toolset_20260801", "configs": {"zoom": {"visible": true}}})
            ),
            DeclarationError::BadMemberConfig { .. }
        ));
        let all_off: Map<String, Value> = Member::ALL
            .iter()
            .map(|m| (m.name().to_owned(), json!({"enabled": false})))
            .collect();
        assert_eq!(
            rejects(json!({"type": "computer_toolset_20260801", "configs": all_off})),
            DeclarationError::AllDisabled
        );
        assert_eq!(
            rejects(
                json!({"type": "computer_toolset_20260801", "configs": {"zoom": {"defer_loading": true}}})
            ),
            DeclarationError::MixedDeferLoading
        );
        // A disabled member may differ.
        assert!(
            ToolsetDeclaration::from_json(&json!({"type": "computer_toolset_20260801",
            "configs": {"zoom": {"enabled": false, "defer_loading": true}}}))
            .is_ok()
        );
        assert_eq!(
            rejects(
                json!({"type": "computer_toolset_20260801", "allowed_callers": ["programmatic"]})
            ),
            DeclarationError::BadAllowedCallers
        );
        assert_eq!(
            ToolsetDeclaration::new()
                .disable(Member::Screenshot)
                .member(
                    Member::Zoom,
                    MemberConfig {
                        enabled: true,
                        defer_loading: true
                    }
                )
                .to_json(),
            Err(DeclarationError::MixedDeferLoading)
        );
    }

    #[test]
    fn one_computer_tool_per_request() {
        let toolset = json!({"type": "computer_toolset_20260801"});
        assert!(
            check_tools(&[
                toolset.clone(),
                json!({"type": "bash_20250124", "name": "bash"})
            ])
            .is_ok()
        );
        for other in [
            toolset.clone(),
            json!({"type": "computer_20251124", "name": "computer", "display_width_px": 1, "display_height_px": 1}),
            json!({"name": "computer", "input_schema": {"type": "object"}}),
        ] {
            assert!(matches!(
                check_tools(&[toolset.clone(), other]),
                Err(DeclarationError::SecondComputerTool { .. })
            ));
        }
    }
}
