//! One trace per run: a run directory written as one file, `run.hands` — a gzip-compressed tar
//! (layout in docs/trace-format.md) holding `manifest.json` first, `log.jsonl` (the
//! conversation and every action with its timing), `approvals.jsonl` (every approval and who
//! decided it), `images/` (the screenshots) and `dom/` (a DOM snapshot after each browser
//! action, one entry per distinct content). Secrets are scrubbed on the way in
//! ([`redact`]), and the written bytes are checked for the known ones before the file is kept.
//!
//! [`Trace::open`] reads a trace back whole into memory (a trace is a few MB), checking its
//! format and version; a truncated or corrupted file is refused with [`TraceError`], never a
//! panic.

mod dom;
pub mod redact;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::steps::read_log;
pub use dom::{DOM_BUDGET, DOM_DIR, DomInTrace};
use redact::Redactor;

/// The `format` every manifest names.
pub const FORMAT: &str = "hands-trace";
/// The layout version this build writes and the newest it reads.
pub const VERSION: u32 = 2;
/// The manifest's name, the archive's first entry.
pub const MANIFEST: &str = "manifest.json";
/// The log's name (in the run directory and in the trace).
pub const LOG: &str = "log.jsonl";
/// The approvals' name (in the run directory and in the trace).
pub const APPROVALS: &str = "approvals.jsonl";
/// A trace bigger than this once unpacked is refused (a gzip bomb is not read whole).
const MAX_UNPACKED: u64 = 1 << 30;

/// Why a trace cannot be written or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The run directory has no log.
    #[error("{0} has no log.jsonl: give a run directory written by `hands run`")]
    NotARunDir(PathBuf),
    /// The file is not a readable trace (truncated, corrupted, or not a trace at all).
    #[error(
        "{path} is not a readable hands trace ({reason}); it may be truncated or corrupted: export it again with `hands runs export`"
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
    /// A trace of a newer layout.
    #[error(
        "{path} is a hands trace of layout version {version}; this hands reads up to {VERSION}: update hands"
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// Its version.
        version: u32,
    },
    /// A known secret was still in the bytes to be written (nothing was written).
    #[error(
        "a secret ({0} characters) survived redaction in {1}; nothing was written: report this as a bug"
    )]
    SecretLeft(usize, String),
}

/// How many of each thing a trace holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Model responses (steps).
    pub steps: u64,
    /// Requests sent.
    pub requests: u64,
    /// Actions done.
    pub actions: u64,
    /// Approvals decided.
    pub approvals: u64,
    /// Screenshots.
    pub images: u64,
    /// Secrets replaced by `<redacted>`.
    pub redactions: u64,
    /// Videos (`hands runs export --video`).
    #[serde(default)]
    pub videos: u64,
    /// Distinct DOM snapshots.
    #[serde(default)]
    pub doms: u64,
}

/// The trace's `manifest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// The layout version ([`VERSION`]).
    pub version: u32,
    /// The run's id (its ledger's), when known.
    pub run_id: Option<String>,
    /// The provider (`anthropic`, `openai`), when known.
    pub provider: Option<String>,
    /// The model API (`messages`, `responses`), when known.
    #[serde(default)]
    pub api: Option<String>,
    /// The model, when known.
    pub model: Option<String>,
    /// The task.
    pub task: Option<String>,
    /// When the run started, Unix ms.
    pub started_unix_ms: Option<u64>,
    /// When it last wrote its log, Unix ms.
    pub ended_unix_ms: Option<u64>,
    /// The counts.
    pub counts: Counts,
    /// Which hands wrote it.
    pub written_by: String,
}

/// What the exporter knows of the run beyond its directory (from its ledger).
#[derive(Debug, Clone, Default)]
pub struct RunFacts {
    /// The run id.
    pub run_id: Option<String>,
    /// The model API (`messages`, `responses`).
    pub api: Option<String>,
    /// The model.
    pub model: Option<String>,
    /// Secret values to search for and replace wherever they appear (API keys of the
    /// exporter's environment, tokens of the run's MCP servers).
    pub secrets: Vec<String>,
    /// A PNG → JPEG re-encoder: when given, each PNG screenshot that is smaller as JPEG is
    /// stored as `.jpg` (the log's references follow); `None` keeps the PNGs as the model saw
    /// them.
    pub jpeg: Option<Reencode>,
    /// Whether the run's videos (`video.webm`, `video-N.webm`) go in the trace.
    pub video: VideoInTrace,
    /// How many of the run's DOM snapshots go in.
    pub dom: DomInTrace,
}

/// Whether a trace holds the run's videos.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum VideoInTrace {
    /// Left out (the default: a video takes far more than the rest of a trace).
    #[default]
    Leave,
    /// Stored as `video/NAME`.
    Include,
}

/// Re-encodes one image; `None` when it cannot.
pub type Reencode = fn(&[u8]) -> Option<Vec<u8>>;

/// Stores smaller JPEGs in place of PNGs and points the log at them.
fn shrink(images: &mut BTreeMap<String, Vec<u8>>, log: &mut String, jpeg: Reencode) {
    let pngs: Vec<String> = images
        .keys()
        .filter(|n| n.ends_with(".png"))
        .cloned()
        .collect();
    for name in pngs {
        let Some(png) = images.get(&name) else {
            continue;
        };
        let jpg_name = format!("{}.jpg", name.trim_end_matches(".png"));
        if images.contains_key(&jpg_name) {
            continue;
        }
        if let Some(jpg) = jpeg(png).filter(|j| j.len() < png.len()) {
            images.remove(&name);
            images.insert(jpg_name.clone(), jpg);
            *log = log.replace(&format!("images/{name}"), &format!("images/{jpg_name}"));
        }
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> TraceError + '_ {
    move |source| TraceError::Io {
        path: path.to_owned(),
        source,
    }
}

fn unix_ms(time: std::time::SystemTime) -> Option<u64> {
    time.duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_millis() as u64)
}

/// Writes the run directory `dir` as the trace `out` and returns its manifest. The file is
/// written beside `out` and renamed into place only once complete and checked.
pub fn export(dir: &Path, out: &Path, facts: &RunFacts) -> Result<Manifest, TraceError> {
    let log_path = dir.join(LOG);
    if !log_path.is_file() {
        return Err(TraceError::NotARunDir(dir.to_owned()));
    }
    let mut redactor = Redactor::new(facts.secrets.iter().cloned());
    let log = std::fs::read_to_string(&log_path).map_err(io(&log_path))?;
    let log = scrub(&log, &mut redactor);
    let approvals_path = dir.join(APPROVALS);
    let approvals = match std::fs::read_to_string(&approvals_path) {
        Ok(text) => scrub(&text, &mut redactor),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io(&approvals_path)(e)),
    };
    let mut images = read_images(&dir.join("images"))?;
    let mut log = log;
    if let Some(jpeg) = facts.jpeg {
        shrink(&mut images, &mut log, jpeg);
    }
    let doms: BTreeMap<String, String> = dom::read_doms(&dir.join(DOM_DIR))?
        .into_iter()
        .map(|(name, html)| (name, redactor.redact_text(&html)))
        .collect();
    let doms = dom::fit(&doms, &mut log, facts.dom);
    let videos = match facts.video {
        VideoInTrace::Leave => BTreeMap::new(),
        VideoInTrace::Include => read_videos(dir)?,
    };
    let run = read_log(&log);
    let start = run.start.clone().unwrap_or(Value::Null);
    let text = |v: &Value| v.as_str().map(str::to_owned);
    let manifest = Manifest {
        format: FORMAT.to_owned(),
        version: VERSION,
        run_id: facts.run_id.clone(),
        provider: text(&start["provider"]),
        api: facts.api.clone(),
        model: facts.model.clone().or_else(|| text(&start["model"])),
        task: text(&start["task"]).map(|t| redactor.redact_text(&t)),
        started_unix_ms: start["unix_ms"].as_u64(),
        ended_unix_ms: std::fs::metadata(&log_path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(unix_ms),
        counts: Counts {
            steps: run.steps.len() as u64,
            requests: count_kind(&log, "request"),
            actions: count_kind(&log, "action"),
            approvals: approvals.lines().filter(|l| !l.trim().is_empty()).count() as u64,
            images: images.len() as u64,
            redactions: redactor.replaced,
            videos: videos.len() as u64,
            doms: doms.kept as u64,
        },
        written_by: format!("hands {}", env!("CARGO_PKG_VERSION")),
    };
    let manifest_text = serde_json::to_string_pretty(&manifest).unwrap_or_default();
    let mut entries: Vec<(String, &[u8])> = vec![
        (MANIFEST.to_owned(), manifest_text.as_bytes()),
        (LOG.to_owned(), log.as_bytes()),
        (APPROVALS.to_owned(), approvals.as_bytes()),
    ];
    entries.extend(
        images
            .iter()
            .map(|(n, b)| (format!("images/{n}"), b.as_slice())),
    );
    entries.extend(
        doms.entries
            .iter()
            .map(|(n, b)| (format!("{DOM_DIR}/{n}"), b.as_slice())),
    );
    for (name, bytes) in &entries {
        if let Some(len) = redactor.leak(bytes) {
            return Err(TraceError::SecretLeft(len, name.clone()));
        }
    }
    // Pictures, not text: not searched for secrets.
    entries.extend(
        videos
            .iter()
            .map(|(n, b)| (format!("{VIDEO_DIR}{n}"), b.as_slice())),
    );
    write_archive(out, &entries)?;
    Ok(manifest)
}

fn scrub(text: &str, redactor: &mut Redactor) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        out.push_str(&redactor.redact_line(line));
        out.push('\n');
    }
    out
}

fn count_kind(log: &str, kind: &str) -> u64 {
    log.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["kind"] == kind)
        .count() as u64
}

/// Where a trace keeps the videos.
const VIDEO_DIR: &str = "video/";

/// The run directory's videos, by name.
fn read_videos(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>, TraceError> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let path = entry.map_err(io(dir))?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if crate::steps::video_name_ok(name) && path.is_file() {
            out.insert(name.to_owned(), std::fs::read(&path).map_err(io(&path))?);
        }
    }
    Ok(out)
}

/// The images folder's PNG and JPEG files, by name.
fn read_images(images: &Path) -> Result<BTreeMap<String, Vec<u8>>, TraceError> {
    let mut out = BTreeMap::new();
    let entries = match std::fs::read_dir(images) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(io(images)(e)),
    };
    for entry in entries {
        let path = entry.map_err(io(images))?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if image_name_ok(name) {
            let bytes = std::fs::read(&path).map_err(io(&path))?;
            out.insert(name.to_owned(), bytes);
        }
    }
    Ok(out)
}

/// A bare PNG or JPEG file name: no separators, no `..`.
pub fn image_name_ok(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && (name.ends_with(".png") || name.ends_with(".jpg"))
}

fn write_archive(out: &Path, entries: &[(String, &[u8])]) -> Result<(), TraceError> {
    let partial = out.with_extension("hands.partial");
    let file = std::fs::File::create(&partial).map_err(io(&partial))?;
    let gz = flate2::write::GzEncoder::new(file, flate2::Compression::best());
    let mut tar = tar::Builder::new(gz);
    // A screenshot identical to one stored before is a hard link to it (no bytes): gzip's 32 KB
    // window cannot see a repeat of a larger file.
    let mut stored: std::collections::HashMap<&[u8], &str> = std::collections::HashMap::new();
    for (name, bytes) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_mode(0o644);
        header.set_mtime(0);
        let first = name
            .starts_with("images/")
            .then(|| stored.get(bytes).copied())
            .flatten();
        match first {
            Some(first) => {
                header.set_size(0);
                header.set_entry_type(tar::EntryType::Link);
                tar.append_link(&mut header, name, first)
                    .map_err(io(&partial))?;
            }
            None => {
                header.set_size(bytes.len() as u64);
                header.set_entry_type(tar::EntryType::Regular);
                tar.append_data(&mut header, name, *bytes)
                    .map_err(io(&partial))?;
                if name.starts_with("images/") {
                    stored.insert(bytes, name);
                }
            }
        }
    }
    let gz = tar.into_inner().map_err(io(&partial))?;
    let mut file = gz.finish().map_err(io(&partial))?;
    file.flush().map_err(io(&partial))?;
    file.sync_all().map_err(io(&partial))?;
    std::fs::rename(&partial, out).map_err(io(out))
}

/// A trace read back.
#[derive(Debug, Clone)]
pub struct Trace {
    /// Its manifest.
    pub manifest: Manifest,
    /// The (scrubbed) log.
    pub log: String,
    /// The approvals, one JSON object a line.
    pub approvals: String,
    /// The screenshots, by file name (without `images/`).
    pub images: BTreeMap<String, Vec<u8>>,
    /// The videos, by file name (without `video/`).
    pub videos: BTreeMap<String, Vec<u8>>,
    /// The DOM snapshots, by file name (without `dom/`).
    pub doms: BTreeMap<String, Vec<u8>>,
}

impl Trace {
    /// Reads the trace at `path` whole, checking its layout; a truncated or corrupted file is
    /// [`TraceError::Corrupt`].
    pub fn open(path: &Path) -> Result<Trace, TraceError> {
        let file = std::fs::File::open(path).map_err(io(path))?;
        let corrupt = |reason: String| TraceError::Corrupt {
            path: path.to_owned(),
            reason,
        };
        let gz = flate2::read::GzDecoder::new(std::io::BufReader::new(file));
        let mut archive = tar::Archive::new(gz.take(MAX_UNPACKED));
        let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        let entries = archive.entries().map_err(|e| corrupt(e.to_string()))?;
        for entry in entries {
            let mut entry = entry.map_err(|e| corrupt(e.to_string()))?;
            let name = entry
                .path()
                .map_err(|e| corrupt(e.to_string()))?
                .to_string_lossy()
                .into_owned();
            if files.is_empty() && name != MANIFEST {
                return Err(corrupt(format!(
                    "its first entry is {name:?}, not {MANIFEST}"
                )));
            }
            let mut bytes = Vec::new();
            if entry.header().entry_type() == tar::EntryType::Link {
                // A repeated screenshot: the bytes of the entry it links to (stored before it).
                let target = entry
                    .link_name()
                    .map_err(|e| corrupt(e.to_string()))?
                    .map(|t| t.to_string_lossy().into_owned())
                    .unwrap_or_default();
                bytes = files.get(&target).cloned().ok_or_else(|| {
                    corrupt(format!("{name} links to {target:?}, not stored before it"))
                })?;
            } else {
                entry
                    .read_to_end(&mut bytes)
                    .map_err(|e| corrupt(format!("{name}: {e}")))?;
            }
            files.insert(name, bytes);
        }
        // The gzip trailer (CRC and length) is checked only once the stream is read to its end.
        let mut rest = archive.into_inner();
        std::io::copy(&mut rest, &mut std::io::sink()).map_err(|e| corrupt(e.to_string()))?;
        if rest.limit() == 0 {
            return Err(corrupt(format!(
                "it unpacks to more than {MAX_UNPACKED} bytes"
            )));
        }
        Trace::from_files(path, files)
    }

    fn from_files(path: &Path, mut files: BTreeMap<String, Vec<u8>>) -> Result<Trace, TraceError> {
        let corrupt = |reason: String| TraceError::Corrupt {
            path: path.to_owned(),
            reason,
        };
        let manifest = files
            .remove(MANIFEST)
            .ok_or_else(|| corrupt("no manifest.json: an empty file?".to_owned()))?;
        let head: Value = serde_json::from_slice(&manifest)
            .map_err(|e| corrupt(format!("manifest.json: {e}")))?;
        if head["format"] != FORMAT {
            return Err(corrupt(format!(
                "manifest.json names format {}",
                head["format"]
            )));
        }
        let version = head["version"].as_u64().unwrap_or(0) as u32;
        if version > VERSION {
            return Err(TraceError::Version {
                path: path.to_owned(),
                version,
            });
        }
        let manifest: Manifest =
            serde_json::from_value(head).map_err(|e| corrupt(format!("manifest.json: {e}")))?;
        let text = |bytes: Option<Vec<u8>>, name: &str| {
            String::from_utf8(bytes.unwrap_or_default())
                .map_err(|_| corrupt(format!("{name} is not UTF-8")))
        };
        let log = files
            .remove(LOG)
            .ok_or_else(|| corrupt("no log.jsonl".to_owned()))?;
        let log = text(Some(log), LOG)?;
        let approvals = text(files.remove(APPROVALS), APPROVALS)?;
        let videos = files
            .iter()
            .filter_map(|(name, bytes)| {
                let file = name.strip_prefix(VIDEO_DIR)?;
                crate::steps::video_name_ok(file).then(|| (file.to_owned(), bytes.clone()))
            })
            .collect();
        let doms = dom::unpack(&files).map_err(corrupt)?;
        let images = files
            .into_iter()
            .filter_map(|(name, bytes)| {
                let file = name.strip_prefix("images/")?;
                image_name_ok(file).then(|| (file.to_owned(), bytes))
            })
            .collect();
        Ok(Trace {
            manifest,
            log,
            approvals,
            images,
            videos,
            doms,
        })
    }

    /// The approvals as JSON values (lines that are not JSON skipped).
    pub fn approval_values(&self) -> Vec<Value> {
        self.approvals
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

#[cfg(test)]
mod tests;
