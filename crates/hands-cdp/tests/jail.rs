//! Tier 3: a browser in a real Browser jail (`hands_jail::Jail`): it reads a page through the
//! policy proxy, runs as the jail's host uid, and takes an upload staged into its own private
//! directory, as the grant's file on the host is out of its sight.
//!
//! Needs the jail's init program: `cargo build -p hands-jail --bin hands-jail-init` (found
//! beside the test executable or one directory up, or at `$HANDS_JAIL_INIT`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::*;
use hands_cdp::{CdpBrowser, DriverConfig, FileGrants, MemoryGrants, UploadGrant};
use hands_core::browser::Browser;
use hands_core::browser::args::{GrantId, ReadFilter};
use hands_core::browser::driver::{FileCleanup, FileEffect, FileStatus, ReadResult};
use hands_jail::{InitProgram, Jail, JailConfig, JailKind, Launcher};

/// A Browser jail, its init found beside the test executable.
fn browser_jail() -> Jail {
    Jail::start(&JailConfig {
        init: InitProgram::Find,
        ..JailConfig::new(JailKind::Browser)
    })
    .expect(
        "a Browser jail starts (build its init: cargo build -p hands-jail --bin hands-jail-init)",
    )
}

/// A driver config whose browser runs in `jail` and may reach `origin` only.
fn jailed_config(jail: &Jail, origin: String) -> DriverConfig {
    let mut config = config();
    config.launch.launcher = Arc::new(jail.clone());
    config.launch.ready_timeout = std::time::Duration::from_secs(30);
    config.policy = allow_only(origin);
    config
}

/// The `Uid:` line of a host process (real, effective, saved, fs).
fn uids(host_pid: u32) -> Vec<u32> {
    let status = std::fs::read_to_string(format!("/proc/{host_pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .unwrap()
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect()
}

/// `pid` and every process descended from it (host pids): the browser's zygotes, renderers and
/// utilities, whatever pid namespaces its own sandbox put them in.
fn with_descendants(pid: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| {
            let status = std::fs::read_to_string(format!("/proc/{p}/status")).ok()?;
            let ppid = status.lines().find_map(|l| l.strip_prefix("PPid:"))?;
            Some((p, ppid.trim().parse().ok()?))
        })
        .collect();
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jailed_browser_reads_a_page() {
    let a = Server::start().await;
    a.html(
        "/",
        "<title>Jailed</title><h1>Inside the jail</h1><button>Press</button>",
    );
    let jail = browser_jail();
    let args =
        hands_cdp::launch::base_args(std::path::Path::new("/p"), (800, 600), &jail.isolation());
    // The browser keeps its own sandbox inside the jail.
    assert!(!args.iter().any(|a| a == "--no-sandbox"), "{args:?}");
    let mut browser = CdpBrowser::launch(jailed_config(&jail, a.origin()))
        .await
        .expect("a jailed Chromium starts");
    let c = cancel();
    browser.navigate(&a.page_url("/"), None, &c).await.unwrap();
    let read = browser.read_page(ReadFilter::All, None, &c).await.unwrap();
    let Some(ReadResult::Structured(read)) = read else {
        panic!("{read:?}");
    };
    let labels: Vec<&str> = read.elements().iter().map(|e| e.label()).collect();
    assert!(labels.contains(&"Press"), "{labels:?}");
    assert_eq!(
        eval(&browser, "document.querySelector('h1').textContent").await,
        "Inside the jail"
    );
    assert!(a.paths().contains(&"/".to_owned()), "{:?}", a.paths());

    let chromium = browser.chromium().unwrap();
    let host_pid = chromium
        .host_pid()
        .expect("the jail knows the browser's host pid");
    let processes = with_descendants(host_pid);
    // The browser, its zygotes and at least one renderer.
    assert!(processes.len() >= 3, "{processes:?}");
    // Chromium's own namespace sandbox is on: its sandboxed children are in pid namespaces
    // nested inside the jail's.
    let ns = |pid: u32| std::fs::read_link(format!("/proc/{pid}/ns/pid")).ok();
    assert!(
        processes
            .iter()
            .any(|p| ns(*p).is_some() && ns(*p) != ns(host_pid)),
        "no process of the browser is in a sandbox's pid namespace: {processes:?}"
    );
    if rustix::process::geteuid().is_root() {
        let uid = jail.host_uid();
        assert!(uid >= 3_000_000, "{uid}");
        for pid in &processes {
            assert!(
                uids(*pid).iter().all(|u| *u == uid),
                "process {pid}: {:?}",
                uids(*pid)
            );
        }
    }
}

/// The grant names a file on the host, out of the jailed browser's sight: hands stages a copy in
/// the jail's private directory, given to the jail's uid, and the page reads its contents.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_reaches_a_jailed_browser() {
    let a = Server::start().await;
    a.html(
        "/",
        "<title>Upload</title>\
         <input type=file id=f aria-label=Avatar onchange=\"const r = new FileReader(); \
           const file = this.files[0]; r.onload = () => fetch('/seen', {method: 'POST', body: file.name + ':' + r.result}); \
           r.readAsText(file)\">",
    );
    a.html("/seen", "ok");
    let dir = std::env::temp_dir().join(format!("hands-cdp-jail-upload-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let upload = dir.join("note.txt");
    std::fs::write(&upload, "from the host").unwrap();
    let store = Arc::new(MemoryGrants::new());
    store.grant_upload(
        "up1",
        UploadGrant {
            path: upload.clone(),
            max_bytes: 1024,
        },
    );
    let jail = browser_jail();
    let mut config = jailed_config(&jail, a.origin());
    config.grants = Some(store.clone() as Arc<dyn FileGrants>);
    let mut browser = CdpBrowser::launch(config)
        .await
        .expect("a jailed Chromium starts");
    let c = cancel();
    browser.navigate(&a.page_url("/"), None, &c).await.unwrap();
    let read = browser.read_page(ReadFilter::All, None, &c).await.unwrap();
    let Some(ReadResult::Structured(read)) = read else {
        panic!("{read:?}");
    };
    let avatar = read
        .elements()
        .iter()
        .find(|e| e.label() == "Avatar")
        .unwrap()
        .reference()
        .clone();
    browser.click(&avatar, None, &c).await.unwrap();
    let outcome = browser
        .upload_file(&GrantId::parse("up1").unwrap(), &c)
        .await
        .unwrap();
    assert_eq!(
        (outcome.status(), outcome.effect(), outcome.cleanup()),
        (
            FileStatus::Completed,
            FileEffect::Completed,
            FileCleanup::Pending
        )
    );
    let mut seen = None;
    for _ in 0..100 {
        seen = a.hits().into_iter().find(|h| h.path == "/seen");
        if seen.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(30)).await;
    }
    let seen = seen.expect("the page posted what it read");
    assert_eq!(seen.body, "note.txt:from the host");
    // What it read is the copy in the jail's private directory (the host path is out of its
    // sight), given to the jail's uid.
    let staged: Vec<_> = std::fs::read_dir(jail_scratch(&jail))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("upload-"))
        .collect();
    assert_eq!(staged.len(), 1, "one staged copy");
    let copy = staged[0].path().join("file/note.txt");
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), "from the host");
    if rustix::process::geteuid().is_root() {
        use std::os::unix::fs::MetadataExt as _;
        assert_eq!(
            std::fs::symlink_metadata(&copy).unwrap().uid(),
            jail.host_uid()
        );
    }
    // Dropping the driver removes the staged copy.
    drop(browser);
    assert!(
        !staged[0].path().exists(),
        "the staged copy outlived the driver"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The jail's scratch directory on the host (where its private directories are made).
fn jail_scratch(jail: &Jail) -> std::path::PathBuf {
    let probe = jail.private_dir("probe").unwrap();
    let scratch = probe.host.parent().unwrap().to_path_buf();
    std::fs::remove_dir(&probe.host).unwrap();
    scratch
}
