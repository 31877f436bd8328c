//! The error answers the simulator gives (in each API's own shape) and the errors of starting it.

use serde_json::{Value, json};

/// Which wire protocol a request spoke, told by its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Api {
    /// Anthropic Messages, `POST /v1/messages`.
    Anthropic,
    /// OpenAI Responses, `POST /v1/responses`.
    OpenAi,
}

impl Api {
    /// Tells the API of a request body the way a [`crate::Policy`] sees it: an Anthropic
    /// request has `messages`, an OpenAI request has `input` or `previous_response_id`.
    pub fn of_request(request: &Value) -> Api {
        if request.get("messages").is_some() {
            Api::Anthropic
        } else {
            Api::OpenAi
        }
    }
}

/// One error answer: an HTTP status and the fields both error shapes are built from.
///
/// Anthropic renders it as `{"type":"error","error":{"type","message"},"request_id"}`,
/// OpenAI as `{"error":{"message","type","param","code"}}` (api-contracts A "Errors", B
/// "Errors").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status.
    pub status: u16,
    /// `error.type`: `invalid_request_error`, `rate_limit_error`, `insufficient_quota`, …
    pub kind: &'static str,
    /// `error.message`.
    pub message: String,
    /// OpenAI `error.param`.
    pub param: Option<String>,
    /// OpenAI `error.code`; for Anthropic, `error.details.error_code` when set.
    pub code: Option<&'static str>,
    /// More members of Anthropic's `error.details`, beside `error_code` (`unsupported`);
    /// boxed, as most errors have none.
    pub details: Option<Box<serde_json::Map<String, Value>>>,
    /// Extra response headers (`retry-after`, `retry-after-ms`).
    pub headers: Vec<(&'static str, String)>,
}

impl ApiError {
    /// An error of any status and type.
    pub fn new(status: u16, kind: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            kind,
            message: message.into(),
            param: None,
            code: None,
            details: None,
            headers: Vec::new(),
        }
    }

    /// A 400 `invalid_request_error`.
    pub fn invalid(message: impl Into<String>) -> ApiError {
        ApiError::new(400, "invalid_request_error", message)
    }

    /// Sets OpenAI's `param`.
    pub fn param(mut self, param: impl Into<String>) -> ApiError {
        self.param = Some(param.into());
        self
    }

    /// Sets OpenAI's `code` (Anthropic's `details.error_code`).
    pub fn code(mut self, code: &'static str) -> ApiError {
        self.code = Some(code);
        self
    }

    /// Adds a member to Anthropic's `error.details`.
    pub fn detail(mut self, key: &str, value: Value) -> ApiError {
        self.details
            .get_or_insert_with(Default::default)
            .insert(key.to_owned(), value);
        self
    }

    /// Adds a response header.
    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> ApiError {
        self.headers.push((name, value.into()));
        self
    }

    /// The JSON body in the shape of `api`.
    pub fn body(&self, api: Api, request_id: &str) -> Value {
        match api {
            Api::Anthropic => {
                let mut error = json!({"type": self.kind, "message": self.message});
                if self.code.is_some() || self.details.is_some() {
                    let mut details = self.details.as_deref().cloned().unwrap_or_default();
                    if let Some(code) = &self.code {
                        details.insert("error_code".into(), json!(code));
                    }
                    error["details"] = Value::Object(details);
                }
                json!({"type": "error", "error": error, "request_id": request_id})
            }
            Api::OpenAi => json!({"error": {
                "message": self.message,
                "type": self.kind,
                "param": self.param,
                "code": self.code,
            }}),
        }
    }
}

/// Why the simulator could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// Binding 127.0.0.1:0 failed.
    #[error("hands-sim: cannot bind a loopback port: {0}")]
    Bind(#[source] std::io::Error),
    /// The server thread or its tokio runtime could not be started.
    #[error("hands-sim: cannot start the server thread: {0}")]
    Runtime(#[source] std::io::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_error_shapes() {
        let error = ApiError::invalid("messages: Field required");
        assert_eq!(
            error.body(Api::Anthropic, "req_1"),
            json!({"type": "error", "error": {"type": "invalid_request_error",
                "message": "messages: Field required"}, "request_id": "req_1"})
        );
        let error = ApiError::invalid("Previous response with id 'resp_1' not found.")
            .param("previous_response_id")
            .code("previous_response_not_found");
        assert_eq!(
            error.body(Api::OpenAi, "req_1"),
            json!({"error": {"message": "Previous response with id 'resp_1' not found.",
                "type": "invalid_request_error", "param": "previous_response_id",
                "code": "previous_response_not_found"}})
        );
    }

    #[test]
    fn api_of_request() {
        assert_eq!(Api::of_request(&json!({"messages": []})), Api::Anthropic);
        assert_eq!(Api::of_request(&json!({"input": "hi"})), Api::OpenAi);
    }
}
