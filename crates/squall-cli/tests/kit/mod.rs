//! What the command line's integration tests share, so a test reads as its topic; the kit
//! every crate's tests share is `squall-testkit` (its modules are re-exported here):
//!
//! - [`command`] — the `squall` binary this build made, as a command or a path
//! - [`reference`] — the reference pipeline on one scripted run: its events and the journal
//! - [`suites`] — whole suite runs: configurations, several at once, verdicts
//! - [`independent_suites`] — the independent implementation's suites, side by side
//! - [`sdks`] — where the real clients the tests drive are installed
//! - [`service_client`] — a test runner's side of the judge as a service, over HTTP only
//! - `harness`, `server` — `squall_testkit`'s

pub(crate) use squall_testkit::{harness, server};

pub(crate) mod command;
pub(crate) mod independent_suites;
pub(crate) mod reference;
pub(crate) mod sdks;
pub(crate) mod service_client;
pub(crate) mod suites;
