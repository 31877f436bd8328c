//! The tab state as the model may see it: HTTP(S) URLs reduced to their origin, other schemes to
//! the scheme alone, byte limits on URLs (and, with observation metadata, on titles).
//!
//! A driver reports the raw truth ([`BrowserState`]); only a [`StateView`] leaves the toolset,
//! in tool outputs and in the context `confirm` receives.
//!
//! Spec: openai-browser-desktop-drivers, "Contrato del controlador de navegador": "El estado de
//! las pestañas indica los orígenes HTTP y HTTPS, como `https://example.com:8443`, sin
//! credenciales, rutas, consultas ni fragmentos."

use hands_core::browser::{BrowserState, TabId, truncate_utf8};

use super::observation::{Observation, Observer};
use serde_json::{Value, json};

/// Most bytes of UTF-8 in a reported URL.
///
/// Spec: openai-browser-desktop-drivers, "Su límite de 2048 bytes en UTF-8 se aplica al valor
/// informado".
pub const MAX_REPORTED_URL_BYTES: usize = 2048;

/// Most bytes of UTF-8 in a reported title with observation metadata V1.
///
/// Spec: openai-browser-desktop-drivers, "los títulos se recortan a un máximo de 1024 bytes en
/// UTF-8 sin dividir caracteres".
pub const MAX_TITLE_BYTES: usize = 1024;

/// Which state format the model sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum StateFormat {
    /// The earlier format, without observation metadata: titles as the driver reports them.
    Legacy,
    /// Observation metadata V1 (the default): titles cut at [`MAX_TITLE_BYTES`] on a character
    /// boundary, with `title_truncated: true` on a cut title.
    #[default]
    ObservationV1,
}

/// One tab as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabView {
    /// The driver's stable id.
    pub id: TabId,
    /// The title (cut with observation metadata V1).
    pub title: String,
    /// The origin, `about:blank`, or the scheme alone (see [`reported_url`]).
    pub url: String,
    /// Whether this is the active tab.
    pub active: bool,
    /// Whether the title was cut (observation metadata V1 only).
    pub title_truncated: bool,
}

/// Every tab as the model sees it; exactly one active tab when there is any (the driver's
/// [`BrowserState`] guarantees it), and, from the function-tool toolset in the default format,
/// the observation block (what changed since the last result).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StateView {
    /// The tabs, in the driver's order.
    pub tabs: Vec<TabView>,
    /// Observation metadata V1 (sequence, changes, `title_truncated`); `None` in the legacy
    /// format and for a state read outside the toolset's observation log.
    pub observation: Option<Observation>,
}

impl StateView {
    /// Filters a driver's state for the model.
    pub fn new(state: &BrowserState, format: StateFormat) -> StateView {
        let tabs = state
            .tabs()
            .iter()
            .map(|tab| {
                let (title, title_truncated) = match format {
                    StateFormat::Legacy => (tab.title.clone(), false),
                    StateFormat::ObservationV1 => {
                        let cut = truncate_utf8(&tab.title, MAX_TITLE_BYTES);
                        (cut.to_owned(), cut.len() < tab.title.len())
                    }
                };
                TabView {
                    id: tab.id.clone(),
                    title,
                    url: reported_url(&tab.url),
                    active: tab.active,
                    title_truncated,
                }
            })
            .collect();
        StateView {
            tabs,
            observation: None,
        }
    }

    /// The view with its observation block, taken from `observer` (which has recorded
    /// `state`); `send` marks the block's changes as sent to the model. The legacy format has
    /// no observation metadata.
    pub fn observed(
        state: &BrowserState,
        format: StateFormat,
        observer: &mut Observer,
        send: bool,
    ) -> StateView {
        let mut view = StateView::new(state, format);
        if format == StateFormat::ObservationV1 {
            let truncated = view.tabs.iter().any(|t| t.title_truncated);
            view.observation = Some(observer.observation(truncated, send));
        }
        view
    }

    /// `{"tabs": [{"id", "title", "url", "active"}], "observation"?}`. With an observation
    /// block, a cut title is said there (`title_truncated`, as the OpenAI SDK reports it);
    /// without one, on the tab (`"title_truncated": true`).
    pub fn to_json(&self) -> Value {
        let tabs: Vec<Value> = self
            .tabs
            .iter()
            .map(|tab| {
                let mut entry = json!({
                    "id": tab.id.as_str(),
                    "title": tab.title,
                    "url": tab.url,
                    "active": tab.active,
                });
                if tab.title_truncated && self.observation.is_none() {
                    entry["title_truncated"] = json!(true);
                }
                entry
            })
            .collect();
        match &self.observation {
            Some(observation) => json!({"tabs": tabs, "observation": observation.to_json()}),
            None => json!({ "tabs": tabs }),
        }
    }
}

/// The URL the model may see for a tab's raw URL:
/// - `http`/`https`: the origin as WHATWG serialises it (`https://example.com:8443`; default
///   ports omitted; hosts lowercased and punycoded; no credentials, path, query or fragment);
/// - `about:blank` (with any query or fragment dropped) stays `about:blank`;
/// - any other scheme: the scheme alone (`data:`, `file:`, `chrome:`, `about:`);
/// - a URL that does not parse: the empty string (nothing about it is known to be safe).
///
/// The result is at most [`MAX_REPORTED_URL_BYTES`], cut on a character boundary.
pub fn reported_url(raw: &str) -> String {
    let Ok(url) = url::Url::parse(raw) else {
        return String::new();
    };
    let reported = match url.scheme() {
        "http" | "https" => url.origin().ascii_serialization(),
        "about" if url.path() == "blank" => "about:blank".to_owned(),
        scheme => format!("{scheme}:"),
    };
    truncate_utf8(&reported, MAX_REPORTED_URL_BYTES).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hands_core::browser::TabInfo;

    #[test]
    fn urls_are_reduced_to_what_the_model_may_see() {
        let cases = [
            (
                "https://example.com:8443/a/b?q=1#f",
                "https://example.com:8443",
            ),
            (
                "https://user:secret@example.com/private",
                "https://example.com",
            ),
            ("https://example.com:443/x", "https://example.com"),
            ("http://example.com:80/x", "http://example.com"),
            ("http://example.com:8080", "http://example.com:8080"),
            ("HTTPS://EXAMPLE.COM/Path", "https://example.com"),
            (
                "https://bücher.example/buch",
                "https://xn--bcher-kva.example",
            ),
            ("http://[::1]:3000/api?token=x", "http://[::1]:3000"),
            (
                "http://127.0.0.1:8080/?session=abc",
                "http://127.0.0.1:8080",
            ),
            ("about:blank", "about:blank"),
            ("about:blank#frag", "about:blank"),
            ("about:srcdoc", "about:"),
            ("data:text/html,<h1>secret</h1>", "data:"),
            ("file:///home/user/secret.txt", "file:"),
            ("chrome://settings/passwords", "chrome:"),
            ("blob:https://example.com/0f1e", "blob:"),
            ("javascript:alert(document.cookie)", "javascript:"),
            ("", ""),
            ("not a url", ""),
            ("http://", ""),
        ];
        for (raw, want) in cases {
            assert_eq!(reported_url(raw), want, "{raw}");
        }
    }

    #[test]
    fn a_long_path_never_reaches_the_model() {
        let raw = format!("https://example.com/{}", "p".repeat(10_000));
        assert_eq!(reported_url(&raw), "https://example.com");
        // A long host stays within the limit.
        let host = vec!["a".repeat(60); 40].join(".");
        let reported = reported_url(&format!("https://{host}/"));
        assert!(
            reported.len() <= MAX_REPORTED_URL_BYTES,
            "{}",
            reported.len()
        );
    }

    fn state(title: &str, url: &str) -> BrowserState {
        BrowserState::new(vec![
            TabInfo {
                id: TabId::new("t1").unwrap(),
                title: title.into(),
                url: url.into(),
                active: false,
            },
            TabInfo {
                id: TabId::new("t2").unwrap(),
                title: "Second".into(),
                url: "about:blank".into(),
                active: true,
            },
        ])
        .unwrap()
    }

    #[test]
    fn titles_are_cut_on_a_character_boundary_with_observation_metadata() {
        // 1,023 ASCII bytes then a two-byte "é": the "é" would straddle 1,024 and goes whole.
        let title = format!("{}é tail", "a".repeat(1023));
        let view = StateView::new(
            &state(&title, "https://x.test/p"),
            StateFormat::ObservationV1,
        );
        assert_eq!(view.tabs[0].title, "a".repeat(1023));
        assert!(view.tabs[0].title_truncated);
        assert_eq!(
            view.to_json(),
            json!({"tabs": [
                {"id": "t1", "title": "a".repeat(1023), "url": "https://x.test", "active": false,
                 "title_truncated": true},
                {"id": "t2", "title": "Second", "url": "about:blank", "active": true},
            ]})
        );
        // Exactly 1,024 bytes of three-byte characters plus one byte: cut to 1,023.
        let title = "日".repeat(341) + "ab";
        assert_eq!(title.len(), 1025);
        let view = StateView::new(&state(&title, "about:blank"), StateFormat::ObservationV1);
        assert_eq!(view.tabs[0].title, "日".repeat(341) + "a");
        assert!(view.tabs[0].title_truncated);
        // A title at the limit is kept whole and not marked.
        let title = "é".repeat(512);
        let view = StateView::new(&state(&title, "about:blank"), StateFormat::ObservationV1);
        assert_eq!(view.tabs[0].title, title);
        assert!(!view.tabs[0].title_truncated);
        assert!(view.to_json()["tabs"][0].get("title_truncated").is_none());
    }

    #[test]
    fn the_legacy_format_keeps_titles_and_still_filters_urls() {
        let title = "t".repeat(5000);
        let view = StateView::new(
            &state(&title, "https://a:b@x.test:444/secret"),
            StateFormat::Legacy,
        );
        assert_eq!(view.tabs[0].title, title);
        assert!(!view.tabs[0].title_truncated);
        assert_eq!(view.tabs[0].url, "https://x.test:444");
        assert_eq!(view.tabs.iter().filter(|t| t.active).count(), 1);
    }
}
