//! Taking the wheel of `hands run … --view` (issue 22): the runner asks between turns
//! ([`hands_runner::wheel::Wheel`]); when the person clicked "Take over" on the page, the browser
//! (hands-cdp's [`BrowserWheel`]) or, in a run without one, the desktop (hands-x11's
//! [`DesktopWheel`]) is handed to the page as a [`hands_view::wheel::Screen`], hands observes
//! what the person does on it, and when they give it back the model is told in a note
//! ([`handoff_note`], [`desktop_note`]) built only from what was observed.

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
use hands_x11::wheel::{DesktopObserved, DesktopWheel};

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

/// The desktop as the page's screen.
struct DesktopScreen(DesktopWheel);

impl Screen for DesktopScreen {
    fn frame(&self) -> BoxFuture<'_, Result<Vec<u8>, String>> {
        Box::pin(async move { self.0.frame().await.map_err(|e| e.to_string()) })
    }

    fn input(&self, input: PersonInput) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(async move {
            let done = match input {
                PersonInput::Click { x, y } => self.0.click(x, y).await,
                PersonInput::Scroll { x, y, dy } => self.0.scroll(x, y, dy).await,
                PersonInput::Key(key) => self.0.press(key.keysym_name()).await,
                PersonInput::Text(text) => self.0.type_text(&text).await,
            };
            done.map_err(|e| e.to_string())
        })
    }
}

/// What a run hands to a person who takes the wheel.
#[derive(Debug, Clone)]
pub enum WheelHands {
    /// The browser's active tab.
    Browser(BrowserWheel),
    /// The desktop.
    Desktop(DesktopWheel),
}

/// The observation of one hold, for either screen.
enum Watch {
    Browser(hands_cdp::wheel::Watching),
    Desktop(hands_x11::wheel::DesktopWatching),
}

impl Watch {
    /// Ends it; the note for the model.
    async fn finish(self, held: Duration) -> String {
        match self {
            Watch::Browser(watching) => handoff_note(&watching.finish().await, held),
            Watch::Desktop(watching) => desktop_note(&watching.finish().await, held),
        }
    }
}

/// The wheel of a run with a live view, over its browser or its desktop.
pub struct RunWheel {
    live: Live,
    hands: WheelHands,
}

impl RunWheel {
    /// The wheel of the run whose page is `live`, over `hands`; the page may now offer it.
    pub fn new(live: Live, hands: WheelHands) -> RunWheel {
        live.wheel().enable();
        live.bump();
        RunWheel { live, hands }
    }

    /// Starts observing, and the screen to hand over.
    async fn watch(&self) -> Result<(Watch, Arc<dyn Screen>), String> {
        match &self.hands {
            WheelHands::Browser(browser) => {
                let watching = browser.watch().await.map_err(|e| e.to_string())?;
                Ok((
                    Watch::Browser(watching),
                    Arc::new(BrowserScreen(browser.clone())),
                ))
            }
            WheelHands::Desktop(desktop) => {
                let watching = desktop.watch().await.map_err(|e| e.to_string())?;
                Ok((
                    Watch::Desktop(watching),
                    Arc::new(DesktopScreen(desktop.clone())),
                ))
            }
        }
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
        let what = match self.hands {
            WheelHands::Browser(_) => "browser",
            WheelHands::Desktop(_) => "desktop",
        };
        let (watching, screen) = match self.watch().await {
            Ok(started) => started,
            Err(e) => {
                eprintln!("hands run: the {what} cannot be handed over ({e}); the run goes on");
                wheel.give_back();
                self.live.bump();
                return None;
            }
        };
        if !wheel.hand_over(screen) {
            watching.finish(step_ended.elapsed()).await;
            return None;
        }
        self.live.bump();
        eprintln!("hands run: a person has the wheel; the run waits until they give it back");
        wheel.returned(cancel).await;
        self.live.bump();
        let note = watching.finish(step_ended.elapsed()).await;
        eprintln!("hands run: the person gave the wheel back; the run goes on");
        Some(note)
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
    capped(&note)
}

/// `note` with credentials removed, at most [`NOTE_MAX_BYTES`].
fn capped(note: &str) -> String {
    let mut note = Redactor::default().redact_text(note);
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

/// A window's title for the note: quoted, at most 80 characters.
fn window_title(title: &str) -> String {
    if title.trim().is_empty() {
        "an untitled window".to_owned()
    } else {
        format!("{:?}", cut(title, 80))
    }
}

/// `n` things, in words: `1 click`, `2 clicks`.
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The note the model gets after a hand-off of the desktop: how long the person held the
/// wheel and what hands observed on the desktop (top-level windows opened and closed, the
/// focused window now, whether the clipboard changed owner, how much input the person sent —
/// keys by name, typed text only counted), nothing guessed; at most [`NOTE_MAX_BYTES`].
pub fn desktop_note(observed: &DesktopObserved, held: Duration) -> String {
    let mut note = format!(
        "A person took over the desktop for {} s while the run waited, then gave it back. \
         What hands observed on the desktop:",
        held.as_secs()
    );
    if observed.opened.is_empty() {
        note.push_str("\n- Windows opened: none.");
    } else {
        let _ = write!(
            note,
            "\n- Windows opened: {}.",
            listed(&observed.opened, |w| {
                let title = window_title(&w.title);
                if w.open {
                    title
                } else {
                    format!("{title} (closed again)")
                }
            })
        );
    }
    if !observed.closed.is_empty() {
        let _ = write!(
            note,
            "\n- Windows closed: {}.",
            listed(&observed.closed, |t| window_title(t))
        );
    }
    let inputs = &observed.inputs;
    let mut sent = Vec::new();
    if inputs.clicks > 0 {
        sent.push(counted(inputs.clicks as usize, "click", "clicks"));
    }
    if inputs.scrolls > 0 {
        sent.push(counted(
            inputs.scrolls as usize,
            "wheel turn",
            "wheel turns",
        ));
    }
    if !inputs.keys.is_empty() {
        let keys = listed(&inputs.keys, Clone::clone).replace("; ", ", ");
        sent.push(format!("keys {keys}"));
    }
    if inputs.chars > 0 {
        sent.push(format!(
            "{} typed (not shown)",
            counted(inputs.chars, "character", "characters")
        ));
    }
    if sent.is_empty() {
        note.push_str("\n- Their input: none.");
    } else {
        let _ = write!(note, "\n- Their input: {}.", sent.join(", "));
    }
    if observed.clipboard_changed {
        note.push_str("\n- The clipboard changed owner (its content was not read).");
    }
    match &observed.focused {
        Some(title) => {
            let _ = write!(note, "\nThe focused window is now {}.", window_title(title));
        }
        None => note.push_str("\nNo window has the focus now."),
    }
    note.push_str(" Take a screenshot before going on.");
    capped(&note)
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

    #[test]
    fn the_desktop_note_names_windows_and_counts_what_was_typed() {
        use hands_x11::wheel::{InputCounts, OpenedWindow};
        let observed = DesktopObserved {
            opened: vec![
                OpenedWindow {
                    title: "Second window".into(),
                    open: true,
                },
                OpenedWindow {
                    title: String::new(),
                    open: false,
                },
            ],
            closed: vec!["Ask".into()],
            focused: Some("Second window".into()),
            clipboard_changed: true,
            inputs: InputCounts {
                clicks: 2,
                scrolls: 0,
                keys: vec!["Return".into()],
                chars: 12,
            },
        };
        let note = desktop_note(&observed, Duration::from_secs(7));
        assert_eq!(
            note,
            "A person took over the desktop for 7 s while the run waited, then gave it back. \
             What hands observed on the desktop:\n\
             - Windows opened: \"Second window\"; an untitled window (closed again).\n\
             - Windows closed: \"Ask\".\n\
             - Their input: 2 clicks, keys Return, 12 characters typed (not shown).\n\
             - The clipboard changed owner (its content was not read).\n\
             The focused window is now \"Second window\". Take a screenshot before going on."
        );
        let empty = desktop_note(&DesktopObserved::default(), Duration::ZERO);
        assert!(
            empty.contains(
                "- Windows opened: none.\n- Their input: none.\nNo window has the focus now."
            ),
            "{empty}"
        );
        let busy = DesktopObserved {
            opened: (0..100)
                .map(|i| OpenedWindow {
                    title: format!("{i} {}", "é".repeat(300)),
                    open: true,
                })
                .collect(),
            closed: (0..100)
                .map(|i| format!("{i} {}", "x".repeat(300)))
                .collect(),
            ..DesktopObserved::default()
        };
        let note = desktop_note(&busy, Duration::from_secs(1));
        assert!(note.len() <= NOTE_MAX_BYTES, "{}", note.len());
        assert!(note.contains("and 94 more"), "{note}");
    }
}
