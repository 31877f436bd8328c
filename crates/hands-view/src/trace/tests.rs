#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use super::*;
use serde_json::json;

/// A run directory of `n` steps, each with an action and a screenshot.
fn run_dir(n: u64) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("images")).unwrap();
    let mut log = vec![
        json!({"kind": "start", "task": "t", "provider": "anthropic",
        "model": "m", "unix_ms": 1000}),
    ];
    for step in 1..=n {
        log.push(json!({"kind": "request", "step": step, "body": {"messages": []}}));
        log.push(
            json!({"kind": "response", "step": step, "ms": 10, "body": {"content": [
            {"type": "text", "text": format!("Step text {step}")},
            {"type": "tool_use", "id": format!("t{step}"), "name": "screenshot", "input": {}}]}}),
        );
        log.push(
            json!({"kind": "action", "step": step, "call_id": format!("t{step}"),
            "name": "screenshot", "is_error": false, "ms": 1.5, "summary": ""}),
        );
        let file = format!("{step:03}-step{step}-t{step}.png");
        std::fs::write(dir.path().join("images").join(&file), [step as u8; 64]).unwrap();
        log.push(
            json!({"kind": "image", "step": step, "call_id": format!("t{step}"),
            "file": format!("images/{file}")}),
        );
    }
    let text: Vec<String> = log.iter().map(Value::to_string).collect();
    std::fs::write(dir.path().join(LOG), text.join("\n") + "\n").unwrap();
    std::fs::write(
        dir.path().join(APPROVALS),
        json!({"question": "Click", "approved": true, "by": "person (terminal)"}).to_string()
            + "\n",
    )
    .unwrap();
    dir
}

#[test]
fn a_run_directory_round_trips_through_a_trace() {
    let dir = run_dir(3);
    let out = dir.path().join("run.hands");
    let manifest = export(dir.path(), &out, &RunFacts::default()).unwrap();
    assert_eq!(manifest.counts.steps, 3);
    assert_eq!(manifest.counts.images, 3);
    assert_eq!(manifest.counts.approvals, 1);
    assert_eq!(manifest.started_unix_ms, Some(1000));
    let trace = Trace::open(&out).unwrap();
    assert_eq!(trace.manifest, manifest);
    assert_eq!(
        read_log(&trace.log),
        read_log(&std::fs::read_to_string(dir.path().join(LOG)).unwrap())
    );
    assert_eq!(trace.images.len(), 3);
    assert_eq!(trace.images["002-step2-t2.png"], vec![2u8; 64]);
    assert_eq!(trace.approval_values()[0]["by"], "person (terminal)");
}

#[test]
fn truncated_corrupted_and_foreign_files_are_refused_with_a_clear_error() {
    let dir = run_dir(2);
    let out = dir.path().join("run.hands");
    export(dir.path(), &out, &RunFacts::default()).unwrap();
    let bytes = std::fs::read(&out).unwrap();
    let bad = dir.path().join("bad.hands");
    let mut flipped = bytes.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x5a;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("truncated", bytes[..bytes.len() * 2 / 3].to_vec()),
        ("last byte cut", bytes[..bytes.len() - 1].to_vec()),
        ("a byte changed", flipped),
        ("empty", Vec::new()),
        ("not gzip", b"hello, I am not a trace".to_vec()),
    ];
    for (what, content) in cases {
        std::fs::write(&bad, &content).unwrap();
        match Trace::open(&bad) {
            Err(e @ TraceError::Corrupt { .. }) => {
                let text = e.to_string();
                assert!(
                    text.contains("not a readable hands trace"),
                    "{what}: {text}"
                );
            }
            other => panic!("{what}: {other:?}"),
        }
    }
}

#[test]
fn a_newer_layout_is_refused_by_version() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("new.hands");
    let manifest = json!({"format": FORMAT, "version": VERSION + 1}).to_string();
    write_archive(&out, &[(MANIFEST.to_owned(), manifest.as_bytes())]).unwrap();
    assert!(
        matches!(Trace::open(&out), Err(TraceError::Version { version, .. }) if version == VERSION + 1)
    );
}

#[test]
fn known_secrets_are_replaced_before_writing() {
    let dir = run_dir(1);
    let mut log = std::fs::read_to_string(dir.path().join(LOG)).unwrap();
    log.push_str(
        &json!({"kind": "request", "step": 2, "body": {"note": "key sk-canary-abcdef123456"}})
            .to_string(),
    );
    std::fs::write(dir.path().join(LOG), log).unwrap();
    let out = dir.path().join("run.hands");
    let facts = RunFacts {
        secrets: vec!["sk-canary-abcdef123456".to_owned()],
        ..RunFacts::default()
    };
    let manifest = export(dir.path(), &out, &facts).unwrap();
    assert_eq!(manifest.counts.redactions, 1);
    let trace = Trace::open(&out).unwrap();
    assert!(!trace.log.contains("sk-canary"), "{}", trace.log);
}

#[test]
fn screenshots_smaller_as_jpeg_are_stored_as_jpeg_and_the_log_follows() {
    let dir = run_dir(2);
    let out = dir.path().join("run.hands");
    // Step 1's image "re-encodes" smaller, step 2's does not.
    let facts = RunFacts {
        jpeg: Some(|png: &[u8]| (png[0] == 1).then(|| vec![9u8; 10])),
        ..RunFacts::default()
    };
    export(dir.path(), &out, &facts).unwrap();
    let trace = Trace::open(&out).unwrap();
    assert_eq!(trace.images["001-step1-t1.jpg"], vec![9u8; 10]);
    assert!(trace.images.contains_key("002-step2-t2.png"));
    assert!(!trace.images.contains_key("001-step1-t1.png"));
    let run = read_log(&trace.log);
    assert_eq!(
        run.steps[0].actions[0].image_after.as_deref(),
        Some("images/001-step1-t1.jpg")
    );
    assert_eq!(
        run.steps[1].actions[0].image_after.as_deref(),
        Some("images/002-step2-t2.png")
    );
}

#[test]
fn a_repeated_screenshot_is_stored_once_and_read_back_whole() {
    let dir = run_dir(3);
    let images = dir.path().join("images");
    // Three identical screenshots larger than gzip's window.
    let big: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    for step in 1..=3 {
        std::fs::write(
            images.join(format!("{step:03}-step{step}-t{step}.png")),
            &big,
        )
        .unwrap();
    }
    let out = dir.path().join("run.hands");
    export(dir.path(), &out, &RunFacts::default()).unwrap();
    let size = std::fs::metadata(&out).unwrap().len();
    assert!(
        size < 300_000,
        "{size} bytes: the repeats were stored again"
    );
    let trace = Trace::open(&out).unwrap();
    assert_eq!(trace.images.len(), 3);
    assert!(trace.images.values().all(|b| b == &big));
}

/// Adds a distinct DOM snapshot after each of the run's `n` actions: incompressible text of
/// `bytes` bytes each, a secret in the last one.
fn add_doms(dir: &Path, n: u64, bytes: usize) -> Vec<String> {
    std::fs::create_dir(dir.join(DOM_DIR)).unwrap();
    let mut log = std::fs::read_to_string(dir.join(LOG)).unwrap();
    let mut names = Vec::new();
    let mut seed: u64 = 1;
    for step in 1..=n {
        let mut html = format!("<p>step {step} ");
        while html.len() < bytes {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            html.push(char::from(b'a' + (seed >> 59) as u8 % 26));
        }
        if step == n {
            html.push_str(" sk-canary-dom-0123456789");
        }
        let name = format!("{step:016x}.html");
        std::fs::write(dir.join(DOM_DIR).join(&name), &html).unwrap();
        log.push_str(
            &(json!({"kind": "dom", "step": step, "call_id": format!("t{step}"),
                    "file": format!("dom/{name}"), "bytes": html.len()})
            .to_string()
                + "\n"),
        );
        names.push(name);
    }
    std::fs::write(dir.join(LOG), log).unwrap();
    names
}

#[test]
fn dom_snapshots_fit_their_budget_evenly_and_the_left_out_lose_their_link() {
    let dir = run_dir(8);
    let names = add_doms(dir.path(), 8, 20_000);
    let secret = "sk-canary-dom-0123456789".to_owned();
    // All of them, scrubbed.
    let out = dir.path().join("all.hands");
    let facts = RunFacts {
        secrets: vec![secret.clone()],
        dom: DomInTrace::All,
        ..RunFacts::default()
    };
    assert_eq!(export(dir.path(), &out, &facts).unwrap().counts.doms, 8);
    let trace = Trace::open(&out).unwrap();
    let last = String::from_utf8(trace.doms[&names[7]].clone()).unwrap();
    assert!(
        !last.contains(&secret) && last.contains("<redacted>"),
        "{last}"
    );
    let run = read_log(&trace.log);
    assert_eq!(
        run.steps[2].actions[0].dom.as_deref(),
        Some(names[2].as_str())
    );
    // A budget for about three (each ~12 KB compressed): every other one left out, twice,
    // the last always kept.
    let out = dir.path().join("fit.hands");
    let facts = RunFacts {
        dom: DomInTrace::Fit { budget: 40_000 },
        ..RunFacts::default()
    };
    assert_eq!(export(dir.path(), &out, &facts).unwrap().counts.doms, 2);
    let trace = Trace::open(&out).unwrap();
    let kept: Vec<&String> = trace.doms.keys().collect();
    assert_eq!(kept, [&names[3], &names[7]]);
    let run = read_log(&trace.log);
    let links: Vec<Option<&str>> = run
        .steps
        .iter()
        .map(|s| s.actions[0].dom.as_deref())
        .collect();
    assert_eq!(links[3], Some(names[3].as_str()));
    assert_eq!(links[7], Some(names[7].as_str()));
    assert_eq!(links.iter().filter(|l| l.is_some()).count(), 2);
    assert!(trace.log.contains(&format!("dom-omitted/{}", names[0])));
    // Too small for even one: none, and no link.
    let out = dir.path().join("none.hands");
    let facts = RunFacts {
        dom: DomInTrace::Fit { budget: 100 },
        ..RunFacts::default()
    };
    assert_eq!(export(dir.path(), &out, &facts).unwrap().counts.doms, 0);
}

#[test]
fn dom_names_are_sixteen_hex_digits() {
    use crate::steps::dom_name_ok;
    assert!(dom_name_ok("0123456789abcdef.html"));
    for bad in [
        "0123456789ABCDEF.html",
        "0123456789abcde.html",
        "../0123456789abcdef.html",
        "0123456789abcdef.htm",
        "0123456789abcdefg.html",
        "",
    ] {
        assert!(!dom_name_ok(bad), "{bad}");
    }
}

#[test]
fn snapshots_that_differ_by_a_word_are_stored_as_deltas_and_read_back_whole() {
    let dir = run_dir(6);
    std::fs::create_dir(dir.path().join(DOM_DIR)).unwrap();
    let mut log = std::fs::read_to_string(dir.path().join(LOG)).unwrap();
    let mut seed: u64 = 3;
    let body: String = (0..60_000)
        .map(|_| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            char::from(b'a' + (seed >> 59) as u8 % 26)
        })
        .collect();
    let mut written = Vec::new();
    for step in 1..=6u64 {
        let html = format!("<title>Step {step} ✓</title><p>{body}</p>");
        let name = format!("{:016x}.html", step * 17);
        std::fs::write(dir.path().join(DOM_DIR).join(&name), &html).unwrap();
        log.push_str(
            &(json!({"kind": "dom", "step": step, "call_id": format!("t{step}"),
                    "file": format!("dom/{name}")})
            .to_string()
                + "\n"),
        );
        written.push((name, html));
    }
    std::fs::write(dir.path().join(LOG), log).unwrap();
    // A budget one whole snapshot fits (~45 KB compressed), six would not.
    let out = dir.path().join("run.hands");
    let facts = RunFacts {
        dom: DomInTrace::Fit { budget: 60_000 },
        ..RunFacts::default()
    };
    assert_eq!(export(dir.path(), &out, &facts).unwrap().counts.doms, 6);
    let trace = Trace::open(&out).unwrap();
    for (name, html) in &written {
        assert_eq!(trace.doms[name], html.as_bytes(), "{name}");
    }
    let list = std::process::Command::new("tar")
        .arg("-tzf")
        .arg(&out)
        .output()
        .unwrap();
    let names = String::from_utf8_lossy(&list.stdout);
    assert_eq!(
        names.lines().filter(|n| n.ends_with(".html.delta")).count(),
        5,
        "{names}"
    );
}
