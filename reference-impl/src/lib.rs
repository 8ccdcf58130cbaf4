//! squall-reference: a correct, readable implementation of PRD-0006 provider retry, laid out
//! the way seed 001 asks (one pipeline, clear layer ownership):
//!
//! - [`provider`] — OpenAI Responses / Chat Completions over reqwest, streaming SSE parsing
//! - [`classify`] — is this failure technically retryable? (one error taxonomy)
//! - [`gate`] — is it *safe* to replay? (pure)
//! - [`policy`], [`backoff`], [`retry_after`] — limits and waits, as data
//! - [`engine`] — retry mechanics only: attempts, sleeps, `on_retry`, decision records
//! - [`decision`], [`events`] — what observability reads
//! - [`clock`] — injected time, scalable for tests and the conformance suite
//! - [`session`], [`task`], [`report`], [`research`], [`budget`] — sessions, `Task(deep-research)`,
//!   failure reports, the no-relaunch guard, the tool-output budget (PRD-0006 C/D, PRD-0003)
//! - [`iut`], [`mutants`] — the reference behind squall's IUT contract, and its broken variants

pub mod backoff;
pub mod budget;
pub mod call;
pub mod classify;
pub mod clock;
pub mod decision;
pub mod engine;
pub mod events;
pub mod gate;
pub mod iut;
pub mod mutants;
pub mod policy;
pub mod provider;
pub mod report;
pub mod research;
pub mod retry_after;
pub mod session;
pub mod task;
