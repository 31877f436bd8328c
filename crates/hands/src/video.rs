//! `hands run --video` (issue 22): a screencast of the run written to `video.webm` in its run
//! directory. The pictures come from the desktop (captured from the X server) or, for a run
//! with a browser only, from the browser's `Page.startScreencast`; they are piped as JPEG to
//! `ffmpeg` (`image2pipe`, MJPEG in, VP8 out) at a constant [`FPS`], the latest picture
//! repeated while the screen is still, so the video's time is the run's time. The run's end —
//! also after Ctrl-C — closes ffmpeg's input and waits for it to finish the file.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use hands_cdp::screencast::{FrameBox, Screencast};
use hands_core::CancellationToken;
use hands_core::image::{ImageFormat, encode};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::process::{Child, ChildStdin, Command};
use tokio::task::JoinHandle;

/// The video's file in the run directory.
pub const VIDEO_FILE: &str = "video.webm";

/// Frames per second of the video (pictures are sampled, or repeated, at this rate).
pub const FPS: u32 = 5;

/// JPEG quality of the frames fed to ffmpeg.
const JPEG_QUALITY: u8 = 70;

/// The largest browser frame asked for.
const BROWSER_BOX: FrameBox = FrameBox {
    width: 1280,
    height: 800,
};

/// At most this much of ffmpeg's stderr is kept for an error.
const STDERR_KEPT: usize = 4000;

/// Where ffmpeg is, or an error saying how to get it (`--video` is refused at start without it).
pub fn find_ffmpeg() -> anyhow::Result<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("ffmpeg"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            anyhow::anyhow!(
                "--video needs ffmpeg on PATH to encode the WebM (install it, e.g. \
                 `apt-get install ffmpeg`), or run without --video"
            )
        })
}

/// What the video shows.
pub enum VideoSource {
    /// The desktop, by a connection of its own ([`hands_x11::X11Desktop::another_connection`]),
    /// captured [`FPS`] times a second.
    Desktop(Box<hands_x11::X11Desktop>),
    /// The browser's active tab, by its screencast.
    Browser(Screencast),
}

/// What a finished video holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VideoStats {
    /// Frames written (repeats included).
    pub frames: u64,
    /// Seconds of video.
    pub seconds: f64,
    /// Bytes of the file.
    pub bytes: u64,
}

/// A video being recorded: [`Recorder::finish`] ends it.
pub struct Recorder {
    stop: CancellationToken,
    task: JoinHandle<anyhow::Result<VideoStats>>,
}

impl Recorder {
    /// Starts recording `source` into `out` (a `.webm`) with the ffmpeg at `ffmpeg`.
    pub fn start(ffmpeg: &Path, out: &Path, source: VideoSource) -> anyhow::Result<Recorder> {
        let stop = CancellationToken::new();
        let out = out.to_owned();
        let mut child = Command::new(ffmpeg)
            .args(["-hide_banner", "-loglevel", "error", "-y"])
            .args(["-f", "image2pipe", "-c:v", "mjpeg", "-framerate"])
            .arg(FPS.to_string())
            .args(["-i", "pipe:0"])
            // VP8 wants even sizes; a frame of another size (a resized window) is fitted.
            .args(["-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2"])
            .args([
                "-c:v",
                "libvpx",
                "-pix_fmt",
                "yuv420p",
                "-deadline",
                "realtime",
            ])
            .args(["-cpu-used", "8", "-b:v", "500k", "-crf", "30", "-g"])
            .arg((FPS * 10).to_string())
            .arg(&out)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            // Its own process group: the terminal's Ctrl-C reaches hands, which ends the file.
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", ffmpeg.display()))?;
        let stdin = child.stdin.take().context("ffmpeg's stdin")?;
        let task = tokio::spawn(record(child, stdin, out, source, stop.clone()));
        Ok(Recorder { stop, task })
    }

    /// Stops recording and waits for ffmpeg to finish the file.
    pub async fn finish(self) -> anyhow::Result<VideoStats> {
        self.stop.cancel();
        self.task.await.context("the video's recorder")?
    }
}

/// Feeds frames to ffmpeg until `stop`, then closes its input and waits for it.
async fn record(
    mut child: Child,
    mut stdin: ChildStdin,
    out: PathBuf,
    source: VideoSource,
    stop: CancellationToken,
) -> anyhow::Result<VideoStats> {
    let mut stderr = child.stderr.take().context("ffmpeg's stderr")?;
    let errors = tokio::spawn(async move {
        let mut text = Vec::new();
        let _ = stderr.read_to_end(&mut text).await;
        let start = text.len().saturating_sub(STDERR_KEPT);
        String::from_utf8_lossy(&text[start..]).into_owned()
    });
    let mut pictures = Pictures::new(source, stop.clone())?;
    let started = Instant::now();
    let period = Duration::from_secs(1) / FPS;
    let mut frames = 0u64;
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut fed = Ok(());
    loop {
        tokio::select! {
            () = stop.cancelled() => break,
            _ = tick.tick() => {}
        }
        let Some(jpeg) = pictures.next().await else {
            continue;
        };
        // As many frames as the time since the start calls for: a slow capture is made up for
        // by repeats, so the video keeps the run's time.
        let due = (started.elapsed().as_secs_f64() * f64::from(FPS)).floor() as u64 + 1;
        while frames < due {
            if let Err(e) = stdin.write_all(&jpeg).await {
                fed = Err(e);
                break;
            }
            frames += 1;
        }
        if fed.is_err() {
            break;
        }
    }
    let _ = stdin.shutdown().await;
    drop(stdin);
    let status = child.wait().await.context("waiting for ffmpeg")?;
    let errors = errors.await.unwrap_or_default();
    if !status.success() || fed.is_err() {
        anyhow::bail!(
            "ffmpeg could not write {} ({status}): {}",
            out.display(),
            errors.trim()
        );
    }
    if frames == 0 {
        anyhow::bail!("no picture was recorded for {}", out.display());
    }
    Ok(VideoStats {
        frames,
        seconds: frames as f64 / f64::from(FPS),
        bytes: std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0),
    })
}

/// The latest picture of the source, as JPEG.
enum Pictures {
    Desktop(Box<hands_x11::X11Desktop>),
    Browser(tokio::sync::watch::Receiver<Option<Arc<hands_cdp::screencast::Frame>>>),
}

impl Pictures {
    fn new(source: VideoSource, stop: CancellationToken) -> anyhow::Result<Pictures> {
        Ok(match source {
            VideoSource::Desktop(desktop) => Pictures::Desktop(desktop),
            VideoSource::Browser(cast) => {
                Pictures::Browser(cast.start(BROWSER_BOX, JPEG_QUALITY, stop))
            }
        })
    }

    /// The picture now; `None` before the first one (or when a capture failed).
    async fn next(&mut self) -> Option<Vec<u8>> {
        match self {
            Pictures::Desktop(desktop) => {
                use hands_core::Desktop as _;
                let pixels = desktop.capture().await.ok()?;
                let image = encode(
                    &pixels,
                    ImageFormat::Jpeg {
                        quality: JPEG_QUALITY,
                    },
                )
                .ok()?;
                Some(image.bytes())
            }
            Pictures::Browser(frames) => {
                let frame = frames.borrow().clone()?;
                Some(frame.jpeg.clone())
            }
        }
    }
}
