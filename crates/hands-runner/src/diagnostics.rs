//! Diagnostics records and usage totals: what a run tells its observer about each request and
//! each action, holding no page text, arguments or images.
//!
//! Spec: openai-browser-desktop-drivers, "Examinar el uso y los tiempos" and "Medir el uso".

use std::panic::AssertUnwindSafe;
use std::time::Duration;

/// Which API a record is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Api {
    /// Anthropic Messages.
    Messages,
    /// OpenAI Responses.
    Responses,
}

impl Api {
    /// The name in records: `messages` or `responses`.
    pub const fn name(self) -> &'static str {
        match self {
            Api::Messages => "messages",
            Api::Responses => "responses",
        }
    }
}

/// What stage of the run a record describes (the SDK's `stage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Stage {
    /// The run as a whole: started, and how it ended (or why it could not start).
    Run,
    /// One model request (retries included).
    Request,
    /// The arguments of a call, parsed before anything runs (recorded when they are invalid).
    Arguments,
    /// An approval asked of the approver (not recorded when nobody had to be asked).
    Approval,
    /// One tool call or action.
    Action,
    /// The output of a call, checked before it goes back to the model (recorded when invalid).
    Output,
}

impl Stage {
    /// The name in records, as the SDK spells it.
    pub const fn name(self) -> &'static str {
        match self {
            Stage::Run => "run",
            Stage::Request => "request",
            Stage::Arguments => "arguments",
            Stage::Approval => "approval",
            Stage::Action => "action",
            Stage::Output => "output",
        }
    }
}

/// How the stage ended (the SDK's `reason`, plus hands' `failed` and `skipped`). A run refused
/// as busy or closed gets no record: the refusal is the error `run` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reason {
    /// The run started.
    Started,
    /// It completed (an approval: approved).
    Completed,
    /// The tool answered with an error the model reads (the run goes on).
    Failed,
    /// A person or a policy refused it.
    Refused,
    /// It was not executed (an earlier failure in the same batch, or the last allowed request).
    Skipped,
    /// It was cancelled — never reported as a refusal.
    Cancelled,
    /// The arguments were invalid; nothing ran.
    InvalidInput,
    /// The output was invalid; it was not sent.
    InvalidOutput,
    /// The model API failed (after its retries).
    ApiFailed,
    /// A driver or a function failed, or broke.
    DriverFailed,
    /// The run stopped for a rule of the contract (an answer that cannot run, a budget, a
    /// ledger that cannot save).
    PolicyFailed,
    /// The run reached its step limit.
    StepLimit,
}

impl Reason {
    /// The name in records, as the SDK spells it.
    pub const fn name(self) -> &'static str {
        match self {
            Reason::Started => "started",
            Reason::Completed => "completed",
            Reason::Failed => "failed",
            Reason::Refused => "refused",
            Reason::Skipped => "skipped",
            Reason::Cancelled => "cancelled",
            Reason::InvalidInput => "invalid_input",
            Reason::InvalidOutput => "invalid_output",
            Reason::ApiFailed => "api_failed",
            Reason::DriverFailed => "driver_failed",
            Reason::PolicyFailed => "policy_failed",
            Reason::StepLimit => "step_limit",
        }
    }
}

/// Token usage of one request. A field is `None` when the API did not report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Input tokens (for Anthropic: not counting cache reads and writes).
    pub input_tokens: Option<u64>,
    /// Output tokens.
    pub output_tokens: Option<u64>,
    /// Input plus output, when reported or derivable.
    pub total_tokens: Option<u64>,
    /// Input tokens read from the prompt cache.
    pub cache_read_input_tokens: Option<u64>,
    /// Input tokens written to the prompt cache.
    pub cache_creation_input_tokens: Option<u64>,
}

/// One diagnostics record. It never holds page text, arguments, images or the original error:
/// only identifiers, names, timings and counts. `call_id` and `member` are bounded printable
/// text ([`Record::bounded`]); an application that puts private data in call ids or tool names
/// should leave them out of public logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Which API.
    pub api: Api,
    /// Request or action.
    pub stage: Stage,
    /// How it ended.
    pub reason: Reason,
    /// The call id, for actions.
    pub call_id: Option<String>,
    /// The member or tool name, for actions.
    pub member: Option<String>,
    /// Measured duration (stages can overlap when items run eagerly: do not sum them).
    pub duration: Duration,
    /// Usage, for completed requests (`None` when the API sent none).
    pub usage: Option<Usage>,
    /// For requests: how many HTTP attempts it took.
    pub attempts: u32,
}

impl Record {
    /// The longest `call_id` or `member` a record keeps.
    pub const MAX_NAME_CHARS: usize = 64;

    /// A name as a record keeps it: printable ASCII only, at most [`Record::MAX_NAME_CHARS`]
    /// characters (a model's tool name is the model's text).
    pub fn bounded(name: &str) -> String {
        name.chars()
            .filter(char::is_ascii_graphic)
            .take(Record::MAX_NAME_CHARS)
            .collect()
    }

    /// A record of `stage` ending in `reason`, for the run or a request (no call).
    pub fn new(api: Api, stage: Stage, reason: Reason, duration: Duration) -> Record {
        Record {
            api,
            stage,
            reason,
            call_id: None,
            member: None,
            duration,
            usage: None,
            attempts: 0,
        }
    }

    /// The same record, about call `call_id` of `member`.
    pub fn of_call(mut self, call_id: &str, member: &str) -> Record {
        self.call_id = Some(Record::bounded(call_id));
        self.member = Some(Record::bounded(member));
        self
    }
}

/// The run's usage: each field summed over completed requests, and whether any completed request
/// lacked usage data (then the totals are incomplete).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UsageTotals {
    /// Summed input tokens.
    pub input_tokens: u64,
    /// Summed output tokens.
    pub output_tokens: u64,
    /// Summed total tokens.
    pub total_tokens: u64,
    /// Summed cache reads.
    pub cache_read_input_tokens: u64,
    /// Summed cache writes.
    pub cache_creation_input_tokens: u64,
    /// Completed requests counted.
    pub n_requests: u32,
    /// True when some completed request reported no usage (or lacked a field), so the sums are a
    /// lower bound.
    pub incomplete: bool,
}

impl UsageTotals {
    /// Adds one completed request's usage.
    pub fn add(&mut self, usage: Option<&Usage>) {
        self.n_requests += 1;
        let Some(u) = usage else {
            self.incomplete = true;
            return;
        };
        let mut add = |sum: &mut u64, v: Option<u64>| match v {
            Some(v) => *sum += v,
            None => self.incomplete = true,
        };
        add(&mut self.input_tokens, u.input_tokens);
        add(&mut self.output_tokens, u.output_tokens);
        add(&mut self.total_tokens, u.total_tokens);
        // Cache fields are optional on both APIs: their absence does not make totals incomplete.
        self.cache_read_input_tokens += u.cache_read_input_tokens.unwrap_or(0);
        self.cache_creation_input_tokens += u.cache_creation_input_tokens.unwrap_or(0);
    }
}

/// A synchronous observer of records. The runner does not wait on anything it starts, and a
/// panicking observer cannot approve an action or change a result: the panic is caught and logged.
pub type Observer = Box<dyn FnMut(&Record) + Send>;

/// Delivers a record to an observer, containing any panic.
pub(crate) fn emit(observer: &mut Option<Observer>, record: &Record) {
    if let Some(f) = observer.as_mut()
        && std::panic::catch_unwind(AssertUnwindSafe(|| f(record))).is_err()
    {
        tracing::warn!("the diagnostics observer panicked; the run goes on unchanged");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_say_when_they_are_incomplete() {
        let mut totals = UsageTotals::default();
        let full = Usage {
            input_tokens: Some(10),
            output_tokens: Some(5),
            total_tokens: Some(15),
            cache_read_input_tokens: Some(100),
            cache_creation_input_tokens: None,
        };
        totals.add(Some(&full));
        totals.add(Some(&full));
        assert_eq!(
            (totals.input_tokens, totals.total_tokens, totals.n_requests),
            (20, 30, 2)
        );
        assert!(!totals.incomplete);
        totals.add(None);
        assert!(totals.incomplete);
        assert_eq!(totals.input_tokens, 20);
    }

    #[test]
    fn a_panicking_observer_is_contained() {
        let mut observer: Option<Observer> = Some(Box::new(|_| panic!("observer bug")));
        let record = Record {
            api: Api::Messages,
            stage: Stage::Request,
            reason: Reason::Completed,
            call_id: None,
            member: None,
            duration: Duration::ZERO,
            usage: None,
            attempts: 1,
        };
        emit(&mut observer, &record);
        emit(&mut observer, &record);
    }
}
