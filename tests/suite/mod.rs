//! Integration tests against a real squall server on loopback.

mod admin_api;
mod catalogue;
mod cli;
mod conformance_suite;
mod embedded_api;
mod hardening;
mod journal;
mod reference_kit;
mod reference_retry;
mod reference_tasks;
mod reports;
mod sdk;
mod server_faults;
mod server_wire;
mod support;
#[cfg(feature = "wiremock")]
mod wiremock_bridge;
