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

pub mod backoff;
pub mod call;
pub mod classify;
pub mod clock;
pub mod decision;
pub mod engine;
pub mod events;
pub mod gate;
pub mod policy;
pub mod provider;
pub mod retry_after;
