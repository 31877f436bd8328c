//! `hands run --mcp`, `--server-tool` and their companions: the command line read into the
//! runner's declarations (remote MCP servers and server tools) for either API.

use anyhow::{Context as _, bail};
use hands_runner::ledger::sanitize::mcp_url_fingerprint;
use hands_runner::mcp::{ApprovalRule, McpServer, ServerTool, ToolFilter};
use hands_runner::{AnthropicSettings, OpenAiSettings};
use serde_json::Value;

use crate::cli::RemoteToolArgs;

/// What the flags declare.
#[derive(Debug, Default)]
pub struct RemoteTools {
    /// The MCP servers.
    pub servers: Vec<McpServer>,
    /// The server tools.
    pub server_tools: Vec<ServerTool>,
    /// Vector stores for file search.
    pub vector_stores: Vec<String>,
}

/// `LABEL=VALUE`.
fn pair<'a>(flag: &str, text: &'a str) -> anyhow::Result<(&'a str, &'a str)> {
    text.split_once('=')
        .with_context(|| format!("{flag} takes LABEL=…, got {text:?}"))
}

fn tools_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A label both APIs take: 1–64 of `[A-Za-z0-9_-]`.
fn valid_label(label: &str) -> bool {
    (1..=64).contains(&label.len())
        && label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The label a URL gets when none is given: its host, dots as underscores.
fn label_of(url: &url::Url) -> String {
    let host = url.host_str().unwrap_or("mcp");
    let mut label: String = host
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if let Some(port) = url.port() {
        label.push_str(&format!("_{port}"));
    }
    label
}

impl RemoteTools {
    /// Reads the flags; `env` looks up a token variable.
    pub fn parse(
        args: &RemoteToolArgs,
        env: impl Fn(&str) -> Option<String>,
    ) -> anyhow::Result<RemoteTools> {
        let mut servers: Vec<McpServer> = Vec::new();
        for given in &args.mcp {
            let (label, raw) = match given.split_once('=') {
                Some((label, url)) if !label.contains("://") => (Some(label), url),
                _ => (None, given.as_str()),
            };
            let url = url::Url::parse(raw).with_context(|| format!("--mcp {raw:?}"))?;
            if !matches!(url.scheme(), "https" | "http") {
                bail!("--mcp {raw:?}: an MCP server URL is http(s)");
            }
            if !url.username().is_empty() || url.password().is_some() {
                bail!(
                    "--mcp {raw:?}: put credentials in --mcp-token-env, not in the URL (a URL is shown and logged)"
                );
            }
            let label = label.map_or_else(|| label_of(&url), str::to_owned);
            if !valid_label(&label) {
                bail!("--mcp: the label {label:?} must be 1-64 letters, digits, '_' or '-'");
            }
            if servers.iter().any(|s| s.label == label) {
                bail!("--mcp: two servers are labelled {label:?}");
            }
            servers.push(McpServer::new(label, raw));
        }
        let server = |servers: &[McpServer], flag: &str, label: &str| {
            servers
                .iter()
                .position(|s| s.label == label)
                .with_context(|| format!("{flag}: no --mcp server is labelled {label:?}"))
        };
        for given in &args.mcp_tools {
            let (label, tools) = pair("--mcp-tools", given)?;
            let i = server(&servers, "--mcp-tools", label)?;
            servers[i].allowed_tools = Some(tools_list(tools));
        }
        for given in &args.mcp_unasked {
            let (label, tools) = match given.split_once('=') {
                Some((label, tools)) => (label, Some(tools_list(tools))),
                None => (given.as_str(), None),
            };
            let i = server(&servers, "--mcp-unasked", label)?;
            servers[i].require_approval = match tools {
                None => ApprovalRule::Never,
                Some(names) => ApprovalRule::Filters {
                    always: None,
                    never: Some(ToolFilter {
                        tool_names: Some(names),
                        read_only: None,
                    }),
                },
            };
        }
        for given in &args.mcp_token_env {
            let (label, var) = pair("--mcp-token-env", given)?;
            let i = server(&servers, "--mcp-token-env", label)?;
            let token = env(var)
                .filter(|t| !t.trim().is_empty())
                .with_context(|| format!("--mcp-token-env: {var} is not set"))?;
            servers[i].authorization = Some(token.trim().to_owned());
        }
        let mut server_tools = Vec::new();
        for name in &args.server_tool {
            let name = if name == "code_execution" {
                "code_interpreter"
            } else {
                name.as_str()
            };
            let Some(tool) = ServerTool::from_name(name) else {
                bail!(
                    "--server-tool {name:?}: one of web_search, file_search, code_interpreter, image_generation"
                );
            };
            if !server_tools.contains(&tool) {
                server_tools.push(tool);
            }
        }
        if server_tools.contains(&ServerTool::FileSearch) && args.vector_store.is_empty() {
            bail!("--server-tool file_search searches vector stores: give --vector-store ID");
        }
        Ok(RemoteTools {
            servers,
            server_tools,
            vector_stores: args.vector_store.clone(),
        })
    }

    /// Declares them on a Responses run.
    pub fn apply_openai(&self, settings: &mut OpenAiSettings) {
        settings
            .extra_tools
            .extend(self.servers.iter().map(McpServer::openai_tool));
        settings.extra_tools.extend(
            self.server_tools
                .iter()
                .map(|t| t.openai_tool(&self.vector_stores)),
        );
    }

    /// Declares them on a Messages run; a server tool Claude lacks is refused.
    pub fn apply_anthropic(&self, settings: &mut AnthropicSettings) -> anyhow::Result<()> {
        for tool in &self.server_tools {
            let Some(entry) = tool.claude_tool() else {
                bail!(
                    "--server-tool {}: Claude has no such server tool (use --provider openai)",
                    tool.name()
                );
            };
            settings.extra_tools.push(entry);
        }
        if self
            .servers
            .iter()
            .any(|s| s.require_approval != ApprovalRule::Always)
        {
            eprintln!(
                "hands run: --mcp-unasked has no effect on Claude: its MCP connector never asks; each server is approved once before the first request"
            );
        }
        settings
            .mcp_servers
            .extend(self.servers.iter().map(McpServer::claude_server));
        settings
            .extra_tools
            .extend(self.servers.iter().map(McpServer::claude_toolset));
        Ok(())
    }

    /// `args` as a run's ledger keeps them for `--resume`: each `--mcp` as `LABEL=` and the
    /// SHA-256 fingerprint of its URL (the checkpoints' own, [`mcp_url_fingerprint`]) — a URL
    /// can carry a secret in its path or query, so it is never stored. Token variables are kept
    /// by name.
    ///
    /// Spec: openai-browser-desktop-drivers, "Transmitir y reanudar una ejecución" (saved MCP
    /// declarations hold fingerprints, not URLs).
    pub fn saved_args(&self, args: &RemoteToolArgs) -> RemoteToolArgs {
        RemoteToolArgs {
            mcp: self
                .servers
                .iter()
                .map(|s| format!("{}={}", s.label, mcp_url_fingerprint(&s.url)))
                .collect(),
            ..args.clone()
        }
    }

    /// One line for the run directory's log: labels, shown URLs and tools, no credentials.
    pub fn describe(&self) -> Value {
        serde_json::json!({
            "mcp": self.servers.iter().map(|s| serde_json::json!({
                "label": s.label,
                "url": hands_runner::mcp::shown_url(&s.url),
                "tools": s.allowed_tools,
                "require_approval": s.require_approval.to_value(),
                "token": s.authorization.is_some(),
            })).collect::<Vec<_>>(),
            "server_tools": self.server_tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
        })
    }
}

/// The flags a resumed run uses: each one given again replaces the saved one, the rest carry
/// over. MCP servers must be given again (`--mcp`): the ledger keeps only their fingerprints,
/// and the runner refuses URLs whose fingerprints differ (another server is another run).
pub fn resumed_args(
    given: &RemoteToolArgs,
    saved: &RemoteToolArgs,
) -> anyhow::Result<RemoteToolArgs> {
    if given.mcp.is_empty() && !saved.mcp.is_empty() {
        let labels: Vec<&str> = saved
            .mcp
            .iter()
            .map(|m| m.split_once('=').map_or(m.as_str(), |(label, _)| label))
            .collect();
        bail!(
            "this run declared the MCP server(s) {}: their URLs are not kept (only SHA-256 fingerprints, since a URL can hold a secret); \
             give them again with --mcp LABEL=URL (with current credentials via --mcp-token-env)",
            labels.join(", ")
        );
    }
    let pick = |given: &Vec<String>, saved: &Vec<String>| {
        if given.is_empty() {
            saved.clone()
        } else {
            given.clone()
        }
    };
    Ok(RemoteToolArgs {
        mcp: given.mcp.clone(),
        mcp_tools: pick(&given.mcp_tools, &saved.mcp_tools),
        mcp_unasked: pick(&given.mcp_unasked, &saved.mcp_unasked),
        mcp_token_env: pick(&given.mcp_token_env, &saved.mcp_token_env),
        server_tool: pick(&given.server_tool, &saved.server_tool),
        vector_store: pick(&given.vector_store, &saved.vector_store),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(mcp: &[&str]) -> RemoteToolArgs {
        RemoteToolArgs {
            mcp: mcp.iter().map(|s| (*s).to_owned()).collect(),
            ..RemoteToolArgs::default()
        }
    }

    #[test]
    fn servers_labels_and_tokens() {
        let mut a = args(&[
            "notes=http://127.0.0.1:8931/mcp",
            "https://mcp.example.com/sse",
        ]);
        a.mcp_tools = vec!["notes=add_note, list_notes".into()];
        a.mcp_unasked = vec!["notes=list_notes".into(), "mcp_example_com".into()];
        a.mcp_token_env = vec!["notes=NOTES_TOKEN".into()];
        let env = |var: &str| (var == "NOTES_TOKEN").then(|| "tok".to_owned());
        let tools = RemoteTools::parse(&a, env).unwrap();
        let notes = &tools.servers[0];
        assert_eq!(notes.label, "notes");
        assert_eq!(
            notes.allowed_tools.as_deref(),
            Some(&["add_note".to_owned(), "list_notes".to_owned()][..])
        );
        assert_eq!(notes.authorization.as_deref(), Some("tok"));
        assert_eq!(
            notes.require_approval.to_value(),
            serde_json::json!({"never": {"tool_names": ["list_notes"]}})
        );
        assert_eq!(tools.servers[1].label, "mcp_example_com");
        assert_eq!(tools.servers[1].require_approval, ApprovalRule::Never);
        let shown = tools.describe().to_string();
        assert!(!shown.contains("tok\""), "{shown}");
    }

    #[test]
    fn refusals() {
        let no_env = |_: &str| None;
        for bad in [
            args(&["ftp://x/mcp"]),
            args(&["https://user:pw@x/mcp"]),
            args(&["a=https://x/mcp", "a=https://y/mcp"]),
            args(&["bad label=https://x/mcp"]),
            RemoteToolArgs {
                mcp_tools: vec!["ghost=a".into()],
                ..args(&["https://x/mcp"])
            },
            RemoteToolArgs {
                mcp_token_env: vec!["x=UNSET".into()],
                ..args(&["https://x/mcp"])
            },
            RemoteToolArgs {
                server_tool: vec!["teleport".into()],
                ..RemoteToolArgs::default()
            },
            RemoteToolArgs {
                server_tool: vec!["file_search".into()],
                ..RemoteToolArgs::default()
            },
        ] {
            assert!(RemoteTools::parse(&bad, no_env).is_err(), "{bad:?}");
        }
        let image = RemoteToolArgs {
            server_tool: vec!["image_generation".into()],
            ..RemoteToolArgs::default()
        };
        let tools = RemoteTools::parse(&image, no_env).unwrap();
        let mut settings = AnthropicSettings::new("m");
        assert!(tools.apply_anthropic(&mut settings).is_err());
    }

    #[test]
    fn a_saved_run_keeps_fingerprints_and_resuming_asks_for_the_urls_again() {
        let mut given = args(&["notes=https://mcp.example/v1?key=SECRET"]);
        given.mcp_token_env = vec!["notes=NOTES_TOKEN".into()];
        given.server_tool = vec!["web_search".into()];
        let env = |_: &str| Some("tok".to_owned());
        let tools = RemoteTools::parse(&given, env).unwrap();
        let saved = tools.saved_args(&given);
        let text = serde_json::to_string(&saved).unwrap();
        assert!(
            !text.contains("SECRET") && !text.contains("mcp.example"),
            "{text}"
        );
        assert_eq!(
            saved.mcp,
            [format!(
                "notes={}",
                mcp_url_fingerprint("https://mcp.example/v1?key=SECRET")
            )]
        );
        assert_eq!(saved.mcp_token_env, given.mcp_token_env);
        // Resuming without --mcp names the server to give again.
        let refused = resumed_args(&RemoteToolArgs::default(), &saved).unwrap_err();
        assert!(refused.to_string().contains("notes"), "{refused}");
        // With it, the rest carries over.
        let again = resumed_args(&args(&["notes=https://mcp.example/v1?key=NEW"]), &saved).unwrap();
        assert_eq!(again.mcp, ["notes=https://mcp.example/v1?key=NEW"]);
        assert_eq!(again.mcp_token_env, given.mcp_token_env);
        assert_eq!(again.server_tool, given.server_tool);
        // Without MCP servers nothing must be given again.
        let plain = RemoteToolArgs {
            server_tool: vec!["web_search".into()],
            ..RemoteToolArgs::default()
        };
        assert_eq!(
            resumed_args(&RemoteToolArgs::default(), &plain).unwrap(),
            plain
        );
    }
}
