//! Remote MCP servers and server tools in a run, against the simulated APIs playing the
//! provider's side for real: a real MCP server (hands-sim's rmcp fixture) is listed and called
//! by the simulator as the APIs' servers call a declared server. Effects are counted where they
//! happen — notes saved on the MCP server, calls of a local function — so a test proves what
//! ran and what did not.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use hands_core::CancellationToken;
use hands_models::anthropic::{AnthropicClient, AnthropicConfig};
use hands_models::openai::{OpenAiClient, OpenAiConfig};
use hands_runner::approval::{Approver, Decision, Effect, EffectKind, SafetyChecksContext};
use hands_runner::functions::{Function, Functions};
use hands_runner::ledger::{
    CallState, MCP_APPROVAL_RECORD, MCP_REQUEST_HAPPENED, MCP_REQUEST_RECORD, MemoryLedger,
    Verdict, reconcile,
};
use hands_runner::mcp::{ApprovalRule, McpServer, ServerTool};
use hands_runner::{
    AnthropicSettings, OpenAiSettings, RunConfig, RunError, RunOutcome, RunStatus, Runner,
    StopReason, Toolbox,
};
use hands_sim::mcp_fixture::{ADD_NOTE, FAIL};
use hands_sim::policy::{
    function_call, mcp_use, server_tool_result, server_tool_use, tool_use, web_search_call,
    with_status,
};
use hands_sim::{Fault, McpFixture, SimConfig, SimServer, Turn};
use serde_json::{Value, json};

/// An approver that answers MCP effects with `answer` and records them; everything else runs.
#[derive(Clone)]
struct Recorder {
    answer: Decision,
    seen: Arc<Mutex<Vec<Effect>>>,
}

impl Recorder {
    fn new(answer: Decision) -> Recorder {
        Recorder {
            answer,
            seen: Arc::new(Mutex::new(Vec::new())),
        }
    }

    fn seen(&self) -> Vec<Effect> {
        self.seen.lock().unwrap().clone()
    }
}

#[async_trait]
impl Approver for Recorder {
    async fn approve_safety_checks(
        &mut self,
        _: SafetyChecksContext,
        _: &CancellationToken,
    ) -> Decision {
        Decision::Deny
    }

    fn reviews(&self, kind: EffectKind) -> bool {
        kind == EffectKind::Mcp
    }

    async fn approve(&mut self, effect: Effect, _: &CancellationToken) -> Decision {
        let mcp = effect.kind() == EffectKind::Mcp;
        self.seen.lock().unwrap().push(effect);
        if mcp { self.answer } else { Decision::Approve }
    }
}

fn openai_client(sim: &SimServer) -> OpenAiClient {
    let mut config = OpenAiConfig::new("sk-test");
    config.base_url = sim.openai_base_url();
    OpenAiClient::new(config).unwrap()
}

fn anthropic_client(sim: &SimServer) -> AnthropicClient {
    let mut config = AnthropicConfig::new("sk-test");
    config.base_url = sim.base_url();
    AnthropicClient::new(config).unwrap()
}

/// A function `f` counting its runs.
fn counted(ran: &Arc<AtomicUsize>) -> Functions {
    let mut functions = Functions::new();
    let ran = Arc::clone(ran);
    functions
        .add(Function::typed("f", "Counts.", move |_: Value| {
            let ran = Arc::clone(&ran);
            async move {
                ran.fetch_add(1, Ordering::SeqCst);
                Ok::<_, String>("done".to_owned())
            }
        }))
        .unwrap();
    functions
}

fn notes_server(fixture: &McpFixture, rule: ApprovalRule) -> McpServer {
    let mut server = McpServer::new("notes", fixture.url());
    server.require_approval = rule;
    server
}

fn openai_runner(
    sim: &SimServer,
    tools: Vec<Value>,
    ran: &Arc<AtomicUsize>,
    approver: Option<Recorder>,
    configure: impl FnOnce(&mut OpenAiSettings),
) -> Runner {
    let mut settings = OpenAiSettings::new("gpt-5.5");
    settings.extra_tools = tools;
    configure(&mut settings);
    let mut runner = Runner::openai(
        openai_client(sim),
        settings,
        None,
        Toolbox {
            functions: counted(ran),
            ..Toolbox::default()
        },
        RunConfig::default(),
    );
    if let Some(approver) = approver {
        runner.set_approver(Box::new(approver));
    }
    runner
}

async fn run(runner: &Runner, task: &str) -> RunOutcome {
    runner.run(task, &CancellationToken::new()).await.unwrap()
}

fn scripted(turns: Vec<Turn>) -> SimServer {
    SimServer::start(SimConfig::scripted(turns)).unwrap()
}

/// The items request `n` added to the conversation: the runner's default context projection
/// sends the whole history each time (never chained), so the new items are those after the
/// previous request's input and its answer.
fn new_input_of(sim: &SimServer, n: usize) -> Vec<Value> {
    let requests = sim.requests();
    let input = requests[n].body["input"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if n == 0
        || requests[n]
            .body
            .get("previous_response_id")
            .is_some_and(|p| !p.is_null())
    {
        return input;
    }
    let before = requests[n - 1].body["input"].as_array().map_or(0, Vec::len)
        + requests[n - 1]
            .response
            .as_ref()
            .and_then(|r| r["output"].as_array())
            .map_or(0, Vec::len);
    input
        .get(before..)
        .map(<[Value]>::to_vec)
        .unwrap_or_default()
}

fn input_of(sim: &SimServer, n: usize) -> Vec<Value> {
    sim.requests()[n].body["input"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn mcp_calls(effects: &[Effect]) -> Vec<hands_runner::approval::McpCallEffect> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::McpCall(call) => Some(call.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_approval_is_bound_to_its_request_and_the_tool_runs_once_approved() {
    let fixture = McpFixture::start().unwrap();
    let sim = scripted(vec![
        Turn::Items(vec![mcp_use("notes", ADD_NOTE, json!({"text": "hi"}))]),
        Turn::text("Saved."),
    ]);
    let ran = Arc::new(AtomicUsize::new(0));
    let approver = Recorder::new(Decision::Approve);
    let tools = vec![notes_server(&fixture, ApprovalRule::Always).openai_tool()];
    let runner = openai_runner(&sim, tools, &ran, Some(approver.clone()), |_| {});
    let outcome = run(&runner, "Save hi.").await;
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    // The approver saw exactly the request the API sent: its id, server, tool and arguments.
    let requests = sim.requests();
    let asked = requests[0].response.as_ref().unwrap()["output"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "mcp_approval_request")
        .unwrap()
        .clone();
    let seen = mcp_calls(&approver.seen());
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].request_id, asked["id"].as_str().unwrap());
    assert_eq!(seen[0].server_label, "notes");
    assert_eq!(seen[0].tool, ADD_NOTE);
    assert_eq!(seen[0].arguments, json!({"text": "hi"}));
    assert_eq!(seen[0].server_url.as_deref(), Some(fixture.url().as_str()));
    assert!(!seen[0].renewed);
    // The answer names that request, and the server ran the tool once.
    assert_eq!(
        new_input_of(&sim, 1),
        vec![
            json!({"type": "mcp_approval_response", "approval_request_id": asked["id"],
            "approve": true})
        ]
    );
    assert_eq!(fixture.notes(), ["hi"]);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_mcp_approval_never_reaches_the_server() {
    let fixture = McpFixture::start().unwrap();
    let sim = scripted(vec![
        Turn::Items(vec![mcp_use("notes", ADD_NOTE, json!({"text": "hi"}))]),
        Turn::text("Not saved."),
    ]);
    let ran = Arc::new(AtomicUsize::new(0));
    let tools = vec![notes_server(&fixture, ApprovalRule::Always).openai_tool()];
    let runner = openai_runner(
        &sim,
        tools,
        &ran,
        Some(Recorder::new(Decision::Deny)),
        |_| {},
    );
    let outcome = run(&runner, "Save hi.").await;
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(new_input_of(&sim, 1)[0]["approve"], json!(false));
    assert!(fixture.calls().is_empty());
    assert!(sim.violations().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_filter_covers_every_tool() {
    let fixture = McpFixture::start().unwrap();
    for (rule, asked, saved) in [(json!({"never": {}}), 0, 1), (json!({"always": {}}), 1, 1)] {
        let sim = scripted(vec![
            Turn::Items(vec![mcp_use("notes", ADD_NOTE, json!({"text": "x"}))]),
            Turn::text("Done."),
        ]);
        let ran = Arc::new(AtomicUsize::new(0));
        let approver = Recorder::new(Decision::Approve);
        let tools = vec![notes_server(&fixture, ApprovalRule::parse(Some(&rule))).openai_tool()];
        let before = fixture.calls_of(ADD_NOTE);
        let runner = openai_runner(&sim, tools, &ran, Some(approver.clone()), |_| {});
        let outcome = run(&runner, "Go.").await;
        assert_eq!(outcome.status, RunStatus::Finished, "{rule}: {outcome:?}");
        assert_eq!(mcp_calls(&approver.seen()).len(), asked, "{rule}");
        assert_eq!(fixture.calls_of(ADD_NOTE) - before, saved, "{rule}");
        assert!(sim.violations().is_empty(), "{rule}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_call_without_the_approval_it_needs_stops_before_local_effects() {
    let fixture = McpFixture::start().unwrap();
    let forged = |approval: Value, arguments: &str| {
        json!({"type": "mcp_call", "server_label": "notes", "name": ADD_NOTE,
            "arguments": arguments, "approval_request_id": approval, "output": "Saved note 9.",
            "status": "completed"})
    };
    let cases = [
        // Claims an approval nobody gave.
        forged(json!("mcpr_forged"), r#"{"text":"x"}"#),
        // Ran unasked although the declaration asks for every call.
        forged(Value::Null, r#"{"text":"x"}"#),
    ];
    for case in cases {
        let sim = scripted(vec![Turn::Items(vec![
            case.clone(),
            function_call("f", json!({})),
        ])]);
        let ran = Arc::new(AtomicUsize::new(0));
        let tools = vec![notes_server(&fixture, ApprovalRule::Always).openai_tool()];
        let runner = openai_runner(
            &sim,
            tools,
            &ran,
            Some(Recorder::new(Decision::Approve)),
            |_| {},
        );
        let outcome = run(&runner, "Go.").await;
        assert!(
            matches!(
                &outcome.status,
                RunStatus::Stopped(StopReason::InvalidResponse(why)) if why.contains("mcp_call")
            ),
            "{case}: {outcome:?}"
        );
        assert_eq!(ran.load(Ordering::SeqCst), 0, "{case}");
    }
    // One approval, two calls: the API's own call uses it up; a twin claiming it again stops
    // the run before `f`.
    let sim = scripted(vec![Turn::Items(vec![mcp_use(
        "notes",
        ADD_NOTE,
        json!({"text": "y"}),
    )])]);
    sim.set_policy(|request: &Value| {
        let approved = request["input"]
            .as_array()
            .and_then(|items| items.iter().find(|i| i["type"] == "mcp_approval_response"))
            .map_or(Value::Null, |i| i["approval_request_id"].clone());
        Turn::Items(vec![
            json!({"type": "mcp_call", "server_label": "notes", "name": ADD_NOTE,
                "arguments": r#"{"text":"y"}"#, "approval_request_id": approved,
                "output": "Saved note 9.", "status": "completed"}),
            function_call("f", json!({})),
        ])
    });
    let ran = Arc::new(AtomicUsize::new(0));
    let tools = vec![notes_server(&fixture, ApprovalRule::Always).openai_tool()];
    let runner = openai_runner(
        &sim,
        tools,
        &ran,
        Some(Recorder::new(Decision::Approve)),
        |_| {},
    );
    let outcome = run(&runner, "Go.").await;
    assert!(
        matches!(
            &outcome.status,
            RunStatus::Stopped(StopReason::InvalidResponse(why)) if why.contains("used already")
        ),
        "{outcome:?}"
    );
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_incomplete_or_pending_server_results_stop_before_local_effects() {
    let fixture = McpFixture::start().unwrap();
    let web = ServerTool::WebSearch.openai_tool(&[]);
    let mcp = notes_server(&fixture, ApprovalRule::Never).openai_tool();
    let cases: Vec<(Vec<Value>, Vec<Value>)> = vec![
        (
            vec![web.clone()],
            vec![with_status(web_search_call("q"), "failed")],
        ),
        (
            vec![web.clone()],
            vec![with_status(web_search_call("q"), "incomplete")],
        ),
        (
            vec![web.clone()],
            vec![with_status(web_search_call("q"), "in_progress")],
        ),
        (vec![mcp.clone()], vec![mcp_use("notes", FAIL, json!({}))]),
    ];
    for (tools, items) in cases {
        for (stream, eager) in [(false, false), (true, true)] {
            let mut turn = items.clone();
            turn.push(function_call("f", json!({})));
            let sim = scripted(vec![Turn::Items(turn)]);
            let ran = Arc::new(AtomicUsize::new(0));
            let runner = openai_runner(
                &sim,
                tools.clone(),
                &ran,
                Some(Recorder::new(Decision::Approve)),
                |s| {
                    s.stream = stream;
                    s.eager = eager;
                },
            );
            let outcome = run(&runner, "Go.").await;
            assert!(
                matches!(
                    outcome.status,
                    RunStatus::Stopped(StopReason::ServerToolFailed(_))
                ),
                "{items:?} stream {stream}: {outcome:?}"
            );
            // Local calls wait for the whole response when server tools are declared, eager or
            // not: `f` came before the failure was known, and still did not run.
            assert_eq!(ran.load(Ordering::SeqCst), 0, "{items:?} stream {stream}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_declaring_mcp_tools_is_never_retried() {
    let fixture = McpFixture::start().unwrap();
    let turn = || Turn::Items(vec![mcp_use("notes", ADD_NOTE, json!({"text": "once"}))]);
    let sim = scripted(vec![turn()]);
    sim.inject(Fault::ServerErrorAfterTools);
    let ran = Arc::new(AtomicUsize::new(0));
    let tools = vec![notes_server(&fixture, ApprovalRule::Never).openai_tool()];
    let runner = openai_runner(&sim, tools, &ran, None, |_| {});
    let outcome = run(&runner, "Go.").await;
    assert!(
        matches!(outcome.status, RunStatus::Stopped(StopReason::Api(_))),
        "{outcome:?}"
    );
    assert_eq!(sim.requests().len(), 1, "sent once");
    assert_eq!(
        fixture.notes(),
        ["once"],
        "the tool ran once, and only once"
    );
    // The same failure without an MCP tool is retried (nothing remote could have acted).
    let sim = scripted(vec![Turn::text("Fine.")]);
    sim.inject(Fault::ServerErrorAfterTools);
    let runner = openai_runner(&sim, Vec::new(), &ran, None, |_| {});
    assert_eq!(run(&runner, "Go.").await.status, RunStatus::Finished);
    assert_eq!(sim.requests().len(), 2, "retried");
    // On Claude too.
    let sim = scripted(vec![Turn::Blocks(vec![mcp_use(
        "notes",
        ADD_NOTE,
        json!({"text": "claude"}),
    )])]);
    sim.inject(Fault::ServerErrorAfterTools);
    let runner = claude_runner(&sim, &fixture, &ran, Recorder::new(Decision::Approve));
    let outcome = run(&runner, "Go.").await;
    assert!(
        matches!(outcome.status, RunStatus::Stopped(StopReason::Api(_))),
        "{outcome:?}"
    );
    assert_eq!(sim.requests().len(), 1);
    assert_eq!(fixture.notes(), ["once", "claude"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn image_generation_without_stored_responses_is_refused_before_any_request() {
    let sim = scripted(Vec::new());
    let ran = Arc::new(AtomicUsize::new(0));
    let runner = openai_runner(
        &sim,
        vec![ServerTool::ImageGeneration.openai_tool(&[])],
        &ran,
        None,
        |s| s.store = false,
    );
    let refused = runner.run("Draw.", &CancellationToken::new()).await;
    assert!(
        matches!(&refused, Err(RunError::Config(why)) if why.contains("image generation")),
        "{refused:?}"
    );
    assert!(sim.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_results_are_sent_back_natively_with_their_container() {
    let sim = scripted(vec![
        Turn::Items(vec![
            hands_sim::policy::code_interpreter_call("print(2)", "2"),
            function_call("f", json!({})),
        ]),
        Turn::text("Done."),
    ]);
    let ran = Arc::new(AtomicUsize::new(0));
    let runner = openai_runner(
        &sim,
        vec![ServerTool::CodeInterpreter.openai_tool(&[])],
        &ran,
        None,
        |s| s.store = false,
    );
    let outcome = run(&runner, "Compute.").await;
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    // Stateless: the second request replays the call as emitted (hands-sim's contract checks
    // it byte for byte), its container id included.
    let emitted = sim.requests()[0].response.as_ref().unwrap()["output"][0].clone();
    let replayed = input_of(&sim, 1)
        .into_iter()
        .find(|i| i["type"] == "code_interpreter_call")
        .unwrap();
    assert_eq!(replayed, emitted);
    assert!(
        replayed["container_id"]
            .as_str()
            .unwrap()
            .starts_with("cntr_")
    );
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

/// The request that carries an approval fails (a 400: the script is over) before the API acts
/// on it. The run saved that request pending before sending it, so resuming waits for a person;
/// once they record that it did not take effect, the resumed run asks the approval again (no
/// completed call matches it) and sends the new answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_whose_call_did_not_complete_is_asked_again_on_resume() {
    let fixture = McpFixture::start().unwrap();
    for (answer, saved) in [(Decision::Deny, 0), (Decision::Approve, 1)] {
        let sim = scripted(vec![Turn::Items(vec![mcp_use(
            "notes",
            ADD_NOTE,
            json!({"text": "hi"}),
        )])]);
        let ran = Arc::new(AtomicUsize::new(0));
        let mut ledger = MemoryLedger::new("run-mcp");
        let tools = vec![notes_server(&fixture, ApprovalRule::Always).openai_tool()];
        let mut first = openai_runner(
            &sim,
            tools.clone(),
            &ran,
            Some(Recorder::new(Decision::Approve)),
            |_| {},
        );
        first.set_ledger(Box::new(ledger.clone()));
        let n_before = fixture.calls_of(ADD_NOTE);
        let stopped = run(&first, "Save hi.").await;
        assert!(
            matches!(stopped.status, RunStatus::Stopped(StopReason::Api(_))),
            "{stopped:?}"
        );
        assert_eq!(fixture.calls_of(ADD_NOTE), n_before, "not run yet");
        // Each request was saved pending before it was sent; the failed one stays uncertain.
        let trail = request_trail(&ledger);
        assert_eq!(
            trail,
            [
                "request-1 attempted",
                "request-1 answered",
                "request-2 attempted",
                "request-2 UNCERTAIN (interrupted)"
            ]
        );
        // A new runner cannot resume by itself: the MCP server may have acted.
        sim.push_turn(Turn::text("Resumed."));
        let approver = Recorder::new(answer);
        let mut second = openai_runner(&sim, tools, &ran, Some(approver.clone()), |_| {});
        second.set_ledger(Box::new(ledger.clone()));
        let sent_before = sim.requests().len();
        let refused = second.resume(&CancellationToken::new()).await.unwrap_err();
        assert!(
            matches!(&refused, RunError::NeedsReconciliation(calls) if calls.len() == 1 && calls[0].call_id == "request-2"),
            "{refused:?}"
        );
        assert_eq!(sim.requests().len(), sent_before, "nothing sent");
        assert!(approver.seen().is_empty(), "nothing asked");
        // A person checks the server: the request did nothing.
        reconcile(&mut ledger, "request-2", Verdict::DidNotHappen, None).unwrap();
        let resumed = second.resume(&CancellationToken::new()).await.unwrap();
        assert_eq!(resumed.status, RunStatus::Finished, "{resumed:?}");
        let renewed = mcp_calls(&approver.seen());
        assert_eq!(renewed.len(), 1, "{resumed:?}");
        assert!(renewed[0].renewed);
        let sent = sim.last_request().unwrap().body["input"].clone();
        assert_eq!(
            sent.as_array()
                .unwrap()
                .iter()
                .find(|i| i["type"] == "mcp_approval_response")
                .unwrap()["approve"],
            json!(answer == Decision::Approve)
        );
        assert_eq!(fixture.calls_of(ADD_NOTE) - n_before, saved);
        assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    }
}

/// `request-N <state>` for each saved MCP request record, in save order (repeats collapsed).
fn request_trail(ledger: &MemoryLedger) -> Vec<String> {
    let mut trail: Vec<String> = Vec::new();
    for checkpoint in ledger.checkpoints() {
        let Some(turn) = checkpoint.pending() else {
            continue;
        };
        for record in turn.calls.iter().filter(|c| c.name == MCP_REQUEST_RECORD) {
            let state = match &record.state {
                CallState::Attempted => "attempted".to_owned(),
                CallState::Answered { .. } => "answered".to_owned(),
                other => other.label().to_owned(),
            };
            let line = format!("{} {state}", record.call_id);
            if trail.last() != Some(&line) {
                trail.push(line);
            }
        }
    }
    trail
}

/// An approver that cancels the run while it is asked about an MCP call: the process stops
/// with the approval unanswered.
struct CancelWhileAsked(CancellationToken);

#[async_trait]
impl Approver for CancelWhileAsked {
    async fn approve_safety_checks(
        &mut self,
        _: SafetyChecksContext,
        _: &CancellationToken,
    ) -> Decision {
        Decision::Deny
    }

    fn reviews(&self, kind: EffectKind) -> bool {
        kind == EffectKind::Mcp
    }

    async fn approve(&mut self, _: Effect, _: &CancellationToken) -> Decision {
        self.0.cancel();
        Decision::Approve
    }
}

/// The run stops while the approver decides: the approval was never answered, so nothing of
/// the turn is uncertain (asking is no effect) and the run resumes by itself — asking that
/// approval first, before anything is saved or sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_never_answered_is_asked_when_the_run_resumes() {
    let fixture = McpFixture::start().unwrap();
    let sim = scripted(vec![
        Turn::Items(vec![mcp_use("notes", ADD_NOTE, json!({"text": "later"}))]),
        Turn::text("Saved."),
    ]);
    let ran = Arc::new(AtomicUsize::new(0));
    let ledger = MemoryLedger::new("run-mcp");
    let tools = vec![notes_server(&fixture, ApprovalRule::Always).openai_tool()];
    let cancel = CancellationToken::new();
    let mut first = openai_runner(&sim, tools.clone(), &ran, None, |_| {});
    first.set_approver(Box::new(CancelWhileAsked(cancel.clone())));
    first.set_ledger(Box::new(ledger.clone()));
    let stopped = first.run("Save later.", &cancel).await.unwrap();
    assert_eq!(stopped.status, RunStatus::Stopped(StopReason::Cancelled));
    assert_eq!(sim.requests().len(), 1);
    let latest = ledger.checkpoints().last().cloned().unwrap();
    let turn = latest.pending().unwrap();
    let approval = turn
        .calls
        .iter()
        .find(|c| c.name == MCP_APPROVAL_RECORD)
        .unwrap();
    assert!(
        matches!(approval.state, CallState::Refused { .. }),
        "{turn:?}"
    );
    assert_eq!(approval.input["server_label"], "notes");
    let approver = Recorder::new(Decision::Approve);
    let mut second = openai_runner(&sim, tools, &ran, Some(approver.clone()), |_| {});
    second.set_ledger(Box::new(ledger.clone()));
    let resumed = second.resume(&CancellationToken::new()).await.unwrap();
    assert_eq!(resumed.status, RunStatus::Finished, "{resumed:?}");
    let asked = mcp_calls(&approver.seen());
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].request_id, approval.call_id);
    assert!(asked[0].renewed);
    // Answered once, bound to the request, and the server ran the tool once.
    let answers: Vec<Value> = input_of(&sim, 1)
        .into_iter()
        .filter(|i| i["type"] == "mcp_approval_response")
        .collect();
    assert_eq!(
        answers,
        [
            json!({"type": "mcp_approval_response", "approval_request_id": approval.call_id,
            "approve": true})
        ]
    );
    assert_eq!(fixture.notes(), ["later"]);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

fn claude_runner(
    sim: &SimServer,
    fixture: &McpFixture,
    ran: &Arc<AtomicUsize>,
    approver: Recorder,
) -> Runner {
    claude_runner_of(sim, McpServer::new("notes", fixture.url()), ran, approver)
}

fn claude_runner_of(
    sim: &SimServer,
    server: McpServer,
    ran: &Arc<AtomicUsize>,
    approver: Recorder,
) -> Runner {
    let mut settings = AnthropicSettings::new("claude-opus-5");
    settings.mcp_servers = vec![server.claude_server()];
    settings.extra_tools = vec![
        server.claude_toolset(),
        ServerTool::CodeInterpreter.claude_tool().unwrap(),
    ];
    let mut runner = Runner::anthropic(
        anthropic_client(sim),
        settings,
        None,
        Toolbox {
            functions: counted(ran),
            ..Toolbox::default()
        },
        RunConfig::default(),
    );
    runner.set_approver(Box::new(approver));
    runner
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_mcp_servers_are_approved_once_and_called_by_the_api() {
    let fixture = McpFixture::start().unwrap();
    let sim = scripted(vec![
        Turn::Blocks(vec![
            mcp_use("notes", ADD_NOTE, json!({"text": "hi"})),
            tool_use("f", json!({})),
        ]),
        Turn::text("Saved."),
    ]);
    let ran = Arc::new(AtomicUsize::new(0));
    let approver = Recorder::new(Decision::Approve);
    let runner = claude_runner(&sim, &fixture, &ran, approver.clone());
    let outcome = run(&runner, "Save hi.").await;
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    let servers: Vec<Effect> = approver
        .seen()
        .into_iter()
        .filter(|e| matches!(e, Effect::McpServer(_)))
        .collect();
    assert_eq!(servers.len(), 1, "asked once, before the first request");
    assert_eq!(fixture.notes(), ["hi"]);
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    let first = &sim.requests()[0];
    assert!(
        first
            .header("anthropic-beta")
            .unwrap()
            .contains("mcp-client-2025-11-20")
    );
    assert_eq!(first.body["mcp_servers"][0]["name"], "notes");
    // The assistant turn goes back with its MCP blocks as they came.
    let replayed = &sim.requests()[1].body["messages"][1]["content"];
    assert_eq!(replayed[0]["type"], "mcp_tool_use");
    assert_eq!(replayed[1]["type"], "mcp_tool_result");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    // A refused server: nothing is sent.
    let sim = scripted(Vec::new());
    let runner = claude_runner(&sim, &fixture, &ran, Recorder::new(Decision::Deny));
    let outcome = run(&runner, "Save hi.").await;
    assert_eq!(
        outcome.status,
        RunStatus::Stopped(StopReason::McpServerRefused("notes".into()))
    );
    assert!(sim.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_failed_or_pending_server_results_stop_before_local_tools() {
    let fixture = McpFixture::start().unwrap();
    let web_error = vec![
        server_tool_use("code_execution", json!({"code": "1/0"})),
        server_tool_result(
            "code_execution_tool_result",
            json!({"type": "code_execution_tool_result_error", "error_code": "unavailable"}),
        ),
    ];
    let pending = vec![server_tool_use("code_execution", json!({"code": "1"}))];
    for blocks in [vec![mcp_use("notes", FAIL, json!({}))], web_error, pending] {
        let mut turn = blocks.clone();
        turn.push(tool_use("f", json!({})));
        let sim = scripted(vec![Turn::Blocks(turn)]);
        let ran = Arc::new(AtomicUsize::new(0));
        let runner = claude_runner(&sim, &fixture, &ran, Recorder::new(Decision::Approve));
        let outcome = run(&runner, "Go.").await;
        assert!(
            matches!(
                outcome.status,
                RunStatus::Stopped(StopReason::ServerToolFailed(_))
            ),
            "{blocks:?}: {outcome:?}"
        );
        assert_eq!(ran.load(Ordering::SeqCst), 0, "{blocks:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_sends_the_container_back() {
    let fixture = McpFixture::start().unwrap();
    let sim = scripted(vec![
        Turn::Blocks(vec![
            server_tool_use("code_execution", json!({"code": "print(1)"})),
            server_tool_result(
                "code_execution_tool_result",
                json!({"type": "code_execution_result", "stdout": "1", "stderr": "",
                    "return_code": 0, "content": []}),
            ),
            tool_use("f", json!({})),
        ]),
        Turn::text("Done."),
    ]);
    let ran = Arc::new(AtomicUsize::new(0));
    let runner = claude_runner(&sim, &fixture, &ran, Recorder::new(Decision::Approve));
    let outcome = run(&runner, "Go.").await;
    assert_eq!(outcome.status, RunStatus::Finished, "{outcome:?}");
    let container = sim.requests()[0].response.as_ref().unwrap()["container"]["id"].clone();
    assert!(container.is_string());
    assert_eq!(sim.requests()[1].body["container"], container);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

/// On Claude: the MCP connector's servers belong to the run's identity, saved as fingerprints
/// without their token. A request the API failed after the server acted (never retried) was
/// saved pending before it was sent, so the run waits for a person; when they find the server
/// did act, the resumed run tells the model so, and the runner repeats nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_a_request_to_mcp_servers_is_saved_pending_and_reconciled_before_resume() {
    const TOKEN: &str = "CLAUDE-TOKEN-9";
    let fixture = McpFixture::with_token(TOKEN).unwrap();
    let server = || {
        let mut server = McpServer::new("notes", fixture.url());
        server.authorization = Some(TOKEN.to_owned());
        server
    };
    let sim = scripted(vec![Turn::Blocks(vec![mcp_use(
        "notes",
        ADD_NOTE,
        json!({"text": "claude"}),
    )])]);
    sim.inject(Fault::ServerErrorAfterTools);
    let ran = Arc::new(AtomicUsize::new(0));
    let mut ledger = MemoryLedger::new("run-claude");
    let mut first = claude_runner_of(&sim, server(), &ran, Recorder::new(Decision::Approve));
    first.set_ledger(Box::new(ledger.clone()));
    let stopped = run(&first, "Save a note.").await;
    assert!(
        matches!(stopped.status, RunStatus::Stopped(StopReason::Api(_))),
        "{stopped:?}"
    );
    assert_eq!(fixture.notes(), ["claude"]);
    assert_eq!(
        request_trail(&ledger),
        ["request-1 attempted", "request-1 UNCERTAIN (interrupted)"]
    );
    // The saved identity names the server by a fingerprint, without its token.
    for checkpoint in ledger.checkpoints() {
        let saved = Value::Array(checkpoint.identity.tools.clone()).to_string();
        assert!(
            !saved.contains(TOKEN) && !saved.contains(&fixture.url()),
            "{saved}"
        );
        let entry = checkpoint
            .identity
            .tools
            .iter()
            .find(|t| t["type"] == "url")
            .unwrap();
        assert_eq!(entry["name"], "notes");
        assert!(entry["url"].as_str().unwrap().starts_with("sha256:"));
    }
    // Another server URL is another run.
    let mut elsewhere = server();
    elsewhere.url = format!("{}/other", fixture.url());
    let mut other = claude_runner_of(&sim, elsewhere, &ran, Recorder::new(Decision::Approve));
    other.set_ledger(Box::new(ledger.clone()));
    let refused = other.resume(&CancellationToken::new()).await.unwrap_err();
    assert!(
        matches!(&refused, RunError::IdentityChanged(_)),
        "{refused:?}"
    );
    // The same server: refused until a person says what the request did.
    let mut second = claude_runner_of(&sim, server(), &ran, Recorder::new(Decision::Approve));
    second.set_ledger(Box::new(ledger.clone()));
    let refused = second.resume(&CancellationToken::new()).await.unwrap_err();
    assert!(
        matches!(&refused, RunError::NeedsReconciliation(calls) if calls[0].call_id == "request-1"),
        "{refused:?}"
    );
    assert_eq!(sim.requests().len(), 1, "nothing sent");
    reconcile(
        &mut ledger,
        "request-1",
        Verdict::Happened,
        Some("the note is saved".into()),
    )
    .unwrap();
    sim.push_turn(Turn::text("The note is there."));
    let resumed = second.resume(&CancellationToken::new()).await.unwrap();
    assert_eq!(resumed.status, RunStatus::Finished, "{resumed:?}");
    let told = sim.last_request().unwrap().body["messages"].to_string();
    assert!(
        told.contains(MCP_REQUEST_HAPPENED) && told.contains("the note is saved"),
        "{told}"
    );
    assert_eq!(fixture.notes(), ["claude"], "nothing repeated");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}
