//! A run's journal written out over HTTP (`GET /__squall/runs/{id}/journal`, and the reply to
//! `DELETE`): the entries are serialised one at a time off the serving threads and streamed, a
//! JSON request body written as the bytes that arrived. Reading a journal of large bodies then
//! costs about what the journal stores, and holds up no other connection while it is written.

use bytes::Bytes;
use futures_util::stream;
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody};
use hyper::{Response, StatusCode};
use serde_json::{json, Value};

use crate::journal::KeptEntry;
use crate::server::http_util::ResponseBody;
use crate::server::runs::Run;

/// Entries serialised ahead of the socket: one waiting while hyper writes the one before.
const AHEAD: usize = 1;

/// The journal of `run` as JSON: `id`, `scenario`, `time_scale`, `dropped`, any `extra` fields,
/// then `requests`, oldest first.
pub(in crate::server) fn journal_response(run: &Run, entries: Vec<KeptEntry>, extra: Value) -> Response<ResponseBody> {
    let mut head = json!({
        "id": run.id,
        "scenario": run.scenario.name,
        "time_scale": run.time_scale,
        "dropped": run.journal.dropped(),
    });
    if let (Some(head), Value::Object(extra)) = (head.as_object_mut(), extra) {
        head.extend(extra);
    }
    let mut opening = head.to_string();
    opening.pop(); // the closing brace: `requests` follows
    opening.push_str(",\"requests\":[");
    let (sender, receiver) = tokio::sync::mpsc::channel::<Bytes>(AHEAD);
    tokio::task::spawn_blocking(move || {
        let pieces = std::iter::once(Bytes::from(opening))
            .chain(entries.iter().enumerate().map(|(i, entry)| {
                let mut out = if i == 0 { Vec::new() } else { vec![b','] };
                // Writing into memory cannot fail, and every field serialises.
                let _ = serde_json::to_writer(&mut out, entry);
                Bytes::from(out)
            }))
            .chain(std::iter::once(Bytes::from_static(b"]}")));
        for piece in pieces {
            // The client left: stop writing.
            if sender.blocking_send(piece).is_err() {
                return;
            }
        }
    });
    let frames = stream::unfold(receiver, |mut receiver| async move {
        let piece = receiver.recv().await?;
        Some((Ok::<_, std::io::Error>(Frame::data(piece)), receiver))
    });
    let mut response = Response::new(StreamBody::new(frames).boxed());
    *response.status_mut() = StatusCode::OK;
    response
        .headers_mut()
        .insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("application/json"));
    response
}
