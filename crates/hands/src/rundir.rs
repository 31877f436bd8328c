//! A run directory: `log.jsonl` (one JSON object per request, response and action, with
//! timings), the images the model was shown, as files, and the run's ledger (`ledger.sqlite`,
//! written by hands-runner's `SqliteLedger`). Image data in the logged bodies is
//! replaced by the file it was written to, so the log stays small and readable.

use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context as _;
use hands_core::image::MediaType;
use hands_runner::journal::{Entry, Journal};
use serde_json::{Value, json};

/// Writes a run directory.
pub struct RunDir {
    dir: PathBuf,
    log: BufWriter<File>,
    started: Instant,
    n_images: usize,
    /// The browser's network log and the last request written, when the run has a browser.
    network: Option<(hands_cdp::network_tap::NetworkTap, u64)>,
    /// The browser's DOM snapshots, when the run has a browser.
    dom: Option<hands_cdp::dom_snapshot::DomTap>,
}

impl RunDir {
    /// The default place for a run directory when none is given: `runs/<kind>-<unix seconds>`.
    pub fn default_path(kind: &str) -> PathBuf {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        PathBuf::from("runs").join(format!("{kind}-{secs}"))
    }

    /// Creates `dir` (and `dir/images`) and opens its log.
    pub fn create(dir: &Path) -> anyhow::Result<RunDir> {
        std::fs::create_dir_all(dir.join("images"))
            .with_context(|| format!("creating {}", dir.display()))?;
        let log = File::create(dir.join("log.jsonl"))
            .with_context(|| format!("creating {}/log.jsonl", dir.display()))?;
        Ok(RunDir {
            dir: dir.to_owned(),
            log: BufWriter::new(log),
            started: Instant::now(),
            n_images: 0,
            network: None,
            dom: None,
        })
    }

    /// Reopens the run directory `dir` of a run being resumed: its log is appended to, and
    /// image numbers go on from the images already there.
    pub fn reopen(dir: &Path) -> anyhow::Result<RunDir> {
        std::fs::create_dir_all(dir.join("images"))
            .with_context(|| format!("opening {}", dir.display()))?;
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("log.jsonl"))
            .with_context(|| format!("opening {}/log.jsonl", dir.display()))?;
        let n_images = std::fs::read_dir(dir.join("images"))
            .map(|entries| entries.count())
            .unwrap_or(0);
        Ok(RunDir {
            dir: dir.to_owned(),
            log: BufWriter::new(log),
            started: Instant::now(),
            n_images,
            network: None,
            dom: None,
        })
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Appends one line.
    pub fn line(&mut self, mut value: Value) {
        value["t_ms"] = json!(self.started.elapsed().as_millis() as u64);
        if let Err(e) = writeln!(self.log, "{value}").and_then(|()| self.log.flush()) {
            tracing::warn!(error = %e, "could not write the run log");
        }
    }
}

/// Replaces base64 image data (Anthropic `source.data`, OpenAI `data:` URLs) with a short note.
fn elide_images(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("type").and_then(Value::as_str) == Some("base64")
                && let Some(Value::String(data)) = map.get_mut("data")
            {
                *data = format!("<{} base64 bytes>", data.len());
            }
            for (key, v) in map.iter_mut() {
                if let Value::String(s) = v
                    && (key == "image_url" || key == "url")
                    && s.starts_with("data:")
                {
                    *s = format!("<data URL of {} bytes>", s.len());
                } else {
                    elide_images(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(elide_images),
        _ => {}
    }
}

impl RunDir {
    /// Logs the browser's requests after each action (`network` lines).
    pub fn log_network(&mut self, tap: hands_cdp::network_tap::NetworkTap) {
        self.network = Some((tap, 0));
    }

    /// A `network` line of the requests recorded since the last one, if any: method, filtered
    /// URL (no query), kind, status, failure, refusal, bytes received.
    fn network_since(&mut self, step: u32, call_id: &str) {
        let Some((tap, last)) = &mut self.network else {
            return;
        };
        let records = tap.since(*last);
        let Some(newest) = records.last() else {
            return;
        };
        *last = newest.seq;
        let requests: Vec<Value> = records
            .iter()
            .map(|r| {
                json!({"tab": r.tab, "method": r.method, "url": r.url, "kind": r.kind,
                       "status": r.status, "failed": r.failed, "blocked": r.blocked,
                       "bytes": r.bytes})
            })
            .collect();
        self.line(json!({"kind": "network", "step": step, "call_id": call_id,
                         "requests": requests}));
    }
}

/// Where a run directory keeps its DOM snapshots (`dom/HASH.html`).
pub const DOM_DIR: &str = "dom";

impl RunDir {
    /// Takes a DOM snapshot of the active tab after each action (`dom` lines).
    pub fn log_dom(&mut self, tap: hands_cdp::dom_snapshot::DomTap) {
        self.dom = Some(tap);
    }

    /// A `dom` line naming the snapshot taken now, stored once per content as
    /// `dom/HASH.html` (HASH: the first 16 hex digits of its SHA-256), so a page that did not
    /// change costs one line. The journal is called synchronously: the snapshot is taken on
    /// this worker with the runtime's other tasks moved off it.
    fn dom_since(&mut self, step: u32, call_id: &str) {
        let Some(tap) = &self.dom else {
            return;
        };
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if handle.runtime_flavor() != tokio::runtime::RuntimeFlavor::MultiThread {
            return;
        }
        let tap = tap.clone();
        let Some(html) = tokio::task::block_in_place(|| handle.block_on(tap.snapshot())) else {
            return;
        };
        use sha2::Digest as _;
        let digest = sha2::Sha256::digest(html.as_bytes());
        let hash: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        let file = format!("{DOM_DIR}/{hash}.html");
        let path = self.dir.join(&file);
        if !path.exists() {
            let written = std::fs::create_dir_all(self.dir.join(DOM_DIR))
                .and_then(|()| std::fs::write(&path, html.as_bytes()));
            if let Err(e) = written {
                tracing::warn!(error = %e, "could not save a DOM snapshot");
                return;
            }
        }
        self.line(
            json!({"kind": "dom", "step": step, "call_id": call_id, "file": file,
                         "bytes": html.len()}),
        );
    }
}

impl Journal for RunDir {
    fn record(&mut self, entry: Entry<'_>) {
        match entry {
            Entry::Request { step, body } => {
                let mut body = body.clone();
                elide_images(&mut body);
                self.line(json!({"kind": "request", "step": step, "body": body}));
            }
            Entry::Response {
                step,
                body,
                duration,
                attempts,
            } => {
                let mut body = body.clone();
                elide_images(&mut body);
                self.line(
                    json!({"kind": "response", "step": step, "ms": duration.as_millis() as u64,
                    "attempts": attempts, "body": body}),
                );
            }
            Entry::Action {
                step,
                call_id,
                name,
                is_error,
                summary,
                duration,
            } => {
                let summary: String = summary.chars().take(500).collect();
                self.line(
                    json!({"kind": "action", "step": step, "call_id": call_id, "name": name,
                    "is_error": is_error, "ms": duration.as_secs_f64() * 1e3, "summary": summary}),
                );
                self.network_since(step, call_id);
                self.dom_since(step, call_id);
            }
            Entry::Image {
                step,
                call_id,
                image,
            } => {
                self.n_images += 1;
                let ext = match image.media_type {
                    MediaType::Png => "png",
                    MediaType::Jpeg => "jpg",
                };
                let safe: String = call_id
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || c == '_' {
                            c
                        } else {
                            '_'
                        }
                    })
                    .collect();
                let name = format!("images/{:03}-step{step}-{safe}.{ext}", self.n_images);
                if let Err(e) = std::fs::write(self.dir.join(&name), image.bytes()) {
                    tracing::warn!(error = %e, "could not save an image");
                }
                self.line(
                    json!({"kind": "image", "step": step, "call_id": call_id, "file": name,
                    "size": image.size.to_string()}),
                );
            }
            Entry::HandOff { step, note } => {
                self.line(json!({"kind": "handoff", "step": step, "note": note}));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_data_is_elided_from_logged_bodies() {
        let mut body = json!({"messages": [{"content": [{"type": "tool_result", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]}]}],
            "input": [{"output": {"type": "computer_screenshot", "image_url": "data:image/png;base64,AAAA"}}]});
        elide_images(&mut body);
        let text = body.to_string();
        assert!(!text.contains("AAAA"), "{text}");
        assert!(text.contains("<4 base64 bytes>"));
        assert!(text.contains("<data URL of 26 bytes>"));
    }
}
