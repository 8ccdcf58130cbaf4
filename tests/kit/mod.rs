//! What the integration tests share, so a test reads as its topic:
//!
//! - [`command`] — the `squall` binary this build made, as a command or a path
//! - [`server`] — an in-process server configured for a test, and runs created through the
//!   admin API as an outside user creates them
//! - [`harness`] — one run scripted in TOML, reqwest to call it, bodies and SSE read back
//! - [`h2_wire`] — HTTP/2 frame by frame over a plain socket: floods, bombs, exact GOAWAYs
//! - [`reference`] — the reference pipeline on one scripted run: its events and the journal
//! - [`suites`] — whole suite runs: configurations, taking turns on the machine, verdicts
//! - [`independent_suites`] — the independent implementation's real-time suites two tests share
//! - [`service_client`] — a test runner's side of the judge as a service, over HTTP only

pub(crate) mod command;
pub(crate) mod h2_wire;
pub(crate) mod harness;
pub(crate) mod independent_suites;
pub(crate) mod reference;
pub(crate) mod server;
pub(crate) mod service_client;
pub(crate) mod suites;
