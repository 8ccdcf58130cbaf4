//! squall-reference: a correct, readable implementation of PRD-0006 provider retry, laid out
//! the way seed 001 asks (one pipeline, clear layer ownership), a folder per part of the story:
//!
//! - [`provider`] — OpenAI Responses (over HTTP and over a WebSocket) and Chat Completions,
//!   Anthropic Messages and Google's Gemini API over reqwest, streaming SSE parsing
//! - [`decide`] — what to do about a failure, as pure functions and data: is it technically
//!   retryable ([`decide::classify`]), is it *safe* to replay ([`decide::gate`]), the limits and
//!   waits ([`decide::policy`], [`decide::backoff`], [`decide::retry_after`]) and the answer
//!   ([`decide::decision`])
//! - [`clock`] — injected time: policy time scaled from real time, a simulated clock, or the
//!   caller's (squall's virtual clock), for sleeps and each attempt's timeouts
//! - [`run`] — carrying the decisions out: attempts, sleeps and `on_retry` ([`run::engine`]),
//!   what observability reads ([`run::events`])
//! - [`session`] — sessions and the tool-output budget (PRD-0003)
//! - [`task`] — `Task(deep-research)`: the sub-session runner, its failure reports and the
//!   no-relaunch guard (PRD-0006 C/D)
//! - [`contract`], [`mutants`] — the reference behind squall's IUT contract, and its broken
//!   variants

pub mod clock;
pub mod contract;
pub mod decide;
pub mod mutants;
pub mod provider;
pub mod run;
pub mod session;
pub mod task;
