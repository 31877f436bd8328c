//! One driver operation, run as an asyncio awaitable or to completion with the GIL released,
//! with cancellation either way; and what an operation returns, converted to Python once.

use std::future::Future;
use std::time::Duration;

use hands_core::CancellationToken;
use hands_core::image::EncodedImage;
use pyo3::prelude::*;
use serde_json::Value;

use crate::errors::Error;

/// How often a `cancelled` callable (and, for blocking calls, Ctrl-C) is checked.
const CANCEL_POLL: Duration = Duration::from_millis(20);

/// How long an operation may take to stop after its token is cancelled before it is abandoned
/// (its effect, if it still lands, is what any cancelled action leaves behind).
const CANCEL_GRACE: Duration = Duration::from_millis(500);

/// An image a driver produced: a screenshot or a zoom, encoded, in base64.
#[pyclass(frozen, module = "hands._hands", name = "Image")]
pub struct Image {
    /// Standard base64 with padding.
    #[pyo3(get)]
    base64: String,
    /// `image/png` or `image/jpeg`.
    #[pyo3(get)]
    media_type: &'static str,
    /// Width in pixels (the screenshot's: what coordinates refer to).
    #[pyo3(get)]
    width: u32,
    /// Height in pixels.
    #[pyo3(get)]
    height: u32,
}

#[pymethods]
impl Image {
    /// `data:<media type>;base64,<data>`.
    fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.base64)
    }

    fn __repr__(&self) -> String {
        format!(
            "Image({}x{}, {}, {} base64 bytes)",
            self.width,
            self.height,
            self.media_type,
            self.base64.len()
        )
    }
}

impl From<EncodedImage> for Image {
    fn from(image: EncodedImage) -> Image {
        Image {
            media_type: image.media_type.mime(),
            width: image.size.width,
            height: image.size.height,
            base64: image.base64,
        }
    }
}

/// What an operation returns.
pub enum Out {
    /// Nothing.
    None,
    /// A string.
    Text(String),
    /// A JSON document (a structured read, a state, a file outcome), given to Python as dicts.
    Json(Value),
    /// An image.
    Image(Image),
    /// A point `(x, y)`.
    Point(u32, u32),
    /// A flag.
    Bool(bool),
    /// A Python object built by the operation.
    Object(Py<PyAny>),
}

impl Out {
    fn into_py(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(match self {
            Out::None => py.None(),
            Out::Text(text) => text.into_pyobject(py)?.into_any().unbind(),
            Out::Json(value) => py
                .import("json")?
                .call_method1("loads", (value.to_string(),))?
                .unbind(),
            Out::Image(image) => Py::new(py, image)?.into_any(),
            Out::Point(x, y) => (x, y).into_pyobject(py)?.into_any().unbind(),
            Out::Bool(flag) => pyo3::types::PyBool::new(py, flag)
                .to_owned()
                .into_any()
                .unbind(),
            Out::Object(object) => object,
        })
    }
}

/// Why a watched operation stopped early.
enum Stop {
    /// The `cancelled` callable said so.
    Cancelled,
    /// A signal handler raised (Ctrl-C in a blocking call).
    Raised(PyErr),
}

/// Whether the caller wants the operation stopped: its `cancelled` callable answers true (a
/// callable that raises counts as a stop request: failing closed), or, in a blocking call on the
/// main thread, a signal handler raised.
fn should_stop(cancelled: Option<&Py<PyAny>>, signals: bool) -> Option<Stop> {
    Python::attach(|py| {
        if signals && let Err(e) = py.check_signals() {
            return Some(Stop::Raised(e));
        }
        let callable = cancelled?;
        match callable.call0(py).and_then(|v| v.bind(py).is_truthy()) {
            Ok(false) => None,
            Ok(true) | Err(_) => Some(Stop::Cancelled),
        }
    })
}

/// Runs `op` until it finishes, or until the caller asks it to stop: then its token is
/// cancelled, it gets [`CANCEL_GRACE`] to finish (its own result wins if it does), and the
/// answer is [`Error::Cancelled`]. Dropping this future (a cancelled asyncio task) cancels the
/// token too.
async fn watched<F>(
    op: F,
    token: CancellationToken,
    cancelled: Option<Py<PyAny>>,
    calling: Calling,
) -> Result<Out, PyErr>
where
    F: Future<Output = Result<Out, Error>>,
{
    // Signal handlers are checked in a blocking call (a no-op off the main thread).
    let signals = calling == Calling::Blocking;
    let _guard = token.clone().drop_guard();
    tokio::pin!(op);
    if cancelled.is_none() && !signals {
        return op.await.map_err(PyErr::from);
    }
    let mut tick = tokio::time::interval(CANCEL_POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let stop = loop {
        tokio::select! {
            biased;
            result = &mut op => return result.map_err(PyErr::from),
            _ = tick.tick() => {
                if let Some(stop) = should_stop(cancelled.as_ref(), signals) {
                    break stop;
                }
            }
        }
    };
    token.cancel();
    let finished = tokio::time::timeout(CANCEL_GRACE, &mut op).await;
    match (stop, finished) {
        (Stop::Raised(e), _) => Err(e),
        (Stop::Cancelled, Ok(Err(_)) | Err(_)) => Err(Error::Cancelled.into()),
        (Stop::Cancelled, Ok(Ok(out))) => Ok(out),
    }
}

/// How a call from Python runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Calling {
    /// As an asyncio awaitable.
    Awaitable,
    /// To completion on the calling thread, with the GIL released (`blocking=True`, what the
    /// sync wrappers pass).
    Blocking,
}

impl Calling {
    /// The Python side's `blocking` argument.
    pub fn from_blocking(blocking: bool) -> Calling {
        if blocking {
            Calling::Blocking
        } else {
            Calling::Awaitable
        }
    }
}

/// Runs the operation `make` builds (given its cancellation token): as an asyncio awaitable,
/// or, [`Calling::Blocking`], to completion on this thread with the GIL released.
pub fn run<F>(
    py: Python<'_>,
    calling: Calling,
    cancelled: Option<Py<PyAny>>,
    make: impl FnOnce(CancellationToken) -> F,
) -> PyResult<Py<PyAny>>
where
    F: Future<Output = Result<Out, Error>> + Send + 'static,
{
    let token = CancellationToken::new();
    let op = make(token.clone());
    if calling == Calling::Blocking {
        // Signals can only be checked on the main thread; elsewhere the check is a no-op.
        let out = py.detach(|| {
            pyo3_async_runtimes::tokio::get_runtime()
                .block_on(watched(op, token, cancelled, calling))
        })?;
        out.into_py(py)
    } else {
        let awaitable = pyo3_async_runtimes::tokio::future_into_py(py, async move {
            let out = watched(op, token, cancelled, calling).await?;
            Python::attach(|py| out.into_py(py))
        })?;
        Ok(awaitable.unbind())
    }
}

/// Parses the JSON text the Python side sends.
pub fn parse_json(text: &str) -> Result<Value, Error> {
    serde_json::from_str(text).map_err(|e| Error::Argument(format!("invalid JSON input: {e}")))
}
