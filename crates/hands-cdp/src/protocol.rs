//! Thin serde types for the DevTools methods and events this driver uses; unknown fields are ignored, anything else goes through the raw `call`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A typed command: its method name and the shape of its answer.
pub trait Command: Serialize {
    /// E.g. `Page.navigate`.
    const METHOD: &'static str;
    /// The decoded result.
    type Response: serde::de::DeserializeOwned;
}

/// A result with no fields of interest.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Empty {}

macro_rules! command {
    ($ty:ty, $method:literal, $response:ty) => {
        impl Command for $ty {
            const METHOD: &'static str = $method;
            type Response = $response;
        }
    };
}

/// `Target.TargetInfo`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetInfo {
    /// The target id.
    pub target_id: String,
    /// `page`, `iframe`, `worker`, `service_worker`, `shared_worker`, `browser`, `tab`, `other`…
    #[serde(rename = "type")]
    pub kind: String,
    /// The title.
    #[serde(default)]
    pub title: String,
    /// The URL.
    #[serde(default)]
    pub url: String,
    /// The target that opened this one (pop-ups).
    #[serde(default)]
    pub opener_id: Option<String>,
    /// Whether a client is attached.
    #[serde(default)]
    pub attached: bool,
    /// The parent frame's target for an iframe target.
    #[serde(default)]
    pub parent_frame_id: Option<String>,
}

/// `Target.attachedToTarget`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachedToTarget {
    /// The new flat session.
    pub session_id: String,
    /// The target.
    pub target_info: TargetInfo,
    /// Whether it is paused until `Runtime.runIfWaitingForDebugger`.
    #[serde(default)]
    pub waiting_for_debugger: bool,
}

/// `Target.detachedFromTarget`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DetachedFromTarget {
    /// The session that ended.
    pub session_id: String,
    /// Its target.
    #[serde(default)]
    pub target_id: Option<String>,
}

/// `Target.targetInfoChanged` / `Target.targetCreated`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetInfoEvent {
    /// The target.
    pub target_info: TargetInfo,
}

/// `Target.targetDestroyed` / `Target.targetCrashed`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetIdEvent {
    /// The target.
    pub target_id: String,
}

/// `Target.setAutoAttach`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetAutoAttach {
    /// Attach to related targets.
    pub auto_attach: bool,
    /// Pause each until it is set up.
    pub wait_for_debugger_on_start: bool,
    /// Flat sessions on the one connection.
    pub flatten: bool,
}
command!(SetAutoAttach, "Target.setAutoAttach", Empty);

impl SetAutoAttach {
    /// Attach everything, paused, flat.
    pub const ALL_PAUSED: SetAutoAttach = SetAutoAttach {
        auto_attach: true,
        wait_for_debugger_on_start: true,
        flatten: true,
    };
}

/// `Target.getTargets`.
#[derive(Debug, Clone, Serialize)]
pub struct GetTargets {}
command!(GetTargets, "Target.getTargets", Targets);

/// The answer to `Target.getTargets`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Targets {
    /// Every target.
    pub target_infos: Vec<TargetInfo>,
}

/// `Target.createTarget`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTarget {
    /// The first URL (`about:blank`; navigation follows so it is tracked like any other).
    pub url: String,
}
command!(CreateTarget, "Target.createTarget", CreatedTarget);

/// The answer to `Target.createTarget`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatedTarget {
    /// The new target's id.
    pub target_id: String,
}

/// `Page.navigate`.
#[derive(Debug, Clone, Serialize)]
pub struct Navigate {
    /// Where to.
    pub url: String,
}
command!(Navigate, "Page.navigate", Navigated);

/// The answer to `Page.navigate`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Navigated {
    /// The frame navigated.
    #[serde(default)]
    pub frame_id: String,
    /// The new document's loader; absent for a same-document navigation.
    #[serde(default)]
    pub loader_id: Option<String>,
    /// Set when the navigation failed (`net::ERR_BLOCKED_BY_CLIENT`, …).
    #[serde(default)]
    pub error_text: Option<String>,
}

/// `Page.Frame` (the fields used).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Frame {
    /// Frame id.
    pub id: String,
    /// Parent frame id (none for a main frame).
    #[serde(default)]
    pub parent_id: Option<String>,
    /// The document's loader.
    #[serde(default)]
    pub loader_id: String,
    /// The URL.
    #[serde(default)]
    pub url: String,
    /// Any fragment, separately.
    #[serde(default)]
    pub url_fragment: Option<String>,
}

/// `Page.frameNavigated`.
#[derive(Debug, Clone, Deserialize)]
pub struct FrameNavigated {
    /// The frame, after the commit.
    pub frame: Frame,
}

/// `Page.frameRequestedNavigation`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FrameRequestedNavigation {
    /// The frame about to navigate.
    pub frame_id: String,
}

/// `Page.navigatedWithinDocument`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NavigatedWithinDocument {
    /// The frame.
    pub frame_id: String,
    /// The new URL.
    pub url: String,
}

/// `Page.lifecycleEvent`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleEvent {
    /// The frame.
    pub frame_id: String,
    /// The document.
    #[serde(default)]
    pub loader_id: String,
    /// `init`, `DOMContentLoaded`, `load`, `networkIdle`, …
    pub name: String,
}

/// Events that name only a frame (`Page.frameStartedLoading`, `Page.frameStoppedLoading`, …).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FrameIdEvent {
    /// The frame.
    pub frame_id: String,
}

/// `Page.javascriptDialogOpening`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DialogOpening {
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The message.
    #[serde(default)]
    pub message: String,
}

/// `Page.fileChooserOpened`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileChooserOpened {
    /// The frame of the input.
    #[serde(default)]
    pub frame_id: String,
    /// `selectSingle` or `selectMultiple`.
    #[serde(default)]
    pub mode: String,
    /// The `<input type=file>` (absent for a chooser opened without an input).
    #[serde(default)]
    pub backend_node_id: Option<i64>,
}

/// `Page.downloadWillBegin` / `Browser.downloadWillBegin`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DownloadWillBegin {
    /// The download's id (also its file name under `allowAndName`).
    pub guid: String,
    /// Where from.
    #[serde(default)]
    pub url: String,
    /// The name the page suggests.
    #[serde(default)]
    pub suggested_filename: String,
    /// The frame that started it.
    #[serde(default)]
    pub frame_id: String,
}

/// `Browser.downloadProgress`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DownloadProgress {
    /// The download.
    pub guid: String,
    /// `inProgress`, `completed` or `canceled`.
    pub state: String,
    /// Bytes so far.
    #[serde(default)]
    pub received_bytes: f64,
    /// Total bytes, when known.
    #[serde(default)]
    pub total_bytes: f64,
}

/// `Fetch.RequestPaused` (the fields the policy needs).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestPaused {
    /// The interception id to continue or fail.
    pub request_id: String,
    /// The request.
    pub request: PausedRequest,
    /// `Document`, `Script`, `XHR`, `Fetch`, `WebSocket`, `EventSource`, `Ping`, …
    #[serde(default)]
    pub resource_type: String,
    /// The frame.
    #[serde(default)]
    pub frame_id: String,
    /// Set for a request paused at the response stage.
    #[serde(default)]
    pub response_status_code: Option<i64>,
    /// The `Network` domain's id of the request, when it has one.
    #[serde(default)]
    pub network_id: Option<String>,
}

/// The request inside `Fetch.requestPaused`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PausedRequest {
    /// The full URL (without fragment).
    pub url: String,
    /// `GET`, `POST`, …
    #[serde(default)]
    pub method: String,
}

/// `Network.requestWillBeSent`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestWillBeSent {
    /// The request id (kept across redirects).
    pub request_id: String,
    /// The document's loader.
    #[serde(default)]
    pub loader_id: String,
    /// The request.
    pub request: PausedRequest,
    /// The resource type.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// The frame.
    #[serde(default)]
    pub frame_id: Option<String>,
}

/// `Network.responseReceived`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResponseReceived {
    /// The request.
    pub request_id: String,
    /// The resource type.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// The frame.
    #[serde(default)]
    pub frame_id: Option<String>,
    /// The response.
    pub response: Response,
}

/// `Network.Response` (the fields used).
#[derive(Debug, Clone, Deserialize)]
pub struct Response {
    /// The URL.
    #[serde(default)]
    pub url: String,
    /// The HTTP status.
    #[serde(default)]
    pub status: f64,
}

/// `Network.loadingFinished` / `Network.loadingFailed`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadingDone {
    /// The request.
    pub request_id: String,
    /// For a failure: `net::ERR_…`.
    #[serde(default)]
    pub error_text: Option<String>,
    /// For a failure: the blocked reason, if the browser blocked it.
    #[serde(default)]
    pub blocked_reason: Option<String>,
    /// For a failure: whether it was cancelled.
    #[serde(default)]
    pub canceled: Option<bool>,
    /// For a success: the bytes received over the network (headers included).
    #[serde(default)]
    pub encoded_data_length: Option<f64>,
}

/// `Runtime.consoleAPICalled`.
#[derive(Debug, Clone, Deserialize)]
pub struct ConsoleApiCalled {
    /// `log`, `warning`, `error`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// The arguments.
    #[serde(default)]
    pub args: Vec<RemoteObject>,
}

/// `Runtime.exceptionThrown`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExceptionThrown {
    /// The details.
    pub exception_details: ExceptionDetails,
}

/// `Runtime.ExceptionDetails`.
#[derive(Debug, Clone, Deserialize)]
pub struct ExceptionDetails {
    /// A short text (`Uncaught`).
    #[serde(default)]
    pub text: String,
    /// The thrown value.
    #[serde(default)]
    pub exception: Option<RemoteObject>,
}

impl ExceptionDetails {
    /// The best one-line description.
    pub fn describe(&self) -> String {
        match &self.exception {
            Some(object) => object.describe(),
            None => self.text.clone(),
        }
    }
}

/// `Runtime.RemoteObject` (the fields used).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteObject {
    /// `object`, `string`, `number`, `undefined`, …
    #[serde(default, rename = "type")]
    pub kind: String,
    /// `null`, `array`, `error`, … for objects.
    #[serde(default)]
    pub subtype: Option<String>,
    /// The value, for primitives and `returnByValue`.
    #[serde(default)]
    pub value: Option<Value>,
    /// A description (error messages, object previews).
    #[serde(default)]
    pub description: Option<String>,
    /// Unserialisable primitives (`NaN`, `-0`, `1n`).
    #[serde(default)]
    pub unserializable_value: Option<String>,
    /// A handle on the object.
    #[serde(default)]
    pub object_id: Option<String>,
}

impl RemoteObject {
    /// A short text for a console argument or an exception.
    pub fn describe(&self) -> String {
        match (&self.value, &self.unserializable_value, &self.description) {
            (Some(Value::String(s)), _, _) => s.clone(),
            (Some(v), _, _) if !v.is_null() || self.kind == "object" => v.to_string(),
            (_, Some(u), _) => u.clone(),
            (_, _, Some(d)) => d.clone(),
            _ => self.kind.clone(),
        }
    }
}

/// The answer to `Runtime.evaluate` / `Runtime.callFunctionOn`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Evaluated {
    /// The value.
    pub result: RemoteObject,
    /// Set when it threw.
    #[serde(default)]
    pub exception_details: Option<ExceptionDetails>,
}

/// The answer to `Page.createIsolatedWorld`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IsolatedWorld {
    /// The world's context in the frame's current document.
    pub execution_context_id: i64,
}

/// The answer to `Page.captureScreenshot`.
#[derive(Debug, Clone, Deserialize)]
pub struct Screenshot {
    /// Base64 image bytes.
    pub data: String,
}

/// The answer to `Page.getLayoutMetrics` (CSS-pixel parts).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LayoutMetrics {
    /// The visual viewport.
    pub css_visual_viewport: VisualViewport,
}

/// `Page.VisualViewport`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VisualViewport {
    /// Scroll offset of the visual viewport in the document.
    pub page_x: f64,
    /// Scroll offset of the visual viewport in the document.
    pub page_y: f64,
    /// Width in CSS pixels.
    pub client_width: f64,
    /// Height in CSS pixels.
    pub client_height: f64,
}

/// The answer to `Page.getFrameTree` (only the main frame is used).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FrameTree {
    /// The root of the tree.
    pub frame_tree: FrameTreeNode,
}

/// `Page.getFrameTree`.
#[derive(Debug, Clone, Serialize)]
pub struct GetFrameTree {}
command!(GetFrameTree, "Page.getFrameTree", FrameTree);

/// `Page.getLayoutMetrics`.
#[derive(Debug, Clone, Serialize)]
pub struct GetLayoutMetrics {}
command!(GetLayoutMetrics, "Page.getLayoutMetrics", LayoutMetrics);

/// One node of a frame tree.
#[derive(Debug, Clone, Deserialize)]
pub struct FrameTreeNode {
    /// The frame.
    pub frame: Frame,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_ignore_unknown_fields() {
        let attached: AttachedToTarget = serde_json::from_value(json!({
            "sessionId": "S1",
            "targetInfo": {"targetId": "T1", "type": "page", "title": "", "url": "about:blank",
                           "attached": true, "canAccessOpener": false, "browserContextId": "C"},
            "waitingForDebugger": true,
            "somethingNew": 1
        }))
        .unwrap();
        assert_eq!(attached.session_id, "S1");
        assert_eq!(attached.target_info.kind, "page");
        assert!(attached.waiting_for_debugger);
        let paused: RequestPaused = serde_json::from_value(json!({
            "requestId": "interception-job-1.0",
            "request": {"url": "http://a.test/x", "method": "GET", "headers": {}},
            "frameId": "F", "resourceType": "Document", "networkId": "N"
        }))
        .unwrap();
        assert_eq!(paused.request.url, "http://a.test/x");
        assert_eq!(paused.resource_type, "Document");
    }

    #[test]
    fn remote_objects_describe_themselves() {
        let check = |v: serde_json::Value, expect: &str| {
            let object: RemoteObject = serde_json::from_value(v).unwrap();
            assert_eq!(object.describe(), expect);
        };
        check(json!({"type": "string", "value": "hi"}), "hi");
        check(json!({"type": "number", "value": 3}), "3");
        check(
            json!({"type": "number", "unserializableValue": "NaN"}),
            "NaN",
        );
        check(
            json!({"type": "object", "subtype": "error", "description": "Error: x\n at y"}),
            "Error: x\n at y",
        );
        check(json!({"type": "undefined"}), "undefined");
    }
}
