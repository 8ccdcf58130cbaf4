//! squall's conformance suite: Gherkin features (`features/`) run by cucumber-rs against an
//! implementation on a [`squall`] server, each scenario judged check by check and tagged with
//! its requirement ids; the acceptance reports; soak.
//!
//! - [`iut`] — how an implementation under test is run (the IUT contract)
//! - [`clock`] — squall's clock for a process tree: the preload and its frame; `cache` — the files
//!   squall embeds and hands to other processes by path
//! - `verdict` — how checks, cases, requirements, profiles and runs are judged, in one place
//!   ([`Verdict`], [`Level`], [`Strength`], [`Tally`], [`RunVerdict`])
//! - [`requirements`] — the requirement ids, their titles and their profiles
//! - `results` — what a run found, as data ([`CaseRecord`], [`RequirementResult`], …)
//! - `conversation` — what a journaled request says: instructions, tool outputs
//! - `script` — the scenario and configuration a case's Given steps set up
//! - [`timing`] — the client's reaction measured and taken out, each timing check's margin, the
//!   time scale a case runs at
//! - `checks` — every check as a plain function over what a case observed
//! - [`cases`] — the cases as data (read from the features without running them), exported as
//!   JSON, split into shards
//! - `engine` — the one case engine and the only starter of implementations: a case run, judged,
//!   and run again slower where its evidence cannot decide; [`service`] — the judge as a service, judging posted outcomes with it
//! - `steps`, `world` — cucumber's glue, shared by `cargo test` and `squall run`
//! - `runner` — one suite run ([`run_suite`]): server, IUT, cucumber, collected results
//! - [`features`], [`settings`], [`summary`] — where features come from, the one path from
//!   flags or environment to a configuration, the one-line-per-requirement summary
//! - [`report`] — the acceptance reports: report.json, acceptance.md, junit.xml, index.html
//! - [`soak`] — one implementation run many times under chaos, its distribution judged
//!
//! Feature `reference`: the reference implementation (`reference-impl/`) as an IUT.

mod cache;
pub mod cases;
mod checks;
pub mod clauses;
pub mod clock;
mod conversation;
mod digest;
#[cfg(test)]
mod doc_examples;
pub(crate) mod engine;
mod error;
pub mod features;
pub mod iut;
pub mod provenance;
pub mod report;
pub mod requirements;
mod results;
mod runner;
pub(crate) mod script;
pub mod service;
pub mod settings;
pub mod soak;
mod steps;
pub mod summary;
pub mod timing;
mod verdict;
pub mod waivers;
mod world;

pub use error::SuiteError;
pub use results::{CaseRecord, CheckRecord, ClientOutputs, Draws, Evidence, ProfileResult, RequirementResult};
pub use runner::{run_suite, Progress, SuiteConfig, SuiteOutcome};
pub use verdict::{Level, RunVerdict, Strength, Tally, Verdict};
