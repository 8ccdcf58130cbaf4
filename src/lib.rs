#![cfg_attr(docsrs, feature(doc_cfg))]
//! squall: a fault-injecting server for the OpenAI (Responses, Chat Completions, the Responses
//! WebSocket), Azure OpenAI, Anthropic (Messages), Google (Gemini), Amazon Bedrock (Converse,
//! InvokeModel) and Ollama APIs, to test how LLM clients retry.
//!
//! Read it in the order data flows:
//!
//! - [`api`] — the model APIs squall speaks, by name
//! - [`scenario`] — the scripted behaviour of a run (the public scenario format), its builders,
//!   loading with located errors, validation and limits
//! - [`wire`] — what each API sends: events, objects, errors, and the plan of a reply
//! - [`server`] — hyper on real TCP: the admin API, the model endpoints, faults on the socket
//! - [`clock`] — real time, or a virtual clock a server shares with in-process clients
//! - [`journal`] — what the server saw, request by request
//! - [`embedded`] — squall inside another crate's tests (`MockProvider`)
//!
//! The conformance suite that judges clients against PRD-0006 is the `squall-suite` crate
//! (`crates/squall-suite`), the `squall` command line `squall-cli` (`crates/squall-cli`).
//!
//! Features (none by default): `websocket` for the Responses API over WebSocket, `tls` to serve
//! over TLS (HTTP/2 and HTTP/1.1 by ALPN, [`server::tls`]), `upstream-tls` for a proxied
//! `https://` upstream, `wiremock` the wiremock-rs bridge, `metrics` for `GET /metrics`.

pub mod api;
pub mod clock;
pub mod embedded;
pub mod journal;
mod metrics;
pub mod scenario;
mod scenario_model;
pub mod server;
pub mod wire;
#[cfg(feature = "wiremock")]
#[cfg_attr(docsrs, doc(cfg(feature = "wiremock")))]
pub mod wiremock;
