//! How squall ends an HTTP/2 stream with a code of its choosing: the error hyper resets a
//! stream with (hyper looks for an `h2::Error` among a body's or a service's error sources and
//! sends its reason in RST_STREAM), and the refusal of a request before any byte of a reply
//! (fault `refuse`). The route marks a refused request's empty response; the connection's
//! service turns the mark into that error, which hyper answers over HTTP/2 with RST_STREAM
//! before the response's HEADERS and over HTTP/1.1 by closing the connection with nothing
//! written.

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::Response;

use crate::journal::{EndKind, Protocol};
use crate::scenario::{FaultKind, H2Code};
use crate::server::http_util::ResponseBody;
use crate::server::model::entry_handle::EntryHandle;

/// An error whose source is the `h2::Error` with `code`: as a body's error or a service's, it
/// makes hyper reset the stream with that code. (An `io::Error` shows only its inner error's
/// sources, so the `h2::Error` is this wrapper's source.)
#[derive(Debug)]
pub(in crate::server) struct StreamReset(h2::Error);

impl StreamReset {
    pub(in crate::server) fn with(code: H2Code) -> StreamReset {
        StreamReset(h2::Reason::from(code.value()).into())
    }
}

impl std::fmt::Display for StreamReset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "scripted fault: RST_STREAM ({})", self.0)
    }
}

impl std::error::Error for StreamReset {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// A code as RFC 9113 writes it (`INTERNAL_ERROR`), which is how `h2` prints a reason.
pub(in crate::server) fn reason_name(code: H2Code) -> String {
    format!("{:?}", h2::Reason::from(code.value()))
}

/// The mark on a refused request's response: the code its stream is reset with.
#[derive(Debug, Clone, Copy)]
struct Refused(H2Code);

/// Refuse the request journaled as `entry` with `code`: the entry ends `refused` now (over
/// HTTP/2 naming the frame), and the response carries the mark [`refusal`] reads.
pub(in crate::server) fn refuse(mut entry: EntryHandle, code: H2Code) -> Response<ResponseBody> {
    entry.update(|e| {
        e.fault = Some(FaultKind::Refuse);
        if e.protocol == Protocol::Http2 {
            e.end_frame = Some(format!("RST_STREAM {}", reason_name(code)));
        }
    });
    entry.finish_now(EndKind::Refused);
    let mut response = Response::new(Empty::<Bytes>::new().map_err(|never| match never {}).boxed());
    response.extensions_mut().insert(Refused(code));
    response
}

/// The response to send, or — for a refused request — the error hyper refuses it with.
pub(in crate::server) fn refusal<B>(response: Response<B>) -> Result<Response<B>, StreamReset> {
    match response.extensions().get::<Refused>() {
        Some(Refused(code)) => Err(StreamReset::with(*code)),
        None => Ok(response),
    }
}
