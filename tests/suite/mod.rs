//! Integration tests against a real squall server on loopback.

mod abuse;
mod admin_api;
mod catalogue;
mod ci_recipe;
mod cli;
mod committed_reports;
mod conformance_suite;
mod embedded_api;
mod hardening;
mod herd_server;
mod independent_iut;
mod integrations;
mod journal;
mod mutation_matrix;
mod reference_kit;
mod reference_retry;
mod reference_tasks;
mod reports;
mod robustness;
mod run_conditions;
mod run_verdicts;
mod sdk;
mod server_faults;
mod server_gemini;
mod server_messages;
mod server_wire;
mod service;
mod service_client;
mod shards;
mod slow_clients;
mod soak;
mod suite_kit;
mod support;
mod timing_verdicts;
#[cfg(feature = "wiremock")]
mod wiremock_bridge;
