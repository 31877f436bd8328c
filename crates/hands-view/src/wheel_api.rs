//! The page's side of taking the wheel ([`crate::wheel`]): `GET /api/wheel` (who holds it),
//! `POST /api/wheel/take` and `/api/wheel/give`, `GET /api/wheel/frame` (the screen as a JPEG,
//! while the person holds it), `POST /api/wheel/input` (a click, a key, text, a wheel turn), and
//! the page's script, `GET /wheel.js`. Posts need the token in the header, as answers do.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;

use crate::server::{Auth, Shared, authorised, refused};
use crate::wheel::{PersonInput, RawInput, Wheel};

/// The take-over script of the page.
const SCRIPT: &str = include_str!("../assets/wheel.js");

/// The routes, for the view's router.
pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/wheel.js", get(script))
        .route("/api/wheel", get(status))
        .route("/api/wheel/take", post(take))
        .route("/api/wheel/give", post(give))
        .route("/api/wheel/frame", get(frame))
        .route("/api/wheel/input", post(input))
}

async fn script() -> Response {
    ([(header::CONTENT_TYPE, "text/javascript")], SCRIPT).into_response()
}

/// The live run's wheel, when the caller may use it (`header_only`: posts).
fn wheel_of<'a>(
    shared: &'a Shared,
    headers: &HeaderMap,
    query: &Auth,
    header_only: bool,
) -> Result<&'a Wheel, Box<Response>> {
    let none = Auth::default();
    if !authorised(shared, headers, if header_only { &none } else { query }) {
        return Err(Box::new(refused()));
    }
    match &shared.live {
        Some(live) => Ok(live.wheel()),
        None => Err(Box::new(
            (StatusCode::NOT_FOUND, "this view is not of a live run").into_response(),
        )),
    }
}

async fn status(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Query(query): Query<Auth>,
) -> Response {
    match &shared.live {
        Some(live) if authorised(&shared, &headers, &query) => {
            Json(json!(live.wheel().status())).into_response()
        }
        Some(_) => refused(),
        None => Json(json!({"holder": "model", "unavailable": "a finished run"})).into_response(),
    }
}

async fn take(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    let wheel = match wheel_of(&shared, &headers, &Auth::default(), true) {
        Ok(wheel) => wheel,
        Err(refusal) => return *refusal,
    };
    let answer = match wheel.ask() {
        Ok(holder) => Json(json!({"holder": holder})).into_response(),
        Err(why) => (StatusCode::CONFLICT, why).into_response(),
    };
    if let Some(live) = &shared.live {
        live.bump();
    }
    answer
}

async fn give(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    let wheel = match wheel_of(&shared, &headers, &Auth::default(), true) {
        Ok(wheel) => wheel,
        Err(refusal) => return *refusal,
    };
    let was = wheel.give_back();
    if let Some(live) = &shared.live {
        live.bump();
    }
    Json(json!({"given_back": was})).into_response()
}

async fn frame(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Query(query): Query<Auth>,
) -> Response {
    let wheel = match wheel_of(&shared, &headers, &query, false) {
        Ok(wheel) => wheel,
        Err(refusal) => return *refusal,
    };
    let Some(screen) = wheel.screen() else {
        return (StatusCode::CONFLICT, "the person does not hold the wheel").into_response();
    };
    match screen.frame().await {
        Ok(jpeg) => (
            [
                (header::CONTENT_TYPE, "image/jpeg"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            jpeg,
        )
            .into_response(),
        Err(e) => (StatusCode::BAD_GATEWAY, e).into_response(),
    }
}

async fn input(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Json(raw): Json<RawInput>,
) -> Response {
    let wheel = match wheel_of(&shared, &headers, &Auth::default(), true) {
        Ok(wheel) => wheel,
        Err(refusal) => return *refusal,
    };
    let input = match PersonInput::parse(raw) {
        Ok(input) => input,
        Err(why) => return (StatusCode::BAD_REQUEST, why).into_response(),
    };
    let Some(screen) = wheel.screen() else {
        return (StatusCode::CONFLICT, "the person does not hold the wheel").into_response();
    };
    match screen.input(input).await {
        Ok(()) => Json(json!({"ok": true})).into_response(),
        Err(e) => (StatusCode::BAD_GATEWAY, e).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use crate::Live;
    use std::io::{Read as _, Write as _};

    /// One raw HTTP request to the view; the status line and body.
    async fn send(addr: std::net::SocketAddr, request: String) -> (String, String) {
        tokio::task::spawn_blocking(move || {
            let mut stream = std::net::TcpStream::connect(addr).unwrap();
            stream.write_all(request.as_bytes()).unwrap();
            let mut reply = String::new();
            stream.read_to_string(&mut reply).unwrap();
            let status = reply.lines().next().unwrap_or_default().to_owned();
            let body = reply
                .split("\r\n\r\n")
                .nth(1)
                .unwrap_or_default()
                .to_owned();
            (status, body)
        })
        .await
        .unwrap()
    }

    fn post(addr: std::net::SocketAddr, path: &str, token: Option<&str>, body: &str) -> String {
        let header = token.map_or(String::new(), |t| format!("X-Hands-Token: {t}\r\n"));
        format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\n{header}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    }

    #[tokio::test]
    async fn the_wheel_answers_only_with_the_token_and_only_when_it_can() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("log.jsonl"), "").unwrap();
        let live = Live::default();
        let view = crate::serve(
            dir.path(),
            "127.0.0.1:0".parse().unwrap(),
            Some(live.clone()),
        )
        .await
        .unwrap();
        let (addr, token) = (view.addr, view.token.clone());
        let get = |path: &str| {
            format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
        };
        let (status, body) = send(addr, get(&format!("/api/wheel?token={token}"))).await;
        assert!(status.contains("200"), "{status}");
        assert!(body.contains(crate::wheel::NO_SCREEN), "{body}");
        // The token in the URL is not enough to take the wheel (a form on another site could).
        let url_only = post(addr, &format!("/api/wheel/take?token={token}"), None, "{}");
        assert!(send(addr, url_only).await.0.contains("403"));
        let (status, body) = send(addr, post(addr, "/api/wheel/take", Some(&token), "{}")).await;
        assert!(status.contains("409"), "{status}: nothing to hand yet");
        assert!(body.contains(crate::wheel::NO_SCREEN), "{body}");
        live.wheel().enable();
        let (status, body) = send(addr, post(addr, "/api/wheel/take", Some(&token), "{}")).await;
        assert!(
            status.contains("200") && body.contains("asked"),
            "{status} {body}"
        );
        // Asked, not yet handed over: no picture, no input reaches anything.
        let frame = send(addr, get(&format!("/api/wheel/frame?token={token}"))).await;
        assert!(frame.0.contains("409"), "{frame:?}");
        let text = r#"{"type": "text", "text": "hello"}"#;
        let input = send(addr, post(addr, "/api/wheel/input", Some(&token), text)).await;
        assert!(input.0.contains("409"), "{input:?}");
        let bad = r#"{"type": "key", "key": "F13"}"#;
        let input = send(addr, post(addr, "/api/wheel/input", Some(&token), bad)).await;
        assert!(
            input.0.contains("422") || input.0.contains("400"),
            "{input:?}"
        );
        let (status, _) = send(addr, post(addr, "/api/wheel/give", Some(&token), "{}")).await;
        assert!(status.contains("200"));
        assert_eq!(live.wheel().holder(), crate::wheel::Holder::Model);
        view.stop();
    }
}
