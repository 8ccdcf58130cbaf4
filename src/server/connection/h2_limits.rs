//! What one HTTP/2 connection may ask of squall: the bounds that keep a hostile client (rapid
//! reset, CONTINUATION floods, HPACK bombs, more streams than advertised) from starving the
//! others. Each is enforced by the `h2` crate under hyper; squall states them here so that
//! docs/hardening.md and the abuse tests name the same numbers.

use hyper_util::rt::TokioExecutor;
use hyper_util::server::conn::auto::Http2Builder;

/// Streams a client may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS); one more is
/// refused with REFUSED_STREAM.
pub(in crate::server) const MAX_CONCURRENT_STREAMS: u32 = 200;

/// Streams a client opened and reset before squall accepted them, held at once: past it the
/// connection is closed with GOAWAY ENHANCE_YOUR_CALM (the rapid-reset attack, CVE-2023-44487).
pub(in crate::server) const MAX_PENDING_RESET_STREAMS: usize = 20;

/// Streams squall itself resets because the client broke a rule: past it, GOAWAY
/// ENHANCE_YOUR_CALM. A scripted `reset` fault is a reply's own end, not counted against it.
pub(in crate::server) const MAX_LOCAL_ERROR_RESETS: usize = 1024;

/// Largest request head, decoded (SETTINGS_MAX_HEADER_LIST_SIZE): bounds an HPACK bomb and a
/// CONTINUATION flood alike, which `h2` cuts off once the decoded size passes it.
pub(in crate::server) const MAX_HEADER_LIST_BYTES: u32 = 16 * 1024;

/// Apply the bounds above to a connection builder's HTTP/2 side.
pub(in crate::server) fn apply(http2: &mut Http2Builder<'_, TokioExecutor>) {
    http2
        .max_concurrent_streams(MAX_CONCURRENT_STREAMS)
        .max_pending_accept_reset_streams(MAX_PENDING_RESET_STREAMS)
        .max_local_error_reset_streams(MAX_LOCAL_ERROR_RESETS)
        .max_header_list_size(MAX_HEADER_LIST_BYTES);
}
