//! `hands._hands.testing` (feature `testing`): what the Python tests and benchmarks need beside
//! the drivers — hands-sim, the local stand-in of the model APIs, driven by a Python policy, and
//! the Harbour Hotel booking app with its database reader.

use std::sync::{Arc, Mutex};

use hands_demo_apps::{BookingApp, BookingAppConfig, bookings};
use hands_sim::{SimConfig, SimServer, Turn};
use pyo3::prelude::*;
use serde_json::{Value, json};

use crate::errors::Error;

/// Registers the submodule.
pub fn register(parent: &Bound<'_, PyModule>) -> PyResult<()> {
    let m = PyModule::new(parent.py(), "testing")?;
    m.add_class::<Sim>()?;
    m.add_class::<Booking>()?;
    parent.add_submodule(&m)?;
    Ok(())
}

/// A turn from the JSON the Python policy returned: `{"blocks": [...]}` (Anthropic),
/// `{"items": [...]}` (OpenAI) or `{"text": "..."}` (either).
fn turn(answer: &Value) -> Result<Turn, String> {
    match (
        answer.get("blocks"),
        answer.get("items"),
        answer.get("text"),
    ) {
        (Some(Value::Array(blocks)), None, None) => Ok(Turn::Blocks(blocks.clone())),
        (None, Some(Value::Array(items)), None) => Ok(Turn::Items(items.clone())),
        (None, None, Some(Value::String(text))) => Ok(Turn::text(text.clone())),
        _ => Err(format!(
            "a policy answers {{\"blocks\": [...]}}, {{\"items\": [...]}} or {{\"text\": \"...\"}}, not {answer}"
        )),
    }
}

/// hands-sim on 127.0.0.1, answering every request with the turn `policy(request_json)`
/// returns (JSON text). A policy that raises answers with a text turn that ends the run, and
/// its error is kept in `policy_errors`.
#[pyclass(frozen, module = "hands._hands.testing", name = "Sim")]
pub struct Sim {
    server: Mutex<Option<SimServer>>,
    errors: Arc<Mutex<Vec<String>>>,
}

#[pymethods]
impl Sim {
    #[new]
    fn new(policy: Py<PyAny>) -> PyResult<Sim> {
        let errors = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&errors);
        let answer = move |request: &Value| -> Turn {
            let result = Python::attach(|py| -> PyResult<String> {
                policy.call1(py, (request.to_string(),))?.extract(py)
            })
            .map_err(|e| e.to_string())
            .and_then(|text| serde_json::from_str::<Value>(&text).map_err(|e| e.to_string()))
            .and_then(|value| turn(&value));
            result.unwrap_or_else(|why| {
                kept.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(why.clone());
                Turn::text(format!("The scripted policy failed: {why}"))
            })
        };
        let server = SimServer::start(SimConfig::with_policy(answer))
            .map_err(|e| Error::Start(e.to_string()))?;
        Ok(Sim {
            server: Mutex::new(Some(server)),
            errors,
        })
    }

    /// The Messages API base URL (`ANTHROPIC_BASE_URL`).
    #[getter]
    fn anthropic_base_url(&self) -> PyResult<String> {
        self.with(|s| s.base_url())
    }

    /// The Responses API base URL (`OPENAI_BASE_URL`, ending in `/v1`).
    #[getter]
    fn openai_base_url(&self) -> PyResult<String> {
        self.with(|s| s.openai_base_url())
    }

    /// Every request so far (JSON text): `[{"path", "status", "body", "violation"}]`.
    fn requests(&self) -> PyResult<String> {
        self.with(|s| {
            let list: Vec<Value> = s
                .requests()
                .iter()
                .map(|r| {
                    json!({
                        "path": r.path,
                        "status": r.status,
                        "body": r.body,
                        "violation": r.verdict.violation().map(|v| v.message.clone()),
                    })
                })
                .collect();
            Value::Array(list).to_string()
        })
    }

    /// The requests the stand-in rejected as the real API would, with why (JSON text).
    fn violations(&self) -> PyResult<String> {
        self.with(|s| {
            let list: Vec<Value> = s
                .violations()
                .iter()
                .map(|r| {
                    json!({
                        "path": r.path,
                        "status": r.status,
                        "violation": r.verdict.violation().map(|v| v.message.clone()),
                    })
                })
                .collect();
            Value::Array(list).to_string()
        })
    }

    /// The errors the policy raised.
    #[getter]
    fn policy_errors(&self) -> Vec<String> {
        self.errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Stops the server.
    fn close(&self, py: Python<'_>) {
        let server = self.server.lock().unwrap_or_else(|e| e.into_inner()).take();
        py.detach(move || drop(server));
    }
}

impl Sim {
    fn with<T>(&self, f: impl FnOnce(&SimServer) -> T) -> PyResult<T> {
        let guard = self.server.lock().unwrap_or_else(|e| e.into_inner());
        let server = guard
            .as_ref()
            .ok_or_else(|| Error::Start("the stand-in is closed".into()))?;
        Ok(f(server))
    }
}

/// The Harbour Hotel booking app on 127.0.0.1, with its own SQLite database.
#[pyclass(frozen, module = "hands._hands.testing", name = "Booking")]
pub struct Booking {
    app: Mutex<Option<BookingApp>>,
    base_url: String,
    db: std::path::PathBuf,
}

#[pymethods]
impl Booking {
    #[new]
    fn new(py: Python<'_>) -> PyResult<Booking> {
        let app = py
            .detach(|| {
                pyo3_async_runtimes::tokio::get_runtime()
                    .block_on(BookingApp::start(BookingAppConfig::default()))
            })
            .map_err(|e| Error::Start(e.to_string()))?;
        Ok(Booking {
            base_url: app.base_url().to_owned(),
            db: app.db_path().to_owned(),
            app: Mutex::new(Some(app)),
        })
    }

    /// `http://127.0.0.1:<port>`.
    #[getter]
    fn base_url(&self) -> String {
        self.base_url.clone()
    }

    /// The staff password the app's login form checks (a secret the model must never see).
    #[getter]
    fn staff_password(&self) -> &'static str {
        hands_demo_apps::DEFAULT_STAFF_PASSWORD
    }

    /// The saved bookings, read from the database itself (JSON text).
    fn bookings(&self, py: Python<'_>) -> PyResult<String> {
        let rows = py
            .detach(|| bookings(&self.db))
            .map_err(|e| Error::Action(e.to_string()))?;
        let list: Vec<Value> = rows
            .iter()
            .map(|b| {
                json!({
                    "reference": b.reference(),
                    "name": b.name,
                    "email": b.email,
                    "check_in": b.check_in.to_string(),
                    "nights": b.nights.get(),
                    "room": b.room.value(),
                    "breakfast": b.breakfast,
                })
            })
            .collect();
        Ok(Value::Array(list).to_string())
    }

    /// How many bookings the app saved from a real form post.
    #[getter]
    fn bookings_saved(&self) -> u64 {
        self.app
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map_or(0, |a| a.requests_seen().bookings_saved)
    }

    /// Stops the app.
    fn close(&self, py: Python<'_>) {
        let app = self.app.lock().unwrap_or_else(|e| e.into_inner()).take();
        py.detach(move || {
            pyo3_async_runtimes::tokio::get_runtime().block_on(async move { drop(app) });
        });
    }
}
