//! The model endpoints under a run's base URL: OpenAI's `POST /responses` and
//! `POST /chat/completions`, Anthropic's `POST /messages`, and `GET /models`. Each request is journaled on arrival, routed to a track, answered with the
//! track's next scripted attempt, and played by a [`ScriptedBody`].

use std::sync::Arc;
use std::time::SystemTime;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::time::Instant;

use super::conn_io::KillSwitch;
use super::http_util::{declares_too_large, model_api_error, openai_error, read_body, BodyError, ResponseBody};
use super::reply_body::{EntryHandle, ScriptedBody};
use super::runs::{Run, TemplateKey};
use super::State;
use crate::journal::{Arrival, EndKind, RecordedHeaders};
use crate::scenario::headers::parse_header_template;
use crate::scenario::routing::{select, RequestView};

use crate::wire::reply::{build_reply, Api};
use crate::wire::template::ReplyTemplate;
use crate::wire::{estimate_tokens, ReplyContext};

pub(super) async fn handle(
    state: &State,
    switch: Arc<KillSwitch>,
    run: Arc<Run>,
    path: &str,
    request: Request<Incoming>,
) -> Response<ResponseBody> {
    let (parts, body) = request.into_parts();
    // The headers go into the journal now, so that a client that resets mid-body leaves them.
    let headers = RecordedHeaders::from_http(&parts.headers);
    let arrival = Arrival { method: parts.method.to_string(), path: path.to_owned(), headers };
    let arrived = Instant::now();
    let index = run.journal.begin(arrival, arrived);
    let entry = EntryHandle::new(run.journal.clone(), index);

    let api = Api::at_path(path);
    if declares_too_large(&parts.headers, state.body_limit) {
        return reply_directly(entry, BodyError::TooLarge { limit: state.body_limit }.into_response(api));
    }
    let raw = match read_body(body, state.body_limit).await {
        Ok(raw) => raw,
        Err(BodyError::ClientLeft) => {
            let mut entry = entry;
            entry.finish(EndKind::ClientClosed, Instant::now());
            return BodyError::ClientLeft.into_response(api);
        }
        Err(e) => return reply_directly(entry, e.into_response(api)),
    };
    run.journal.record_body(index, raw.clone());
    let api = match (&parts.method, api) {
        (&Method::POST, Some(api)) => api,
        (&Method::GET, None) if path == "/models" => return reply_directly(entry, models()),
        (method, api) if api.is_some() || path == "/models" => {
            let message = format!("{method} is not allowed on {path}");
            let refusal = model_api_error(api, StatusCode::METHOD_NOT_ALLOWED, &message, "method_not_allowed");
            return reply_directly(entry, refusal);
        }
        _ => {
            let message =
                format!("Unknown path {path}: squall serves /responses, /chat/completions, /messages and /models");
            return reply_directly(entry, openai_error(StatusCode::NOT_FOUND, &message, "not_found", None));
        }
    };
    entry.update(|e| e.api = Some(api.as_str().into()));
    if let Some(kind) = parts
        .headers
        .get(CONTENT_TYPE)
        .map(|k| String::from_utf8_lossy(k.as_bytes()))
        .filter(|k| !k.trim_start().to_ascii_lowercase().starts_with("application/json"))
    {
        let message = format!("Unsupported Content-Type `{kind}`: send the request body as application/json.");
        let refusal =
            model_api_error(Some(api), StatusCode::UNSUPPORTED_MEDIA_TYPE, &message, "unsupported_media_type");
        return reply_directly(entry, refusal);
    }
    let Some(body) = ModelRequest::parse(&raw) else {
        let message = "We could not parse the JSON body of your request. The body must be a JSON object.";
        return reply_directly(entry, model_api_error(Some(api), StatusCode::BAD_REQUEST, message, "invalid_json"));
    };

    let text = String::from_utf8_lossy(&raw);
    let view = RequestView { raw_body: &text, tools: body.tools.as_ref(), headers: &parts.headers };
    let track = select(&run.scenario, &view);
    let attempt_number = run.next_attempt(track.name);
    let slot = track.slot_for(attempt_number);
    let script = track.attempt(slot);
    let ctx = ReplyContext {
        id_seed: format!("{}_{index}", run.id),
        model: body.model.as_ref().and_then(Value::as_str).unwrap_or(default_model(api)).to_owned(),
        created_at: SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        input_tokens: estimate_tokens(&text),
        include_usage: body.stream_options.as_ref().and_then(|o| o.get("include_usage")).and_then(Value::as_bool)
            == Some(true),
    };
    let wants_stream = body.wants_stream();
    entry.update(|e| {
        e.stream = wants_stream;
        e.track = Some(track.name.to_owned());
        e.attempt = Some(attempt_number);
    });

    if let Some(delay) = script.delay_ms {
        // Counted from the request's arrival. If the client gives up while we wait, this
        // future is dropped and the entry handle records `client_closed`.
        let deadline =
            super::precise_sleep::deadline_after(arrived, crate::wire::plan::scaled_ms(delay, run.time_scale));
        super::precise_sleep::PreciseSleep::until(deadline).await;
    }
    // Rendered once per script slot and form; filled per request.
    let key = TemplateKey { track: track.index, slot, api, stream: wants_stream, include_usage: ctx.include_usage };
    let template =
        run.template(key, || ReplyTemplate::new(&script, api, wants_stream, ctx.include_usage, run.time_scale));
    let reply = match template {
        Some(template) => template.reply(&ctx),
        None => build_reply(&script, api, wants_stream, &ctx, run.time_scale),
    };
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
        if api == Api::Messages {
            out.insert(HeaderName::from_static("request-id"), value.clone());
        }
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
    run.journal.record_response_headers(index, RecordedHeaders::from_http(response.headers()));
    response
}

/// The parts of a model request squall acts on. The rest of the body is checked to be JSON
/// and skipped, not built into a tree: the journal keeps the bytes.
#[derive(Debug, Deserialize)]
struct ModelRequest {
    model: Option<Value>,
    stream: Option<Value>,
    stream_options: Option<Value>,
    tools: Option<Value>,
}

impl ModelRequest {
    /// The request, when `raw` is a JSON object.
    fn parse(raw: &[u8]) -> Option<Self> {
        let is_object = raw.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        is_object.then(|| serde_json::from_slice(raw).ok()).flatten()
    }

    fn wants_stream(&self) -> bool {
        self.stream.as_ref().and_then(Value::as_bool) == Some(true)
    }
}

/// The model echoed back when the request names none.
fn default_model(api: Api) -> &'static str {
    match api {
        Api::Messages => "claude-squall",
        Api::Responses | Api::Chat => "gpt-squall",
    }
}

/// Answer without a script (errors, `/models`) and complete the journal entry now.
fn reply_directly(mut entry: EntryHandle, response: Response<ResponseBody>) -> Response<ResponseBody> {
    let status = response.status();
    entry.record_response_headers(RecordedHeaders::from_http(response.headers()));
    entry.update(|e| e.status = Some(status.as_u16()));
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
