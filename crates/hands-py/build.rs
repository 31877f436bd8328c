//! Builds the jail's init (`hands-jail-init`, from crates/hands-jail) and places it in the
//! Python package (`python/hands/hands-jail-init`), so the wheel carries it as package data and
//! `hands.Desktop.spawn` / `hands.Browser.launch` find it beside `hands/__init__.py`.
//!
//! Why a program of its own: a jail's init is the first program bubblewrap runs inside the jail
//! (its pid 1), and an extension module cannot be executed. The `hands` binary answers
//! `hands __jail-init` itself; the Python package ships the standalone init instead.
//!
//! The init is built by a nested cargo into a target directory of its own under `OUT_DIR` (the
//! outer build holds the lock of the outer one), for the same target and profile. The copy in
//! the package directory is a build output and is not tracked (`.gitignore`).

// A build script speaks to cargo on its standard output.
#![allow(clippy::print_stdout)]

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let workspace = manifest_dir.join("../..");
    let jail_crate = workspace.join("crates/hands-jail");
    println!("cargo::rerun-if-changed={}", jail_crate.display());
    println!(
        "cargo::rerun-if-changed={}",
        workspace.join("Cargo.lock").display()
    );
    println!("cargo::rerun-if-changed=build.rs");
    let package_copy = manifest_dir.join("python/hands/hands-jail-init");
    // A jail is Linux only; elsewhere the package has no init to ship.
    if env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let target_dir = out_dir.join("jail-init-target");
    let target = env::var("TARGET").expect("TARGET");
    let release = env::var("PROFILE").as_deref() == Ok("release");
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .arg("build")
        .arg("--manifest-path")
        .arg(workspace.join("Cargo.toml"))
        .args([
            "-p",
            "hands-jail",
            "--bin",
            "hands-jail-init",
            "--target",
            &target,
        ])
        .arg("--target-dir")
        .arg(&target_dir);
    if release {
        command.arg("--release");
    }
    if env::var_os("CARGO_NET_OFFLINE").is_some() {
        command.arg("--offline");
    }
    // The outer build's wrappers (clippy's driver under `cargo clippy`) and flags for the
    // extension module are not the init's.
    for var in [
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET_DIR",
    ] {
        command.env_remove(var);
    }
    let status = command
        .status()
        .unwrap_or_else(|e| panic!("could not run cargo to build hands-jail-init: {e}"));
    assert!(
        status.success(),
        "building hands-jail-init failed ({status})"
    );
    let built = target_dir
        .join(&target)
        .join(if release { "release" } else { "debug" })
        .join("hands-jail-init");
    // Replace, never write through: a running jail may have the old copy open.
    let staging = package_copy.with_extension("new");
    std::fs::copy(&built, &staging)
        .unwrap_or_else(|e| panic!("copying {} to {}: {e}", built.display(), staging.display()));
    std::fs::rename(&staging, &package_copy).unwrap_or_else(|e| {
        panic!(
            "moving {} to {}: {e}",
            staging.display(),
            package_copy.display()
        )
    });
}
