//! The runner at the model boundary: an answer the contract does not call complete and
//! approved starts nothing. Each test scripts the simulated API (which rejects what the real
//! APIs reject) and proves nothing ran by what it would have left behind: a file bash would have
//! created, a function's call count, input a desktop's X client would have received.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use hands_core::geometry::Size;
use hands_core::{CancellationToken, Desktop};
use hands_models::anthropic::{AnthropicClient, AnthropicConfig};
use hands_models::openai::{OpenAiClient, OpenAiConfig};
use hands_runner::approval::{
    ApproveAll, Approver, Decision, DenyAll, Effect, SafetyChecksContext, refused_text,
};
use hands_runner::functions::{Function, Functions};
use hands_runner::{
    AnthropicSettings, ApiStop, OpenAiSettings, RunConfig, RunError, RunOutcome, RunStatus, Runner,
    StopReason, Toolbox,
};
use hands_sandbox::{BashConfig, BashTool, EditorConfig, EditorTool};
use hands_sim::policy::{
    computer_call, function_call, mcp_approval_request, message, reasoning, text, tool_use,
    toolset_use, with_status,
};
use hands_sim::{SimConfig, SimServer, Turn};
use hands_testkit::InputRecorder;
use hands_toolset::computer::members::Member;
use hands_toolset::computer::{ComputerConfig, ComputerToolset};
use hands_toolset::computer_call::{ComputerCallConfig, ComputerCallExecutor};
use hands_x11::{X11Desktop, XvfbConfig};
use serde_json::{Value, json};

fn anthropic_client(sim: &SimServer) -> AnthropicClient {
    let mut config = AnthropicConfig::new("sk-test");
    config.base_url = sim.base_url();
    AnthropicClient::new(config).unwrap()
}

fn openai_client(sim: &SimServer) -> OpenAiClient {
    let mut config = OpenAiConfig::new("sk-test");
    config.base_url = sim.openai_base_url();
    OpenAiClient::new(config).unwrap()
}

/// A Claude runner with bash and the text editor, no desktop.
fn claude_with_bash(sim: &SimServer, config: RunConfig) -> Runner {
    let toolbox = Toolbox {
        bash: Some(BashTool::new(BashConfig::default())),
        editor: Some(EditorTool::new(EditorConfig::default()).unwrap()),
        functions: counted_functions(&Arc::new(AtomicUsize::new(0))),
        ..Toolbox::default()
    };
    Runner::anthropic(
        anthropic_client(sim),
        AnthropicSettings::new("claude-opus-5"),
        None,
        toolbox,
        config,
    )
}

/// Functions `f` and `g`, each counting its runs in `ran`.
fn counted_functions(ran: &Arc<AtomicUsize>) -> Functions {
    let mut functions = Functions::new();
    for name in ["f", "g"] {
        let ran = Arc::clone(ran);
        functions
            .add(Function::typed(name, "Counts.", move |_: Value| {
                let ran = Arc::clone(&ran);
                async move {
                    ran.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, String>("done".to_owned())
                }
            }))
            .unwrap();
    }
    functions
}

/// An OpenAI runner with the counted functions and no desktop.
fn openai_with_functions(sim: &SimServer, ran: &Arc<AtomicUsize>, stream: bool) -> Runner {
    let mut settings = OpenAiSettings::new("gpt-5.5");
    settings.stream = stream;
    settings.eager = stream;
    Runner::openai(
        openai_client(sim),
        settings,
        None,
        Toolbox {
            functions: counted_functions(ran),
            ..Toolbox::default()
        },
        RunConfig::default(),
    )
}

fn touch(path: &Path) -> Value {
    tool_use(
        "bash",
        json!({"command": format!("touch {}", path.display())}),
    )
}

async fn run(runner: &Runner, task: &str) -> RunOutcome {
    runner.run(task, &CancellationToken::new()).await.unwrap()
}

/// The content of the last message of request `n`.
fn last_message(sim: &SimServer, n: usize) -> Value {
    sim.requests()[n].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_turn_not_ended_by_tool_use_runs_none_of_its_calls() {
    for reason in [
        "max_tokens",
        "refusal",
        "model_context_window_exceeded",
        "something_new",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("ran");
        let sim = SimServer::start(SimConfig::scripted(vec![
            Turn::stopped(Turn::Blocks(vec![text("I will"), touch(&marker)]), reason),
            Turn::text("Understood."),
        ]))
        .unwrap();
        let runner = claude_with_bash(&sim, RunConfig::default());
        let outcome = run(&runner, "Make a file.").await;
        let stop = ApiStop::Messages(reason.into());
        assert_eq!(
            outcome.status,
            RunStatus::Stopped(StopReason::ModelStopped(stop.clone())),
            "{reason}"
        );
        assert_eq!(outcome.api_stop, Some(stop.clone()));
        assert!(outcome.executed_call_ids.is_empty(), "{reason}");
        assert!(!marker.exists(), "{reason}: bash ran");
        // The unrun call is answered in the conversation kept for a later task, which the
        // strict stand-in accepts.
        let outcome = run(&runner, "Never mind.").await;
        assert_eq!(outcome.status, RunStatus::Finished, "{reason}");
        let answer = last_message(&sim, 1)["content"].clone();
        assert_eq!(answer[0]["type"], "tool_result");
        assert_eq!(answer[0]["is_error"], json!(true));
        assert_eq!(
            answer[0]["content"],
            json!(hands_runner::not_executed_turn_ended(&stop))
        );
        assert_eq!(answer[1], json!({"type": "text", "text": "Never mind."}));
        assert!(sim.violations().is_empty(), "{:?}", sim.violations());
        assert!(!marker.exists());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_claude_turn_is_sent_back_running_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    for stream in [false, true] {
        let sim = SimServer::start(SimConfig::scripted(vec![
            Turn::stopped(
                Turn::Blocks(vec![text("Still searching."), touch(&marker)]),
                "pause_turn",
            ),
            Turn::text("Found nothing to do."),
        ]))
        .unwrap();
        let mut settings = AnthropicSettings::new("claude-opus-5");
        settings.stream = stream;
        let runner = Runner::anthropic(
            anthropic_client(&sim),
            settings,
            None,
            Toolbox {
                bash: Some(BashTool::new(BashConfig::default())),
                ..Toolbox::default()
            },
            RunConfig::default(),
        );
        let outcome = run(&runner, "Search.").await;
        assert_eq!(outcome.status, RunStatus::Finished, "stream {stream}");
        assert_eq!(outcome.steps, 2);
        assert_eq!(outcome.api_stop, Some(ApiStop::Messages("end_turn".into())));
        assert!(!marker.exists(), "bash ran on a paused turn");
        // The paused turn went back last and unchanged (the stand-in refuses anything else).
        let resent = last_message(&sim, 1);
        assert_eq!(resent["role"], "assistant");
        assert_eq!(
            resent["content"],
            sim.requests()[0].response.as_ref().unwrap()["content"]
        );
        assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_end_turn_with_a_stray_tool_use_finishes_without_running_it() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let sim = SimServer::start(SimConfig::scripted(vec![Turn::stopped(
        Turn::Blocks(vec![text("Done."), touch(&marker)]),
        "end_turn",
    )]))
    .unwrap();
    let runner = claude_with_bash(&sim, RunConfig::default());
    let outcome = run(&runner, "Go.").await;
    assert_eq!(outcome.status, RunStatus::Finished);
    assert_eq!(outcome.final_text, "Done.");
    assert!(!marker.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_answer_on_the_last_allowed_request_is_a_finish() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![touch(&marker)]),
        Turn::text("Made it."),
    ]))
    .unwrap();
    let runner = claude_with_bash(&sim, RunConfig { max_steps: 2 });
    let outcome = run(&runner, "Make a file.").await;
    assert_eq!(outcome.status, RunStatus::Finished);
    assert_eq!(outcome.steps, 2);
    assert!(marker.exists());
    assert_eq!(
        sim.requests()[1].body["tool_choice"],
        json!({"type": "none"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_bash_editor_and_functions_never_run_and_the_model_reads_why() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let created = dir.path().join("created.txt");
    let ran = Arc::new(AtomicUsize::new(0));
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Blocks(vec![
            touch(&marker),
            tool_use(
                "str_replace_based_edit_tool",
                json!({"command": "create", "path": created.display().to_string(), "file_text": "x"}),
            ),
            tool_use("f", json!({})),
            // Input that cannot run is answered with what is wrong, and nobody is asked.
            tool_use("bash", json!({})),
        ]),
        Turn::text("I was not allowed."),
    ]))
    .unwrap();
    let mut runner = Runner::anthropic(
        anthropic_client(&sim),
        AnthropicSettings::new("claude-opus-5"),
        None,
        Toolbox {
            bash: Some(BashTool::new(BashConfig::default())),
            editor: Some(EditorTool::new(EditorConfig::default()).unwrap()),
            functions: counted_functions(&ran),
            ..Toolbox::default()
        },
        RunConfig::default(),
    );
    runner.set_approver(Box::new(DenyAll));
    let outcome = run(&runner, "Do things.").await;
    assert_eq!(outcome.status, RunStatus::Finished);
    assert!(!marker.exists(), "bash ran");
    assert!(!created.exists(), "the editor wrote");
    assert_eq!(ran.load(Ordering::SeqCst), 0, "the function ran");
    let answers = last_message(&sim, 1)["content"].clone();
    for (answer, name) in
        answers
            .as_array()
            .unwrap()
            .iter()
            .zip(["bash", "str_replace_based_edit_tool", "f"])
    {
        assert_eq!(answer["is_error"], json!(true));
        assert_eq!(answer["content"], json!(refused_text(name)));
    }
    assert_eq!(answers[3]["is_error"], json!(true));
    assert!(
        !answers[3]["content"]
            .as_str()
            .unwrap()
            .contains("did not grant"),
        "{}",
        answers[3]
    );
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_incomplete_openai_response_runs_none_of_its_calls() {
    let ran = Arc::new(AtomicUsize::new(0));
    let sim = SimServer::start(SimConfig::scripted(vec![Turn::stopped(
        Turn::Items(vec![function_call("f", json!({})), message("and")]),
        "max_output_tokens",
    )]))
    .unwrap();
    let runner = openai_with_functions(&sim, &ran, false);
    let outcome = run(&runner, "Go.").await;
    let stop = ApiStop::Responses {
        status: "incomplete".into(),
        reason: Some("max_output_tokens".into()),
    };
    assert_eq!(
        outcome.status,
        RunStatus::Stopped(StopReason::ModelStopped(stop.clone()))
    );
    assert_eq!(outcome.api_stop, Some(stop));
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert!(outcome.executed_call_ids.is_empty());
    // Its call is unanswered: this runner sends no request that would leave it so.
    let again = runner.run("Go on.", &CancellationToken::new()).await;
    assert!(matches!(again, Err(RunError::Config(_))), "{again:?}");
    assert_eq!(sim.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_call_that_did_not_complete_stops_the_response_before_any_call_runs() {
    for status in ["incomplete", "in_progress"] {
        for stream in [false, true] {
            let ran = Arc::new(AtomicUsize::new(0));
            // The cut call comes first: nothing of the response runs, eager or not.
            let sim = SimServer::start(SimConfig::scripted(vec![Turn::Items(vec![
                with_status(function_call("f", json!({})), status),
                function_call("g", json!({})),
            ])]))
            .unwrap();
            let runner = openai_with_functions(&sim, &ran, stream);
            let outcome = run(&runner, "Go.").await;
            let RunStatus::Stopped(StopReason::ItemNotCompleted {
                item_type,
                status: seen,
                ..
            }) = &outcome.status
            else {
                panic!("{status} stream {stream}: {outcome:?}");
            };
            assert_eq!(
                (item_type.as_str(), seen.as_str()),
                ("function_call", status)
            );
            assert_eq!(ran.load(Ordering::SeqCst), 0, "{status} stream {stream}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completed_call_before_a_cut_one_runs_only_when_streamed_eagerly() {
    // Eager execution runs each completed call as it arrives, as the SDK's early execution
    // does; the cut call after it never runs. Without eagerness nothing of the response runs.
    for (stream, want) in [(false, 0), (true, 1)] {
        let ran = Arc::new(AtomicUsize::new(0));
        let sim = SimServer::start(SimConfig::scripted(vec![Turn::Items(vec![
            function_call("f", json!({})),
            with_status(function_call("g", json!({})), "incomplete"),
        ])]))
        .unwrap();
        let runner = openai_with_functions(&sim, &ran, stream);
        let outcome = run(&runner, "Go.").await;
        assert!(
            matches!(
                outcome.status,
                RunStatus::Stopped(StopReason::ItemNotCompleted { .. })
            ),
            "{outcome:?}"
        );
        assert_eq!(ran.load(Ordering::SeqCst), want, "stream {stream}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undeclared_openai_item_stops_the_run_and_is_named() {
    let cases = [
        (
            mcp_approval_request("tickets", "delete_ticket", json!({"id": 7})),
            "mcp_approval_request",
        ),
        (
            json!({"type": "shell_call", "id": "sh_1", "status": "completed"}),
            "shell_call",
        ),
        (
            json!({"type": "web_search_call", "id": "ws_1", "status": "completed"}),
            "web_search_call",
        ),
    ];
    for (item, name) in cases {
        for stream in [false, true] {
            let ran = Arc::new(AtomicUsize::new(0));
            let sim = SimServer::start(SimConfig::scripted(vec![Turn::Items(vec![
                item.clone(),
                function_call("f", json!({})),
            ])]))
            .unwrap();
            let runner = openai_with_functions(&sim, &ran, stream);
            let outcome = run(&runner, "Go.").await;
            assert_eq!(
                outcome.status,
                RunStatus::Stopped(StopReason::UndeclaredItem {
                    item_type: name.into()
                }),
                "stream {stream}"
            );
            assert!(!outcome.finished());
            assert!(outcome.status_text_names(name));
            assert_eq!(ran.load(Ordering::SeqCst), 0, "{name} stream {stream}");
        }
    }
}

/// What a person reads about a stopped run names the item.
trait StatusText {
    fn status_text_names(&self, name: &str) -> bool;
}

impl StatusText for RunOutcome {
    fn status_text_names(&self, name: &str) -> bool {
        match &self.status {
            RunStatus::Stopped(reason) => reason.to_string().contains(&format!("`{name}`")),
            _ => false,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_answer_with_neither_message_nor_call_is_an_error() {
    let ran = Arc::new(AtomicUsize::new(0));
    let sim = SimServer::start(SimConfig::scripted(vec![Turn::Items(vec![reasoning(
        "thinking",
    )])]))
    .unwrap();
    let runner = openai_with_functions(&sim, &ran, false);
    let outcome = run(&runner, "Go.").await;
    assert_eq!(
        outcome.status,
        RunStatus::Stopped(StopReason::EmptyResponse)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_openai_function_is_answered_and_the_run_goes_on() {
    let ran = Arc::new(AtomicUsize::new(0));
    let sim = SimServer::start(SimConfig::scripted(vec![
        Turn::Items(vec![function_call("f", json!({}))]),
        Turn::text("Fine."),
    ]))
    .unwrap();
    let mut runner = openai_with_functions(&sim, &ran, false);
    runner.set_approver(Box::new(DenyAll));
    let outcome = run(&runner, "Go.").await;
    assert_eq!(outcome.status, RunStatus::Finished);
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    // The input is sent whole (hands projects it; nothing is chained on the server).
    let input = sim.requests()[1].body["input"].clone();
    let output = input
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["type"] == "function_call_output")
        .unwrap();
    assert_eq!(output["output"], json!(refused_text("f")));
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

/// Reviews nothing, and refuses whatever it is shown.
struct RefuseWhatIsShown(Arc<AtomicUsize>);

#[async_trait]
impl Approver for RefuseWhatIsShown {
    async fn approve_safety_checks(
        &mut self,
        _: SafetyChecksContext,
        _: &CancellationToken,
    ) -> Decision {
        Decision::Deny
    }

    async fn approve(&mut self, effect: Effect, _: &CancellationToken) -> Decision {
        assert!(
            effect.confirm_required(),
            "only required confirmations are shown"
        );
        self.0.fetch_add(1, Ordering::SeqCst);
        Decision::Deny
    }
}

fn desk() -> (X11Desktop, InputRecorder) {
    let desktop = X11Desktop::spawn(&XvfbConfig::new(Size::new(800, 600).unwrap())).unwrap();
    let recorder = InputRecorder::start(desktop.display()).unwrap();
    (desktop, recorder)
}

fn keyboard_confirming_runner(sim: &SimServer, desktop: X11Desktop) -> Runner {
    let boxed: Box<dyn Desktop> = Box::new(desktop);
    let computer = ComputerToolset::new(
        boxed,
        ComputerConfig {
            confirm_members: Member::KEYBOARD.to_vec(),
            append_screenshot: false,
            ..ComputerConfig::default()
        },
    )
    .unwrap();
    Runner::anthropic(
        anthropic_client(sim),
        AnthropicSettings::new("claude-opus-5"),
        Some(computer),
        Toolbox::default(),
        RunConfig::default(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyboard_members_need_a_confirmation_as_in_the_sdk() {
    let c = |member: &str, input: Value| toolset_use("computer", member, input);
    let turns = || {
        vec![
            Turn::Blocks(vec![
                c("left_click", json!({"coordinate": [40, 40]})),
                c("type", json!({"text": "secret"})),
            ]),
            Turn::text("Done."),
        ]
    };
    // No approver: the run is refused before any request, as the SDK's toolset refuses to be
    // built without `confirm`.
    let (desktop, _recorder) = desk();
    let sim = SimServer::start(SimConfig::scripted(turns())).unwrap();
    let runner = keyboard_confirming_runner(&sim, desktop);
    let refused = runner.run("Type.", &CancellationToken::new()).await;
    assert!(
        matches!(&refused, Err(RunError::Config(why)) if why.contains("type, key, hold_key")),
        "{refused:?}"
    );
    assert!(sim.requests().is_empty());

    // An approver that reviews nothing is still shown `type`, and its refusal holds.
    let (desktop, recorder) = desk();
    let sim = SimServer::start(SimConfig::scripted(turns())).unwrap();
    let mut runner = keyboard_confirming_runner(&sim, desktop);
    let shown = Arc::new(AtomicUsize::new(0));
    runner.set_approver(Box::new(RefuseWhatIsShown(Arc::clone(&shown))));
    let outcome = run(&runner, "Type.").await;
    assert_eq!(outcome.status, RunStatus::Finished);
    assert_eq!(shown.load(Ordering::SeqCst), 1, "only `type` was shown");
    assert_eq!(hands_testkit::typed_text(&recorder.sync().unwrap()), "");
    let answers = last_message(&sim, 1)["content"].clone();
    assert_eq!(answers[1]["content"], json!(refused_text("type")));
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());

    // Approved, it types.
    let (desktop, recorder) = desk();
    let sim = SimServer::start(SimConfig::scripted(turns())).unwrap();
    let mut runner = keyboard_confirming_runner(&sim, desktop);
    runner.set_approver(Box::new(ApproveAll));
    assert_eq!(run(&runner, "Type.").await.status, RunStatus::Finished);
    assert_eq!(
        hands_testkit::typed_text(&recorder.sync().unwrap()),
        "secret"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_computer_call_that_did_not_complete_never_reaches_the_desktop() {
    for stream in [false, true] {
        let (desktop, recorder) = desk();
        let sim = SimServer::start(SimConfig::scripted(vec![Turn::Items(vec![with_status(
            computer_call(vec![
                json!({"type": "click", "button": "left", "x": 30, "y": 30}),
                json!({"type": "type", "text": "cut"}),
            ]),
            "incomplete",
        )])]))
        .unwrap();
        let boxed: Box<dyn Desktop> = Box::new(desktop);
        let mut settings = OpenAiSettings::new("computer-use-2");
        settings.stream = stream;
        settings.eager = stream;
        let runner = Runner::openai(
            openai_client(&sim),
            settings,
            Some(ComputerCallExecutor::new(
                boxed,
                ComputerCallConfig::default(),
            )),
            Toolbox::default(),
            RunConfig::default(),
        );
        let outcome = run(&runner, "Click.").await;
        assert!(
            matches!(
                &outcome.status,
                RunStatus::Stopped(StopReason::ItemNotCompleted { item_type, .. })
                    if item_type == "computer_call"
            ),
            "{outcome:?}"
        );
        let clicks = recorder
            .sync()
            .unwrap()
            .iter()
            .filter(|e| e.is_button_press(1))
            .count();
        assert_eq!(clicks, 0, "stream {stream}");
        assert_eq!(hands_testkit::typed_text(&recorder.sync().unwrap()), "");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_id_that_comes_again_runs_nothing() {
    for stream in [false, true] {
        let ran = Arc::new(AtomicUsize::new(0));
        let with_id = |name: &str| {
            let mut call = function_call(name, json!({}));
            call["call_id"] = json!("call_same");
            call
        };
        let sim = SimServer::start(SimConfig::scripted(vec![
            Turn::Items(vec![with_id("f")]),
            Turn::Items(vec![with_id("g")]),
        ]))
        .unwrap();
        let runner = openai_with_functions(&sim, &ran, stream);
        let outcome = run(&runner, "Go.").await;
        assert_eq!(
            outcome.status,
            RunStatus::Stopped(StopReason::DuplicateCallId {
                call_id: "call_same".into()
            }),
            "stream {stream}"
        );
        assert_eq!(ran.load(Ordering::SeqCst), 1, "only the first call ran");
    }
}
