//! The library's integration tests (`cargo test -p squall`): the server over real sockets,
//! a module per topic, with what the workspace's tests share from `squall-testkit`. Modules
//! that need a feature run where it is on (`cargo test -p squall --all-features`, as
//! scripts/test.sh runs them).

mod abuse; // a hostile client: slowloris, floods, resets mid-request; the journal still agrees with the wire
mod abuse_http2; // a hostile HTTP/2 client: rapid reset, CONTINUATION, PING and SETTINGS floods, an HPACK bomb, too many streams
mod admin_api; // the admin API: runs created by name or inline, read, deleted; errors that name the field
mod embedded_api; // `squall::embedded`: runs scripted in code, the journal asserted on
mod herd_server; // a herd on one run: each client's base URL, attempts counted per client
mod journal; // the journal: complete under every ending, with timings a client can trust
mod proxy; // squall in front of an upstream: forwarded, faults placed in the upstream's stream
mod proxy_failures; // an upstream that never answers, goes silent, resets or breaks its framing
#[cfg(feature = "upstream-tls")]
mod proxy_tls; // squall in front of an `https://` upstream
mod run_conditions; // outages, chaos and quotas over real HTTP
mod server_faults; // each fault, seen by a real client over loopback TCP
mod server_gemini; // the Gemini API under every run
mod server_http2; // HTTP/2 (h2c) beside HTTP/1.1: every API to curl, each fault frame by frame
mod server_messages; // the Anthropic Messages API under every run
#[cfg(feature = "websocket")]
mod server_websocket; // the Responses API over WebSocket
mod server_wire; // the OpenAI wire format: statuses, headers and bodies as scripted
#[cfg(feature = "wiremock")]
mod wiremock_bridge; // scenarios played by wiremock-rs
