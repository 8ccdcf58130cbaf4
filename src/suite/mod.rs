//! The conformance suite: Gherkin features (`features/`) run by cucumber-rs against an
//! implementation, each scenario judged check by check and tagged with its requirement ids.
//!
//! - [`results`] — verdicts per check, case and requirement
//! - [`world`], [`script`] — per-case state and the scenario the Given steps build
//! - [`steps`] — the step definitions, shared by `cargo test` and `squall run`
//! - [`runner`] — one suite run: server, IUT, cucumber, collected results

pub mod env;
pub mod features;
pub mod results;
pub mod runner;
pub mod script;
pub mod steps;
pub mod summary;
pub mod world;

pub use results::{CaseRecord, Level, RequirementResult, Verdict};
pub use runner::{run_suite, Progress, SuiteConfig, SuiteOutcome};
