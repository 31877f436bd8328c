//! Injected faults: error answers with their headers, dropped connections, mid-stream errors,
//! and a retry that gets the turn the fault cut short.

mod common;

use common::*;
use hands_sim::policy::toolset_use;
use hands_sim::{Api, Fault, SimConfig, SimServer, Turn, Verdict};
use serde_json::json;

fn scripted() -> SimServer {
    SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![toolset_use("computer", "screenshot", json!({}))]),
        Turn::text("Done."),
    ]))
    .expect("start")
}

fn first_request() -> serde_json::Value {
    with_tools(request(json!([user("look")])), json!([toolset()]))
}

#[tokio::test]
async fn rate_limit_then_success_serves_the_same_turn() {
    let server = scripted();
    server.inject(Fault::rate_limited_ms(1500));
    let answer = anthropic(&server, &first_request()).await;
    assert_eq!(answer.status, 429);
    assert_eq!(answer.body["error"]["type"], "rate_limit_error");
    assert_eq!(answer.headers["retry-after-ms"], "1500");
    assert_eq!(answer.headers["retry-after"], "2");
    assert!(answer.headers.contains_key("request-id"));
    let answer = anthropic(&server, &first_request()).await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.body["content"][0]["name"], "screenshot");
    assert_eq!(server.turns_left(), 1);
    let counters = server.counters();
    assert_eq!(
        (counters.faulted, counters.accepted, counters.violations),
        (1, 1, 0)
    );
}

#[tokio::test]
async fn overloaded_and_server_errors_in_each_shape() {
    let server = text_server();
    server.inject_n(Fault::Overloaded, 2);
    server.inject(Fault::ServerError);
    let answer = anthropic(&server, &request(json!([user("hi")]))).await;
    assert_eq!(
        (answer.status, answer.body["error"]["type"].as_str()),
        (529, Some("overloaded_error"))
    );
    assert_eq!(answer.message(), "Overloaded");
    let answer = openai(&server, &json!({"model": "gpt-5.5", "input": "hi"})).await;
    assert_eq!(answer.status, 503);
    assert_eq!(answer.body["error"]["type"], "server_error");
    let answer = anthropic(&server, &request(json!([user("hi")]))).await;
    assert_eq!(
        (answer.status, answer.body["error"]["type"].as_str()),
        (500, Some("api_error"))
    );
    assert_eq!(server.faults_left(), 0);
}

#[tokio::test]
async fn openai_rate_limit_differs_from_quota() {
    let server = text_server();
    server.inject_for(Api::OpenAi, Fault::rate_limited_ms(200));
    server.inject_for(Api::OpenAi, Fault::QuotaExhausted);
    // An Anthropic request does not consume OpenAI faults.
    assert_eq!(
        anthropic(&server, &request(json!([user("hi")])))
            .await
            .status,
        200
    );
    let body = json!({"model": "gpt-5.5", "input": "hi"});
    let answer = openai(&server, &body).await;
    assert_eq!(answer.status, 429);
    assert_eq!(answer.body["error"]["code"], "rate_limit_exceeded");
    assert_eq!(answer.headers["retry-after-ms"], "200");
    let answer = openai(&server, &body).await;
    assert_eq!(answer.status, 429);
    assert_eq!(answer.body["error"]["code"], "insufficient_quota");
    assert_eq!(answer.body["error"]["type"], "insufficient_quota");
    assert!(!answer.headers.contains_key("retry-after"));
    assert_eq!(openai(&server, &body).await.status, 200);
}

#[tokio::test]
async fn a_fault_never_hides_a_broken_request() {
    let server = text_server();
    server.inject(Fault::rate_limited_ms(0));
    let broken = request(json!([{"role": "assistant", "content": "hi"}]));
    assert_eq!(anthropic(&server, &broken).await.status, 429);
    let violations = server.violations();
    assert_eq!(violations.len(), 1);
    assert!(matches!(
        violations[0].verdict,
        Verdict::Faulted {
            violation: Some(_),
            ..
        }
    ));
}

#[tokio::test]
async fn dropped_stream_then_retry_gets_the_turn_it_missed() {
    let server = scripted();
    server.inject(Fault::DropConnection { after_events: 3 });
    let mut body = first_request();
    body["stream"] = json!(true);
    let (events, clean) = sse(&server, "/v1/messages", &ANTHROPIC_HEADERS, &body).await;
    assert!(!clean, "the body must end in an error, not cleanly");
    assert_eq!(events.len(), 3);
    assert_eq!(events[0].name, "message_start");
    // The retry of the same body gets the same turn, fresh ids; the script did not skip.
    let (events, clean) = sse(&server, "/v1/messages", &ANTHROPIC_HEADERS, &body).await;
    assert!(clean);
    let started = events
        .iter()
        .find(|e| e.name == "content_block_start")
        .expect("a block");
    assert_eq!(started.data["content_block"]["name"], "screenshot");
    assert_eq!(server.turns_left(), 1);
    let requests = server.requests();
    assert_eq!(
        requests[0].verdict,
        Verdict::Faulted {
            fault: Fault::DropConnection { after_events: 3 },
            violation: None
        }
    );
}

#[tokio::test]
async fn dropped_connection_without_stream_closes_before_answering() {
    let server = scripted();
    server.inject(Fault::DropConnection { after_events: 0 });
    let client = common::http_client();
    let sent = client
        .post(format!("{}/v1/messages", server.base_url()))
        .header("x-api-key", "k")
        .header("anthropic-version", "2023-06-01")
        .json(&first_request())
        .send()
        .await;
    assert!(sent.is_err(), "{sent:?}");
    assert_eq!(server.last_request().expect("recorded").status, 0);
    assert_eq!(anthropic(&server, &first_request()).await.status, 200);
}

#[tokio::test]
async fn mid_stream_error_events() {
    let server = scripted();
    server.inject(Fault::StreamError { after_events: 4 });
    let mut body = first_request();
    body["stream"] = json!(true);
    let (events, clean) = sse(&server, "/v1/messages", &ANTHROPIC_HEADERS, &body).await;
    assert!(clean);
    assert_eq!(events.len(), 5);
    let error = &events[4];
    assert_eq!(error.name, "error");
    assert_eq!(
        error.data,
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    );

    let server = SimServer::start(SimConfig::with_policy(|_: &serde_json::Value| {
        Turn::text("a longer answer")
    }))
    .expect("start");
    server.inject(Fault::StreamError { after_events: 2 });
    let body = json!({"model": "gpt-5.5", "input": "hi", "stream": true});
    let (events, _) = sse(
        &server,
        "/v1/responses",
        &[("authorization", "Bearer sk")],
        &body,
    )
    .await;
    assert_eq!(events.len(), 3);
    assert_eq!(events[2].data["type"], "error");
    assert_eq!(events[2].data["code"], "server_error");
    assert_eq!(events[2].data["sequence_number"], 2);
    // A stream error on a non-streaming request is an overloaded answer.
    server.inject(Fault::StreamError { after_events: 2 });
    let answer = openai(&server, &json!({"model": "gpt-5.5", "input": "hi"})).await;
    assert_eq!(answer.status, 503);
}

#[tokio::test]
async fn faults_from_the_config_come_first() {
    let server = SimServer::start(SimConfig {
        faults: vec![Fault::Overloaded],
        ..SimConfig::with_policy(|_: &serde_json::Value| Turn::text("ok"))
    })
    .expect("start");
    assert_eq!(
        anthropic(&server, &request(json!([user("hi")])))
            .await
            .status,
        529
    );
    assert_eq!(
        anthropic(&server, &request(json!([user("hi")])))
            .await
            .status,
        200
    );
}
