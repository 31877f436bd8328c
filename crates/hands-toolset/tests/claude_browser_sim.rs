//! Claude's browser toolset answers a whole turn, and the simulated Messages API (hands-sim,
//! which refuses what the real API refuses: a missing `toolset_name`, a second `browser_state`
//! block, a `browser_state` block on an error, an unanswered `tool_use`, an undecodable image)
//! accepts the answer.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::io::{Read, Write};
use std::sync::Arc;

use async_trait::async_trait;
use hands_core::CancellationToken;
use hands_core::browser::args::{CssPoint, PageUrl, PointerButton};
use hands_core::browser::read::Ref;
use hands_core::browser::{Browser, BrowserState, DriverError, MemberSet, TabId, TabInfo};
use hands_core::geometry::Size;
use hands_core::image::{EncodedImage, ImageFormat, PixelFormat, Pixels, encode};
use hands_core::input::ModifierSet;
use hands_sim::policy::toolset_use;
use hands_sim::{SimConfig, SimServer, Turn};
use hands_toolset::browser::{Approval, ConfirmContext, ConfirmFn, OriginAllowList};
use hands_toolset::claude_browser::{ClaudeBrowserConfig, ClaudeBrowserToolset, user_message};
use hands_toolset::wire::ToolUse;
use serde_json::{Value, json};

/// A small browser: tabs that navigate and open, a real PNG screenshot, clicks at coordinates,
/// and a ref click that fails.
struct SmallBrowser {
    tabs: Vec<TabInfo>,
}

impl SmallBrowser {
    fn new() -> SmallBrowser {
        SmallBrowser {
            tabs: vec![TabInfo {
                id: TabId::new("t1").unwrap(),
                title: "Shop".into(),
                url: "https://shop.example/cart?session=secret".into(),
                active: true,
            }],
        }
    }
}

#[async_trait]
impl Browser for SmallBrowser {
    fn implemented(&self) -> MemberSet {
        MemberSet::all()
    }

    async fn state(&mut self, _: &CancellationToken) -> Result<BrowserState, DriverError> {
        BrowserState::new(self.tabs.clone()).map_err(|e| DriverError::Failed(e.to_string()))
    }

    async fn navigate(
        &mut self,
        url: &PageUrl,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        let tab = self.tabs.iter_mut().find(|t| t.active).unwrap();
        tab.url = url.as_str().to_owned();
        tab.title = "Checkout".into();
        Ok(None)
    }

    async fn new_tab(
        &mut self,
        url: Option<&PageUrl>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        for tab in &mut self.tabs {
            tab.active = false;
        }
        let id = format!("t{}", self.tabs.len() + 1);
        self.tabs.push(TabInfo {
            id: TabId::new(id).unwrap(),
            title: String::new(),
            url: url.map_or("about:blank", PageUrl::as_str).to_owned(),
            active: true,
        });
        Ok(None)
    }

    async fn screenshot(
        &mut self,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<EncodedImage, DriverError> {
        let size = Size::new(64, 40).unwrap();
        let pixels = Pixels::new(size, PixelFormat::Rgb, vec![200; 64 * 40 * 3]).unwrap();
        encode(&pixels, ImageFormat::Png).map_err(|e| DriverError::Failed(e.to_string()))
    }

    async fn click_at(
        &mut self,
        _: CssPoint,
        _: PointerButton,
        _: u8,
        _: ModifierSet,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        Ok(None)
    }

    async fn click(
        &mut self,
        _: &Ref,
        _: Option<&TabId>,
        _: &CancellationToken,
    ) -> Result<Option<String>, DriverError> {
        Err(DriverError::refused(
            "The element of that ref is gone; read the page again.",
        ))
    }
}

/// POSTs `body` to the simulated Messages API; returns the status and the JSON body.
fn post(server: &SimServer, body: &Value) -> (u16, Value) {
    let body = body.to_string();
    let mut tcp = std::net::TcpStream::connect(server.addr()).unwrap();
    write!(
        tcp,
        "POST /v1/messages HTTP/1.1\r\nhost: sim\r\nx-api-key: k\r\n\
         anthropic-version: 2023-06-01\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).unwrap();
    let (head, payload) = answer.split_once("\r\n\r\n").unwrap();
    let status = head[9..12].parse().unwrap();
    let payload = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(payload)
    } else {
        payload.to_owned()
    };
    (status, serde_json::from_str(&payload).unwrap())
}

/// The body of a chunked HTTP/1.1 answer.
fn dechunk(mut rest: &str) -> String {
    let mut body = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap();
        if n == 0 {
            break;
        }
        body.push_str(&after[..n]);
        rest = &after[n + 2..];
    }
    body
}

#[tokio::test]
async fn the_simulated_api_accepts_a_turns_answer() {
    let turn = Turn::Blocks(vec![
        toolset_use("browser", "screenshot", json!({})),
        toolset_use(
            "browser",
            "navigate",
            json!({"url": "shop.example/checkout"}),
        ),
        toolset_use(
            "browser",
            "left_click",
            json!({"target": {"type": "coordinate", "x": 20, "y": 10}}),
        ),
        toolset_use("browser", "new_tab", json!({})),
        toolset_use(
            "browser",
            "left_click",
            json!({"target": {"type": "ref", "ref": "e7"}}),
        ),
        toolset_use("browser", "list_tabs", json!({})),
    ]);
    let server = SimServer::start(SimConfig::scripted(vec![turn, Turn::text("Done.")])).unwrap();

    let confirm = ConfirmFn(|_: ConfirmContext, _| async { Ok(Approval::Approve) });
    let mut toolset = ClaudeBrowserToolset::new(
        SmallBrowser::new(),
        ClaudeBrowserConfig {
            confirm: Some(Arc::new(confirm)),
            url_policy: Some(Arc::new(
                OriginAllowList::new(["https://shop.example"]).unwrap(),
            )),
            ..ClaudeBrowserConfig::default()
        },
    )
    .unwrap();
    let tools = json!([toolset.declaration()]);
    let task = json!({"role": "user", "content": "Check out the cart."});

    let (status, first) = post(
        &server,
        &json!({"model": "claude-opus-5", "max_tokens": 1024, "tools": tools,
                "messages": [task]}),
    );
    assert_eq!(status, 200, "{first}");
    let blocks = ToolUse::from_message(&first).unwrap();
    assert_eq!(blocks.len(), 6);
    let outcome = toolset.run_turn(&blocks, &CancellationToken::new()).await;
    assert!(outcome.fault.is_none(), "{:?}", outcome.fault);
    let errors: Vec<bool> = outcome.results.iter().map(|r| r.is_error()).collect();
    assert_eq!(errors, [false, false, false, false, true, true]);
    let answer = user_message(&outcome.results);
    // The new tab is reported opened and is the only active tab.
    let state = &answer["content"][3]["content"][0];
    assert_eq!(
        state["state_changes"],
        json!([{"type": "tab_opened", "tab_id": "t2"}])
    );
    assert_eq!(state["tabs"][1]["active"], true);
    assert_eq!(state["tabs"][0]["active"], false);

    let (status, second) = post(
        &server,
        &json!({"model": "claude-opus-5", "max_tokens": 1024, "tools": tools,
                "messages": [task, {"role": "assistant", "content": first["content"]}, answer]}),
    );
    assert_eq!(status, 200, "{second}");
    assert_eq!(second["content"][0]["text"], "Done.");
    assert!(server.handle().violations().is_empty());
}
