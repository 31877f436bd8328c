//! The error messages the simulator answers with, one constant or function each.
//!
//! Those marked **real** copy the wording the real APIs answer with, as seen in public error
//! reports (2025–2026); those marked **modelled** follow the real style for rules whose exact
//! text is not public. A client must never match on a modelled text.

/// Anthropic's many-image threshold and per-side limits (api-contracts A, "Image limits").
pub const MANY_IMAGES: usize = 20;
/// Hard per-side limit in pixels.
pub const MAX_IMAGE_SIDE: u32 = 8000;
/// Per-side limit when a request holds more than [`MANY_IMAGES`] images.
pub const MAX_IMAGE_SIDE_MANY: u32 = 2000;
/// Largest base64 image text (5 MB).
pub const MAX_IMAGE_BASE64_BYTES: usize = 5_242_880;
/// Most `cache_control` breakpoints in one request.
pub const MAX_CACHE_BREAKPOINTS: usize = 4;

/// Anthropic, **real**: a missing `x-api-key`.
pub const ANTHROPIC_KEY_REQUIRED: &str = "x-api-key header is required";
/// Anthropic, **real**: a wrong `x-api-key`.
pub const ANTHROPIC_KEY_INVALID: &str = "invalid x-api-key";
/// Anthropic, **modelled**: a wrong key in `Authorization: Bearer` (anthropic 2.10 sends its
/// API key there).
pub const ANTHROPIC_BEARER_INVALID: &str = "invalid bearer token";
/// Anthropic, **real**: a missing `anthropic-version`.
pub const ANTHROPIC_VERSION_REQUIRED: &str = "anthropic-version: header is required";
/// Anthropic, **real**: the 529 and mid-stream overload message.
pub const OVERLOADED: &str = "Overloaded";
/// Anthropic, **real**: thinking with a forced tool choice.
pub const THINKING_FORCED_TOOL: &str =
    "Thinking may not be enabled when tool_choice forces tool use.";
/// Anthropic, **real** (2024 API): the first message must be a user message.
pub const FIRST_MESSAGE_USER: &str = "messages: first message must use the \"user\" role";

/// Anthropic, **real**: a required field is absent.
pub fn field_required(path: &str) -> String {
    format!("{path}: Field required")
}

/// Anthropic, **real**: a field the schema does not have.
pub fn extra_input(path: &str) -> String {
    format!("{path}: Extra inputs are not permitted")
}

/// Anthropic, **real** (2024 API): two messages of one role in a row.
pub fn roles_must_alternate(role: &str) -> String {
    format!(
        "messages: roles must alternate between \"user\" and \"assistant\", but found multiple \"{role}\" roles in a row"
    )
}

/// Anthropic, **real**: an empty message.
pub fn empty_message(msg_idx: usize) -> String {
    format!(
        "messages.{msg_idx}: all messages must have non-empty content except for the optional final assistant message"
    )
}

/// Anthropic, **real**: a `tool_use` not answered in the next message.
pub fn tool_use_without_result(msg_idx: usize, ids: &[String]) -> String {
    format!(
        "messages.{msg_idx}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
        ids.join(", ")
    )
}

/// Anthropic, **real**: a `tool_result` whose `tool_use` is not in the previous message.
pub fn unexpected_tool_result(msg_idx: usize, block_idx: usize, id: &str) -> String {
    format!(
        "messages.{msg_idx}.content.{block_idx}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
    )
}

/// Anthropic, **real**: the results are there but do not open the message (a text block came
/// first).
pub fn tool_results_not_first(msg_idx: usize, n_missing: usize) -> String {
    format!(
        "messages.{msg_idx}: Did not find {n_missing} `tool_result` block(s) at the beginning of this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks."
    )
}

/// Anthropic, **real**: empty text.
pub const TEXT_NON_EMPTY: &str = "messages: text content blocks must be non-empty";

/// Anthropic, **real**: a replayed thinking block that was changed.
pub fn invalid_thinking_signature(msg_idx: usize, block_idx: usize) -> String {
    format!("messages.{msg_idx}.content.{block_idx}: Invalid `signature` in `thinking` block")
}

/// Anthropic, **modelled**: a replayed redacted thinking block that was changed.
pub fn invalid_redacted_thinking(msg_idx: usize, block_idx: usize) -> String {
    format!("messages.{msg_idx}.content.{block_idx}: Invalid `data` in `redacted_thinking` block")
}

/// Anthropic, **real**: the last assistant turn of a tool loop lost its thinking block.
pub fn thinking_block_required(msg_idx: usize, found: &str) -> String {
    format!(
        "messages.{msg_idx}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
    )
}

/// Anthropic, **real**: base64 image text over 5 MB. `path` ends with `.image`.
pub fn image_too_large(path: &str, n_bytes: usize) -> String {
    format!(
        "{path}.source.base64: image exceeds 5 MB maximum: {n_bytes} bytes > {MAX_IMAGE_BASE64_BYTES} bytes"
    )
}

/// Anthropic, **real**: a side over 8000 px.
pub fn image_side_too_large(path: &str) -> String {
    format!(
        "{path}.source.base64.data: At least one of the image dimensions exceed max allowed size: {MAX_IMAGE_SIDE} pixels"
    )
}

/// Anthropic, **real**: a side over 2000 px in a request of more than 20 images.
pub fn image_side_too_large_many(path: &str) -> String {
    format!(
        "{path}.source.base64.data: At least one of the image dimensions exceed max allowed size for many-image requests: {MAX_IMAGE_SIDE_MANY} pixels"
    )
}

/// Anthropic, **real**: bytes of another format than the declared media type.
pub fn image_media_type_mismatch(path: &str, media_type: &str) -> String {
    format!("{path}.source.base64.data: Image does not match the provided media type {media_type}")
}

/// Anthropic, **real**: a media type outside the four accepted.
pub fn image_media_type_invalid(path: &str) -> String {
    format!(
        "{path}.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"
    )
}

/// Anthropic, **real**: an image whose base64 data is empty. `path` ends with `.image`.
pub fn image_empty(path: &str) -> String {
    format!("{path}.source.base64: image cannot be empty")
}

/// Anthropic, **real** (wording; the path prefix is modelled): an `is_error` result holding
/// anything but text. `path` is the result block's (`messages.N.content.M`).
pub fn error_result_not_text(path: &str) -> String {
    format!("{path}.tool_result: all content must be type 'text' if 'is_error' is true")
}

/// Anthropic, **modelled**: an `is_error` result with empty content (the Anthropic SDK: "The
/// API rejects an `is_error` result whose content is empty").
pub fn error_result_empty(path: &str) -> String {
    format!("{path}.tool_result: content cannot be empty if 'is_error' is true")
}

/// Anthropic, **modelled** (pydantic style): a `browser_state` field over the API's limit of
/// 4,096 characters (the Anthropic SDK's `FIELD_MAX`, "the API's limit for a text field of the
/// block, for a URL").
pub fn browser_state_field_too_long(path: &str) -> String {
    format!("{path}: String should have at most {MAX_BROWSER_STATE_FIELD_CHARS} characters")
}

/// Most characters of a `browser_state` tab's `url` or `title`.
pub const MAX_BROWSER_STATE_FIELD_CHARS: usize = 4096;

/// Anthropic, **modelled**: a `browser_state` block that breaks its shape (api-contracts A,
/// "`browser_state` block").
pub fn browser_state_invalid(path: &str, why: &str) -> String {
    format!("{path}: invalid `browser_state` block: {why}")
}

/// Not an API rule: hands' own answer contract, which the simulator checks so a test fails
/// when hands breaks it (see `AnthropicConfig::hands_contract`). The message says so.
pub fn hands_contract(path: &str, rule: &str) -> String {
    format!("hands-sim contract: {path}: {rule}")
}

/// Most characters of a toolset error text under hands' contract (the Anthropic SDK's
/// `FIELD_MAX`).
pub const MAX_TOOLSET_ERROR_CHARS: usize = 4096;

/// Anthropic, **modelled**: bytes that are no image at all.
pub fn image_unreadable(path: &str) -> String {
    format!("{path}.source.base64.data: Could not process image")
}

/// Anthropic, **modelled**: a computer toolset image over the model tier's limits. The
/// toolset API does not downscale (claude-computer-use-tool, "Dimensiona las capturas…").
pub fn image_over_tier(path: &str, width: u32, height: u32, limits: &str) -> String {
    format!(
        "{path}.source.base64.data: image of {width}x{height} px exceeds this model's image limits ({limits}); results of computer_toolset_20260801 are not downscaled, resize the screenshot before returning it"
    )
}

/// Anthropic, **modelled**: more images than the request limit.
pub fn too_many_images(n_images: usize, max: usize) -> String {
    format!("messages: too many images in the request: {n_images} > {max}")
}

/// Anthropic, **real**: more than four `cache_control` breakpoints.
pub fn too_many_cache_breakpoints(found: usize) -> String {
    format!(
        "A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found {found}."
    )
}

/// Anthropic, **real**: a legacy tool type on a model that accepts only the toolset.
pub fn unsupported_tool_types(model: &str, types: &str) -> String {
    format!("'{model}' does not support tool types: {types}.")
}

/// Anthropic, **real** (pydantic style): a tool `type` that is not known, or needs a beta
/// header that was not sent.
pub fn unknown_tool_type(tool_idx: usize, tool_type: &str) -> String {
    format!(
        "tools.{tool_idx}: Input tag '{tool_type}' found using 'type' does not match any of the expected tags"
    )
}

/// Anthropic, **modelled**: a `tool_result` of a toolset member without `toolset_name`.
pub fn toolset_name_missing(
    msg_idx: usize,
    block_idx: usize,
    tool_use_id: &str,
    toolset: &str,
) -> String {
    format!(
        "messages.{msg_idx}.content.{block_idx}: `tool_result` for `tool_use` {tool_use_id} must echo `toolset_name: \"{toolset}\"` of its `tool_use` block"
    )
}

/// Anthropic, **modelled**: a `tool_result` naming another toolset than its `tool_use`.
pub fn toolset_name_mismatch(
    msg_idx: usize,
    block_idx: usize,
    tool_use_id: &str,
    found: &str,
    expected: Option<&str>,
) -> String {
    let expected = match expected {
        Some(name) => format!("`toolset_name: \"{name}\"`"),
        None => "no `toolset_name`".to_owned(),
    };
    format!(
        "messages.{msg_idx}.content.{block_idx}: `tool_result` names `toolset_name: \"{found}\"` but its `tool_use` {tool_use_id} has {expected}"
    )
}

/// Anthropic, **modelled**: a toolset result block other than text and image.
pub fn toolset_result_content(path: &str, found: &str) -> String {
    format!(
        "{path}: results of client toolset members may contain only `text` and `image` blocks, found `{found}`"
    )
}

/// Anthropic, **modelled**: a toolset `configs` key that is not a member.
pub fn toolset_unknown_member(path: &str, member: &str, toolset_type: &str) -> String {
    format!("{path}: '{member}' is not a member of {toolset_type}")
}

/// Anthropic, **modelled**: every member disabled.
pub fn toolset_all_disabled(path: &str) -> String {
    format!("{path}: at least one member of the toolset must be enabled")
}

/// Anthropic, **modelled**: enabled members disagree on `defer_loading`.
pub fn toolset_mixed_defer(path: &str) -> String {
    format!("{path}: all enabled members must share the same `defer_loading` value")
}

/// Anthropic, **modelled**: `allowed_callers` other than `["direct"]`.
pub fn toolset_allowed_callers(path: &str) -> String {
    format!("{path}: client toolsets only support `[\"direct\"]`")
}

/// Anthropic, **modelled**: a second computer tool beside the toolset.
pub fn computer_tool_conflict(first: usize, second: usize) -> String {
    format!(
        "tools.{second}: `computer_toolset_20260801` cannot be declared together with another computer tool (tools.{first}); declare only one of the toolset, `computer_20251124`, `computer_20250124` or a tool named `computer`"
    )
}

/// Anthropic, **modelled**: a second copy of the browser toolset.
pub fn browser_toolset_conflict(first: usize, second: usize) -> String {
    format!(
        "tools.{second}: `browser_toolset_20260801` is already declared at tools.{first}; declare it once"
    )
}

/// Anthropic, **real**: two tools of one name.
pub const TOOL_NAMES_UNIQUE: &str = "tools: Tool names must be unique.";

/// Anthropic, **modelled**: a `tool` choice naming a toolset or its member.
pub fn tool_choice_names_toolset(name: &str) -> String {
    format!(
        "tool_choice.name: a `tool` choice cannot name the client toolset or its member '{name}'; use `auto`, `any` or `none`"
    )
}

/// Anthropic, **modelled**: a `tool` choice naming no declared tool.
pub fn tool_choice_unknown(name: &str) -> String {
    format!("tool_choice.name: tool '{name}' is not declared in `tools`")
}

/// Anthropic, **modelled**: the legacy streaming header beside a toolset.
pub fn fine_grained_with_toolset() -> String {
    "anthropic-beta: `fine-grained-tool-streaming-2025-05-14` cannot be used with client toolsets"
        .to_owned()
}

/// Anthropic, **modelled**: a user message after a turn that stopped with `pause_turn`, which
/// must be sent back last, unchanged, to let it go on.
pub fn paused_turn_not_last(msg_idx: usize) -> String {
    format!(
        "messages.{msg_idx}: this turn stopped with `stop_reason: \"pause_turn\"`; send it back as the last message, unchanged, to let it continue, before adding a user message"
    )
}

/// Anthropic, **modelled**: an assistant message last (prefill), which toolset-era models
/// refuse.
pub const PREFILL_UNSUPPORTED: &str = "messages: the final message must have role `user`; assistant message prefill is not supported for this model";

/// OpenAI, **real**: no bearer key.
pub const OPENAI_KEY_REQUIRED: &str = "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).";
/// OpenAI, **real**: the quota error that must not be retried.
pub const OPENAI_INSUFFICIENT_QUOTA: &str = "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.";
/// OpenAI, **real**: the 500 message.
pub const OPENAI_SERVER_ERROR: &str =
    "The server had an error while processing your request. Sorry about that!";

/// OpenAI, **real**: a wrong bearer key.
pub fn openai_key_invalid(key: &str) -> String {
    let shown: String = if key.chars().count() > 8 {
        format!("{}****", key.chars().take(3).collect::<String>())
    } else {
        "****".to_owned()
    };
    format!(
        "Incorrect API key provided: {shown}. You can find your API key at https://platform.openai.com/account/api-keys."
    )
}

/// OpenAI, **real**: a parameter the schema does not have.
pub fn unknown_parameter(param: &str) -> String {
    format!("Unknown parameter: '{param}'.")
}

/// OpenAI, **real**: a required parameter is absent.
pub fn missing_parameter(param: &str) -> String {
    format!("Missing required parameter: '{param}'.")
}

/// OpenAI, **real**: a value outside the allowed set.
pub fn invalid_value(value: &str, supported: &str) -> String {
    format!("Invalid value: '{value}'. Supported values are: {supported}.")
}

/// OpenAI, **real**: an unanswered function call.
pub fn no_function_output(call_id: &str) -> String {
    format!("No tool output found for function call {call_id}.")
}

/// OpenAI, **real**: a function output without its call.
pub fn no_function_call(call_id: &str) -> String {
    format!("No tool call found for function call output with call_id {call_id}.")
}

/// OpenAI, **modelled** on the function-call wording: an unanswered computer call.
pub fn no_computer_output(call_id: &str) -> String {
    format!("No tool output found for computer call {call_id}.")
}

/// OpenAI, **modelled** on the function-call wording: a computer output without its call.
pub fn no_computer_call(call_id: &str) -> String {
    format!("No tool call found for computer call output with call_id {call_id}.")
}

/// OpenAI, **modelled**: an output for a call that did not complete (`in_progress`,
/// `incomplete`): such a call was never issued whole.
pub fn output_for_unfinished_call(call_id: &str, status: &str) -> String {
    format!(
        "Call {call_id} has status '{status}', not 'completed'; it cannot be answered. Remove its output from your input."
    )
}

/// OpenAI, **modelled**: an `mcp_approval_response` with no MCP tool declared, or for no
/// `mcp_approval_request` of the conversation.
pub fn mcp_approval_unexpected(request_id: &str) -> String {
    format!(
        "No MCP approval request found with id '{request_id}' for a declared MCP server; an mcp_approval_response answers an mcp_approval_request of an 'mcp' tool in 'tools'."
    )
}

/// OpenAI, **modelled**: a second `mcp_approval_response` for one request.
pub fn mcp_approval_answered_twice(request_id: &str) -> String {
    format!(
        "MCP approval request '{request_id}' was already answered; answer each mcp_approval_request once."
    )
}

/// OpenAI, **modelled**: two `mcp` tools with one `server_label`.
pub fn mcp_duplicate_label(label: &str) -> String {
    format!("Duplicate MCP server_label '{label}' in 'tools'; server labels must be unique.")
}

/// OpenAI, **modelled**: an `mcp` tool with none of its three ways of reaching a server.
pub const MCP_NO_SERVER: &str =
    "One of 'server_url', 'connector_id' or 'tunnel_id' must be provided for an 'mcp' tool.";

/// OpenAI, **modelled** on the 424 the API answers when a declared MCP server cannot be listed.
pub fn mcp_list_failed(label: &str, why: &str) -> String {
    format!("Error retrieving tool list from MCP server: '{label}'. {why}")
}

/// Anthropic, **modelled**: an MCP connector request without its beta header.
pub const MCP_BETA_REQUIRED: &str =
    "mcp_servers: the MCP connector requires the `anthropic-beta: mcp-client-2025-11-20` header";

/// Anthropic, **real** (docs: "Must be referenced by exactly one MCPToolset"): a server of
/// `mcp_servers` that no `mcp_toolset`, or two, refer to.
pub fn mcp_server_toolsets(name: &str, n_toolsets: usize) -> String {
    format!(
        "mcp_servers: MCP server '{name}' must be referenced by exactly one mcp_toolset in tools (found {n_toolsets})"
    )
}

/// Anthropic, **modelled**: an `mcp_toolset` naming no server of `mcp_servers`.
pub fn mcp_toolset_unknown_server(tool_idx: usize, name: &str) -> String {
    format!(
        "tools.{tool_idx}.mcp_toolset.mcp_server_name: no MCP server named '{name}' in mcp_servers"
    )
}

/// Anthropic, **modelled**: two servers with one name.
pub fn mcp_server_duplicate(name: &str) -> String {
    format!("mcp_servers: server names must be unique ('{name}' appears twice)")
}

/// Anthropic, **real** (docs: the URL "Must start with https://"); the simulator also takes
/// `http://` on loopback, where its fixture servers listen.
pub fn mcp_server_url(idx: usize) -> String {
    format!("mcp_servers.{idx}.url: the URL of an MCP server must start with https://")
}

/// Anthropic, **modelled** on the `tool_use` pairing error: a server tool's use without its
/// result in the same assistant message.
pub fn server_use_without_result(msg_idx: usize, use_type: &str, ids: &[String]) -> String {
    format!(
        "messages.{msg_idx}: `{use_type}` ids were found without their result blocks in the same message: {}. Send the assistant message back as it was received.",
        ids.join(", ")
    )
}

/// Anthropic, **modelled**: an `mcp_tool_use` whose server is not in this request's
/// `mcp_servers`.
pub fn mcp_block_unknown_server(path: &str, name: &str) -> String {
    format!("{path}.mcp_tool_use.server_name: no MCP server named '{name}' in mcp_servers")
}

/// Anthropic, **modelled**: `container` names no live container.
pub fn container_not_found(id: &str) -> String {
    format!("container: container '{id}' was not found or has expired")
}

/// OpenAI, **modelled**: a code interpreter container id the server never made.
pub fn openai_container_not_found(id: &str) -> String {
    format!("Container with id '{id}' not found.")
}

/// Both, the hands contract (see [`hands_contract`]): a server tool's item or block replayed
/// with a change (its native content and container ids must come back as they were).
pub fn server_item_changed(path: &str, id: &str) -> String {
    hands_contract(
        path,
        &format!("the server tool item or block '{id}' was changed before it was sent back"),
    )
}

/// OpenAI, **real**: `previous_response_id` names nothing stored.
pub fn previous_response_not_found(id: &str) -> String {
    format!("Previous response with id '{id}' not found.")
}

/// OpenAI, **real**: a replayed item the server never stored.
pub fn item_not_persisted(id: &str) -> String {
    format!(
        "Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."
    )
}

/// OpenAI, **real**: an `item_reference` to nothing stored.
pub fn item_not_found(id: &str) -> String {
    format!("Item with id '{id}' not found.")
}

/// OpenAI, **real**: a replayed `encrypted_content` that was changed.
pub fn encrypted_content_unverified(blob: &str) -> String {
    let head: String = blob.chars().take(4).collect();
    let n_chars = blob.chars().count();
    let tail: String = blob.chars().skip(n_chars.saturating_sub(4)).collect();
    format!("The encrypted content {head}...{tail} could not be verified.")
}

/// OpenAI, **real**: a replayed reasoning item without the item it preceded.
pub fn reasoning_without_follower(id: &str) -> String {
    format!("Item '{id}' of type 'reasoning' was provided without its required following item.")
}

/// OpenAI, **modelled**: one item twice in the conversation (e.g. replayed in full while
/// also chained with `previous_response_id`).
pub fn duplicate_item(id: &str) -> String {
    format!(
        "Duplicate item found with id {id}. Remove duplicate items from your input and try again."
    )
}

/// OpenAI, **modelled**: `previous_response_id` beside `conversation`.
pub const PREVIOUS_AND_CONVERSATION: &str = "Mutually exclusive parameters: Ensure you are only providing one of: 'previous_response_id' or 'conversation'.";

/// OpenAI, **modelled**: an acknowledged check that was not issued for the call.
pub fn safety_check_not_issued(check_id: &str, call_id: &str) -> String {
    format!(
        "Safety check '{check_id}' was not issued for computer call '{call_id}'; acknowledge only the pending_safety_checks of that call."
    )
}

/// OpenAI, **modelled**: a computer call answered without acknowledging its pending checks.
pub fn safety_checks_unacknowledged(call_id: &str, check_ids: &[String]) -> String {
    format!(
        "Computer call '{call_id}' has pending safety checks that were not acknowledged: {}.",
        check_ids.join(", ")
    )
}

/// OpenAI, **modelled**: a screenshot image that is not a usable data URL.
pub fn bad_image_url(param: &str, why: &str) -> String {
    format!("Invalid '{param}': {why}.")
}

/// OpenAI, **modelled**: a second computer tool.
pub const OPENAI_TWO_COMPUTER_TOOLS: &str = "Only one computer tool may be provided in 'tools'.";

/// Anthropic, **modelled** (the SDK's `ThreadNotFoundError`): no held thread for the id.
pub fn thread_not_found(id: &str) -> String {
    format!(
        "thread: no usable Thread state was found for previous_message_id '{id}'. Replay the full conversation with thread: {{\"type\": \"create\"}} to start a new Thread."
    )
}

/// Anthropic, **modelled** (`ThreadAlreadyContinuedError`): an answer continued twice.
pub fn thread_already_continued(id: &str) -> String {
    format!(
        "thread: the response '{id}' has already been continued, and each response can be continued only once. Continue from the Thread's most recent response id."
    )
}

/// Anthropic, **modelled** (`ThreadFingerprintMismatchError`): a field that must stay the
/// thread's changed.
pub fn thread_fingerprint_mismatch(fields: &[&str]) -> String {
    format!(
        "thread: {} must stay the same across a Thread's turns; send the stored values, or replay the full conversation with thread: {{\"type\": \"create\"}} to change them.",
        fields.join(", ")
    )
}

/// Anthropic, **modelled** (`ThreadUnsupportedRequestError`): fields threads do not support.
pub fn thread_unsupported_request(fields: &[&str]) -> String {
    format!(
        "thread: Threads do not support {}; send the full conversation without thread, or change that field.",
        fields.join(", ")
    )
}

/// Anthropic, **modelled**: `system` or `tools` with a `continue` (the thread keeps the ones it
/// was created with).
pub fn thread_create_only_field(field: &str) -> String {
    format!(
        "{field}: cannot be sent with thread.type 'continue': the Thread keeps the {field} it was created with"
    )
}

/// Anthropic, **modelled**: `thread` that is not an object.
pub const THREAD_NOT_AN_OBJECT: &str =
    "thread: Input should be a valid dictionary or object to extract fields from";

/// Anthropic, **modelled**: an unknown `thread.type`.
pub const THREAD_TYPE: &str = "thread.type: Input should be 'create' or 'continue'";

/// The beta header that unlocks `context_management` on the Messages API.
pub const CONTEXT_MANAGEMENT_BETA: &str = "context-management-2025-06-27";

/// Anthropic, **modelled**: `context_management` without its beta header.
pub fn context_management_needs_beta() -> String {
    format!("context_management: requires the `anthropic-beta: {CONTEXT_MANAGEMENT_BETA}` header")
}

/// Anthropic, **modelled**: an edit type the API does not know.
pub fn unknown_context_edit(idx: usize, found: &str) -> String {
    format!(
        "context_management.edits.{idx}: Input tag '{found}' found using 'type' does not match any of the expected tags: 'clear_tool_uses_20250919', 'clear_thinking_20251015', 'compact_20260112'"
    )
}

/// Anthropic, **modelled**: the text a cleared tool result is replaced with.
pub const CLEARED_TOOL_RESULT: &str = "[This tool result was cleared to save context.]";

/// The beta of server-side compaction (`compact_20260112` in `context_management.edits`), as
/// anthropic 2.10 names it (`AnthropicBetaParam`).
pub const COMPACT_BETA: &str = "compact-2026-01-12";

/// The beta of the `compaction` request parameter (a request that only compacts), as anthropic
/// 2.10 names it (`compact_before_next_turn()` requires it).
pub const COMPACTION_REQUEST_BETA: &str = "compact-2026-09-04";

/// The least `trigger.value` of a `compact_20260112` edit, as the real API documents it.
pub const MIN_COMPACT_TRIGGER: u64 = 50_000;

/// The trigger of a `compact_20260112` edit without one (the SDK's docstring: "Defaults to
/// 150000 input tokens").
pub const DEFAULT_COMPACT_TRIGGER: u64 = 150_000;

/// Anthropic, **modelled**: a compaction edit without its beta header.
pub fn compact_edit_needs_beta(idx: usize) -> String {
    format!(
        "context_management.edits.{idx}: compact_20260112 requires the `anthropic-beta: {COMPACT_BETA}` header"
    )
}

/// Anthropic, **modelled**: a second compaction edit.
pub fn compact_edit_twice(idx: usize) -> String {
    format!("context_management.edits.{idx}: at most one compact_20260112 edit is allowed")
}

/// Anthropic, **modelled**: the `compaction` parameter without its beta header.
pub fn compaction_needs_beta() -> String {
    format!("compaction: requires the `anthropic-beta: {COMPACTION_REQUEST_BETA}` header")
}

/// Anthropic, **real** (the SDK's docstring of `compaction`: "Cannot be combined with
/// `context_management`").
pub const COMPACTION_WITH_CONTEXT_MANAGEMENT: &str =
    "compaction: cannot be combined with `context_management`";

/// Anthropic, **modelled**: a compaction request with a field that only shapes a reply (the SDK
/// strips `stop_sequences`, `output_format`, a forcing `tool_choice` and `output_config.format`
/// from it, "so the API rejects the params that only shape a reply").
pub fn compaction_with_reply_field(field: &str) -> String {
    format!(
        "compaction: `{field}` shapes a reply, and a compaction request returns none; leave it out"
    )
}

/// Anthropic, **modelled**: a compaction request whose last turn is unfinished (the SDK: "The
/// API can't compact a conversation that ends mid-turn").
pub const COMPACTION_MID_TURN: &str = "compaction: the conversation ends mid-turn (a turn stopped with `pause_turn`); send it back to let it finish before compacting";

/// Anthropic, **modelled**: a replayed compaction block whose summary or signature was changed.
pub fn invalid_compaction_signature(msg_idx: usize, block_idx: usize) -> String {
    format!(
        "messages.{msg_idx}.content.{block_idx}: Invalid `signature` in `compaction` block; send the block back unchanged"
    )
}

/// Anthropic, **modelled**: the summary of a compaction (the server's own text; what a model
/// would write is not modelled).
pub fn compaction_summary(n_messages: usize, instructions: Option<&str>) -> String {
    match instructions {
        Some(instructions) => format!(
            "Summary of the {n_messages} earlier messages of this conversation (instructions: {instructions})."
        ),
        None => format!("Summary of the {n_messages} earlier messages of this conversation."),
    }
}

/// OpenAI, **modelled**: a `context_management` entry that is not a compaction.
pub fn unknown_context_management(idx: usize, found: &str) -> String {
    format!(
        "Invalid value: '{found}'. Supported values are: 'compaction'. (context_management[{idx}].type)"
    )
}

/// OpenAI, **modelled**: a replayed compaction item whose content was changed.
pub fn compaction_unverified(idx: usize) -> String {
    format!("The encrypted content of compaction item input[{idx}] could not be verified.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_wordings() {
        assert_eq!(
            tool_use_without_result(33, &["toolu_01A".into()]),
            "messages.33: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01A. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
        );
        assert_eq!(
            unexpected_tool_result(12, 0, "toolu_01J"),
            "messages.12.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01J. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
        );
        assert_eq!(
            invalid_thinking_signature(1, 0),
            "messages.1.content.0: Invalid `signature` in `thinking` block"
        );
        assert_eq!(
            image_too_large("messages.0.content.0.image", 5_316_852),
            "messages.0.content.0.image.source.base64: image exceeds 5 MB maximum: 5316852 bytes > 5242880 bytes"
        );
        assert_eq!(
            image_side_too_large_many("messages.39.content.38.image"),
            "messages.39.content.38.image.source.base64.data: At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels"
        );
        assert_eq!(
            unsupported_tool_types("claude-opus-5-5", "computer_20251124"),
            "'claude-opus-5-5' does not support tool types: computer_20251124."
        );
        assert_eq!(
            no_function_call("call_u"),
            "No tool call found for function call output with call_id call_u."
        );
        assert_eq!(
            encrypted_content_unverified("gAAAAxyzDQ=="),
            "The encrypted content gAAA...DQ== could not be verified."
        );
        assert_eq!(
            previous_response_not_found("resp_1"),
            "Previous response with id 'resp_1' not found."
        );
        assert_eq!(
            too_many_cache_breakpoints(5),
            "A maximum of 4 blocks with cache_control may be provided. Found 5."
        );
    }

    #[test]
    fn key_is_never_echoed_whole() {
        let message = openai_key_invalid("sk-secret-key-123");
        assert!(!message.contains("secret"), "{message}");
    }
}
