//! `hands runs`: the runs in a directory with their status; one run shown whole (its identity,
//! and each call of an interrupted turn with what is known of it); and reconciliation — a
//! person records what an uncertain call really did, so the run can resume without repeating
//! it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use hands_runner::ledger::{RunReport, SqliteLedger, Verdict, reconcile};
use serde_json::{Value, json};

use crate::cli::{RunsAction, RunsArgs};
use crate::resume::{LEDGER_FILE, OLD_CHECKPOINT_FILE, ledger_path};
use crate::stdout::Out;

/// Where `hands run` puts run directories by default.
const DEFAULT_DIR: &str = "runs";

pub fn run(args: RunsArgs) -> anyhow::Result<ExitCode> {
    match args.action {
        None => list(&args.dir.unwrap_or_else(|| PathBuf::from(DEFAULT_DIR))),
        Some(RunsAction::Show { run_dir, json }) => show(&run_dir, json),
        Some(RunsAction::Reconcile {
            run_dir,
            call_id,
            happened,
            not_happened: _,
            note,
        }) => {
            let verdict = if happened {
                Verdict::Happened
            } else {
                Verdict::DidNotHappen
            };
            record(&run_dir, &call_id, verdict, note)
        }
        Some(RunsAction::Export {
            run_dir,
            out,
            jpeg,
            as_seen,
            video,
        }) => {
            let images = match (jpeg, as_seen) {
                (true, _) => Screenshots::Jpeg,
                (false, true) => Screenshots::AsSeen,
                (false, false) => Screenshots::Fit,
            };
            let video = if video {
                hands_view::trace::VideoInTrace::Include
            } else {
                hands_view::trace::VideoInTrace::Leave
            };
            export(&run_dir, &out, images, video)
        }
    }
}

/// Names of environment variables whose values are secrets a trace must not hold.
fn secret_name(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSPHRASE"]
        .iter()
        .any(|end| name.ends_with(end))
}

/// How a trace keeps the screenshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Screenshots {
    /// As the model saw them.
    AsSeen,
    /// PNGs as JPEG when smaller.
    Jpeg,
    /// Each within [`TRACE_IMAGE_BUDGET`] (the default).
    Fit,
}

/// The JPEG quality of a trace's screenshots: text stays readable.
const TRACE_JPEG_QUALITY: u8 = 80;

/// The most bytes one screenshot takes in a trace by default: 49 screenshots and the log of a
/// 50-step run stay under 2 MB whatever the screens show.
const TRACE_IMAGE_BUDGET: usize = 36 * 1024;

/// A screenshot for a trace within [`TRACE_IMAGE_BUDGET`]: `None` (kept as the model saw it)
/// when it fits already; else a JPEG, at the model's size when that fits, else downscaled
/// step by step (the log keeps the size the model saw, so the view still marks the points).
fn fit_screenshot(bytes: &[u8]) -> Option<Vec<u8>> {
    use hands_core::image::{ImageFormat, encode};
    if bytes.len() <= TRACE_IMAGE_BUDGET {
        return None;
    }
    let pixels = decode_png(bytes)?;
    let size = pixels.size();
    let steps = [(100, 70), (75, 65), (50, 60), (35, 55), (25, 50)];
    let mut smallest = None;
    for (percent, quality) in steps {
        let to = hands_core::geometry::Size::new(
            (size.width * percent / 100).max(1),
            (size.height * percent / 100).max(1),
        )?;
        let scaled = if percent == 100 {
            pixels.clone()
        } else {
            pixels.resize(to).ok()?
        };
        let jpeg = encode(&scaled, ImageFormat::Jpeg { quality }).ok()?.bytes();
        let fits = jpeg.len() <= TRACE_IMAGE_BUDGET;
        smallest = Some(jpeg);
        if fits {
            break;
        }
    }
    smallest
}

/// A PNG's pixels (`None` when it cannot be decoded).
fn decode_png(bytes: &[u8]) -> Option<hands_core::image::Pixels> {
    use hands_core::image::{PixelFormat, Pixels};
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().ok()?;
    let mut buf = vec![0; reader.output_buffer_size()?];
    let frame = reader.next_frame(&mut buf).ok()?;
    buf.truncate(frame.buffer_size());
    let format = match frame.color_type {
        png::ColorType::Rgb => PixelFormat::Rgb,
        png::ColorType::Rgba => PixelFormat::Rgbx,
        _ => return None,
    };
    let size = hands_core::geometry::Size::new(frame.width, frame.height)?;
    Pixels::new(size, format, buf).ok()
}

/// A PNG screenshot as a JPEG (`None` when it cannot be decoded).
fn png_to_jpeg(bytes: &[u8]) -> Option<Vec<u8>> {
    use hands_core::image::{ImageFormat, encode};
    let pixels = decode_png(bytes)?;
    let jpeg = encode(
        &pixels,
        ImageFormat::Jpeg {
            quality: TRACE_JPEG_QUALITY,
        },
    )
    .ok()?;
    Some(jpeg.bytes())
}

/// `hands runs export RUN_DIR -o FILE`: the run as one trace file, with the identity its ledger
/// holds and the values of this environment's secret variables searched for and removed.
fn export(
    run_dir: &Path,
    out: &Path,
    images: Screenshots,
    video: hands_view::trace::VideoInTrace,
) -> anyhow::Result<ExitCode> {
    let identity = report(run_dir).ok();
    let facts = hands_view::trace::RunFacts {
        run_id: identity.as_ref().map(|r| r.run_id.clone()),
        api: identity
            .as_ref()
            .and_then(|r| r.identity.as_ref())
            .map(|i| i.api.clone()),
        model: identity
            .as_ref()
            .and_then(|r| r.identity.as_ref())
            .map(|i| i.model.clone()),
        secrets: std::env::vars()
            .filter(|(name, _)| secret_name(name))
            .map(|(_, value)| value)
            .collect(),
        jpeg: match images {
            Screenshots::AsSeen => None,
            Screenshots::Jpeg => Some(png_to_jpeg as hands_view::trace::Reencode),
            Screenshots::Fit => Some(fit_screenshot as hands_view::trace::Reencode),
        },
        video,
        dom: match images {
            Screenshots::AsSeen => hands_view::trace::DomInTrace::All,
            _ => hands_view::trace::DomInTrace::default(),
        },
    };
    let manifest = hands_view::trace::export(run_dir, out, &facts)?;
    let size = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0);
    let c = &manifest.counts;
    eprintln!(
        "hands runs: {} written ({size} bytes): {} steps, {} actions, {} approvals, {} screenshots, {} DOM snapshots, {} videos, {} secrets removed. Open it with `hands view {}`.",
        out.display(),
        c.steps,
        c.actions,
        c.approvals,
        c.images,
        c.doms,
        c.videos,
        c.redactions,
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn report(run_dir: &Path) -> anyhow::Result<RunReport> {
    let path = ledger_path(run_dir);
    if !path.exists() && run_dir.join(OLD_CHECKPOINT_FILE).exists() {
        anyhow::bail!(
            "{} was written by an older hands (checkpoint.json): it cannot be shown or resumed by this version",
            run_dir.display()
        );
    }
    SqliteLedger::report(&path).with_context(|| format!("reading {}", path.display()))
}

fn list(dir: &Path) -> anyhow::Result<ExitCode> {
    let mut out = Out::lock();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    entries.sort();
    let mut n_runs = 0;
    for run_dir in entries {
        let name = run_dir.display();
        if run_dir.join(LEDGER_FILE).exists() {
            n_runs += 1;
            match report(&run_dir) {
                Ok(report) => {
                    let (model, max_steps) = report
                        .identity
                        .as_ref()
                        .map_or(("?", 0), |i| (i.model.as_str(), i.max_steps));
                    writeln!(
                        out,
                        "{name}  {}  {}/{} requests  {model}",
                        report.status(),
                        report.steps_used,
                        max_steps
                    )?;
                }
                Err(e) => writeln!(out, "{name}  unreadable: {e:#}")?,
            }
        } else if run_dir.join(OLD_CHECKPOINT_FILE).exists() {
            n_runs += 1;
            writeln!(
                out,
                "{name}  old format (checkpoint.json): cannot be resumed by this hands"
            )?;
        }
    }
    if n_runs == 0 {
        writeln!(out, "no runs in {}", dir.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 160 {
        format!("{}…", text.chars().take(160).collect::<String>())
    } else {
        text
    }
}

fn show(run_dir: &Path, as_json: bool) -> anyhow::Result<ExitCode> {
    let report = report(run_dir)?;
    let mut out = Out::lock();
    let launch: Value = report
        .meta
        .get("hands.launch")
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or(Value::Null);
    let calls: Vec<Value> = report
        .pending
        .iter()
        .flat_map(|turn| &turn.calls)
        .map(|c| {
            json!({"call_id": c.call_id, "name": c.name, "input": c.input,
                "state": c.state.label(), "uncertain": c.state.is_uncertain()})
        })
        .collect();
    if as_json {
        let identity = report.identity.as_ref().map(|i| {
            json!({"run_id": i.run_id, "api": i.api, "model": i.model, "max_steps": i.max_steps,
                "tools_fingerprint": i.tools_fingerprint()})
        });
        let shown = json!({
            "run_dir": run_dir, "run_id": report.run_id, "status": report.status(),
            "identity": identity, "checkpoints": report.checkpoints,
            "latest_revision": report.latest_revision, "steps_used": report.steps_used,
            "owner_pid": report.owner, "pending_turn": report.pending.as_ref().map(|_| &calls),
            "launch": launch,
            "sandbox": report.meta.get(crate::resume::SANDBOX_KEY),
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&shown)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(out, "run {} in {}", report.run_id, run_dir.display())?;
    writeln!(out, "status: {}", report.status())?;
    if let Some(identity) = &report.identity {
        let tools: Vec<String> = identity
            .tools
            .iter()
            .filter_map(|t| {
                t.get("name")
                    .or_else(|| t.get("server_label"))
                    .or_else(|| t.get("type"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .collect();
        writeln!(
            out,
            "identity: {} API, model {}, step limit {}, tools {} ({})",
            identity.api,
            identity.model,
            identity.max_steps,
            tools.join(", "),
            identity.tools_fingerprint()
        )?;
    }
    if let Some(task) = launch.get("task").and_then(Value::as_str) {
        writeln!(out, "task: {task}")?;
    }
    let sandbox = report.meta.get(crate::resume::SANDBOX_KEY).cloned();
    writeln!(
        out,
        "sandbox: {}",
        sandbox
            .as_deref()
            .unwrap_or("not recorded (a run from before jails)")
    )?;
    writeln!(
        out,
        "requests used: {}; checkpoints: {} (latest revision {})",
        report.steps_used, report.checkpoints, report.latest_revision
    )?;
    let Some(turn) = &report.pending else {
        return Ok(ExitCode::SUCCESS);
    };
    writeln!(out, "the last turn was interrupted; its calls:")?;
    for call in &turn.calls {
        writeln!(
            out,
            "  {}  {}  {}  {}",
            call.call_id,
            call.name,
            call.state.label(),
            short(&call.input)
        )?;
    }
    if turn.uncertain().next().is_some() {
        writeln!(
            out,
            "Check in the environment what each UNCERTAIN call did, then record it:\n  \
             hands runs reconcile {dir} CALL_ID --happened      (or --not-happened; --note \"what you saw\")\n\
             and resume with `hands run --resume {dir}`. hands never runs an uncertain call again.",
            dir = run_dir.display()
        )?;
    } else {
        writeln!(
            out,
            "Resume with `hands run --resume {}`: calls that ran keep their results, calls that did not are not run again unless the model asks anew.",
            run_dir.display()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn record(
    run_dir: &Path,
    call_id: &str,
    verdict: Verdict,
    note: Option<String>,
) -> anyhow::Result<ExitCode> {
    let path = ledger_path(run_dir);
    let mut ledger =
        SqliteLedger::open(&path).with_context(|| format!("opening {}", path.display()))?;
    let saved = reconcile(&mut ledger, call_id, verdict, note)?;
    let left = saved.pending().map_or(0, |t| t.uncertain().count());
    eprintln!(
        "hands runs: call {call_id} recorded as {} (revision {}).",
        match verdict {
            Verdict::Happened => "having taken effect",
            Verdict::DidNotHappen => "not having taken effect",
        },
        saved.revision
    );
    if left > 0 {
        eprintln!(
            "{left} uncertain call(s) left: `hands runs show {}`",
            run_dir.display()
        );
    } else {
        eprintln!("Resume with `hands run --resume {}`.", run_dir.display());
    }
    Ok(ExitCode::SUCCESS)
}
