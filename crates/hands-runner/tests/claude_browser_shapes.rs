//! Claude's browser toolset reads the input shapes of anthropic 2.10's wire types and acts on a
//! real Chromium: a `scroll` turns the wheel at its `target` point (an inner scrollable area
//! scrolls, not the page), and a `file_upload` fills the file input its ref target names with
//! the file of the grant sent in `document_ids`, once.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::sync::Arc;

use hands_cdp::{CdpBrowser, DriverConfig, FileGrants, MemoryGrants, UploadGrant};
use hands_core::CancellationToken;
use hands_core::browser::Browser as _;
use hands_core::browser::args::{PageUrl, ReadFilter};
use hands_core::browser::driver::ReadResult;
use hands_toolset::browser::consent::{Approval, ConfirmFn};
use hands_toolset::browser::url_policy::OriginAllowList;
use hands_toolset::claude_browser::declaration::BrowserToolsetDeclaration;
use hands_toolset::claude_browser::{ClaudeBrowserConfig, ClaudeBrowserToolset, Member};
use hands_toolset::wire::ToolUse;
use serde_json::{Value, json};

const PAGE: &str = "data:text/html,<body style='margin:0'>\
    <div id=pane style='position:absolute;left:0;top:0;width:300px;height:200px;overflow:auto'>\
    <div style='height:3000px'>inner</div></div>\
    <input type=file id=f aria-label=Attachment style='position:absolute;left:400px;top:50px'>\
    <p id=o style='position:absolute;left:400px;top:100px'>none</p>\
    <div style='height:6000px'></div>\
    <script>f.onchange=()=>o.textContent=f.files[0].name+':'+f.files[0].size</script></body>";

fn block(id: &str, name: &str, input: Value) -> ToolUse {
    ToolUse {
        id: id.into(),
        name: name.into(),
        toolset_name: Some("browser".into()),
        input,
    }
}

async fn eval(browser: &CdpBrowser, expression: &str) -> Value {
    browser
        .call_raw(
            None,
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        )
        .await
        .unwrap()["result"]["value"]
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scroll_targets_and_uploads_by_grant_act_on_a_real_page() {
    let dir = tempfile::tempdir().unwrap();
    let attachment = dir.path().join("grant.txt");
    std::fs::write(&attachment, "hello grant").unwrap();
    let grants = Arc::new(MemoryGrants::new());
    grants.grant_upload(
        "g1",
        UploadGrant {
            path: attachment,
            max_bytes: 1024,
        },
    );
    let mut browser = CdpBrowser::launch(DriverConfig {
        grants: Some(grants as Arc<dyn FileGrants>),
        ..DriverConfig::default()
    })
    .await
    .unwrap();
    let cancel = CancellationToken::new();
    browser
        .navigate(&PageUrl::parse("url", PAGE).unwrap(), None, &cancel)
        .await
        .unwrap();
    let Some(ReadResult::Structured(read)) = browser
        .read_page(ReadFilter::Interactive, None, &cancel)
        .await
        .unwrap()
    else {
        panic!("no structured read")
    };
    let input = read
        .elements()
        .iter()
        .find(|e| e.label() == "Attachment")
        .unwrap()
        .reference()
        .as_str()
        .to_owned();
    let mut toolset = ClaudeBrowserToolset::new(
        browser,
        ClaudeBrowserConfig {
            declaration: BrowserToolsetDeclaration::new().enable(Member::FileUpload),
            confirm: Some(Arc::new(ConfirmFn(|_, _| async { Ok(Approval::Approve) }))),
            url_policy: Some(Arc::new(
                OriginAllowList::new(["https://example.test"]).unwrap(),
            )),
            ..ClaudeBrowserConfig::default()
        },
    )
    .unwrap();
    let target = json!({"type": "ref", "ref": input});
    let blocks = [
        // Two notches over the inner pane: the pane scrolls, the page does not.
        block(
            "toolu_1",
            "scroll",
            json!({"scroll_direction": "down", "target": {"type": "coordinate", "x": 100, "y": 100},
                   "scroll_amount": 2}),
        ),
        block(
            "toolu_2",
            "file_upload",
            json!({"target": target, "document_ids": ["g1"]}),
        ),
        // Outside the pane, three notches by default: the page.
        block(
            "toolu_3",
            "scroll",
            json!({"scroll_direction": "down", "target": {"type": "coordinate", "x": 800, "y": 400}}),
        ),
    ];
    let outcome = toolset.run_turn(&blocks, &cancel).await;
    assert!(outcome.fault.is_none(), "{:?}", outcome.fault);
    for result in &outcome.results {
        assert!(!result.is_error(), "{:?}", result.text());
    }
    let browser = toolset.driver();
    assert_eq!(eval(browser, "pane.scrollTop").await, json!(200));
    assert_eq!(eval(browser, "window.scrollY").await, json!(300));
    assert_eq!(eval(browser, "o.textContent").await, json!("grant.txt:11"));

    // The grant was single use: a second upload is refused, and says so.
    let again = toolset
        .run_turn(
            &[block(
                "toolu_4",
                "file_upload",
                json!({"target": target, "document_ids": ["g1"]}),
            )],
            &cancel,
        )
        .await;
    assert!(again.results[0].is_error());
    assert!(
        again.results[0]
            .text()
            .unwrap()
            .contains("\"status\":\"refused\""),
        "{:?}",
        again.results[0].text()
    );
}
