//! Who agrees to a consequential action over MCP: the person, asked through the client
//! (elicitation), or, when the client cannot ask, the server's `--approve` policy. Never silently:
//! every answer says who decided.
//!
//! Two protocol revisions ask differently:
//! - `2025-11-25`: the server sends `elicitation/create` during the call and waits
//!   ([`Asker::Elicit`]);
//! - `2026-07-28`: server-to-client requests are gone; the call answers `input_required` with an
//!   elicitation and an HMAC-sealed `requestState` binding the question to this tool and these
//!   exact arguments; the client calls again with the person's answer ([`Asker::Rounds`]). A
//!   sealed state is single-use and expires, so an answer cannot be replayed for another action.
//!
//! The browser's `confirm` callback ([`McpConfirm`]) and the desktop surface both ask through the
//! call's [`Asker`]; the URL policy and the origin allow-list stay those of `hands run`
//! (`hands-toolset` and the driver), whatever the person answers.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use hands_core::CancellationToken;
use hands_toolset::browser::consent::{Approval, CallbackError, Confirm, ConfirmContext};
use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, InputRequest,
    InputRequests, InputRequiredResult, InputResponses, RequestStateCodec,
};
use rmcp::service::{ElicitationError, Peer, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The key of the one input request a consent round asks.
pub const APPROVAL_INPUT: &str = "approval";

/// How long a person has to answer a `2026-07-28` consent round.
pub const ROUND_TTL: Duration = Duration::from_secs(600);

/// What the server decides when the client cannot ask a person (`--approve`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ApprovePolicy {
    /// Approve what the URL policy and allow-list allow (for scripts and trusted setups).
    All,
    /// Refuse every consequential action.
    #[default]
    None,
}

/// The elicitation form: one boolean.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(description = "Approve this action?")]
pub struct ApproveForm {
    /// True to let the action run.
    #[schemars(description = "Allow the action")]
    pub approve: bool,
}

rmcp::elicit_safe!(ApproveForm);

/// Who decided, said in the tool's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decider {
    /// The person, through the client's elicitation.
    Person,
    /// The server's `--approve` policy.
    Policy(ApprovePolicy),
}

impl Decider {
    /// The phrase in the answer: "approved by the person", "refused by --approve none".
    pub fn phrase(self, approved: bool) -> String {
        let verb = if approved { "approved" } else { "refused" };
        match self {
            Decider::Person => format!("{verb} by the person"),
            Decider::Policy(ApprovePolicy::All) => format!("{verb} by the server's --approve all"),
            Decider::Policy(ApprovePolicy::None) => {
                format!("{verb} by the server's --approve none")
            }
        }
    }
}

/// One decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Decided now.
    Decided {
        /// Whether the action may run.
        approved: bool,
        /// Who decided.
        by: Decider,
    },
    /// A `2026-07-28` client must ask the person first: the call ends with `input_required`.
    NeedsInput {
        /// What to ask.
        question: String,
    },
}

/// How the current call gets its consent.
#[derive(Debug, Clone)]
pub enum Asker {
    /// No elicitation on this client: the server policy decides.
    Policy(ApprovePolicy),
    /// `2025-11-25` with elicitation: ask now with `elicitation/create`.
    Elicit(Peer<RoleServer>),
    /// `2026-07-28` with elicitation: the person's answer from the previous round, if any.
    Rounds {
        /// `Some` on the retry that carries the answer.
        answer: Option<bool>,
    },
}

impl Asker {
    /// Decides on `question`.
    pub async fn decide(&self, question: &str, cancel: &CancellationToken) -> Verdict {
        match self {
            Asker::Policy(policy) => {
                let approved = *policy == ApprovePolicy::All;
                tracing::info!(target: "hands::mcp", approved, %question, "decided by --approve");
                Verdict::Decided {
                    approved,
                    by: Decider::Policy(*policy),
                }
            }
            Asker::Elicit(peer) => {
                let asked = peer.elicit::<ApproveForm>(question.to_owned());
                let answer = tokio::select! {
                    answer = asked => answer,
                    () = cancel.cancelled() => Err(ElicitationError::UserCancelled),
                };
                let approved = matches!(answer, Ok(Some(ApproveForm { approve: true })));
                tracing::info!(target: "hands::mcp", approved, %question, "decided by the person");
                Verdict::Decided {
                    approved,
                    by: Decider::Person,
                }
            }
            Asker::Rounds { answer: Some(a) } => Verdict::Decided {
                approved: *a,
                by: Decider::Person,
            },
            Asker::Rounds { answer: None } => Verdict::NeedsInput {
                question: question.to_owned(),
            },
        }
    }
}

/// The current call's asker and what it decided, shared with the browser's `confirm` callback.
/// Calls are serialised by the server, so one slot serves them all.
#[derive(Debug, Clone, Default)]
pub struct ConsentSlot {
    inner: Arc<Mutex<SlotState>>,
}

#[derive(Debug, Default)]
struct SlotState {
    asker: Option<Asker>,
    verdict: Option<Verdict>,
}

impl ConsentSlot {
    /// Starts a call with `asker`.
    pub fn begin(&self, asker: Asker) {
        if let Ok(mut state) = self.inner.lock() {
            *state = SlotState {
                asker: Some(asker),
                verdict: None,
            };
        }
    }

    /// Ends the call; returns what was decided (or asked), if consent was needed.
    pub fn finish(&self) -> Option<Verdict> {
        self.inner.lock().ok().and_then(|mut state| {
            state.asker = None;
            state.verdict.take()
        })
    }

    /// Decides through the current call's asker; no call in progress denies.
    pub async fn decide(&self, question: &str, cancel: &CancellationToken) -> Verdict {
        let asker = self.inner.lock().ok().and_then(|s| s.asker.clone());
        let verdict = match asker {
            Some(asker) => asker.decide(question, cancel).await,
            None => Verdict::Decided {
                approved: false,
                by: Decider::Policy(ApprovePolicy::None),
            },
        };
        if let Ok(mut state) = self.inner.lock() {
            state.verdict = Some(verdict.clone());
        }
        verdict
    }
}

/// The browser toolset's `confirm`, answered through the current call's [`Asker`].
#[derive(Debug, Clone)]
pub struct McpConfirm {
    /// Shared with the server.
    pub slot: ConsentSlot,
}

/// The question a person sees for a browser action.
pub fn browser_question(context: &ConfirmContext) -> String {
    let origin = context
        .state
        .as_ref()
        .map(|s| s.to_json())
        .and_then(|state| {
            state["tabs"].as_array().and_then(|tabs| {
                tabs.iter()
                    .find(|t| t["active"] == Value::Bool(true))
                    .and_then(|t| t["url"].as_str().map(str::to_owned))
            })
        })
        .unwrap_or_else(|| "the browser".to_owned());
    format!(
        "Allow the browser action `{}` {} on {origin}?",
        context.member,
        short_json(&context.arguments, 300)
    )
}

/// A JSON value as text of at most `max_chars` characters.
pub fn short_json(value: &Value, max_chars: usize) -> String {
    let text = value.to_string();
    if text.chars().count() > max_chars {
        format!("{}…", text.chars().take(max_chars).collect::<String>())
    } else {
        text
    }
}

#[async_trait]
impl Confirm for McpConfirm {
    async fn confirm(
        &self,
        context: ConfirmContext,
        cancel: CancellationToken,
    ) -> Result<Approval, CallbackError> {
        let question = browser_question(&context);
        Ok(match self.slot.decide(&question, &cancel).await {
            Verdict::Decided { approved: true, .. } => Approval::Approve,
            _ => Approval::Deny,
        })
    }
}

/// What a sealed `requestState` holds: the call it approves and when it expires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct RoundState {
    tool: String,
    /// The arguments as the client sent them, compact JSON.
    arguments: String,
    nonce: u64,
    expires_unix: u64,
}

/// Why a retry's consent could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RoundError {
    /// The state was tampered with, or sealed by another server.
    #[error("the requestState is not one this server sealed")]
    Forged,
    /// The state names another tool or other arguments.
    #[error("the requestState approves another call: call again without it to be asked")]
    OtherCall,
    /// Used before, or expired.
    #[error("the requestState was used already or has expired: call again without it")]
    Stale,
}

/// Seals and opens `2026-07-28` consent rounds.
pub struct Rounds {
    codec: RequestStateCodec,
    used: Mutex<HashSet<u64>>,
    next_nonce: Mutex<u64>,
}

impl std::fmt::Debug for Rounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rounds").finish_non_exhaustive()
    }
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl Rounds {
    /// Rounds sealed with a fresh random key (from the kernel), valid for this process only.
    ///
    /// The nonce counter starts from its own random value, drawn after the key: a sealed state
    /// is signed, not encrypted, so every client reads its nonce, and nothing of the key may be
    /// in it.
    pub fn new() -> std::io::Result<Rounds> {
        Rounds::from_random(&mut std::fs::File::open("/dev/urandom")?)
    }

    /// Rounds whose key (32 bytes) and then first nonce (8 bytes) are read from `random`.
    fn from_random(random: &mut impl std::io::Read) -> std::io::Result<Rounds> {
        let mut key = [0u8; 32];
        random.read_exact(&mut key)?;
        let mut start = [0u8; 8];
        random.read_exact(&mut start)?;
        let codec = RequestStateCodec::try_new(key.to_vec())
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(Rounds {
            codec,
            used: Mutex::new(HashSet::new()),
            next_nonce: Mutex::new(u64::from_le_bytes(start)),
        })
    }

    /// The `input_required` answer asking the person about `question` for this call.
    pub fn ask(
        &self,
        tool: &str,
        arguments: &Value,
        question: &str,
    ) -> Result<InputRequiredResult, String> {
        let nonce = {
            let mut next = self.next_nonce.lock().map_err(|e| e.to_string())?;
            *next = next.wrapping_add(1);
            *next
        };
        let state = RoundState {
            tool: tool.to_owned(),
            arguments: arguments.to_string(),
            nonce,
            expires_unix: now_unix() + ROUND_TTL.as_secs(),
        };
        let sealed = self.codec.seal_json(&state).map_err(|e| e.to_string())?;
        let schema = rmcp::model::ElicitationSchema::from_type::<ApproveForm>()
            .map_err(|e| e.to_string())?;
        let mut requests = InputRequests::new();
        requests.insert(
            APPROVAL_INPUT.to_owned(),
            InputRequest::Elicitation(ElicitRequest::new(
                ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: question.to_owned(),
                    requested_schema: schema,
                },
            )),
        );
        Ok(InputRequiredResult::new(Some(requests), Some(sealed)))
    }

    /// The person's answer carried by a retry of `tool` with `arguments`: true only for an
    /// accepted form with `approve: true`. The state is spent whatever the answer.
    pub fn answer(
        &self,
        sealed: &str,
        tool: &str,
        arguments: &Value,
        responses: Option<&InputResponses>,
    ) -> Result<bool, RoundError> {
        let state: RoundState = self
            .codec
            .open_json(sealed)
            .map_err(|_| RoundError::Forged)?;
        let sealed_arguments = serde_json::from_str::<Value>(&state.arguments).ok();
        if state.tool != tool || sealed_arguments.as_ref() != Some(arguments) {
            return Err(RoundError::OtherCall);
        }
        if state.expires_unix < now_unix() {
            return Err(RoundError::Stale);
        }
        let fresh = self
            .used
            .lock()
            .map(|mut used| used.insert(state.nonce))
            .unwrap_or(false);
        if !fresh {
            return Err(RoundError::Stale);
        }
        let Some(response) = responses.and_then(|r| r.get(APPROVAL_INPUT)) else {
            return Ok(false);
        };
        let Ok(result) = serde_json::from_value::<ElicitResult>(response.clone()) else {
            return Ok(false);
        };
        Ok(result.action == ElicitationAction::Accept
            && result
                .content
                .as_ref()
                .and_then(|c| c.get("approve"))
                .and_then(Value::as_bool)
                == Some(true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn responses(value: Value) -> InputResponses {
        [(APPROVAL_INPUT.to_owned(), value)].into()
    }

    fn sealed(rounds: &Rounds, tool: &str, args: &Value) -> String {
        rounds
            .ask(tool, args, "Allow?")
            .unwrap()
            .request_state
            .unwrap()
    }

    #[test]
    fn an_accepted_round_approves_once() {
        let rounds = Rounds::new().unwrap();
        let args = json!({"target": "e1"});
        let state = sealed(&rounds, "browser_click", &args);
        let yes = responses(json!({"action": "accept", "content": {"approve": true}}));
        assert_eq!(
            rounds.answer(&state, "browser_click", &args, Some(&yes)),
            Ok(true)
        );
        // Replayed: refused.
        assert_eq!(
            rounds.answer(&state, "browser_click", &args, Some(&yes)),
            Err(RoundError::Stale)
        );
    }

    #[test]
    fn a_round_cannot_approve_another_call() {
        let rounds = Rounds::new().unwrap();
        let state = sealed(&rounds, "browser_click", &json!({"target": "e1"}));
        let yes = responses(json!({"action": "accept", "content": {"approve": true}}));
        assert_eq!(
            rounds.answer(
                &state,
                "browser_click",
                &json!({"target": "e2"}),
                Some(&yes)
            ),
            Err(RoundError::OtherCall)
        );
        assert_eq!(
            rounds.answer(&state, "browser_type", &json!({"target": "e1"}), Some(&yes)),
            Err(RoundError::OtherCall)
        );
        // Sealed by another server (another key): forged.
        let other = Rounds::new().unwrap();
        assert_eq!(
            other.answer(
                &state,
                "browser_click",
                &json!({"target": "e1"}),
                Some(&yes)
            ),
            Err(RoundError::Forged)
        );
        let mut tampered = state.clone();
        tampered.insert(3, 'x');
        assert_eq!(
            rounds.answer(
                &tampered,
                "browser_click",
                &json!({"target": "e1"}),
                Some(&yes)
            ),
            Err(RoundError::Forged)
        );
    }

    #[test]
    fn anything_but_an_accepted_true_refuses() {
        let rounds = Rounds::new().unwrap();
        let args = json!({});
        for answer in [
            json!({"action": "accept", "content": {"approve": false}}),
            json!({"action": "decline"}),
            json!({"action": "cancel"}),
            json!({"action": "accept"}),
            json!({"action": "accept", "content": {"approve": "yes"}}),
            json!("yes"),
        ] {
            let state = sealed(&rounds, "t", &args);
            assert_eq!(
                rounds.answer(&state, "t", &args, Some(&responses(answer.clone()))),
                Ok(false),
                "{answer}"
            );
        }
        let state = sealed(&rounds, "t", &args);
        assert_eq!(rounds.answer(&state, "t", &args, None), Ok(false));
    }

    /// What a client reads in a sealed state: the signed body (expiry, then the JSON payload).
    fn readable_body(sealed: &str) -> Vec<u8> {
        use base64::Engine as _;
        let parts: Vec<&str> = sealed.split('.').collect();
        assert_eq!(parts.len(), 3, "version.body.tag: {sealed}");
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(parts[1])
            .unwrap()
    }

    fn readable_nonce(sealed: &str) -> u64 {
        let body = readable_body(sealed);
        let state: RoundState = serde_json::from_slice(&body[8..]).unwrap();
        state.nonce
    }

    #[test]
    fn no_byte_of_the_key_is_readable_in_a_sealed_state() {
        use base64::Engine as _;
        use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE_NO_PAD};
        // Key bytes unlike anything JSON or a timestamp holds; then the nonce's own start.
        let key: [u8; 32] = std::array::from_fn(|i| (0xA7u8).wrapping_mul(i as u8 + 3) ^ 0x5C);
        let start = [0x13u8, 0x57, 0x9B, 0xDF, 0x02, 0x46, 0x8A, 0xCE];
        let random: Vec<u8> = key.iter().chain(start.iter()).copied().collect();
        let rounds = Rounds::from_random(&mut std::io::Cursor::new(random)).unwrap();
        let head = &key[..8];
        let head_le = u64::from_le_bytes(head.try_into().unwrap());
        let head_be = u64::from_be_bytes(head.try_into().unwrap());
        let hex: String = head.iter().map(|b| format!("{b:02x}")).collect();
        let mut encodings: Vec<String> = vec![
            hex.clone(),
            hex.to_uppercase(),
            head_le.to_string(),
            head_be.to_string(),
        ];
        // Base64 of any 6 consecutive key bytes, at each alignment, in every alphabet.
        for offset in 0..3 {
            let window = &key[offset..offset + 6];
            encodings.push(STANDARD.encode(window));
            encodings.push(STANDARD_NO_PAD.encode(window));
            encodings.push(URL_SAFE_NO_PAD.encode(window));
        }
        let mut nonces = HashSet::new();
        for i in 0..50 {
            let args = json!({"target": format!("e{i}")});
            let sealed = sealed(&rounds, "browser_click", &args);
            let body = readable_body(&sealed);
            assert!(
                !body.windows(head.len()).any(|w| w == head),
                "raw key bytes in the body"
            );
            let body_text = String::from_utf8_lossy(&body).into_owned();
            for encoded in &encodings {
                assert!(!sealed.contains(encoded.as_str()), "{encoded} in {sealed}");
                assert!(
                    !body_text.contains(encoded.as_str()),
                    "{encoded} in {body_text}"
                );
            }
            let nonce = readable_nonce(&sealed);
            // Not the key counted on from, in either byte order.
            for from_key in [head_le, head_be] {
                assert!(
                    nonce.wrapping_sub(from_key) > 1 << 32,
                    "{nonce} near {from_key}"
                );
            }
            assert!(nonces.insert(nonce), "nonce {nonce} issued twice");
            // Still single-use.
            let yes = responses(json!({"action": "accept", "content": {"approve": true}}));
            assert_eq!(
                rounds.answer(&sealed, "browser_click", &args, Some(&yes)),
                Ok(true)
            );
            assert_eq!(
                rounds.answer(&sealed, "browser_click", &args, Some(&yes)),
                Err(RoundError::Stale)
            );
        }
    }

    #[test]
    fn two_servers_start_their_nonces_apart() {
        let (a, b) = (Rounds::new().unwrap(), Rounds::new().unwrap());
        let first = |r: &Rounds| readable_nonce(&sealed(r, "t", &json!({})));
        assert_ne!(first(&a), first(&b));
    }

    #[tokio::test]
    async fn the_policy_decides_when_nobody_can_be_asked() {
        let cancel = CancellationToken::new();
        assert_eq!(
            Asker::Policy(ApprovePolicy::None)
                .decide("Allow?", &cancel)
                .await,
            Verdict::Decided {
                approved: false,
                by: Decider::Policy(ApprovePolicy::None)
            }
        );
        assert!(matches!(
            Asker::Rounds { answer: None }
                .decide("Allow?", &cancel)
                .await,
            Verdict::NeedsInput { .. }
        ));
        // No call in progress: denied.
        let slot = ConsentSlot::default();
        assert!(matches!(
            slot.decide("Allow?", &cancel).await,
            Verdict::Decided {
                approved: false,
                ..
            }
        ));
    }
}
