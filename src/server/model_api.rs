//! The OpenAI endpoints under a run's base URL: `POST /responses`, `POST /chat/completions`,
//! `GET /models`. Each request is journaled on arrival, routed to a track, answered with the
//! track's next scripted attempt, and played by a [`ScriptedBody`].

use std::sync::Arc;
use std::time::SystemTime;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};
use tokio::time::Instant;

use super::conn_io::KillSwitch;
use super::http_util::{header_map, openai_error, read_body, ResponseBody};
use super::reply_body::{EntryHandle, ScriptedBody};
use super::runs::Run;
use super::State;
use crate::journal::{Arrival, EndKind};
use crate::scenario::headers::parse_header_template;
use crate::scenario::routing::{select, RequestView};

use crate::wire::reply::{build_reply, Api};
use crate::wire::{estimate_tokens, ReplyContext};

pub(super) async fn handle(
    state: &State,
    switch: Arc<KillSwitch>,
    run: Arc<Run>,
    path: &str,
    request: Request<Incoming>,
) -> Response<ResponseBody> {
    let (parts, body) = request.into_parts();
    let headers = header_map(&parts.headers);
    let arrival = Arrival { method: parts.method.to_string(), path: path.to_owned(), headers: headers.clone() };
    let arrived = Instant::now();
    let index = run.journal.begin(arrival, arrived);
    let entry = EntryHandle::new(run.journal.clone(), index);

    let raw = match read_body(body, state.body_limit).await {
        Ok(raw) => raw,
        Err(e) => return reply_directly(entry, e.into_response()),
    };
    let text = String::from_utf8_lossy(&raw).into_owned();
    let parsed: Option<Value> = serde_json::from_slice(&raw).ok();
    let wants_stream = parsed.as_ref().and_then(|b| b.get("stream")).and_then(Value::as_bool) == Some(true);
    entry.update(|e| {
        e.body =
            parsed.clone().unwrap_or_else(|| if text.is_empty() { Value::Null } else { Value::String(text.clone()) });
        e.stream = wants_stream;
    });

    let api = match (&parts.method, path) {
        (&Method::POST, "/responses") => Api::Responses,
        (&Method::POST, "/chat/completions") => Api::Chat,
        (&Method::GET, "/models") => return reply_directly(entry, models()),
        (_, "/responses" | "/chat/completions" | "/models") => {
            let message = format!("{} is not allowed on {path}", parts.method);
            return reply_directly(
                entry,
                openai_error(StatusCode::METHOD_NOT_ALLOWED, &message, "method_not_allowed", None),
            );
        }
        _ => {
            let message = format!("Unknown path {path}: squall serves /responses, /chat/completions and /models");
            return reply_directly(entry, openai_error(StatusCode::NOT_FOUND, &message, "not_found", None));
        }
    };
    if let Some(kind) =
        headers.get("content-type").filter(|k| !k.trim_start().to_ascii_lowercase().starts_with("application/json"))
    {
        let message = format!("Unsupported Content-Type `{kind}`: send the request body as application/json.");
        return reply_directly(
            entry,
            openai_error(StatusCode::UNSUPPORTED_MEDIA_TYPE, &message, "unsupported_media_type", None),
        );
    }
    let Some(body) = parsed.filter(Value::is_object) else {
        let message = "We could not parse the JSON body of your request. The body must be a JSON object.";
        return reply_directly(entry, openai_error(StatusCode::BAD_REQUEST, message, "invalid_json", None));
    };

    let view = RequestView { raw_body: &text, body: &body, headers: &headers };
    let track = select(&run.scenario, &view);
    let attempt_number = run.next_attempt(track.name);
    let script = track.reply_for(attempt_number);
    let track_name = track.name.to_owned();
    entry.update(|e| {
        e.track = Some(track_name);
        e.attempt = Some(attempt_number);
    });

    if let Some(delay) = script.delay_ms {
        // Counted from the request's arrival. If the client gives up while we wait, this
        // future is dropped and the entry handle records `client_closed`.
        let deadline =
            super::precise_sleep::deadline_after(arrived, crate::wire::plan::scaled_ms(delay, run.time_scale));
        super::precise_sleep::PreciseSleep::until(deadline).await;
    }
    let ctx = ReplyContext {
        id_seed: format!("{}_{index}", run.id),
        model: body.get("model").and_then(Value::as_str).unwrap_or("gpt-squall").to_owned(),
        created_at: SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        input_tokens: estimate_tokens(&text),
        include_usage: body.pointer("/stream_options/include_usage").and_then(Value::as_bool) == Some(true),
    };
    let reply = build_reply(&script, api, wants_stream, &ctx, run.time_scale);
    entry.update(|e| e.status = Some(reply.status.as_u16()));
    let close = reply.plan.close_connection;
    let mut response = Response::new(ScriptedBody::new(reply.plan, switch, entry).boxed());
    *response.status_mut() = reply.status;
    let out = response.headers_mut();
    out.insert(hyper::header::CONTENT_TYPE, HeaderValue::from_static(reply.content_type));
    if reply.content_type.starts_with("text/event-stream") {
        out.insert(hyper::header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    }
    if let Ok(value) = HeaderValue::from_str(&format!("req_{}", ctx.id_seed)) {
        out.insert(HeaderName::from_static("x-request-id"), value);
    }
    if close {
        out.insert(hyper::header::CONNECTION, HeaderValue::from_static("close"));
    }
    let now = SystemTime::now();
    for (name, template) in &script.headers {
        let rendered = parse_header_template(template).map(|t| t.render(now));
        if let (Ok(name), Ok(Ok(value))) =
            (HeaderName::from_bytes(name.as_bytes()), rendered.map(|r| HeaderValue::from_str(&r)))
        {
            out.insert(name, value);
        }
    }
    let sent = header_map(response.headers());
    run.journal.update(index, |e| e.response_headers = sent);
    response
}

/// Answer without a script (errors, `/models`) and complete the journal entry now.
fn reply_directly(mut entry: EntryHandle, response: Response<ResponseBody>) -> Response<ResponseBody> {
    let status = response.status();
    let sent = header_map(response.headers());
    entry.update(|e| {
        e.status = Some(status.as_u16());
        e.response_headers = sent;
    });
    let end = if status.is_success() { EndKind::Completed } else { EndKind::ErrorStatus };
    entry.finish(end, Instant::now());
    response
}

fn models() -> Response<ResponseBody> {
    let model = |id: &str| json!({"id": id, "object": "model", "created": 0, "owned_by": "squall"});
    super::http_util::json(
        StatusCode::OK,
        &json!({"object": "list", "data": [model("gpt-squall"), model("gpt-squall-reasoning")]}),
    )
}
