//! The model endpoints under a run's base URL: OpenAI's `POST /responses` and
//! `POST /chat/completions`, Anthropic's `POST /messages`, Google's
//! `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent`, and `GET /models`. Each request is
//! journaled on arrival, routed to a track, answered with the track's next scripted attempt —
//! unless a run-wide condition (outage, quota, chaos: `self::run_conditions`) answers instead —
//! and played by a [`ScriptedBody`].

pub(in crate::server) mod base_path;
pub(in crate::server) mod entry_handle;
pub(in crate::server) mod playback;
// Public for the benches' timing of the quota's decision, hidden (re-exported as `server::quota`).
#[doc(hidden)]
pub mod quota;
mod reply_body;
mod run_conditions;
#[cfg(feature = "websocket")]
pub(in crate::server) mod websocket;

use std::sync::Arc;
use std::time::SystemTime;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::time::Instant;

use self::base_path::BasePath;
use self::entry_handle::EntryHandle;
use self::reply_body::ScriptedBody;
use self::run_conditions::{apply_conditions, Chosen};
use super::http_util::{declares_too_large, model_api_error, read_body, BodyError, ResponseBody};
use super::runs::{Run, TemplateKey};
use super::State;
use crate::journal::{Arrival, EndKind, Protocol, RecordedHeaders, UpstreamCall};
use crate::scenario::headers::ScriptedHeaders;
use crate::scenario::routing::{select, ReplySlot, RequestView};
use crate::scenario::FaultKind;
use crate::scenario_model::Attempt;
use crate::server::connection::conn_io::KillSwitch;
use crate::server::upstream::proxied_body::{Recording, UpstreamSteps};
use crate::server::upstream::Upstream;
use crate::wire::recorded_reply::{UpstreamReply, KEPT_HEADERS};

use crate::api::Api;
use crate::wire::bedrock::BedrockCall;
use crate::wire::gemini::GeminiCall;
use crate::wire::reply::build_reply;
use crate::wire::template::ReplyTemplate;
use crate::wire::{estimate_tokens, ReplyContext};

/// Answer a request that came to `base` (the run's base URL or a herd client's under it).
pub(super) async fn handle(
    state: &State,
    switch: Arc<KillSwitch>,
    run: Arc<Run>,
    base: BasePath<'_>,
    request: Request<Incoming>,
) -> Response<ResponseBody> {
    let (path, client) = (base.rest, base.client);
    let (parts, body) = request.into_parts();
    // The headers go into the journal now, so that a client that resets mid-body leaves them.
    let headers = RecordedHeaders::from_http(&parts.headers);
    let protocol = Protocol::of(parts.version);
    let arrival = Arrival { client, method: parts.method.to_string(), path: path.to_owned(), protocol, headers };
    let arrived = run.journal.now();
    let index = run.journal.begin(arrival, arrived);
    let entry = EntryHandle::new(run.journal.clone(), index);
    let request = match accept(state, &run, &entry, path, &parts, body).await {
        Ok(request) => request,
        Err(Refusal::Reply(response)) => return reply_directly(entry, response),
        Err(Refusal::ClientLeft(response)) => {
            let mut entry = entry;
            entry.finish_now(EndKind::ClientClosed);
            return response;
        }
    };
    let chosen = choose(&run, &entry, client, &request, &parts.headers, arrived);
    if let Some(code) = chosen.0.script.refusal() {
        // Refused before anything is sent, and before any upstream is asked.
        wait_from(&run, arrived, crate::wire::plan::scaled_ms(chosen.0.script.delay_ms.unwrap_or(0), run.time_scale))
            .await;
        return crate::server::connection::stream_reset::refuse(entry, code);
    }
    match &state.upstream {
        Some(upstream) if forwards(&chosen.0.script) => {
            let forward = Forward {
                upstream,
                method: &parts.method,
                rest: path,
                query: parts.uri.query(),
                headers: &parts.headers,
            };
            forward.reply(&run, switch, entry, &request, &chosen.0, arrived).await
        }
        _ => scripted(&run, switch, entry, &request, chosen, arrived).await,
    }
}

/// Answer an accepted model request (journaled as `entry`) with its attempt's scripted reply.
#[cfg(feature = "websocket")]
pub(super) async fn answer(
    run: &Run,
    switch: Arc<KillSwitch>,
    entry: EntryHandle,
    client: Option<u32>,
    request: &Accepted,
    headers: &http::HeaderMap,
    arrived: Instant,
) -> Response<ResponseBody> {
    let chosen = choose(run, &entry, client, request, headers, arrived);
    scripted(run, switch, entry, request, chosen, arrived).await
}

/// The chosen attempt's scripted reply.
async fn scripted(
    run: &Run,
    switch: Arc<KillSwitch>,
    entry: EntryHandle,
    request: &Accepted,
    (chosen, ctx): (Chosen<'_>, ReplyContext),
    arrived: Instant,
) -> Response<ResponseBody> {
    let index = entry.index();
    let reply = render_and_wait(run, &entry, &chosen, request, &ctx, arrived).await;
    let scripted = run.headers(chosen.track, chosen.slot);
    let response = respond(reply, switch, entry, request.api, &ctx, &chosen.rate_headers, scripted);
    run.journal.record_response_headers(index, RecordedHeaders::from_http(response.headers()));
    response
}

/// Choose the request's attempt and journal it.
pub(super) fn choose<'a>(
    run: &'a Run,
    entry: &EntryHandle,
    client: Option<u32>,
    request: &Accepted,
    headers: &http::HeaderMap,
    arrived: Instant,
) -> (Chosen<'a>, ReplyContext) {
    let (chosen, ctx) = choose_attempt(run, (entry.index(), client), request, headers, run.policy_ms_at(arrived));
    entry.update(|e| {
        e.stream = request.stream;
        e.track = Some(chosen.track_name.to_owned());
        e.attempt = Some(chosen.attempt_number);
        e.condition.clone_from(&chosen.condition);
    });
    (chosen, ctx)
}

/// Render the chosen attempt's reply and wait its header delay; what is left is sending it
/// (over HTTP or a WebSocket).
pub(super) async fn render_and_wait(
    run: &Run,
    entry: &EntryHandle,
    chosen: &Chosen<'_>,
    request: &Accepted,
    ctx: &ReplyContext,
    arrived: Instant,
) -> crate::wire::reply::Reply {
    let reply = render_reply(run, chosen, request, ctx);
    wait_from(run, arrived, reply.plan.header_delay).await;
    entry.update(|e| e.status = Some(reply.status.as_u16()));
    reply
}

/// Wait until `delay` after `arrived`, on the run's clock. If the client gives up while we
/// wait, the caller's future is dropped and the entry handle records `client_closed`.
async fn wait_from(run: &Run, arrived: Instant, delay: std::time::Duration) {
    if !delay.is_zero() {
        let clock = run.journal.clock();
        clock.sleep_until(crate::clock::deadline_after(arrived, delay)).await;
    }
}

/// Whether a proxying server forwards an attempt: when its script (or a run-wide condition)
/// gives no status, stream or body of its own — a fault and a delay alone apply to the
/// upstream's reply.
fn forwards(script: &Attempt) -> bool {
    script.status.is_none() && script.stream.is_none() && script.body.is_none()
}

/// A request forwarded to the upstream.
struct Forward<'a> {
    upstream: &'a Upstream,
    method: &'a Method,
    rest: &'a str,
    query: Option<&'a str>,
    /// The client's headers (the key among them, unless squall has its own).
    headers: &'a http::HeaderMap,
}

impl Forward<'_> {
    /// The upstream's reply, through the attempt's delay and fault; in the API's shape, naming
    /// the upstream, a 502 when it cannot be reached and a 504 when it sends no response head
    /// within its read timeout.
    async fn reply(
        &self,
        run: &Run,
        switch: Arc<KillSwitch>,
        entry: EntryHandle,
        request: &Accepted,
        chosen: &Chosen<'_>,
        arrived: Instant,
    ) -> Response<ResponseBody> {
        let headers = self.headers;
        let script = &chosen.script;
        wait_from(run, arrived, crate::wire::plan::scaled_ms(script.delay_ms.unwrap_or(0), run.time_scale)).await;
        let sent = Instant::now();
        let read_timeout = self.upstream.read_timeout();
        let forwarded =
            self.upstream.send(request.api, self.method, (self.rest, self.query), headers, request.raw.clone());
        let url = self.upstream.url();
        let failure = match tokio::time::timeout(read_timeout, forwarded).await {
            Ok(Ok(upstream)) => Ok(upstream),
            Ok(Err(reason)) => {
                let message = format!("squall could not reach its upstream {url}: {reason}");
                Err((reason, StatusCode::BAD_GATEWAY, message, "upstream_unreachable"))
            }
            Err(_) => {
                let reason = format!("no response head within {} s (its read timeout)", read_timeout.as_secs_f64());
                let message = format!("squall's upstream {url} sent {reason}");
                Err((reason, StatusCode::GATEWAY_TIMEOUT, message, "upstream_timeout"))
            }
        };
        let upstream = match failure {
            Ok(upstream) => upstream,
            Err((reason, status, message, code)) => {
                entry.update(|e| {
                    e.upstream = Some(UpstreamCall {
                        url: url.clone(),
                        status: None,
                        headers_after_ms: None,
                        error: Some(reason),
                    });
                });
                return reply_directly(entry, model_api_error(Some(request.api), status, &message, code));
            }
        };
        let crate::server::upstream::UpstreamResponse { status, headers: upstream_headers, body } = upstream;
        let after_ms = sent.elapsed().as_secs_f64() * 1000.0;
        entry.update(|e| {
            e.status = Some(status.as_u16());
            e.upstream = Some(UpstreamCall {
                url,
                status: Some(status.as_u16()),
                headers_after_ms: Some(after_ms),
                error: None,
            });
        });
        let streamed =
            upstream_headers.get(CONTENT_TYPE).is_some_and(|kind| request.api.is_stream_type(kind.as_bytes()));
        let index = entry.index();
        let kept = |(name, value): (&http::HeaderName, &HeaderValue)| {
            let value = value.to_str().ok()?;
            KEPT_HEADERS.contains(&name.as_str()).then(|| (name.as_str().to_owned(), value.to_owned()))
        };
        let reply = UpstreamReply {
            api: request.api,
            status: status.as_u16(),
            headers: upstream_headers.iter().filter_map(kept).collect(),
            streamed,
            body: Vec::new(),
            broken: false,
        };
        let recording = run.replies.admit().then(|| Recording { store: run.replies.clone(), index, reply });
        let timing = (run.time_scale, read_timeout);
        let steps = UpstreamSteps::new(body, (request.api, streamed), script.fault.clone(), timing, recording);
        let mut response = Response::new(ScriptedBody::streaming(Box::new(steps), switch, entry).boxed());
        *response.status_mut() = status;
        let out = response.headers_mut();
        for (name, value) in &upstream_headers {
            // The body's framing is hyper's own: the fault may cut it.
            if !matches!(name.as_str(), "connection" | "keep-alive" | "transfer-encoding" | "content-length") {
                out.append(name.clone(), value.clone());
            }
        }
        if script.fault.as_ref().is_some_and(|f| f.kind == FaultKind::Garbage) {
            out.insert(hyper::header::CONNECTION, HeaderValue::from_static("close"));
        }
        run.journal.record_response_headers(index, RecordedHeaders::from_http(response.headers()));
        response
    }
}

/// A model request squall will answer from the script.
pub(super) struct Accepted {
    pub api: Api,
    pub body: ModelRequest,
    pub raw: bytes::Bytes,
    /// Whether the client asked for a stream: the body's `stream`, or Gemini's or Bedrock's path.
    pub stream: bool,
    /// The model the client asked for: the body's `model`, or Gemini's or Bedrock's path.
    pub model: Option<String>,
}

impl Accepted {
    /// A Responses API request whose body is `raw` (a WebSocket's `response.create`, or `{}`
    /// for an upgrade), streamed as a WebSocket always is; `None` when `raw` is not a JSON object.
    #[cfg(feature = "websocket")]
    pub(super) fn responses_over_websocket(raw: bytes::Bytes) -> Option<Accepted> {
        let body = ModelRequest::parse(&raw)?;
        let model = body.model.as_ref().and_then(Value::as_str).map(str::to_owned);
        Some(Accepted { api: Api::Responses, body, raw, stream: true, model })
    }
}

/// Why a request gets no scripted reply: an answer of squall's own, or none (the client left).
enum Refusal {
    Reply(Response<ResponseBody>),
    ClientLeft(Response<ResponseBody>),
}

/// Read and journal the body, route the path, check the method, content type and JSON.
async fn accept(
    state: &State,
    run: &Run,
    entry: &EntryHandle,
    path: &str,
    parts: &http::request::Parts,
    body: Incoming,
) -> Result<Accepted, Refusal> {
    let api = Api::at_path(path);
    if declares_too_large(&parts.headers, state.body_limit) {
        return Err(Refusal::Reply(BodyError::TooLarge { limit: state.body_limit }.into_response(api)));
    }
    let raw = match read_body(body, state.body_limit).await {
        Ok(raw) => raw,
        Err(BodyError::ClientLeft) => return Err(Refusal::ClientLeft(BodyError::ClientLeft.into_response(api))),
        Err(e) => return Err(Refusal::Reply(e.into_response(api))),
    };
    run.journal.record_body(entry.index(), raw.clone());
    let api = match route(&parts.method, path, api) {
        Route::Model(api) => api,
        Route::Answered(response) => return Err(Refusal::Reply(response)),
    };
    entry.update(|e| e.api = Some(api));
    if let Some(kind) = parts
        .headers
        .get(CONTENT_TYPE)
        .map(|k| String::from_utf8_lossy(k.as_bytes()))
        .filter(|k| !k.trim_start().to_ascii_lowercase().starts_with("application/json"))
    {
        let message = format!("Unsupported Content-Type `{kind}`: send the request body as application/json.");
        let refusal =
            model_api_error(Some(api), StatusCode::UNSUPPORTED_MEDIA_TYPE, &message, "unsupported_media_type");
        return Err(Refusal::Reply(refusal));
    }
    let Some(body) = ModelRequest::parse(&raw) else {
        let message = "We could not parse the JSON body of your request. The body must be a JSON object.";
        return Err(Refusal::Reply(model_api_error(Some(api), StatusCode::BAD_REQUEST, message, "invalid_json")));
    };
    // Gemini's and Bedrock's paths name the model and say whether to stream; the others' bodies do.
    let by_path = GeminiCall::at_path(path)
        .map(|call| (call.stream, call.model))
        .or_else(|| BedrockCall::at_path(path).map(|call| (call.stream, call.model)));
    let (stream, model) = match by_path {
        Some((stream, model)) => (stream, Some(model.to_owned())),
        None => (body.wants_stream(api), body.model.as_ref().and_then(Value::as_str).map(str::to_owned)),
    };
    Ok(Accepted { api, body, raw, stream, model })
}

/// Where a request goes: to a model API, or answered by squall itself.
enum Route {
    Model(Api),
    Answered(Response<ResponseBody>),
}

/// The model API a `POST` to `path` speaks; `/models` and refusals are answered here.
fn route(method: &Method, path: &str, api: Option<Api>) -> Route {
    match (method, api) {
        (&Method::POST, Some(api)) => Route::Model(api),
        (&Method::GET, None) if path == "/models" => Route::Answered(models()),
        (method, api) if api.is_some() || path == "/models" => {
            let message = format!("{method} is not allowed on {path}");
            Route::Answered(model_api_error(api, StatusCode::METHOD_NOT_ALLOWED, &message, "method_not_allowed"))
        }
        _ => {
            let message =
                format!("Unknown path {path}: squall serves /responses, /chat/completions, /messages, /models, Gemini's /v1beta/models/{{model}}:generateContent, Azure OpenAI's /openai/deployments/{{deployment}}/chat/completions, Ollama's /api/chat and /api/generate and Bedrock's /model/{{modelId}}/converse-stream and /invoke-with-response-stream");
            Route::Answered(model_api_error(api_by_prefix(path), StatusCode::NOT_FOUND, &message, "not_found"))
        }
    }
}

/// The API whose error shape a path no API serves is answered in, by its prefix: Google's for
/// `/v1beta/…` and Gemini model paths (an unknown method, an empty model, a dot segment),
/// Anthropic's for `/messages/…` (`count_tokens`, `batches`), Ollama's for `/api/…`, AWS's for
/// `/model/…` (Bedrock's `invoke`), OpenAI's for the rest.
fn api_by_prefix(path: &str) -> Option<Api> {
    let gemini =
        path.starts_with("/v1beta/") || path.split_once("/models/").is_some_and(|(_, rest)| rest.contains(':'));
    if gemini {
        Some(Api::Gemini)
    } else if path.starts_with("/messages") || path.starts_with("/v1/messages") {
        Some(Api::Messages)
    } else if path.starts_with("/api/") {
        Some(Api::OllamaChat)
    } else if path.starts_with("/model/") {
        Some(Api::Bedrock)
    } else {
        None
    }
}

/// Route request `index` of herd client `client` to a track, count the attempt (per client),
/// and fix what the reply says about it: the track's reply, unless a run-wide condition answers
/// instead at `policy_ms` of run time.
fn choose_attempt<'a>(
    run: &'a Run,
    (index, client): (usize, Option<u32>),
    request: &Accepted,
    headers: &http::HeaderMap,
    policy_ms: f64,
) -> (Chosen<'a>, ReplyContext) {
    let text = String::from_utf8_lossy(&request.raw);
    let view = RequestView { raw_body: &text, tools: request.body.tools(), headers };
    let track = select(&run.scenario, &view);
    let attempt_number = run.next_attempt(client, track.name);
    let body = &request.body;
    let ctx = ReplyContext {
        id_seed: format!("{}_{index}", run.id),
        model: request.model.clone().unwrap_or_else(|| request.api.default_model().to_owned()),
        created_at: SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        input_tokens: estimate_tokens(&text),
        include_usage: body.stream_options.as_ref().and_then(|o| o.get("include_usage")).and_then(Value::as_bool)
            == Some(true),
    };
    let slot = track.slot_for(attempt_number);
    let chosen = Chosen {
        track: track.index,
        track_name: track.name,
        client,
        attempt_number,
        slot,
        script: track.attempt(slot),
        condition: None,
        rate_headers: Vec::new(),
    };
    let chosen = apply_conditions(run, &track, chosen, policy_ms, ctx.input_tokens, request.api);
    (chosen, ctx)
}

/// The scripted reply, from the slot's template (rendered once per slot and form) when it has one.
fn render_reply(run: &Run, chosen: &Chosen, request: &Accepted, ctx: &ReplyContext) -> crate::wire::reply::Reply {
    let script = &chosen.script;
    let stream = request.stream;
    let key = TemplateKey {
        track: chosen.track,
        slot: chosen.slot,
        api: request.api,
        stream,
        include_usage: ctx.include_usage,
    };
    if chosen.slot == ReplySlot::Made {
        return build_reply(script, request.api, stream, ctx, run.time_scale);
    }
    let template =
        run.template(key, || ReplyTemplate::new(script, request.api, stream, ctx.include_usage, run.time_scale));
    match template {
        Some(template) => template.reply(ctx),
        None => build_reply(script, request.api, stream, ctx, run.time_scale),
    }
}

/// The response: status, framing and request-id headers, the scripted headers, the body.
fn respond(
    reply: crate::wire::reply::Reply,
    switch: Arc<KillSwitch>,
    entry: EntryHandle,
    api: Api,
    ctx: &ReplyContext,
    rate_headers: &[(String, String)],
    scripted: Option<&ScriptedHeaders>,
) -> Response<ResponseBody> {
    let close = reply.plan.close_connection;
    let wall_now = entry.client_wall_now();
    let mut response = Response::new(ScriptedBody::new(reply.plan, switch, entry).boxed());
    *response.status_mut() = reply.status;
    let out = response.headers_mut();
    out.insert(hyper::header::CONTENT_TYPE, HeaderValue::from_static(reply.content_type));
    if reply.content_type.starts_with("text/event-stream") {
        out.insert(hyper::header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    }
    if let Ok(value) = HeaderValue::from_str(&format!("req_{}", ctx.id_seed)) {
        match api {
            Api::Messages => out.insert(HeaderName::from_static("request-id"), value.clone()),
            Api::Bedrock | Api::BedrockInvoke => out.insert(HeaderName::from_static("x-amzn-requestid"), value.clone()),
            _ => None,
        };
        out.insert(HeaderName::from_static("x-request-id"), value);
    }
    super::http_util::insert_api_headers(out, &reply.headers);
    if close {
        out.insert(hyper::header::CONNECTION, HeaderValue::from_static("close"));
    }
    insert_reply_headers(out, rate_headers, scripted, wall_now);
    response
}

/// A reply's own headers, over HTTP or in a WebSocket's `error` event: the quota's rate-limit
/// headers, then the attempt's scripted ones (which win).
pub(super) fn insert_reply_headers(
    out: &mut http::HeaderMap,
    rate_headers: &[(String, String)],
    scripted: Option<&ScriptedHeaders>,
    wall_now: std::time::SystemTime,
) {
    for (name, value) in rate_headers {
        if let (Ok(name), Ok(value)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
            out.insert(name, value);
        }
    }
    if let Some(scripted) = scripted {
        scripted.insert_into(out, wall_now);
    }
}

/// The parts of a model request squall acts on. The rest of the body is checked to be JSON
/// and skipped, not built into a tree: the journal keeps the bytes.
#[derive(Debug, Deserialize)]
pub(super) struct ModelRequest {
    model: Option<Value>,
    stream: Option<Value>,
    stream_options: Option<Value>,
    tools: Option<Value>,
    /// Bedrock's: its `tools` are inside.
    #[serde(rename = "toolConfig")]
    tool_config: Option<Value>,
}

impl ModelRequest {
    /// The request, when `raw` is a JSON object.
    fn parse(raw: &[u8]) -> Option<Self> {
        let is_object = raw.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        is_object.then(|| serde_json::from_slice(raw).ok()).flatten()
    }

    /// The tools it offers: `tools`, or Bedrock's `toolConfig.tools`.
    fn tools(&self) -> Option<&Value> {
        self.tools.as_ref().or_else(|| self.tool_config.as_ref().and_then(|c| c.get("tools")))
    }

    /// Whether the request asks for a stream: `"stream": true`, or, for an API that streams by
    /// default (Ollama), anything but `"stream": false`.
    fn wants_stream(&self, api: Api) -> bool {
        self.stream.as_ref().and_then(Value::as_bool).unwrap_or(api.streams_by_default())
    }
}

/// Answer without a script (errors, `/models`) and complete the journal entry now.
fn reply_directly(mut entry: EntryHandle, response: Response<ResponseBody>) -> Response<ResponseBody> {
    let status = response.status();
    entry.record_response_headers(RecordedHeaders::from_http(response.headers()));
    entry.update(|e| e.status = Some(status.as_u16()));
    let end = if status.is_success() { EndKind::Completed } else { EndKind::ErrorStatus };
    entry.finish_now(end);
    response
}

fn models() -> Response<ResponseBody> {
    let model = |id: &str| json!({"id": id, "object": "model", "created": 0, "owned_by": "squall"});
    super::http_util::json(
        StatusCode::OK,
        &json!({"object": "list", "data": [model("gpt-squall"), model("gpt-squall-reasoning")]}),
    )
}
