//! Tier 3: uploads and downloads through single-use grants, checked by what the page read and what landed on disk; attaching to a browser the driver does not own.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::sync::Arc;

use common::*;
use hands_cdp::{CdpBrowser, DownloadGrant, FileGrants, MemoryGrants, UploadGrant};
use hands_core::browser::args::{GrantId, ReadFilter};
use hands_core::browser::driver::{FileCleanup, FileEffect, FileStatus, ReadResult};
use hands_core::browser::read::Ref;
use hands_core::browser::{Browser, DriverError};

fn refs(read: Option<ReadResult>) -> HashMap<String, Ref> {
    match read {
        Some(ReadResult::Structured(r)) => r
            .elements()
            .iter()
            .map(|e| (e.label().to_owned(), e.reference().clone()))
            .collect(),
        other => panic!("{other:?}"),
    }
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("hands-cdp-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_and_downloads_go_through_single_use_grants() {
    let a = Server::start().await;
    a.html(
        "/",
        "<title>Files</title>\
         <input type=file id=f aria-label=Avatar onchange=\"const r = new FileReader(); \
           const file = this.files[0]; r.onload = () => document.title = file.name + ':' + r.result; r.readAsText(file)\">\
         <a href=/report.csv>Get report</a>",
    );
    a.route(
        "/report.csv",
        Route::Body {
            content_type: "text/csv",
            body: b"a,b\n1,2\n".to_vec(),
            headers: vec![(
                "Content-Disposition",
                "attachment; filename=report.csv".into(),
            )],
        },
    );
    let dir = temp_dir("files");
    let upload = dir.join("hello.txt");
    std::fs::write(&upload, "hello upload").unwrap();
    let big = dir.join("big.txt");
    std::fs::write(&big, vec![b'x'; 2048]).unwrap();
    let store = Arc::new(MemoryGrants::new());
    store.grant_upload(
        "up1",
        UploadGrant {
            path: upload.clone(),
            max_bytes: 1024,
        },
    );
    store.grant_upload(
        "up-big",
        UploadGrant {
            path: big.clone(),
            max_bytes: 1024,
        },
    );
    let saved = dir.join("saved.csv");
    store.grant_download(
        "down1",
        DownloadGrant {
            destination: saved.clone(),
            max_bytes: 1024,
        },
    );
    let mut config = config();
    config.grants = Some(store.clone() as Arc<dyn FileGrants>);
    let mut browser = launch(config).await;
    let c = cancel();
    browser.navigate(&a.page_url("/"), None, &c).await.unwrap();
    let up1 = GrantId::parse("up1").unwrap();

    // No chooser open: refused, and the grant is not spent.
    let outcome = browser.upload_file(&up1, &c).await.unwrap();
    assert_eq!(
        (outcome.status(), outcome.effect(), outcome.cleanup()),
        (
            FileStatus::Refused,
            FileEffect::None,
            FileCleanup::NotStarted
        )
    );

    // A click on the file input opens a chooser; the grant fills it; the page reads the file.
    let r = refs(browser.read_page(ReadFilter::All, None, &c).await.unwrap());
    browser.click(&r["Avatar"], None, &c).await.unwrap();
    let outcome = browser.upload_file(&up1, &c).await.unwrap();
    assert_eq!(
        outcome.to_json(),
        serde_json::json!({"version": 1, "status": "completed", "effect": "completed", "cleanup": "completed"})
    );
    for _ in 0..50 {
        if eval(&browser, "document.title").await != "Files" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(
        eval(&browser, "document.title").await,
        "hello.txt:hello upload"
    );
    // Single use.
    browser.click(&r["Avatar"], None, &c).await.unwrap();
    let again = browser.upload_file(&up1, &c).await.unwrap();
    assert_eq!(again.status(), FileStatus::Refused);
    // Over its size limit: refused.
    let too_big = browser
        .upload_file(&GrantId::parse("up-big").unwrap(), &c)
        .await
        .unwrap();
    assert_eq!(too_big.status(), FileStatus::Refused);

    // A download lands in the driver's staging directory; the grant delivers it.
    let down1 = GrantId::parse("down1").unwrap();
    browser.click(&r["Get report"], None, &c).await.unwrap();
    let outcome = browser.download_file(&down1, &c).await.unwrap();
    assert_eq!(
        (outcome.status(), outcome.effect(), outcome.cleanup()),
        (
            FileStatus::Completed,
            FileEffect::Completed,
            FileCleanup::Completed
        )
    );
    assert_eq!(std::fs::read(&saved).unwrap(), b"a,b\n1,2\n");
    let again = browser.download_file(&down1, &c).await.unwrap();
    assert_eq!(again.status(), FileStatus::Refused);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An attached browser is borrowed: the driver works on it, and dropping the driver leaves it
/// running. When the browser goes away, calls fail as a harness fault.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attached_browsers_are_left_to_their_owner() {
    let a = Server::start().await;
    a.html("/", "<title>Attached</title><button>Here</button>");
    let mut chromium = ForeignChromium::start();
    let ws_url = chromium.ws_url().await;
    let c = cancel();
    {
        let mut browser = CdpBrowser::attach(&ws_url, config()).await.unwrap();
        let state = browser.state(&c).await.unwrap();
        assert_eq!(state.tabs().len(), 1);
        browser.navigate(&a.page_url("/"), None, &c).await.unwrap();
        let r = refs(browser.read_page(ReadFilter::All, None, &c).await.unwrap());
        assert!(r.contains_key("Here"));
    }
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(chromium.running(), "dropping the driver closed the browser");
    let mut browser = CdpBrowser::attach(&ws_url, config()).await.unwrap();
    let state = browser.state(&c).await.unwrap();
    assert_eq!(state.tabs()[0].title, "Attached");
    drop(chromium);
    let gone = browser.read_page(ReadFilter::All, None, &c).await;
    assert!(matches!(gone, Err(DriverError::Gone(_))), "{gone:?}");
}
