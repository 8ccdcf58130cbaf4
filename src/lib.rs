#![warn(missing_docs, unreachable_pub)]
//! squall: a fault-injecting server for the OpenAI (Responses, Chat Completions), Anthropic (Messages) and Google (Gemini) APIs and a PRD-0006 retry conformance suite.
//!
//! Read it in the order data flows:
//!
//! - [`scenario`] — the scripted behaviour of a run (the public scenario format), its builders,
//!   loading with located errors, validation and limits
//! - [`wire`] — the OpenAI wire format: events, objects, errors, and the plan of a reply
//! - [`server`] — hyper on real TCP: the admin API, the model endpoints, faults on the socket
//! - [`clock`] — real time, or a virtual clock a server shares with in-process clients
//! - [`journal`] — what the server saw, request by request
//! - [`embedded`] — squall inside another crate's tests (`MockProvider`)
//! - [`iut`] — how an implementation under test is run (the IUT contract)
//! - [`suite`] — the conformance suite: features, steps, and [`suite::verdict`], the one place
//!   verdicts are decided
//! - [`report`] — the acceptance reports: report.json, acceptance.md, junit.xml, index.html
//! - [`soak`] — one implementation run many times under chaos, its distribution judged
//!
//! The `squall` binary (`src/main.rs`, `src/cli/`) is a thin command line over these.
//!
//! Features: without the defaults squall is a light test double — [`scenario`], [`wire`],
//! [`server`], [`journal`] and [`embedded`]; `suite` adds the conformance suite, its reports,
//! soak and the IUT drivers; `cli` the command line; `reference` the reference implementation
//! as an IUT; `wiremock` the wiremock-rs bridge.

pub mod clock;
#[cfg(all(test, feature = "suite"))]
mod doc_examples;
pub mod embedded;
#[cfg(feature = "suite")]
pub mod iut;
pub mod journal;
#[cfg(feature = "suite")]
pub mod report;
pub mod scenario;
mod scenario_model;
pub mod server;
#[cfg(feature = "suite")]
pub mod soak;
#[cfg(feature = "suite")]
pub mod suite;
pub mod wire;
#[cfg(feature = "wiremock")]
pub mod wiremock;
