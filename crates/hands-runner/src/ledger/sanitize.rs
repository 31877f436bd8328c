//! Tool declarations as a checkpoint keeps them: no credentials. MCP server URLs become SHA-256
//! fingerprints (userinfo, fragment and known secret query values removed before hashing, so
//! rotating a token in the query keeps the identity; changing the path or another query value
//! changes it), `authorization` and custom `headers` are omitted, and code-interpreter domain
//! secrets keep their names and domains but lose their values. Requests still use the original
//! declarations.
//!
//! Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución" (saved MCP
//! declarations, code-interpreter secrets).

use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use super::identity::hex;

/// The prefix of a fingerprinted MCP server URL.
pub const FINGERPRINT_PREFIX: &str = "sha256:";

/// Query parameter names (lower case, without `-` and `_`, optionally `x`-prefixed) whose
/// values are credentials: masked before a URL is fingerprinted.
const SECRET_QUERY_NAMES: [&str; 19] = [
    "apikey",
    "accesstoken",
    "refreshtoken",
    "sessiontoken",
    "sessionid",
    "idtoken",
    "authtoken",
    "authorization",
    "token",
    "password",
    "clientsecret",
    "signingsecret",
    "sig",
    "signature",
    "xgoogsignature",
    "xgoogcredential",
    "xamzsecuritytoken",
    "xamzsignature",
    "xamzcredential",
];

/// The declarations as saved in a checkpoint.
pub fn sanitize_tools(tools: &[Value]) -> Vec<Value> {
    tools.iter().map(sanitize_tool).collect()
}

fn sanitize_tool(tool: &Value) -> Value {
    let Some(object) = tool.as_object() else {
        return tool.clone();
    };
    match object.get("type").and_then(Value::as_str) {
        // Responses API remote MCP tool.
        Some("mcp") => mcp_entry(object, "server_url", &["authorization", "headers"]),
        // Messages API MCP connector server definition.
        Some("url") if object.contains_key("url") && object.contains_key("name") => {
            mcp_entry(object, "url", &["authorization_token", "headers"])
        }
        Some("code_interpreter") => code_interpreter(object),
        _ => tool.clone(),
    }
}

fn mcp_entry(object: &Map<String, Value>, url_key: &str, secret_keys: &[&str]) -> Value {
    let mut saved = object.clone();
    for key in secret_keys {
        saved.remove(*key);
    }
    if let Some(Value::String(url)) = saved.get_mut(url_key)
        && !url.starts_with(FINGERPRINT_PREFIX)
    {
        *url = mcp_url_fingerprint(url);
    }
    Value::Object(saved)
}

fn code_interpreter(object: &Map<String, Value>) -> Value {
    let mut saved = object.clone();
    if let Some(Value::Object(container)) = saved.get_mut("container")
        && let Some(Value::Object(policy)) = container.get_mut("network_policy")
        && policy.get("type").and_then(Value::as_str) == Some("allowlist")
        && let Some(Value::Array(secrets)) = policy.get_mut("domain_secrets")
    {
        for secret in secrets.iter_mut() {
            if let Some(secret) = secret.as_object_mut()
                && secret.contains_key("value")
            {
                secret.insert("value".into(), Value::String(String::new()));
            }
        }
    }
    Value::Object(saved)
}

/// `sha256:<hex>` of the URL without userinfo, fragment and secret query values.
pub fn mcp_url_fingerprint(url: &str) -> String {
    format!(
        "{FINGERPRINT_PREFIX}{}",
        hex(&Sha256::digest(identity_url(url).as_bytes()))
    )
}

/// The part of an MCP URL that makes its identity. A URL that does not parse is hashed as
/// given (it is never stored).
fn identity_url(raw: &str) -> String {
    let Ok(mut url) = url::Url::parse(raw) else {
        return raw.to_owned();
    };
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.set_fragment(None);
    let pairs: Vec<(String, String)> = url
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    if pairs.iter().any(|(k, _)| is_secret_name(k)) {
        let mut query = url.query_pairs_mut();
        query.clear();
        for (name, value) in &pairs {
            let value = if is_secret_name(name) { "***" } else { value };
            query.append_pair(name, value);
        }
    }
    url.to_string()
}

fn is_secret_name(name: &str) -> bool {
    let normal: String = name
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect();
    SECRET_QUERY_NAMES.contains(&normal.as_str())
        || normal
            .strip_prefix('x')
            .is_some_and(|rest| SECRET_QUERY_NAMES.contains(&rest))
}

/// The MCP entries of `tools` that hold a raw server URL or credentials (by label or name): a
/// checkpoint with any cannot be resumed.
pub fn raw_mcp_entries(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .filter_map(|tool| {
            let object = tool.as_object()?;
            let (url_key, secrets, label_key): (&str, &[&str], &str) =
                match object.get("type").and_then(Value::as_str)? {
                    "mcp" => ("server_url", &["authorization", "headers"], "server_label"),
                    "url" => ("url", &["authorization_token", "headers"], "name"),
                    _ => return None,
                };
            let raw_url = object
                .get(url_key)
                .and_then(Value::as_str)
                .is_some_and(|u| !u.starts_with(FINGERPRINT_PREFIX));
            let credentials = secrets.iter().any(|k| object.contains_key(*k));
            (raw_url || credentials).then(|| {
                object
                    .get(label_key)
                    .and_then(Value::as_str)
                    .unwrap_or("(unlabelled)")
                    .to_owned()
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mcp_declarations_keep_no_url_and_no_credentials() {
        let tools = [
            json!({"type": "mcp", "server_label": "crm", "server_url": "https://user:pw@mcp.example/v1?tenant=7&api_key=SECRET#frag",
                "authorization": "Bearer SECRET", "headers": {"X-Secret": "SECRET"},
                "require_approval": "always", "allowed_tools": ["lookup"]}),
            json!({"type": "url", "name": "docs", "url": "https://docs.example/mcp", "authorization_token": "SECRET"}),
            json!({"type": "function", "name": "f", "parameters": {}}),
        ];
        let saved = sanitize_tools(&tools);
        let text = Value::Array(saved.clone()).to_string();
        assert!(!text.contains("SECRET"), "{text}");
        assert!(!text.contains("mcp.example"), "{text}");
        assert!(!text.contains("docs.example"), "{text}");
        assert_eq!(saved[0]["server_label"], "crm");
        assert_eq!(saved[0]["require_approval"], "always");
        assert_eq!(saved[0]["allowed_tools"], json!(["lookup"]));
        assert!(saved[0].get("authorization").is_none());
        assert!(saved[0].get("headers").is_none());
        assert_eq!(saved[2], tools[2]);
        assert!(raw_mcp_entries(&saved).is_empty());
        assert_eq!(raw_mcp_entries(&tools), ["crm", "docs"]);
        // Sanitising twice changes nothing.
        assert_eq!(sanitize_tools(&saved), saved);
    }

    #[test]
    fn a_rotated_secret_keeps_the_identity_and_a_new_path_changes_it() {
        let check = |a: &str, b: &str, same: bool| {
            assert_eq!(
                mcp_url_fingerprint(a) == mcp_url_fingerprint(b),
                same,
                "{a} vs {b}"
            );
        };
        check(
            "https://mcp.example/v1?tenant=7&api_key=one",
            "https://mcp.example/v1?tenant=7&api_key=two",
            true,
        );
        check(
            "https://mcp.example/v1?X-Amz-Signature=a&tenant=7",
            "https://mcp.example/v1?X-Amz-Signature=b&tenant=7",
            true,
        );
        check(
            "https://a:b@mcp.example/v1",
            "https://mcp.example/v1#x",
            true,
        );
        check("https://mcp.example/v1", "https://mcp.example/v2", false);
        check(
            "https://mcp.example/v1?tenant=7",
            "https://mcp.example/v1?tenant=8",
            false,
        );
    }

    #[test]
    fn code_interpreter_secrets_keep_names_and_domains_only() {
        let tool = json!({"type": "code_interpreter", "container": {"type": "auto",
            "network_policy": {"type": "allowlist", "allowed_domains": ["api.example"],
            "domain_secrets": [{"domain": "api.example", "name": "API_KEY", "value": "SECRET"}]}}});
        let saved = sanitize_tools(std::slice::from_ref(&tool));
        let secret = &saved[0]["container"]["network_policy"]["domain_secrets"][0];
        assert_eq!(
            secret,
            &json!({"domain": "api.example", "name": "API_KEY", "value": ""})
        );
        assert_eq!(
            saved[0]["container"]["network_policy"]["allowed_domains"],
            json!(["api.example"])
        );
    }
}
