//! Tier 3: a launched browser speaks CDP only over its pipes — no process of its tree listens on any TCP port, no `DevToolsActivePort` is written — gets only its own environment, and leaves nothing behind when dropped (issue 17).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::*;
use hands_core::browser::Browser;

/// Every process of `pid`'s tree: its process group and every descendant.
fn process_tree(pid: u32) -> HashSet<u32> {
    let stat = |p: u32| -> Option<(u32, u32)> {
        let text = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
        // `pid (comm) state ppid pgrp …`; the name may hold spaces and parentheses.
        let fields: Vec<&str> = text[text.rfind(')')? + 2..].split(' ').collect();
        Some((fields.get(1)?.parse().ok()?, fields.get(2)?.parse().ok()?))
    };
    let all: Vec<(u32, u32, u32)> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| stat(p).map(|(ppid, pgrp)| (p, ppid, pgrp)))
        .collect();
    let mut tree: HashSet<u32> = all
        .iter()
        .filter(|(_, _, pgrp)| *pgrp == pid)
        .map(|(p, _, _)| *p)
        .collect();
    tree.insert(pid);
    loop {
        let before = tree.len();
        for (p, ppid, _) in &all {
            if tree.contains(ppid) {
                tree.insert(*p);
            }
        }
        if tree.len() == before {
            return tree;
        }
    }
}

/// The inodes of the TCP sockets in LISTEN state in `pid`'s network namespace.
fn listening_inodes(pid: u32) -> HashSet<u64> {
    let mut inodes = HashSet::new();
    for table in ["tcp", "tcp6"] {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // `sl local rem st tx:rx tr:when retrnsmt uid timeout inode`; 0A is LISTEN.
            if fields.get(3) == Some(&"0A")
                && let Some(inode) = fields.get(9).and_then(|i| i.parse().ok())
            {
                inodes.insert(inode);
            }
        }
    }
    inodes
}

/// The socket inodes among `pid`'s open descriptors.
fn socket_inodes(pid: u32) -> HashSet<u64> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return HashSet::new();
    };
    fds.filter_map(|fd| {
        let target = std::fs::read_link(fd.ok()?.path()).ok()?;
        let target = target.to_str()?;
        target
            .strip_prefix("socket:[")?
            .strip_suffix(']')?
            .parse()
            .ok()
    })
    .collect()
}

/// The TCP sockets `pid` listens on (their inodes).
fn listening_sockets_of(pid: u32) -> HashSet<u64> {
    let listening = listening_inodes(pid);
    socket_inodes(pid)
        .intersection(&listening)
        .copied()
        .collect()
}

/// Issue 17: with `--remote-debugging-port` any local process could attach to the browser and
/// turn the URL fence off. A launched browser now has no DevTools port: nothing in its process
/// tree listens on TCP, and no `DevToolsActivePort` file is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launched_browser_listens_on_no_tcp_port() {
    let a = Server::start().await;
    a.html("/", "<title>Here</title><p>a page, so a renderer runs</p>");
    let mut browser = launch(config()).await;
    let c = cancel();
    browser.navigate(&a.page_url("/"), None, &c).await.unwrap();
    assert_eq!(browser.state(&c).await.unwrap().tabs()[0].title, "Here");

    // The check finds listeners where there are some: this test process has two (the page's
    // server and the policy proxy).
    assert!(
        listening_sockets_of(std::process::id()).len() >= 2,
        "the check sees no listener of this process"
    );

    let chromium = browser.chromium().unwrap();
    let pid = chromium.host_pid().unwrap();
    let tree = process_tree(pid);
    // The browser, its zygotes, a renderer, the network service at least.
    assert!(tree.len() >= 4, "only {tree:?} in the browser's tree");
    for p in &tree {
        let cmdline = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        assert!(
            !cmdline.contains("--remote-debugging-port"),
            "{p} has a DevTools port: {cmdline}"
        );
        let listening = listening_sockets_of(*p);
        assert!(
            listening.is_empty(),
            "{p} listens on TCP (inodes {listening:?}): {cmdline}"
        );
    }
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    assert!(
        cmdline
            .split(|b| *b == 0)
            .any(|arg| arg == b"--remote-debugging-pipe"),
        "the browser was not started on the pipes"
    );
    let profile = chromium.profile_dir().unwrap().host.clone();
    assert!(profile.join("Default").join("Preferences").exists());
    assert!(
        !profile.join("DevToolsActivePort").exists(),
        "a DevToolsActivePort file was written"
    );
}

/// The browser's environment is the one hands gave it — `HOME` its own private directory, no
/// variable of the test process beyond locale and time zone — and dropping the driver kills its
/// whole tree and removes its directories.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launched_browser_gets_its_own_environment_and_leaves_nothing_behind() {
    let browser = launch(config()).await;
    let chromium = browser.chromium().unwrap();
    let pid = chromium.host_pid().unwrap();
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let vars: Vec<(String, String)> = environ
        .split(|b| *b == 0)
        .filter(|v| !v.is_empty())
        .map(|v| {
            let v = String::from_utf8_lossy(v);
            let (name, value) = v.split_once('=').unwrap_or((&v, ""));
            (name.to_owned(), value.to_owned())
        })
        .collect();
    let home = chromium.home_dir().unwrap().inside.display().to_string();
    assert!(
        vars.iter().any(|(n, v)| n == "HOME" && *v == home),
        "{vars:?}"
    );
    for (name, _) in &vars {
        assert!(
            [
                "PATH",
                "HOME",
                "LANG",
                "LANGUAGE",
                "TZ",
                "CHROME_WRAPPER",
                "CHROME_DESKTOP"
            ]
            .contains(&name.as_str()),
            "the browser got {name} (all: {vars:?})"
        );
    }

    let tree = process_tree(pid);
    let dirs: Vec<PathBuf> = [
        chromium.profile_dir(),
        chromium.home_dir(),
        chromium.download_dir(),
    ]
    .into_iter()
    .map(|d| d.unwrap().host.clone())
    .collect();
    assert!(dirs.iter().all(|d| d.is_dir()));
    drop(browser);
    let deadline = Instant::now() + Duration::from_secs(3);
    for p in tree {
        while std::fs::read_to_string(format!("/proc/{p}/stat"))
            .is_ok_and(|stat| !stat.contains(") Z "))
        {
            assert!(
                Instant::now() < deadline,
                "{p} of the browser's tree survived"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    for dir in dirs {
        assert!(!dir.exists(), "{} was left behind", dir.display());
    }
}
