//! Shared helpers of the integration tests: a plain HTTP client for both APIs, an SSE reader
//! and request builders.
#![allow(dead_code)]

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hands_sim::images::fixtures;
use hands_sim::{SimConfig, SimServer, Turn};
use serde_json::{Value, json};

pub const MODEL: &str = "claude-opus-5";

/// A server that answers every valid request with text.
pub fn text_server() -> SimServer {
    SimServer::start(SimConfig::with_policy(|_: &Value| Turn::text("ok"))).expect("start")
}

/// Status and JSON body of one answer.
pub struct Answer {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl Answer {
    /// The error message of either shape.
    pub fn message(&self) -> &str {
        self.body["error"]["message"].as_str().unwrap_or("")
    }
}

pub async fn post(
    server: &SimServer,
    path: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> Answer {
    let client = http_client();
    let mut request = client
        .post(format!("{}{path}", server.base_url()))
        .json(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("send");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.json().await.expect("json body");
    Answer {
        status,
        headers,
        body,
    }
}

pub const ANTHROPIC_HEADERS: [(&str, &str); 2] = [
    ("x-api-key", "test-key"),
    ("anthropic-version", "2023-06-01"),
];

pub async fn anthropic(server: &SimServer, body: &Value) -> Answer {
    post(server, "/v1/messages", &ANTHROPIC_HEADERS, body).await
}

pub async fn anthropic_beta(server: &SimServer, beta: &str, body: &Value) -> Answer {
    let headers = [
        ANTHROPIC_HEADERS[0],
        ANTHROPIC_HEADERS[1],
        ("anthropic-beta", beta),
    ];
    post(server, "/v1/messages", &headers, body).await
}

pub async fn openai(server: &SimServer, body: &Value) -> Answer {
    post(
        server,
        "/v1/responses",
        &[("authorization", "Bearer sk-test")],
        body,
    )
    .await
}

/// One SSE event as received.
#[derive(Debug, Clone)]
pub struct Sse {
    pub name: String,
    pub data: Value,
}

/// Reads an SSE answer: the events received, and whether the body ended cleanly.
pub async fn sse(
    server: &SimServer,
    path: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> (Vec<Sse>, bool) {
    let client = http_client();
    let mut request = client
        .post(format!("{}{path}", server.base_url()))
        .json(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut response = request.send().await.expect("send");
    assert_eq!(response.status().as_u16(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .expect("ascii")
            .starts_with("text/event-stream")
    );
    let mut buf = Vec::new();
    let clean = loop {
        match response.chunk().await {
            Ok(Some(chunk)) => buf.extend_from_slice(&chunk),
            Ok(None) => break true,
            Err(_) => break false,
        }
    };
    let text = String::from_utf8(buf).expect("utf-8");
    let events = text
        .split("\n\n")
        .filter(|raw| !raw.trim().is_empty())
        .map(|raw| {
            let mut name = String::new();
            let mut data = Value::Null;
            for line in raw.lines() {
                if let Some(n) = line.strip_prefix("event: ") {
                    name = n.to_owned();
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data = serde_json::from_str(d).expect("event data is JSON");
                }
            }
            Sse { name, data }
        })
        .collect();
    (events, clean)
}

pub fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

pub fn request(messages: Value) -> Value {
    json!({"model": MODEL, "max_tokens": 1024, "messages": messages})
}

pub fn with_tools(mut body: Value, tools: Value) -> Value {
    body["tools"] = tools;
    body
}

pub fn toolset() -> Value {
    json!({"type": "computer_toolset_20260801"})
}

pub fn custom_tool(name: &str) -> Value {
    json!({"name": name, "description": "d", "input_schema": {"type": "object"}})
}

pub fn png_b64(width: u32, height: u32) -> String {
    STANDARD.encode(fixtures::png(width, height))
}

pub fn jpeg_b64(width: u16, height: u16) -> String {
    STANDARD.encode(fixtures::jpeg(width, height))
}

pub fn image(media_type: &str, data: &str) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
}

pub fn png_image(width: u32, height: u32) -> Value {
    image("image/png", &png_b64(width, height))
}

/// An assistant turn calling a computer member, and the user turn answering it with
/// `content`.
pub fn computer_exchange(id: &str, member: &str, result: Value) -> Vec<Value> {
    vec![
        json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": id, "name": member, "toolset_name": "computer", "input": {}}]}),
        json!({"role": "user", "content": [result]}),
    ]
}

pub fn computer_result(id: &str, content: Value) -> Value {
    json!({"type": "tool_result", "tool_use_id": id, "toolset_name": "computer", "content": content})
}

/// A computer-toolset conversation ending with one screenshot result holding `image`.
pub fn screenshot_request(image: Value) -> Value {
    let mut messages = vec![user("look")];
    messages.extend(computer_exchange(
        "toolu_s",
        "screenshot",
        computer_result("toolu_s", json!([image])),
    ));
    with_tools(request(json!(messages)), json!([toolset()]))
}

/// A plain-HTTP client. reqwest is built with rustls and no crypto provider in this workspace
/// (hands-models installs ring at run time), so a test client installs ring first.
pub fn http_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}
