//! The browser's screencast for a run's video (issue 22): `Page.startScreencast` on the active
//! tab (followed when another tab becomes active), each frame acknowledged with
//! `Page.screencastFrameAck` and kept as the latest picture. Chromium sends a frame when the
//! page repaints, so a still page sends none: whoever writes the video repeats the latest.
//! A [`Screencast`] outlives the browser's handing to a toolset, as
//! [`crate::network_tap::NetworkTap`] does.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use serde_json::json;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::connection::SessionId;
use crate::driver::CdpBrowser;
use crate::events::Shared;

/// How often the active tab is checked (a frame also checks it).
const FOLLOW_EVERY: Duration = Duration::from_millis(500);

/// The largest frame asked for, in pixels (Chromium scales the viewport down to fit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameBox {
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

/// A frame of the screencast.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// The picture, JPEG.
    pub jpeg: Vec<u8>,
    /// When Chromium drew it, seconds since the Unix epoch (`metadata.timestamp`), if given.
    pub timestamp: Option<f64>,
}

/// Starts screencasts of the browser's active tab: from [`CdpBrowser::screencast`].
#[derive(Clone)]
pub struct Screencast {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Screencast {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Screencast")
    }
}

impl CdpBrowser {
    /// A handle that records this browser's screen after it was handed away.
    pub fn screencast(&self) -> Screencast {
        Screencast {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl Screencast {
    /// The active tab's session, if a tab is open.
    fn active(&self) -> Option<SessionId> {
        self.shared.lock().active_session()
    }

    /// Casts the active tab (JPEG at `quality`, within `max`) until `cancel` fires or the
    /// browser closes; the receiver holds the latest frame (`None` until the first arrives).
    /// Must be called inside a Tokio runtime.
    pub fn start(
        &self,
        max: FrameBox,
        quality: u8,
        cancel: CancellationToken,
    ) -> watch::Receiver<Option<Arc<Frame>>> {
        let (tx, rx) = watch::channel(None);
        let conn = self.shared.conn.clone();
        let mut events = conn.subscribe(|e| e.method == "Page.screencastFrame");
        let this = self.clone();
        let params = json!({"format": "jpeg", "quality": quality.clamp(1, 100),
                            "maxWidth": max.width, "maxHeight": max.height});
        tokio::spawn(async move {
            let mut cast: Option<SessionId> = None;
            let mut follow = tokio::time::interval(FOLLOW_EVERY);
            loop {
                let active = this.active();
                if active != cast {
                    if let Some(old) = &cast {
                        let _ = conn.send(Some(old), "Page.stopScreencast", json!({}));
                    }
                    if let Some(new) = &active
                        && let Err(e) = conn
                            .call(Some(new), "Page.startScreencast", params.clone())
                            .await
                    {
                        tracing::warn!(error = %e, "Page.startScreencast failed");
                    }
                    cast = active;
                }
                tokio::select! {
                    () = cancel.cancelled() => break,
                    _ = follow.tick() => {}
                    event = events.recv() => {
                        let Some(event) = event else { break };
                        let Some(id) = event.params["sessionId"].as_i64() else { continue };
                        // Acknowledged whichever tab sent it, or Chromium stops sending.
                        let _ = conn.send(
                            event.session.as_ref(),
                            "Page.screencastFrameAck",
                            json!({"sessionId": id}),
                        );
                        if event.session != cast {
                            continue;
                        }
                        let data = event.params["data"].as_str().unwrap_or_default();
                        let Ok(jpeg) = base64::engine::general_purpose::STANDARD.decode(data)
                        else {
                            continue;
                        };
                        let timestamp = event.params["metadata"]["timestamp"].as_f64();
                        let _ = tx.send(Some(Arc::new(Frame { jpeg, timestamp })));
                    }
                }
            }
            if let Some(old) = &cast {
                let _ = conn.call(Some(old), "Page.stopScreencast", json!({})).await;
            }
        });
        rx
    }
}
