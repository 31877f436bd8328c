//! Taking the wheel of `hands run --browser … --view` (issue 22): the runner asks between turns
//! ([`hands_runner::wheel::Wheel`]); when the person clicked "Take over" on the page, the browser
//! is handed to the page ([`hands_view::wheel::Screen`] over hands-cdp's
//! [`BrowserWheel`]), hands observes what the person does in it, and when they give it back the
//! model is told in a note ([`handoff_note`]) built only from what was observed.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use hands_cdp::wheel::{BrowserWheel, Observed};
use hands_core::CancellationToken;
use hands_core::input::Key;
use hands_view::Live;
use hands_view::trace::redact::Redactor;
use hands_view::wheel::{BoxFuture, PersonInput, Screen};

/// The most bytes a hand-off note has: at most 500 tokens even at 3 bytes a token.
pub const NOTE_MAX_BYTES: usize = 1500;

/// How many pages, fields or tabs a note names before it says how many more there were.
const LIST_MAX: usize = 6;

/// The browser tab as the page's screen.
struct BrowserScreen(BrowserWheel);

impl Screen for BrowserScreen {
    fn frame(&self) -> BoxFuture<'_, Result<Vec<u8>, String>> {
        Box::pin(async move { self.0.frame().await.map_err(|e| e.to_string()) })
    }

    fn input(&self, input: PersonInput) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(async move {
            let done = match input {
                PersonInput::Click { x, y } => self.0.click(x, y).await,
                PersonInput::Scroll { x, y, dy } => self.0.scroll(x, y, dy).await,
                PersonInput::Key(key) => {
                    let key = Key::parse(key.keysym_name()).map_err(|e| e.to_string())?;
                    self.0.press(&key).await
                }
                PersonInput::Text(text) => self.0.insert_text(&text).await,
            };
            done.map_err(|e| e.to_string())
        })
    }
}

/// The wheel of a run with a browser and a live view.
pub struct RunWheel {
    live: Live,
    browser: BrowserWheel,
}

impl RunWheel {
    /// The wheel of the run whose page is `live`, over its browser; the page may now offer it.
    pub fn new(live: Live, browser: BrowserWheel) -> RunWheel {
        live.wheel().enable();
        live.bump();
        RunWheel { live, browser }
    }
}

#[async_trait]
impl hands_runner::wheel::Wheel for RunWheel {
    async fn between_turns(&self, cancel: &CancellationToken) -> Option<String> {
        let wheel = self.live.wheel();
        if !wheel.asked() {
            return None;
        }
        let step_ended = Instant::now();
        let watching = match self.browser.watch().await {
            Ok(watching) => watching,
            Err(e) => {
                eprintln!("hands run: the browser cannot be handed over ({e}); the run goes on");
                wheel.give_back();
                self.live.bump();
                return None;
            }
        };
        if !wheel.hand_over(Arc::new(BrowserScreen(self.browser.clone()))) {
            watching.finish().await;
            return None;
        }
        self.live.bump();
        eprintln!("hands run: a person has the wheel; the run waits until they give it back");
        wheel.returned(cancel).await;
        self.live.bump();
        let observed = watching.finish().await;
        eprintln!("hands run: the person gave the wheel back; the run goes on");
        Some(handoff_note(&observed, step_ended.elapsed()))
    }
}

/// At most [`LIST_MAX`] of `items`, then how many more.
fn listed<T>(items: &[T], show: impl Fn(&T) -> String) -> String {
    let mut out: Vec<String> = items.iter().take(LIST_MAX).map(show).collect();
    if items.len() > LIST_MAX {
        out.push(format!("and {} more", items.len() - LIST_MAX));
    }
    out.join("; ")
}

/// At most `n` characters of `text`, with `…` when cut.
fn cut(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        text.to_owned()
    } else {
        text.chars().take(n).chain(std::iter::once('…')).collect()
    }
}

/// The note the model gets after a hand-off: how long the person held the wheel and what hands
/// observed them do in the browser (pages visited, fields changed, tabs opened and closed, the
/// active tab now), nothing guessed; a password's value never; credentials in URLs removed; at
/// most [`NOTE_MAX_BYTES`].
pub fn handoff_note(observed: &Observed, held: Duration) -> String {
    let mut note = format!(
        "A person took over the browser for {} s while the run waited, then gave it back. \
         What hands observed them do:",
        held.as_secs()
    );
    let url = |u: &str| cut(u, 100);
    if observed.pages.is_empty() {
        note.push_str("\n- Pages visited: none.");
    } else {
        let _ = write!(
            note,
            "\n- Pages visited: {}.",
            listed(&observed.pages, |p| format!(
                "{} (tab {})",
                url(&p.url),
                p.tab
            ))
        );
    }
    if observed.fields.is_empty() {
        note.push_str("\n- Fields changed: none.");
    } else {
        let _ = write!(
            note,
            "\n- Fields changed: {}.",
            listed(&observed.fields, |f| {
                let value = match &f.value {
                    Some(v) => format!("now {:?}", cut(v, 80)),
                    None => "changed (a password: value not shown)".to_owned(),
                };
                format!(
                    "{:?} ({}) on {}: {value}",
                    cut(&f.label, 60),
                    f.kind,
                    url(&f.url)
                )
            })
        );
    }
    if !observed.tabs_opened.is_empty() {
        let _ = write!(
            note,
            "\n- Tabs opened: {}.",
            listed(&observed.tabs_opened, |t| format!(
                "{} at {}",
                t.tab,
                url(&t.url)
            ))
        );
    }
    if !observed.tabs_closed.is_empty() {
        let _ = write!(
            note,
            "\n- Tabs closed: {}.",
            listed(&observed.tabs_closed, Clone::clone)
        );
    }
    match &observed.active {
        Some((tab, at, title)) if !title.trim().is_empty() => {
            let _ = write!(
                note,
                "\nThe active tab is now {tab}: {:?} at {}.",
                cut(title, 80),
                url(at)
            );
        }
        Some((tab, at, _)) => {
            let _ = write!(note, "\nThe active tab is now {tab}, at {}.", url(at));
        }
        None => {}
    }
    note.push_str(" Check the page again before going on.");
    let mut note = Redactor::default().redact_text(&note);
    if note.len() > NOTE_MAX_BYTES {
        let mut end = NOTE_MAX_BYTES - 3;
        while !note.is_char_boundary(end) {
            end -= 1;
        }
        note.truncate(end);
        note.push('…');
    }
    note
}

#[cfg(test)]
mod tests {
    use super::*;
    use hands_cdp::wheel::{FieldChange, PageVisit};

    fn field(label: &str, kind: &str, value: Option<&str>) -> FieldChange {
        FieldChange {
            tab: "t1".into(),
            url: "http://127.0.0.1:8000/".into(),
            label: label.into(),
            kind: kind.into(),
            value: value.map(str::to_owned),
        }
    }

    #[test]
    fn the_note_says_what_was_observed_and_never_a_password() {
        let observed = Observed {
            pages: vec![PageVisit {
                tab: "t1".into(),
                url: "http://user:pw@127.0.0.1:8000/done?name=Ada&token=abc123".into(),
            }],
            fields: vec![
                field("Name", "text", Some("Ada Lovelace")),
                field("Password", "password", None),
            ],
            tabs_opened: vec![],
            tabs_closed: vec!["t2".into()],
            active: Some((
                "t1".into(),
                "http://127.0.0.1:8000/done".into(),
                "Done".into(),
            )),
        };
        let note = handoff_note(&observed, Duration::from_secs(12));
        assert!(
            note.starts_with("A person took over the browser for 12 s"),
            "{note}"
        );
        assert!(
            note.contains("\"Name\" (text) on http://127.0.0.1:8000/: now \"Ada Lovelace\""),
            "{note}"
        );
        assert!(note.contains("\"Password\" (password) on http://127.0.0.1:8000/: changed (a password: value not shown)"), "{note}");
        assert!(!note.contains("pw@") && !note.contains("abc123"), "{note}");
        assert!(note.contains("- Tabs closed: t2."), "{note}");
        assert!(
            note.contains("The active tab is now t1: \"Done\""),
            "{note}"
        );
        let empty = handoff_note(&Observed::default(), Duration::ZERO);
        assert!(
            empty.contains("- Pages visited: none.\n- Fields changed: none."),
            "{empty}"
        );
    }

    #[test]
    fn a_busy_person_still_fits_in_the_note() {
        let observed = Observed {
            pages: (0..100)
                .map(|i| PageVisit {
                    tab: "t1".into(),
                    url: format!("http://127.0.0.1/{}", "x".repeat(300 + i)),
                })
                .collect(),
            fields: (0..100)
                .map(|i| field(&format!("Field {i}"), "text", Some(&"é".repeat(200))))
                .collect(),
            ..Observed::default()
        };
        let note = handoff_note(&observed, Duration::from_secs(1));
        assert!(note.len() <= NOTE_MAX_BYTES, "{}", note.len());
        assert!(note.contains("and 94 more"), "{note}");
    }
}
