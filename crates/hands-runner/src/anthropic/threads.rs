//! Claude requests on message threads: the API holds the conversation between requests, so a
//! request sends only the messages that are new since the answer it continues (anthropic 2.10's
//! tool runner, `thread` with the beta `message-threads-2026-08-12`).
//!
//! A request continues the thread only when what the server holds is exactly the start of the
//! conversation hands would send (compared by a digest, `cache_control` marks aside: the server
//! keeps none); whenever the history hands projects differs from it — screenshots dropped in a
//! batch, a budget cut, a resumed run, a paused turn sent back — the request creates a new thread
//! with the whole conversation. A thread the API no longer holds (`thread_not_found`) is
//! re-created the same way, once. Requests with what threads do not support (thinking, the API's
//! context management) are sent whole, without a thread.

use hands_models::anthropic::{Message, MessageParam, MessagesRequest, Role};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

/// The beta header a request on a thread carries.
pub const THREADS_BETA: &str = "message-threads-2026-08-12";

/// Whether Claude requests go on message threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Threads {
    /// Every request carries the whole conversation.
    #[default]
    Off,
    /// Requests continue a thread the API holds and send only the new messages; the whole
    /// conversation whenever a thread cannot be continued.
    On,
}

/// What the API holds: the answer a request may continue, and a digest of the conversation up
/// to and including it.
#[derive(Debug, Clone)]
struct Held {
    answer_id: String,
    n_messages: usize,
    digest: [u8; 32],
}

/// The run's thread, if the API holds one.
#[derive(Debug, Default)]
pub(crate) struct ThreadState {
    held: Option<Held>,
}

/// How a request was sent.
#[derive(Debug, Clone)]
pub(crate) enum Sent {
    /// Whole, on no thread.
    Whole,
    /// On a thread: the whole conversation it stands for (the held part and what was sent).
    OnThread {
        conversation: Vec<MessageParam>,
        continued: bool,
    },
}

impl ThreadState {
    /// Puts `request` (whole: system, tools, every message) on a thread when `threads` is on and
    /// the request has nothing threads refuse: continued when the API holds exactly its start,
    /// else created.
    pub(crate) fn prepare(&self, threads: Threads, request: &mut MessagesRequest) -> Sent {
        let supported = request.thinking.is_none()
            && request.context_management.is_none()
            && request.cache_control.is_none();
        if threads == Threads::Off || !supported {
            return Sent::Whole;
        }
        let conversation = request.messages.clone();
        if !request.betas.iter().any(|b| b == THREADS_BETA) {
            request.betas.push(THREADS_BETA.to_owned());
        }
        let continues = self.held.as_ref().filter(|held| {
            conversation.len() > held.n_messages
                && conversation[held.n_messages].role == Role::User
                && digest(&conversation[..held.n_messages]) == held.digest
        });
        match continues {
            Some(held) => {
                request.messages = conversation[held.n_messages..].to_vec();
                // The thread keeps the system prompt and the tools of the request that made it.
                request.system = None;
                request.tools = Vec::new();
                request.extra.insert(
                    "thread".into(),
                    json!({"type": "continue", "previous_message_id": held.answer_id}),
                );
            }
            None => {
                request
                    .extra
                    .insert("thread".into(), json!({"type": "create"}));
            }
        }
        Sent::OnThread {
            conversation,
            continued: continues.is_some(),
        }
    }

    /// `answer` arrived for a request sent as `sent`: the API now holds it.
    pub(crate) fn answered(&mut self, sent: Sent, answer: &Message) {
        let Sent::OnThread {
            mut conversation, ..
        } = sent
        else {
            self.held = None;
            return;
        };
        conversation.push(answer.to_param());
        self.held = Some(Held {
            answer_id: answer.id.clone(),
            n_messages: conversation.len(),
            digest: digest(&conversation),
        });
    }

    /// The API no longer holds the thread (or a request on it failed): the next request
    /// creates one.
    pub(crate) fn forget(&mut self) {
        self.held = None;
    }
}

/// Whether `error` says the thread a request continued is no longer held.
pub(crate) fn is_thread_lost(error: &hands_models::Error) -> bool {
    match error {
        hands_models::Error::Api(api) => {
            api.status == 404 && api.code.as_deref() == Some("thread_not_found")
        }
        _ => false,
    }
}

/// Turns a request continued on a thread back into one that creates a thread with the whole
/// `conversation`, `system` and `tools`.
pub(crate) fn recreate(
    request: &mut MessagesRequest,
    conversation: Vec<MessageParam>,
    system: Option<hands_models::anthropic::System>,
    tools: Vec<Value>,
) {
    request.messages = conversation;
    request.system = system;
    request.tools = tools;
    request
        .extra
        .insert("thread".into(), json!({"type": "create"}));
}

/// A digest of messages as the API holds them: `cache_control` marks aside.
fn digest(messages: &[MessageParam]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for message in messages {
        let mut value = serde_json::to_value(message).unwrap_or(Value::Null);
        strip_cache_control(&mut value);
        hasher.update(value.to_string().as_bytes());
        hasher.update([0]);
    }
    hasher.finalize().into()
}

fn strip_cache_control(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("cache_control");
            map.values_mut().for_each(strip_cache_control);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_cache_control),
        _ => {}
    }
}
