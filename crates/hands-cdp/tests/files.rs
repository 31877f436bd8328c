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
    // The page reads the file when it likes: its staged copy stays until the driver goes.
    assert_eq!(
        outcome.to_json(),
        serde_json::json!({"version": 1, "status": "completed", "effect": "completed", "cleanup": "pending"})
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

/// A page with a download link to `/report.csv` (a CSV attachment), and a store granting
/// `down1` to `destination`.
async fn download_page(destination: &std::path::Path) -> (Server, Arc<MemoryGrants>) {
    let a = Server::start().await;
    a.html(
        "/",
        "<title>Report</title><a href=/report.csv>Get report</a>",
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
    let store = Arc::new(MemoryGrants::new());
    store.grant_download(
        "down1",
        DownloadGrant {
            destination: destination.to_path_buf(),
            max_bytes: 1024,
        },
    );
    (a, store)
}

/// Clicks the page's link and waits until the staged download (the one file in the browser's
/// download directory, named by its guid) holds the whole body; its host path.
async fn staged_download(browser: &mut CdpBrowser) -> std::path::PathBuf {
    let c = cancel();
    let r = refs(browser.read_page(ReadFilter::All, None, &c).await.unwrap());
    browser.click(&r["Get report"], None, &c).await.unwrap();
    let dir = browser
        .chromium()
        .unwrap()
        .download_dir()
        .unwrap()
        .host
        .clone();
    let whole = |path: &std::path::Path| {
        std::fs::read(path).ok().as_deref() == Some(b"a,b\n1,2\n".as_slice())
    };
    for _ in 0..400 {
        // Chromium writes a download under a temporary name and renames it once complete (late
        // under load): the staged file is the one still there, whole, 200 ms after it is seen.
        let seen = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| !p.to_string_lossy().ends_with(".crdownload") && whole(p));
        if let Some(path) = seen {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            if whole(&path) {
                return path;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("no download staged in {}", dir.display());
}

/// A (compromised) browser swaps its finished download for a symlink to a host file it wants
/// hands to hand over: the symlink is not followed, the delivery is refused, and the
/// destination never holds the file's content.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_swapped_for_a_symlink_is_not_followed() {
    let dir = temp_dir("swapped");
    let canary = dir.join("canary.txt");
    std::fs::write(&canary, "host secret").unwrap();
    let saved = dir.join("saved.csv");
    let (a, store) = download_page(&saved).await;
    let mut config = config();
    config.grants = Some(store.clone() as Arc<dyn FileGrants>);
    let mut browser = launch(config).await;
    let c = cancel();
    browser.navigate(&a.page_url("/"), None, &c).await.unwrap();
    let staged = staged_download(&mut browser).await;
    std::fs::remove_file(&staged).unwrap();
    std::os::unix::fs::symlink(&canary, &staged).unwrap();

    let down1 = GrantId::parse("down1").unwrap();
    let outcome = browser.download_file(&down1, &c).await.unwrap();
    assert_eq!(
        (outcome.status(), outcome.effect(), outcome.cleanup()),
        (
            FileStatus::Refused,
            FileEffect::None,
            FileCleanup::NotStarted
        )
    );
    assert!(
        std::fs::symlink_metadata(&saved).is_err(),
        "the destination was made"
    );
    // Nothing else appeared beside it either (no temporary copy left behind).
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("canary.txt")]);
    assert_eq!(std::fs::read_to_string(&canary).unwrap(), "host secret");

    // The refusal was the symlink's: a regular file back at that name is delivered.
    std::fs::remove_file(&staged).unwrap();
    std::fs::write(&staged, "x,y\n").unwrap();
    store.grant_download(
        "down2",
        DownloadGrant {
            destination: saved.clone(),
            max_bytes: 1024,
        },
    );
    let outcome = browser
        .download_file(&GrantId::parse("down2").unwrap(), &c)
        .await
        .unwrap();
    assert_eq!(outcome.status(), FileStatus::Completed);
    assert_eq!(std::fs::read_to_string(&saved).unwrap(), "x,y\n");
    assert!(!staged.exists(), "the staged download was not removed");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A symlink planted at a download's destination (to an existing host file, or dangling) is
/// neither written through nor replaced: the delivery is refused and both stay as they were;
/// once the name is free, the same download is delivered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destination_symlink_is_not_written_through() {
    let dir = temp_dir("destination");
    let canary = dir.join("canary.txt");
    std::fs::write(&canary, "host file").unwrap();
    let saved = dir.join("saved.csv");
    let (a, store) = download_page(&saved).await;
    store.grant_download(
        "down2",
        DownloadGrant {
            destination: saved.clone(),
            max_bytes: 1024,
        },
    );
    store.grant_download(
        "down3",
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
    staged_download(&mut browser).await;

    std::os::unix::fs::symlink(&canary, &saved).unwrap();
    let outcome = browser
        .download_file(&GrantId::parse("down1").unwrap(), &c)
        .await
        .unwrap();
    assert_eq!(outcome.status(), FileStatus::Refused);
    assert_eq!(std::fs::read_to_string(&canary).unwrap(), "host file");
    assert!(
        std::fs::symlink_metadata(&saved)
            .unwrap()
            .file_type()
            .is_symlink()
    );

    let elsewhere = dir.join("not-yet.txt");
    std::fs::remove_file(&saved).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &saved).unwrap();
    let outcome = browser
        .download_file(&GrantId::parse("down2").unwrap(), &c)
        .await
        .unwrap();
    assert_eq!(outcome.status(), FileStatus::Refused);
    assert!(!elsewhere.exists(), "written through a dangling symlink");

    // The refusals spent nothing of the download: with the name free it is delivered.
    std::fs::remove_file(&saved).unwrap();
    let outcome = browser
        .download_file(&GrantId::parse("down3").unwrap(), &c)
        .await
        .unwrap();
    assert_eq!(
        (outcome.status(), outcome.effect(), outcome.cleanup()),
        (
            FileStatus::Completed,
            FileEffect::Completed,
            FileCleanup::Completed
        )
    );
    let meta = std::fs::symlink_metadata(&saved).unwrap();
    assert!(meta.file_type().is_file());
    assert_eq!(std::fs::read(&saved).unwrap(), b"a,b\n1,2\n");
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
