//! Pointer members: `click`, `hover`, `scroll`, `scroll_to` on refs, and the opt-in `click_at`, `drag_path`, `hover_at` on viewport CSS coordinates; all real input through `Input.dispatchMouseEvent`.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use hands_core::browser::args::{CssPoint, PointerButton};
use hands_core::browser::read::Ref;
use hands_core::browser::{DriverError, TabId};
use hands_core::input::{ModifierSet, ScrollDirection};

use crate::driver::{AgentError, CdpBrowser, Page};
use crate::keys::modifier_bits;
use crate::refs::{Replaced, Stale, refusal};
use crate::settle::{ActionTimer, Look};

/// How long the first move of a drag waits for the browser to report a native drag.
const DRAG_START_WAIT: Duration = Duration::from_millis(50);

/// What to do with a ref's element while checking it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ResolveOpts {
    /// Scroll it into view and find a point of it that is on top (for pointer input).
    pub point: bool,
    /// Scroll it into view.
    pub scroll: bool,
    /// Give it keyboard focus.
    pub focus: bool,
    /// After focusing, select its whole content (so typing replaces it).
    pub select_all: bool,
    /// Report its checked state.
    pub checked: bool,
    /// With `point`: guard the next press (see [`CdpBrowser::click_ref`]).
    pub guard: bool,
}

/// How many times a click whose press missed its element (the page moved between finding the
/// point and pressing) is aimed again.
pub(crate) const CLICK_ATTEMPTS: usize = 3;

/// The refusal when every attempt missed.
pub const CLICK_KEPT_MISSING: &str = "The element kept moving or was covered when clicked, so \
nothing was clicked; wait for the page to settle, read it again, and retry.";

/// A ref's element, checked at the moment of acting.
#[derive(Debug, Deserialize)]
pub(crate) struct Resolved {
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub role: Option<String>,
    #[serde(default)]
    pub x: Option<f64>,
    #[serde(default)]
    pub y: Option<f64>,
    #[serde(default)]
    pub checked: Option<bool>,
    /// The ref followed a re-render to its element's successor.
    #[serde(default)]
    pub rebound: bool,
    /// Why no successor was followed, beside an error.
    #[serde(default)]
    pub replaced: Option<Replaced>,
}

/// CDP's name of a button.
fn button_name(button: PointerButton) -> &'static str {
    match button {
        PointerButton::Left => "left",
        PointerButton::Right => "right",
        PointerButton::Middle => "middle",
    }
}

/// CDP's `buttons` bit of a button.
fn button_bit(button: PointerButton) -> i64 {
    match button {
        PointerButton::Left => 1,
        PointerButton::Right => 2,
        PointerButton::Middle => 4,
    }
}

impl CdpBrowser {
    /// Re-checks a ref right before acting: issued by this driver, same tab, an element (never a
    /// scope), same document and generation, and in the page the same connected node with the
    /// same role and label, visible — then applies `opts`.
    pub(crate) async fn resolve_ref(
        &mut self,
        page: &Page,
        reference: &Ref,
        opts: ResolveOpts,
        cancel: &CancellationToken,
    ) -> Result<Resolved, DriverError> {
        let binding = self.bound(reference.as_str(), page, false)?;
        let args = json!({
            "ref": reference.as_str(),
            "doc": binding.doc,
            "point": opts.point,
            "scroll": opts.scroll,
            "focus": opts.focus,
            "selectAll": opts.select_all,
            "checked": opts.checked,
            "guard": opts.guard,
            "token": self.shared.listener_token,
        });
        let timeout = self.config.call_timeout;
        let resolved: Resolved = match self.agent(page, "resolve", args, timeout, cancel).await {
            Ok(r) => r,
            Err(AgentError::ContextGone) => {
                return Err(DriverError::refused(
                    Stale::Navigated.text(reference.as_str()),
                ));
            }
            Err(e) => return Err(self.agent_error(e)),
        };
        if let Some(code) = &resolved.error {
            return Err(DriverError::refused(refusal(
                code,
                resolved.replaced.as_ref(),
                reference.as_str(),
                Stale::Removed,
            )));
        }
        if resolved.rebound {
            self.note_rebound(reference.as_str());
        }
        Ok(resolved)
    }

    /// Remembers, for the answer of the member running now, that `reference` followed a
    /// re-render to its element's successor, and logs it.
    pub(crate) fn note_rebound(&mut self, reference: &str) {
        tracing::info!(
            target: "hands_cdp::refs",
            reference,
            "a ref followed its re-rendered element"
        );
        if !self.rebound.iter().any(|r| r == reference) {
            self.rebound.push(reference.to_owned());
        }
    }

    /// Re-checks a ref (see [`CdpBrowser::resolve_ref`]) and returns the viewport point to act
    /// on: scrolled into view, the first of a few points across the element (centre first) where
    /// a hit test lands on it. With `guard`, the next press is guarded.
    pub(crate) async fn ref_point(
        &mut self,
        page: &Page,
        reference: &Ref,
        guard: bool,
        cancel: &CancellationToken,
    ) -> Result<(f64, f64), DriverError> {
        let opts = ResolveOpts {
            point: true,
            guard,
            ..ResolveOpts::default()
        };
        let at = self.resolve_ref(page, reference, opts, cancel).await?;
        match (at.x, at.y) {
            (Some(x), Some(y)) => Ok((x, y)),
            _ => Err(DriverError::Failed("resolve gave no point".into())),
        }
    }

    /// Clicks a ref's element with real mouse input. The point is found on the element, but
    /// the page can move before the press arrives (a late banner, an animation), so the press is
    /// guarded: one that lands on anything else is stopped before the page sees it, and the
    /// point is found again, at most [`CLICK_ATTEMPTS`] times. A click never lands on what the
    /// model did not name.
    pub(crate) async fn click_ref(
        &mut self,
        page: &Page,
        reference: &Ref,
        button: PointerButton,
        timer: &mut ActionTimer,
        cancel: &CancellationToken,
    ) -> Result<Look, DriverError> {
        for _ in 0..CLICK_ATTEMPTS {
            let (x, y) = self.ref_point(page, reference, true, cancel).await?;
            timer.phase("aim");
            // The guard's verdict comes with the first look of the settle, in one call, sent
            // with the input rather than after its answer: the look waits in the page for the
            // guarded press's release (and one turn after it), so it cannot judge a page the
            // click has not reached, and the round trip after the input's answer is saved.
            let (input, look) = tokio::join!(
                self.click_point(page, x, y, button, 1, ModifierSet::NONE),
                self.look(page, timer.started(), true, cancel),
            );
            input?;
            timer.phase("input and guard");
            if let Ok(watched) = &look.outcome {
                timer.guard = watched.guard.clone();
            }
            match &look.outcome {
                Ok(watched) if watched.guard.as_deref() == Some("missed") => {
                    tracing::debug!(
                        reference = reference.as_str(),
                        "a press missed its element; aiming again"
                    );
                }
                // A click that navigated took its document (and the guard) with it: the settle
                // sees that too.
                _ => return Ok(look),
            }
        }
        Err(DriverError::refused(CLICK_KEPT_MISSING))
    }

    /// One `Input.dispatchMouseEvent`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn mouse(
        &self,
        page: &Page,
        kind: &str,
        x: f64,
        y: f64,
        button: Option<PointerButton>,
        buttons: i64,
        click_count: u8,
        modifiers: ModifierSet,
    ) -> Result<(), DriverError> {
        let mut params = json!({
            "type": kind,
            "x": x,
            "y": y,
            "modifiers": modifier_bits(modifiers),
            "buttons": buttons,
            "pointerType": "mouse",
        });
        if let Some(button) = button {
            params["button"] = json!(button_name(button));
            params["clickCount"] = json!(click_count);
        }
        self.shared
            .conn
            .call(Some(&page.session), "Input.dispatchMouseEvent", params)
            .await
            .map(|_| ())
            .map_err(|e| self.cdp_error(e))
    }

    /// Moves there, then presses and releases `count` times (the count rising 1, 2, 3 as a
    /// person's double and triple clicks do). The events are sent together, without waiting for
    /// each one's answer: the browser delivers them in order (a pending move reaches the page
    /// before the press that follows it), and a move's answer waits for the page's next frame,
    /// which used to cost up to a frame per click.
    pub(crate) async fn click_point(
        &self,
        page: &Page,
        x: f64,
        y: f64,
        button: PointerButton,
        count: u8,
        modifiers: ModifierSet,
    ) -> Result<(), DriverError> {
        let mut events = vec![self.mouse(page, "mouseMoved", x, y, None, 0, 0, modifiers)];
        for n in 1..=count.max(1) {
            events.push(self.mouse(
                page,
                "mousePressed",
                x,
                y,
                Some(button),
                button_bit(button),
                n,
                modifiers,
            ));
            events.push(self.mouse(page, "mouseReleased", x, y, Some(button), 0, n, modifiers));
        }
        // `join_all` polls them in order, so they are sent in order.
        futures_util::future::join_all(events)
            .await
            .into_iter()
            .collect::<Result<Vec<()>, DriverError>>()
            .map(|_| ())
    }

    fn check_in_viewport(&self, at: CssPoint) -> Result<(f64, f64), DriverError> {
        let (w, h) = self.config.viewport;
        if at.x >= u64::from(w) || at.y >= u64::from(h) {
            return Err(DriverError::refused(format!(
                "The point ({}, {}) is outside the {w}x{h} viewport.",
                at.x, at.y
            )));
        }
        Ok((at.x as f64, at.y as f64))
    }

    /// `click`: real mouse input at a point of the element that is on top.
    pub(crate) async fn click_impl(
        &mut self,
        target: &Ref,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let page = self.page_ready(tab).await?;
        let mut timer = self.action_timer(&page, "click");
        let look = self
            .click_ref(&page, target, PointerButton::Left, &mut timer, cancel)
            .await?;
        self.settle_action(&page, &mut timer, Some(look), cancel)
            .await?;
        timer.finish();
        Ok(Some("Clicked.".to_owned()))
    }

    /// `hover`.
    pub(crate) async fn hover_impl(
        &mut self,
        target: &Ref,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let page = self.page_ready(tab).await?;
        let mut timer = self.action_timer(&page, "hover");
        let (x, y) = self.ref_point(&page, target, false, cancel).await?;
        timer.phase("aim");
        self.mouse(&page, "mouseMoved", x, y, None, 0, 0, ModifierSet::NONE)
            .await?;
        timer.phase("input");
        self.settle_action(&page, &mut timer, None, cancel).await?;
        timer.finish();
        Ok(Some("Hovered.".to_owned()))
    }

    /// `scroll_to`: the element scrolled into the middle of the viewport.
    pub(crate) async fn scroll_to_impl(
        &mut self,
        target: &Ref,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let page = self.page_ready(tab).await?;
        let started = Instant::now();
        let opts = ResolveOpts {
            scroll: true,
            ..ResolveOpts::default()
        };
        self.resolve_ref(&page, target, opts, cancel).await?;
        self.settle(&page, started, cancel).await?;
        Ok(Some("Scrolled the element into view.".to_owned()))
    }

    /// `scroll`: a mouse wheel of `amount` CSS pixels at `at`, else at the middle of the viewport.
    pub(crate) async fn scroll_impl(
        &mut self,
        at: Option<CssPoint>,
        direction: ScrollDirection,
        amount: u64,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let page = self.page_ready(tab).await?;
        let point = at.map(|at| self.check_in_viewport(at)).transpose()?;
        let started = Instant::now();
        let amount = amount.min(1 << 24) as f64;
        let (dx, dy) = match direction {
            ScrollDirection::Up => (0.0, -amount),
            ScrollDirection::Down => (0.0, amount),
            ScrollDirection::Left => (-amount, 0.0),
            ScrollDirection::Right => (amount, 0.0),
        };
        if amount > 0.0 {
            let (w, h) = self.config.viewport;
            let (x, y) = point.unwrap_or((f64::from(w) / 2.0, f64::from(h) / 2.0));
            let params = json!({"type": "mouseWheel", "x": x, "y": y, "deltaX": dx, "deltaY": dy,
                                "pointerType": "mouse"});
            self.shared
                .conn
                .call(Some(&page.session), "Input.dispatchMouseEvent", params)
                .await
                .map_err(|e| self.cdp_error(e))?;
        }
        self.settle(&page, started, cancel).await?;
        let name = match direction {
            ScrollDirection::Up => "up",
            ScrollDirection::Down => "down",
            ScrollDirection::Left => "left",
            ScrollDirection::Right => "right",
        };
        Ok(Some(format!("Scrolled {name}.")))
    }

    /// One `Input.dispatchDragEvent` carrying the intercepted drag's data.
    async fn drag_event(
        &self,
        page: &Page,
        kind: &str,
        x: f64,
        y: f64,
        data: &serde_json::Value,
        modifiers: ModifierSet,
    ) -> Result<(), DriverError> {
        let params = json!({"type": kind, "x": x, "y": y, "data": data,
                            "modifiers": modifier_bits(modifiers)});
        self.shared
            .conn
            .call(Some(&page.session), "Input.dispatchDragEvent", params)
            .await
            .map(|_| ())
            .map_err(|e| self.cdp_error(e))
    }

    /// `click_at`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn click_at_impl(
        &mut self,
        at: CssPoint,
        button: PointerButton,
        click_count: u8,
        keys: ModifierSet,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let page = self.page_ready(tab).await?;
        let (x, y) = self.check_in_viewport(at)?;
        let started = Instant::now();
        self.with_modifiers(&page, keys, async |this: &Self| {
            this.click_point(&page, x, y, button, click_count.clamp(1, 3), keys)
                .await
        })
        .await?;
        self.settle(&page, started, cancel).await?;
        Ok(Some("Clicked.".to_owned()))
    }

    /// `hover_at`.
    pub(crate) async fn hover_at_impl(
        &mut self,
        at: CssPoint,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let page = self.page_ready(tab).await?;
        let (x, y) = self.check_in_viewport(at)?;
        let started = Instant::now();
        // With the button held (`mouse_button`), the move drags.
        let (button, buttons) = if self.button_held.as_ref() == Some(&page.id) {
            (Some(PointerButton::Left), button_bit(PointerButton::Left))
        } else {
            (None, 0)
        };
        self.mouse(
            &page,
            "mouseMoved",
            x,
            y,
            button,
            buttons,
            0,
            ModifierSet::NONE,
        )
        .await?;
        self.settle(&page, started, cancel).await?;
        Ok(Some("Moved the pointer.".to_owned()))
    }

    /// `mouse_button`: moves there (dragging, if the button is already down), then presses or
    /// releases the left button. A press while it is down, or a release while it is up, is
    /// refused: the model's idea of the button is wrong, and saying so beats a silent no-op.
    pub(crate) async fn mouse_button_impl(
        &mut self,
        at: CssPoint,
        press: bool,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let page = self.page_ready(tab).await?;
        let (x, y) = self.check_in_viewport(at)?;
        let held = self.button_held.as_ref() == Some(&page.id);
        match (press, held) {
            (true, true) => {
                return Err(DriverError::refused(
                    "The left mouse button is already down: release it with left_mouse_up first.",
                ));
            }
            (false, false) => {
                return Err(DriverError::refused(
                    "The left mouse button is not down in this tab: press it with left_mouse_down first.",
                ));
            }
            _ => {}
        }
        let started = Instant::now();
        let left = PointerButton::Left;
        let bit = button_bit(left);
        if press {
            self.mouse(&page, "mouseMoved", x, y, None, 0, 0, ModifierSet::NONE)
                .await?;
            self.mouse(
                &page,
                "mousePressed",
                x,
                y,
                Some(left),
                bit,
                1,
                ModifierSet::NONE,
            )
            .await?;
            self.button_held = Some(page.id.clone());
        } else {
            self.mouse(
                &page,
                "mouseMoved",
                x,
                y,
                Some(left),
                bit,
                0,
                ModifierSet::NONE,
            )
            .await?;
            // Released whatever happens next: the browser's button is up once this is sent.
            self.button_held = None;
            self.mouse(
                &page,
                "mouseReleased",
                x,
                y,
                Some(left),
                0,
                1,
                ModifierSet::NONE,
            )
            .await?;
        }
        self.settle(&page, started, cancel).await?;
        Ok(Some(if press {
            "Pressed the left mouse button.".to_owned()
        } else {
            "Released the left mouse button.".to_owned()
        }))
    }

    /// `drag_path`: press at the first point, move through the others, release at the last,
    /// with `keys` held throughout.
    pub(crate) async fn drag_path_impl(
        &mut self,
        path: &[CssPoint],
        keys: ModifierSet,
        tab: Option<&TabId>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let page = self.page_ready(tab).await?;
        let points = path
            .iter()
            .map(|p| self.check_in_viewport(*p))
            .collect::<Result<Vec<_>, _>>()?;
        let (Some(first), Some(last)) = (points.first().copied(), points.last().copied()) else {
            return Err(DriverError::refused("A drag needs at least two points."));
        };
        let started = Instant::now();
        let left = PointerButton::Left;
        // A press on something draggable (a selection, a link, a draggable element) starts a
        // native drag, which swallows later mouse events in a headless browser: intercept it
        // and continue the path as drag events, as a person's drop would land.
        let session = page.session.clone();
        let mut drags = self.shared.conn.subscribe(move |e| {
            e.method == "Input.dragIntercepted" && e.session.as_ref() == Some(&session)
        });
        self.call_raw(
            Some(&page.id),
            "Input.setInterceptDrags",
            json!({"enabled": true}),
        )
        .await?;
        let result = self
            .with_modifiers(&page, keys, async |this: &Self| {
                this.mouse(&page, "mouseMoved", first.0, first.1, None, 0, 0, keys)
                    .await?;
                this.mouse(
                    &page,
                    "mousePressed",
                    first.0,
                    first.1,
                    Some(left),
                    1,
                    1,
                    keys,
                )
                .await?;
                let mut drag_data: Option<serde_json::Value> = None;
                for (i, (x, y)) in points.iter().enumerate().skip(1) {
                    if cancel.is_cancelled() {
                        break;
                    }
                    match &drag_data {
                        None => {
                            this.mouse(&page, "mouseMoved", *x, *y, Some(left), 1, 0, keys)
                                .await?;
                            // The browser reports a drag a moment after the move that starts
                            // it; the first move is where that happens.
                            let wait = if i == 1 {
                                DRAG_START_WAIT
                            } else {
                                Duration::ZERO
                            };
                            let started = tokio::time::timeout(wait, drags.recv()).await;
                            if let Ok(Some(event)) = started {
                                drag_data = Some(event.params["data"].clone());
                                this.drag_event(
                                    &page,
                                    "dragEnter",
                                    *x,
                                    *y,
                                    &event.params["data"],
                                    keys,
                                )
                                .await?;
                                this.drag_event(
                                    &page,
                                    "dragOver",
                                    *x,
                                    *y,
                                    &event.params["data"],
                                    keys,
                                )
                                .await?;
                            }
                        }
                        Some(data) => {
                            this.drag_event(&page, "dragOver", *x, *y, data, keys)
                                .await?;
                        }
                    }
                    if i == points.len() - 1
                        && let Some(data) = &drag_data
                    {
                        this.drag_event(&page, "drop", *x, *y, data, keys).await?;
                    }
                }
                // Released even when cancelled, so no button stays down.
                this.mouse(
                    &page,
                    "mouseReleased",
                    last.0,
                    last.1,
                    Some(left),
                    0,
                    1,
                    keys,
                )
                .await
            })
            .await;
        let _ = self
            .call_raw(
                Some(&page.id),
                "Input.setInterceptDrags",
                json!({"enabled": false}),
            )
            .await;
        result?;
        if cancel.is_cancelled() {
            return Err(DriverError::Cancelled);
        }
        self.settle(&page, started, cancel).await?;
        Ok(Some("Dragged.".to_owned()))
    }
}
