//! The Kubernetes manifests (deploy/kubernetes) validated offline against the API's schemas by
//! the pinned `kubernetes-validate` (strict: an unknown field fails), a broken copy refused by
//! it; and the worker Job's command line — its args with the ConfigMap's and Secret's values
//! expanded, after the image's entrypoint `hands worker` — accepted by this build's `hands
//! worker --dry-run`. No cluster runs here: none can on this machine.

#![allow(clippy::unwrap_used, reason = "a test fails by panicking")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned() + &String::from_utf8_lossy(&output.stdout)
}

/// The deploy venv (scripts/install-deploy-deps.sh), installed when missing.
fn venv() -> PathBuf {
    let output = Command::new("bash")
        .arg(repo().join("scripts/install-deploy-deps.sh"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "installing kubernetes-validate failed: {}",
        text(&output)
    );
    std::env::var_os("HANDS_DEPLOY_VENV")
        .map_or_else(|| repo().join("target/deploy-venv"), PathBuf::from)
}

fn validate(venv: &Path, files: &[PathBuf]) -> Output {
    Command::new(venv.join("bin/kubernetes-validate"))
        .args(["--strict", "--kubernetes-version", "1.31"])
        .args(files)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn manifests() -> Vec<PathBuf> {
    ["postgres.yaml", "worker.yaml"]
        .iter()
        .map(|f| repo().join("deploy/kubernetes").join(f))
        .collect()
}

#[test]
fn the_manifests_validate_and_a_broken_one_does_not() {
    let venv = venv();
    let output = validate(&venv, &manifests());
    let said = text(&output);
    assert!(output.status.success(), "{said}");
    for resource in [
        "secret/hands-postgres",
        "service/hands-postgres",
        "statefulset/hands-postgres",
        "secret/hands-ledger",
        "configmap/hands-worker",
        "job/hands-worker",
    ] {
        assert!(
            said.contains(&format!("passed for resource {resource}")),
            "{said}"
        );
    }
    // The same Job with a misspelt field is refused: the validation can fail.
    let worker = std::fs::read_to_string(repo().join("deploy/kubernetes/worker.yaml")).unwrap();
    assert!(worker.contains("  parallelism: 4\n"));
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("worker.yaml");
    std::fs::write(
        &broken,
        worker.replace("  parallelism: 4\n", "  paralelism: 4\n"),
    )
    .unwrap();
    let output = validate(&venv, &[broken]);
    assert!(!output.status.success(), "{}", text(&output));
    assert!(text(&output).contains("paralelism"), "{}", text(&output));
}

#[test]
fn the_worker_jobs_command_line_is_one_hands_worker_accepts() {
    let venv = venv();
    let containerfile =
        std::fs::read_to_string(repo().join("deploy/container/Containerfile")).unwrap();
    assert!(
        containerfile.contains(r#"ENTRYPOINT ["/usr/local/bin/hands", "worker"]"#),
        "the manifest's args follow the image's entrypoint `hands worker`"
    );
    let output = Command::new(venv.join("bin/python"))
        .arg(repo().join("scripts/kubernetes-worker-args.py"))
        .arg(repo().join("deploy/kubernetes/worker.yaml"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let args: Vec<String> = serde_json::from_slice(&output.stdout).unwrap();
    assert!(
        args.iter().all(|a| !a.contains("$(")),
        "a variable left unexpanded: {args:?}"
    );
    let output = Command::new(env!("CARGO_BIN_EXE_hands"))
        .arg("worker")
        .args(&args)
        .arg("--dry-run")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let said = text(&output);
    assert!(output.status.success(), "{args:?}: {said}");
    assert!(
        said.contains(
            "4 slot(s), lease 30.0 s, runs in /var/lib/hands/runs, sandbox none, approve all"
        ),
        "{said}"
    );
    // A flag the worker does not have is refused the same way.
    let output = Command::new(env!("CARGO_BIN_EXE_hands"))
        .arg("worker")
        .args(&args)
        .args(["--replicas", "3", "--dry-run"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success(), "{}", text(&output));
}
