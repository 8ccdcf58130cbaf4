//! squall: a fault-injecting OpenAI-compatible server and a PRD-0006 retry conformance suite.
//!
//! - [`scenario`] — the scripted behaviour of a run (public scenario format)
//! - [`wire`] — the OpenAI wire format squall speaks
//! - [`server`] — the server on real TCP: admin API, model endpoints, fault injection
//! - [`journal`] — what the server saw, request by request

pub mod cli;
pub mod embedded;
pub mod iut;
pub mod journal;
pub mod report;
pub mod run_command;
pub mod scenario;
pub mod server;
pub mod stdout;
pub mod suite;
pub mod wire;
#[cfg(feature = "wiremock")]
pub mod wiremock;
