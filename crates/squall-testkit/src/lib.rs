//! What the workspace's integration tests share, so that a test reads as its topic — the
//! library's (`tests/library/`), the command line's (`crates/squall-cli/tests/`) and the suite's
//! alike, without a copy in each:
//!
//! - [`harness`] — one run scripted in TOML, reqwest to call it, bodies and SSE read back
//! - [`calls`] — a streamed call of every API, a raw HTTP/1 request, a run on a provider
//! - [`server`] — an in-process server configured for a test, and runs created through the
//!   admin API as an outside user creates them
//! - [`h2_wire`] — HTTP/2 frame by frame over a plain socket: floods, bombs, exact GOAWAYs
//! - [`cargo()`] — cargo as the test command's build ran it, to build again without compiling
//! - [`root`], [`tls_fixture`] — the repository's files a test reads: the scenario catalogue,
//!   the test certificates
//! - [`quiet_turn`] — a turn among the tests that time to the millisecond or load the machine;
//!   [`first_within`] — a timing measured again while the machine's noise breaks its bound

#![allow(missing_docs, missing_debug_implementations)]

pub mod calls;
mod cargo;
pub mod h2_wire;
pub mod harness;
pub mod server;

use std::path::{Path, PathBuf};

pub use cargo::cargo;

/// Within one test binary, the tests that time the server to a few milliseconds and those that
/// load the machine on purpose (floods, bombs) take turns: a flood beside a 15 ms bound makes the
/// bound the flood's, not squall's (a journal timing read 18 ms apart so once).
static QUIET: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// This test's turn among the timing-precise and the loading tests of its binary.
pub async fn quiet_turn() -> tokio::sync::MutexGuard<'static, ()> {
    QUIET.lock().await
}

/// Measures up to `tries` times until `within` holds, and returns every measurement taken (the
/// last is the one that held, or the last try). For a bound the machine's noise breaks now and
/// then — a test binary runs beside others (scripts/test.sh), and a busy core delays a wake-up —
/// while what the bound guards against (a timestamp taken at the wrong moment, a stall of the
/// wrong length) breaks it at every try: the test stays able to fail.
pub async fn first_within<T, F, Fut>(tries: usize, mut measure: F, within: impl Fn(&T) -> bool) -> Vec<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let mut taken = Vec::with_capacity(tries);
    for _ in 0..tries.max(1) {
        let measured = measure().await;
        let held = within(&measured);
        taken.push(measured);
        if held {
            break;
        }
    }
    taken
}

/// The repository's root (this crate is two folders down).
pub fn root() -> &'static Path {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        here.canonicalize().unwrap_or(here)
    })
}

/// A test certificate or key of the library's `tests/fixtures/tls` (a test CA, a certificate
/// for `localhost` it issued, that certificate's key; README there), which the command line's
/// TLS tests use too.
pub fn tls_fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/tls").join(name)
}
