//! Cargo run from a test, seeing the environment the test command's own build saw.

use std::process::Command;

/// `cargo`, without the variables cargo and nextest set for the test that runs it
/// (`CARGO_MANIFEST_DIR`, `CARGO_PKG_*`, …). Build scripts watch some of them (ring's
/// `rerun-if-env-changed=CARGO_MANIFEST_DIR`), so with them a test's build would compile ring
/// and everything above it again instead of reusing what the test command built.
pub fn cargo() -> Command {
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if SET_FOR_A_TEST.iter().any(|set| name == *set) || SET_FOR_A_TEST_PREFIXES.iter().any(|p| name.starts_with(p))
        {
            cargo.env_remove(&*name);
        }
    }
    cargo
}

/// What cargo sets for a test it runs (the Cargo Book, "Environment variables Cargo sets for crates").
const SET_FOR_A_TEST: [&str; 8] = [
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_MANIFEST_LINKS",
    "CARGO_CRATE_NAME",
    "CARGO_BIN_NAME",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_TARGET_TMPDIR",
    "OUT_DIR",
];

/// The same, by prefix: the package's name, version, authors …, and the binaries' paths.
const SET_FOR_A_TEST_PREFIXES: [&str; 2] = ["CARGO_PKG_", "CARGO_BIN_EXE_"];
