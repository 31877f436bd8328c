//! Both clients against a loopback HTTP server on 127.0.0.1:0 that answers as the real APIs
//! would: success, retryable and non-retryable errors, streams that drop or fail midway.

#![allow(clippy::unwrap_used)]

mod support;

use std::future::Future;
use std::time::Duration;

use hands_models::anthropic::{
    AnthropicClient, AnthropicConfig, Message, MessageParam, MessagesRequest, StreamEvent,
};
use hands_models::openai::{
    self, OpenAiClient, OpenAiConfig, Response, ResponseEventKind, ResponseStatus, ResponsesRequest,
};
use hands_models::{
    ApiErrorKind, CancellationToken, Error, HttpConfig, RetryCause, RetryPolicy, StreamErrorKind,
};
use serde_json::{Value, json};
use support::{Reply, Server, SseEnd, fixture};

/// Fails the test instead of hanging it.
async fn guard<T>(future: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), future)
        .await
        .expect("the call hung")
}

/// Tiny backoff so retries are fast; a generous cap for server-requested waits.
fn http_config() -> HttpConfig {
    HttpConfig {
        retry: RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(4),
            max_retry_after: Duration::from_secs(60),
        },
        request_timeout: Duration::from_secs(10),
        stream_idle_timeout: Duration::from_secs(10),
        ..HttpConfig::default()
    }
}

fn anthropic(server: &Server) -> AnthropicClient {
    anthropic_with(server, http_config())
}

fn anthropic_with(server: &Server, http: HttpConfig) -> AnthropicClient {
    let mut config = AnthropicConfig::new("sk-ant-test");
    config.base_url = server.base_url();
    config.betas = vec!["context-management-2025-06-27".into()];
    config.http = http;
    AnthropicClient::new(config).unwrap()
}

fn openai(server: &Server) -> OpenAiClient {
    let mut config = OpenAiConfig::new("sk-test");
    config.base_url = format!("{}/v1", server.base_url());
    config.http = http_config();
    OpenAiClient::new(config).unwrap()
}

fn messages_request() -> MessagesRequest {
    let mut request = MessagesRequest::new(
        "claude-opus-5-5",
        1024,
        vec![MessageParam::user_text("Book a room.")],
    );
    request.betas = vec!["files-api-2025-04-14".into()];
    request
}

fn responses_request() -> ResponsesRequest {
    let mut request = ResponsesRequest::new(
        "computer-use-2026-08",
        openai::Input::Text("Book a room.".into()),
    );
    request.tools = vec![openai::computer_tool()];
    request
}

fn whole_message() -> Message {
    serde_json::from_str(&fixture("anthropic/message_toolset_turn.json")).unwrap()
}

fn whole_response() -> Response {
    serde_json::from_str(&fixture("openai/response_computer_turn.json")).unwrap()
}

#[tokio::test]
async fn anthropic_create_message_sends_headers_and_body() {
    let body = fixture("anthropic/message_toolset_turn.json");
    let server = Server::start(vec![Reply::json_with(
        200,
        &[
            ("request-id", "req_ok_1"),
            ("anthropic-ratelimit-requests-remaining", "49"),
        ],
        &body,
    )])
    .await;
    let client = anthropic(&server);
    let reply = guard(client.create_message(&messages_request(), &CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(reply.value, whole_message());
    assert_eq!(reply.meta.request_id.as_deref(), Some("req_ok_1"));
    assert!(reply.meta.retries.is_empty());
    assert_eq!(
        reply.meta.rate_limits,
        [(
            "anthropic-ratelimit-requests-remaining".to_owned(),
            "49".to_owned()
        )]
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(sent.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(
        sent.header("anthropic-beta"),
        Some("context-management-2025-06-27,files-api-2025-04-14")
    );
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert!(sent.header("user-agent").unwrap().starts_with("hands/"));
    assert_eq!(
        sent.json(),
        json!({"model":"claude-opus-5-5","max_tokens":1024,"messages":[{"role":"user","content":"Book a room."}]})
    );
}

#[tokio::test]
async fn anthropic_stream_rebuilds_the_same_message_as_the_whole_call() {
    let server = Server::start(vec![Reply::sse(
        &fixture("anthropic/message_toolset_turn.sse"),
        97,
        SseEnd::Clean,
    )])
    .await;
    let client = anthropic(&server);
    let mut stream = guard(client.stream_message(&messages_request(), &CancellationToken::new()))
        .await
        .unwrap();
    let mut n_events = 0;
    let mut completed = Vec::new();
    while let Some(event) = guard(stream.next()).await {
        let event = event.unwrap();
        n_events += 1;
        if let StreamEvent::ContentBlockStop { index } = event {
            // A completed block is available as soon as its stop arrives.
            completed.push(stream.accumulator().completed_block(index).unwrap().clone());
        }
    }
    assert_eq!(n_events, 31);
    assert_eq!(stream.meta().request_id.as_deref(), Some("req_stream_1"));
    let message = guard(stream.finish()).await.unwrap().value;
    let whole = whole_message();
    assert_eq!(
        serde_json::to_value(&message).unwrap(),
        serde_json::to_value(&whole).unwrap()
    );
    assert_eq!(completed, message.content);
    let sent = server.requests()[0].json();
    assert_eq!(sent["stream"], json!(true));
    assert_eq!(
        server.requests()[0].header("accept"),
        Some("text/event-stream")
    );
}

#[tokio::test]
async fn anthropic_429_with_retry_after_ms_is_retried_then_succeeds() {
    let server = Server::start(vec![
        Reply::json_with(
            429,
            &[("retry-after-ms", "15"), ("retry-after", "30")],
            &fixture("anthropic/error_rate_limit.json"),
        ),
        Reply::json(200, &fixture("anthropic/message_toolset_turn.json")),
    ])
    .await;
    let reply =
        guard(anthropic(&server).create_message(&messages_request(), &CancellationToken::new()))
            .await
            .unwrap();
    assert_eq!(reply.value, whole_message());
    assert_eq!(reply.meta.attempts(), 2);
    assert_eq!(reply.meta.retries[0].cause, RetryCause::Status(429));
    // retry-after-ms wins over retry-after.
    assert_eq!(reply.meta.retries[0].delay, Duration::from_millis(15));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    // The very same request went out again.
    assert_eq!(requests[0].body, requests[1].body);
}

#[tokio::test]
async fn anthropic_529_overloaded_is_retried_with_jittered_backoff() {
    let server = Server::start(vec![
        Reply::json(529, &fixture("anthropic/error_overloaded.json")),
        Reply::json(529, &fixture("anthropic/error_overloaded.json")),
        Reply::json(200, &fixture("anthropic/message_toolset_turn.json")),
    ])
    .await;
    let reply =
        guard(anthropic(&server).create_message(&messages_request(), &CancellationToken::new()))
            .await
            .unwrap();
    assert_eq!(reply.meta.retries.len(), 2);
    for (n, retry) in reply.meta.retries.iter().enumerate() {
        assert_eq!(retry.cause, RetryCause::Status(529));
        // Full jitter: somewhere in [0, base * 2^n].
        assert!(retry.delay <= Duration::from_millis(1 << n), "{retry:?}");
    }
}

#[tokio::test]
async fn anthropic_exhausted_retries_return_the_last_api_error() {
    let overloaded = fixture("anthropic/error_overloaded.json");
    let server = Server::start(vec![
        Reply::json(529, &overloaded),
        Reply::json(529, &overloaded),
        Reply::json_with(529, &[("request-id", "req_last")], &overloaded),
    ])
    .await;
    let err =
        guard(anthropic(&server).create_message(&messages_request(), &CancellationToken::new()))
            .await
            .unwrap_err();
    let api = err.api().unwrap();
    assert_eq!(api.kind(), ApiErrorKind::Overloaded);
    assert_eq!(api.attempts, 3);
    assert_eq!(api.request_id.as_deref(), Some("req_last"));
    assert_eq!(api.raw_body, overloaded);
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn anthropic_400_is_not_retried_and_keeps_the_raw_body() {
    let body = fixture("anthropic/error_invalid_request.json");
    let server = Server::start(vec![Reply::json(400, &body)]).await;
    let err =
        guard(anthropic(&server).create_message(&messages_request(), &CancellationToken::new()))
            .await
            .unwrap_err();
    let api = err.api().unwrap();
    assert_eq!(api.status, 400);
    assert_eq!(api.kind(), ApiErrorKind::InvalidRequest);
    assert_eq!(api.error_type.as_deref(), Some("invalid_request_error"));
    assert!(
        api.message
            .as_deref()
            .unwrap()
            .contains("tool_use` ids were found")
    );
    assert_eq!(
        api.request_id.as_deref(),
        Some("req_011CSHoH9aBc4De5Fg6Hi7Jk")
    );
    assert_eq!(api.raw_body, body);
    assert_eq!(api.attempts, 1);
    assert!(!err.is_transient());
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn anthropic_spend_limit_429_is_not_retried() {
    let server = Server::start(vec![Reply::json_with(
        429,
        &[("retry-after", "1")],
        &fixture("anthropic/error_spend_limit.json"),
    )])
    .await;
    let err =
        guard(anthropic(&server).create_message(&messages_request(), &CancellationToken::new()))
            .await
            .unwrap_err();
    assert_eq!(err.api().unwrap().kind(), ApiErrorKind::QuotaExceeded);
    assert_eq!(
        err.api().unwrap().code.as_deref(),
        Some("enforced_spend_limit_reached")
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn anthropic_should_retry_header_overrides_the_status() {
    let server = Server::start(vec![
        Reply::json_with(
            500,
            &[("x-should-retry", "false")],
            r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#,
        ),
        Reply::json_with(
            400,
            &[("x-should-retry", "true")],
            &fixture("anthropic/error_invalid_request.json"),
        ),
        Reply::json(200, &fixture("anthropic/message_toolset_turn.json")),
    ])
    .await;
    let client = anthropic(&server);
    let err = guard(client.create_message(&messages_request(), &CancellationToken::new()))
        .await
        .unwrap_err();
    assert_eq!(err.api().unwrap().status, 500);
    assert_eq!(err.api().unwrap().should_retry, Some(false));
    let reply = guard(client.create_message(&messages_request(), &CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(reply.meta.retries[0].cause, RetryCause::Status(400));
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn disabled_retries_send_once() {
    let server = Server::start(vec![Reply::json(
        529,
        &fixture("anthropic/error_overloaded.json"),
    )])
    .await;
    let client = anthropic(&server).with_retry_policy(RetryPolicy::disabled());
    let err = guard(client.create_message(&messages_request(), &CancellationToken::new()))
        .await
        .unwrap_err();
    assert_eq!(err.api().unwrap().attempts, 1);
    assert!(err.is_transient());
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn anthropic_stream_dropped_midway_is_a_typed_error_and_not_retried() {
    let body = fixture("anthropic/message_toolset_turn.sse");
    let half = &body[..body.len() / 2];
    let server = Server::start(vec![
        Reply::sse(half, 200, SseEnd::Drop),
        Reply::sse(&body, 200, SseEnd::Clean),
    ])
    .await;
    let mut stream =
        guard(anthropic(&server).stream_message(&messages_request(), &CancellationToken::new()))
            .await
            .unwrap();
    let mut n_ok = 0;
    let err = loop {
        match guard(stream.next()).await {
            Some(Ok(_)) => n_ok += 1,
            Some(Err(err)) => break err,
            None => panic!("the stream ended without an error"),
        }
    };
    assert!(n_ok > 0);
    let stream_err = err.stream().unwrap();
    assert_eq!(stream_err.events_delivered, n_ok);
    assert!(
        matches!(stream_err.kind, StreamErrorKind::Transport(_)),
        "{:?}",
        stream_err.kind
    );
    assert!(err.is_transient());
    assert!(guard(stream.next()).await.is_none());
    // No second request: the caller decides.
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn anthropic_stream_closed_before_message_stop_is_ended() {
    let body = fixture("anthropic/message_toolset_turn.sse");
    let cut = body.find("event: message_delta").unwrap();
    let server = Server::start(vec![Reply::sse(&body[..cut], 500, SseEnd::Clean)]).await;
    let stream =
        guard(anthropic(&server).stream_message(&messages_request(), &CancellationToken::new()))
            .await
            .unwrap();
    let err = guard(stream.finish()).await.unwrap_err();
    let stream_err = err.stream().unwrap();
    assert!(matches!(stream_err.kind, StreamErrorKind::Ended));
    assert_eq!(stream_err.events_delivered, 29);
}

#[tokio::test]
async fn anthropic_error_event_midway_is_typed() {
    let server = Server::start(vec![Reply::sse(
        &fixture("anthropic/stream_error_midway.sse"),
        64,
        SseEnd::Clean,
    )])
    .await;
    let stream =
        guard(anthropic(&server).stream_message(&messages_request(), &CancellationToken::new()))
            .await
            .unwrap();
    let err = guard(stream.finish()).await.unwrap_err();
    let stream_err = err.stream().unwrap();
    assert_eq!(stream_err.events_delivered, 14);
    assert_eq!(stream_err.request_id.as_deref(), Some("req_stream_1"));
    match &stream_err.kind {
        StreamErrorKind::ErrorEvent { error_type, .. } => {
            assert_eq!(error_type.as_deref(), Some("overloaded_error"));
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(err.is_transient());
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn stream_that_goes_quiet_hits_the_idle_timeout() {
    let body = fixture("anthropic/message_toolset_turn.sse");
    let cut = body.find("event: ping").unwrap();
    let server = Server::start(vec![Reply::sse(&body[..cut], 4096, SseEnd::Hang)]).await;
    let http = HttpConfig {
        stream_idle_timeout: Duration::from_millis(150),
        ..http_config()
    };
    let mut stream = guard(
        anthropic_with(&server, http)
            .stream_message(&messages_request(), &CancellationToken::new()),
    )
    .await
    .unwrap();
    assert!(matches!(
        guard(stream.next()).await,
        Some(Ok(StreamEvent::MessageStart { .. }))
    ));
    let err = guard(stream.next()).await.unwrap().unwrap_err();
    assert!(matches!(
        err.stream().unwrap().kind,
        StreamErrorKind::IdleTimeout(d) if d == Duration::from_millis(150)
    ));
}

#[tokio::test]
async fn cancel_while_waiting_for_an_answer_returns_promptly() {
    let server = Server::start(vec![Reply::Hang]).await;
    let client = anthropic(&server);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        trigger.cancel();
    });
    let err = guard(client.create_message(&messages_request(), &cancel))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Cancelled { .. }), "{err}");
}

#[tokio::test]
async fn cancel_during_a_retry_wait_returns_promptly() {
    let server = Server::start(vec![Reply::json_with(
        429,
        &[("retry-after-ms", "50000")],
        &fixture("anthropic/error_rate_limit.json"),
    )])
    .await;
    let client = anthropic(&server);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let err = guard(client.create_message(&messages_request(), &cancel))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Cancelled { .. }), "{err}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn cancel_mid_stream_stops_reading() {
    let body = fixture("anthropic/message_toolset_turn.sse");
    let cut = body.find("event: ping").unwrap();
    let server = Server::start(vec![Reply::sse(&body[..cut], 4096, SseEnd::Hang)]).await;
    let cancel = CancellationToken::new();
    let mut stream = guard(anthropic(&server).stream_message(&messages_request(), &cancel))
        .await
        .unwrap();
    assert!(matches!(guard(stream.next()).await, Some(Ok(_))));
    cancel.cancel();
    let err = guard(stream.next()).await.unwrap().unwrap_err();
    assert!(matches!(err, Error::Cancelled { .. }), "{err}");
    assert!(guard(stream.next()).await.is_none());
}

#[tokio::test]
async fn no_answer_within_the_request_timeout_is_retried_then_a_timeout() {
    let server = Server::start(vec![Reply::Hang, Reply::Hang]).await;
    let http = HttpConfig {
        request_timeout: Duration::from_millis(150),
        retry: RetryPolicy {
            max_retries: 1,
            ..http_config().retry
        },
        ..http_config()
    };
    let err = guard(
        anthropic_with(&server, http)
            .create_message(&messages_request(), &CancellationToken::new()),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, Error::Timeout { attempts: 2, .. }), "{err}");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn connection_refused_is_retried_then_reported() {
    // A port that was just free: nothing listens there.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let mut config = OpenAiConfig::new("sk-test");
    config.base_url = format!("http://127.0.0.1:{port}/v1");
    config.http = http_config();
    let client = OpenAiClient::new(config).unwrap();
    let err = guard(client.create_response(&responses_request(), &CancellationToken::new()))
        .await
        .unwrap_err();
    match &err {
        Error::Connection { attempts, url, .. } => {
            assert_eq!(*attempts, 3);
            assert_eq!(url, &format!("http://127.0.0.1:{port}/v1/responses"));
        }
        other => panic!("unexpected {other}"),
    }
    assert!(err.is_transient());
}

#[tokio::test]
async fn stream_flag_conflicts_are_refused_before_sending() {
    let server = Server::start(vec![]).await;
    let client = anthropic(&server);
    let mut request = messages_request();
    request.stream = Some(true);
    let err = guard(client.create_message(&request, &CancellationToken::new()))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidRequest { .. }), "{err}");
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn openai_create_response_sends_bearer_and_parses_items() {
    let server = Server::start(vec![Reply::json_with(
        200,
        &[
            ("x-request-id", "req_oa_1"),
            ("x-ratelimit-remaining-tokens", "29000"),
        ],
        &fixture("openai/response_computer_turn.json"),
    )])
    .await;
    let reply =
        guard(openai(&server).create_response(&responses_request(), &CancellationToken::new()))
            .await
            .unwrap();
    assert_eq!(reply.value, whole_response());
    assert_eq!(reply.meta.request_id.as_deref(), Some("req_oa_1"));
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/responses");
    assert_eq!(sent.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(
        sent.json(),
        json!({"model":"computer-use-2026-08","input":"Book a room.","tools":[{"type":"computer"}]})
    );
}

#[tokio::test]
async fn openai_stream_hands_out_items_in_order_then_the_whole_response() {
    let server = Server::start(vec![Reply::sse(
        &fixture("openai/response_computer_turn.sse"),
        333,
        SseEnd::Clean,
    )])
    .await;
    let mut stream =
        guard(openai(&server).stream_response(&responses_request(), &CancellationToken::new()))
            .await
            .unwrap();
    let mut taken = Vec::new();
    let mut sequence = Vec::new();
    while let Some(event) = guard(stream.next()).await {
        let event = event.unwrap();
        sequence.push(event.sequence_number.unwrap());
        if let ResponseEventKind::OutputItemDone { output_index, .. } = &event.kind {
            // The item is ready the moment its done event arrives.
            let ready = stream.take_ready();
            assert_eq!(ready.last().map(|(i, _)| *i), Some(*output_index));
            taken.extend(ready);
        }
    }
    assert_eq!(sequence, (0..25).collect::<Vec<u64>>());
    let response = guard(stream.finish()).await.unwrap().value;
    let whole = whole_response();
    assert_eq!(
        serde_json::to_value(&response).unwrap(),
        serde_json::to_value(&whole).unwrap()
    );
    let taken_values: Vec<Value> = taken.iter().map(|(_, item)| item.to_value()).collect();
    let whole_values: Vec<Value> = whole.output.iter().map(|item| item.to_value()).collect();
    assert_eq!(taken_values, whole_values);
    assert_eq!(server.requests()[0].json()["stream"], json!(true));
}

#[tokio::test]
async fn openai_insufficient_quota_is_not_retried() {
    let body = fixture("openai/error_insufficient_quota.json");
    let server = Server::start(vec![Reply::json(429, &body)]).await;
    let err =
        guard(openai(&server).create_response(&responses_request(), &CancellationToken::new()))
            .await
            .unwrap_err();
    let api = err.api().unwrap();
    assert_eq!(api.kind(), ApiErrorKind::QuotaExceeded);
    assert_eq!(api.raw_body, body);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn openai_rate_limit_is_retried_with_retry_after_seconds() {
    let server = Server::start(vec![
        Reply::json_with(
            429,
            &[("retry-after", "0.02")],
            &fixture("openai/error_rate_limit.json"),
        ),
        Reply::json(200, &fixture("openai/response_computer_turn.json")),
    ])
    .await;
    let reply =
        guard(openai(&server).create_response(&responses_request(), &CancellationToken::new()))
            .await
            .unwrap();
    assert_eq!(reply.meta.retries[0].delay, Duration::from_millis(20));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn openai_failed_stream_returns_the_failed_response() {
    let server = Server::start(vec![Reply::sse(
        &fixture("openai/stream_failed.sse"),
        128,
        SseEnd::Clean,
    )])
    .await;
    let stream =
        guard(openai(&server).stream_response(&responses_request(), &CancellationToken::new()))
            .await
            .unwrap();
    let response = guard(stream.finish()).await.unwrap().value;
    assert_eq!(response.status, Some(ResponseStatus::Failed));
    assert_eq!(
        response.error.unwrap().code.as_deref(),
        Some("server_error")
    );
}

#[tokio::test]
async fn openai_error_event_midway_keeps_delivered_items() {
    let server = Server::start(vec![Reply::sse(
        &fixture("openai/stream_error_midway.sse"),
        128,
        SseEnd::Clean,
    )])
    .await;
    let mut stream =
        guard(openai(&server).stream_response(&responses_request(), &CancellationToken::new()))
            .await
            .unwrap();
    let mut taken = Vec::new();
    let err = loop {
        match guard(stream.next()).await {
            Some(Ok(_)) => taken.extend(stream.take_ready()),
            Some(Err(err)) => break err,
            None => panic!("no error"),
        }
    };
    assert_eq!(
        taken.len(),
        1,
        "the reasoning item was done before the error"
    );
    let stream_err = err.stream().unwrap();
    assert_eq!(stream_err.events_delivered, 7);
    assert!(matches!(
        &stream_err.kind,
        StreamErrorKind::ErrorEvent { code: Some(code), .. } if code == "server_error"
    ));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn openai_stream_dropped_midway_is_not_retried() {
    let body = fixture("openai/response_computer_turn.sse");
    let cut = body.find("event: response.output_item.added").unwrap() + 40;
    let server = Server::start(vec![
        Reply::sse(&body[..cut], 100, SseEnd::Drop),
        Reply::json(200, &fixture("openai/response_computer_turn.json")),
    ])
    .await;
    let stream =
        guard(openai(&server).stream_response(&responses_request(), &CancellationToken::new()))
            .await
            .unwrap();
    let err = guard(stream.finish()).await.unwrap_err();
    let stream_err = err.stream().unwrap();
    assert_eq!(stream_err.events_delivered, 2);
    assert!(
        matches!(stream_err.kind, StreamErrorKind::Transport(_)),
        "{:?}",
        stream_err.kind
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn undecodable_success_body_is_a_decode_error_with_the_body() {
    let server = Server::start(vec![Reply::json(200, r#"{"id":"msg_1","type":"message"}"#)]).await;
    let err =
        guard(anthropic(&server).create_message(&messages_request(), &CancellationToken::new()))
            .await
            .unwrap_err();
    match err {
        Error::Decode {
            status,
            raw_body,
            what,
            ..
        } => {
            assert_eq!((status, what), (200, "Message"));
            assert_eq!(raw_body, r#"{"id":"msg_1","type":"message"}"#);
        }
        other => panic!("unexpected {other}"),
    }
}

#[tokio::test]
async fn https_goes_through_rustls_and_a_non_tls_peer_is_a_connection_error() {
    // A peer that answers plain text to the TLS handshake, as a misconfigured proxy would.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let peer = tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n").await;
            let _ = stream.shutdown().await;
        }
    });
    let mut config = AnthropicConfig::new("sk-ant-test");
    config.base_url = format!("https://127.0.0.1:{port}");
    config.http = http_config();
    let client = AnthropicClient::new(config).unwrap();
    let err = guard(client.create_message(&messages_request(), &CancellationToken::new()))
        .await
        .unwrap_err();
    peer.abort();
    assert!(
        matches!(err, Error::Connection { attempts: 3, .. }),
        "{err}"
    );
}
