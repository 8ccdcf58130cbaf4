//! What a scripted attempt answers to one request — status, content type, and the plan of the
//! body with its fault — for each model API (Responses, Chat Completions, Messages), streamed or
//! not. Pure: the server plays the plan on a socket, the wiremock bridge and the fuzz targets
//! read it.

use bytes::Bytes;
use http::StatusCode;

use serde_json::Value;

use super::errors::{code_message, code_type_and_status, error_body, scripted_error};
use super::plan::{plan_body, plan_stream, scaled_ms, Body, ReplyPlan, Span};
use super::{
    anthropic_errors, bedrock, bedrock_invoke, chat, event_stream, gemini, gemini_errors, messages, ollama, responses,
    Framing, ReplyContext, SseEvent,
};
use crate::clock::TimeScale;
use crate::journal::EndKind;
use crate::scenario_model::{Attempt, StreamFailure, StreamSpec};

use crate::api::Api;

/// What each API sends for a scripted reply.
impl Api {
    /// The streamed events of a successful (or in-stream failing) scripted reply.
    pub fn stream_events(self, content: &StreamSpec, ctx: &ReplyContext) -> Vec<SseEvent> {
        match self {
            Api::Responses => responses::stream_events(content, ctx),
            Api::Chat => chat::stream_events(content, ctx),
            Api::Messages => messages::stream_events(content, ctx),
            Api::Gemini => gemini::stream_events(content, ctx),
            Api::OllamaChat => ollama::stream_events(ollama::Endpoint::Chat, content, ctx),
            Api::OllamaGenerate => ollama::stream_events(ollama::Endpoint::Generate, content, ctx),
            Api::Bedrock => bedrock::stream_events(content, ctx),
            Api::BedrockInvoke => bedrock_invoke::stream_events(content, ctx),
        }
    }

    /// The API served at a path under a run's base URL, if any: `/responses`,
    /// `/chat/completions`, `/messages`, Gemini's `/v1beta/models/{model}:generateContent`
    /// (or `:streamGenerateContent`; `/models/{model}:…` under `/v1` too), Azure OpenAI's paths,
    /// Ollama's `/api/chat` and `/api/generate`, Bedrock's `/model/{modelId}/converse(-stream)`.
    pub fn at_path(path: &str) -> Option<Api> {
        match azure_openai_path(path).unwrap_or(path) {
            "/responses" => Some(Api::Responses),
            "/chat/completions" => Some(Api::Chat),
            "/messages" => Some(Api::Messages),
            "/api/chat" => Some(Api::OllamaChat),
            "/api/generate" => Some(Api::OllamaGenerate),
            _ if path.starts_with("/model/") => bedrock::BedrockCall::at_path(path).map(bedrock::BedrockCall::api),
            _ => gemini::GeminiCall::at_path(path).map(|_| Api::Gemini),
        }
    }

    /// Whether its streams are newline-delimited JSON (Ollama) rather than SSE.
    pub(crate) fn streams_json_lines(self) -> bool {
        self.stream_framing() == Framing::JsonLine
    }

    /// How its streams frame their events: SSE, JSON lines (Ollama) or AWS event-stream
    /// messages (Bedrock).
    pub(crate) fn stream_framing(self) -> Framing {
        match self {
            Api::OllamaChat | Api::OllamaGenerate => Framing::JsonLine,
            Api::Bedrock | Api::BedrockInvoke => Framing::AwsEventStream(event_stream::MessageType::Event),
            Api::Responses | Api::Chat | Api::Messages | Api::Gemini => Framing::Sse,
        }
    }

    /// Whether a reply of this content type is one of its streams (or any SSE stream).
    pub(crate) fn is_stream_type(self, content_type: &[u8]) -> bool {
        content_type.starts_with(b"text/event-stream")
            || content_type.starts_with(self.stream_content_type().as_bytes())
    }

    /// The content type of its streams.
    fn stream_content_type(self) -> &'static str {
        match self.stream_framing() {
            Framing::Sse => EVENT_STREAM,
            Framing::JsonLine => JSON_LINES,
            Framing::AwsEventStream(_) => event_stream::CONTENT_TYPE,
        }
    }

    /// Whether a request of this API that says nothing of streaming gets a stream (Ollama
    /// streams unless told `"stream": false`; the others only when told `true`).
    pub(crate) fn streams_by_default(self) -> bool {
        self.streams_json_lines()
    }

    /// The model a reply names when the request names none.
    pub(crate) fn default_model(self) -> &'static str {
        match self {
            Api::Messages => "claude-squall",
            Api::Responses | Api::Chat => "gpt-squall",
            Api::Gemini => "gemini-squall",
            Api::OllamaChat | Api::OllamaGenerate => "llama-squall",
            Api::Bedrock => "bedrock-squall",
            Api::BedrockInvoke => "anthropic.claude-squall",
        }
    }

    /// The API a request to `path` speaks (any prefix: `/v1/responses`, `/runs/x/v1/messages`,
    /// `/v1beta/models/{model}:generateContent`, `/model/{modelId}/converse-stream`), and where
    /// the path says so (Gemini, Bedrock) whether it asks for a stream and the model it names;
    /// `None` for no model API.
    #[cfg(feature = "wiremock")]
    pub(crate) fn ending_path(path: &str) -> Option<(Api, Option<(bool, &str)>)> {
        if let Some(call) = path.rfind("/models/").and_then(|at| gemini::GeminiCall::at_path(&path[at..])) {
            return Some((Api::Gemini, Some((call.stream, call.model))));
        }
        if let Some(call) = path.rfind("/model/").and_then(|at| bedrock::BedrockCall::at_path(&path[at..])) {
            return Some((call.api(), Some((call.stream, call.model))));
        }
        [
            ("/responses", Api::Responses),
            ("/chat/completions", Api::Chat),
            ("/messages", Api::Messages),
            ("/api/chat", Api::OllamaChat),
            ("/api/generate", Api::OllamaGenerate),
        ]
        .into_iter()
        .find(|(end, _)| path.ends_with(end))
        .map(|(_, api)| (api, None))
    }

    /// The error body of a scripted status reply, in this API's shape.
    pub fn scripted_error(self, status: u16, attempt: &Attempt) -> Value {
        let spec = attempt.error.as_ref();
        match self {
            Api::Responses | Api::Chat => scripted_error(status, spec),
            Api::Messages => anthropic_errors::scripted_error(status, spec),
            Api::Gemini => gemini_errors::scripted_error(status, attempt),
            Api::OllamaChat | Api::OllamaGenerate => {
                ollama::scripted_error(status, spec.and_then(|e| e.message.as_deref()))
            }
            Api::Bedrock | Api::BedrockInvoke => bedrock::scripted_error(status, spec).1,
        }
    }

    /// The headers this API sends with an error status besides its body: Bedrock's
    /// `x-amzn-errortype`, naming the exception (the scripted `type`, else the status's).
    pub(crate) fn error_headers(self, status: u16, attempt: Option<&Attempt>) -> Vec<(&'static str, String)> {
        match self {
            Api::Bedrock | Api::BedrockInvoke => {
                let (name, _) = bedrock::scripted_error(status, attempt.and_then(|a| a.error.as_ref()));
                vec![(bedrock::ERROR_TYPE_HEADER, bedrock::error_type_header(&name))]
            }
            _ => Vec::new(),
        }
    }
}

/// A reply decided by the script: status, content type and the body plan.
#[derive(Debug)]
pub struct Reply {
    /// The HTTP status.
    pub status: StatusCode,
    /// `application/json` or `text/event-stream`.
    pub content_type: &'static str,
    /// The body, its waits and its fault.
    pub plan: ReplyPlan,
    /// The pieces of the body, in order (events, or one whole body): where a WebSocket finds
    /// each event's frame in the bytes the plan sends.
    #[cfg_attr(not(feature = "websocket"), allow(dead_code))]
    pub(crate) spans: Vec<Span>,
    /// The API's own headers for this reply (Bedrock's `x-amzn-errortype` on an error).
    pub(crate) headers: Vec<(&'static str, String)>,
}

/// A reply rendered for one context, before its fault and timing are planned.
#[derive(Debug, Clone)]
pub(crate) struct Rendered {
    pub(crate) status: StatusCode,
    pub(crate) content_type: &'static str,
    pub(crate) body: Body,
    /// How the body ends when nothing breaks it.
    pub(crate) end: EndKind,
    /// An event stream (planned with event delays and event offsets) or a whole body.
    pub(crate) stream: bool,
    /// The API's own headers for this reply (Bedrock's `x-amzn-errortype` on an error).
    pub(crate) headers: Vec<(&'static str, String)>,
}

const JSON: &str = "application/json";
const EVENT_STREAM: &str = "text/event-stream; charset=utf-8";
const JSON_LINES: &str = "application/x-ndjson";

/// What the script answers to a request of this API, streamed or not.
pub fn build_reply(script: &Attempt, api: Api, wants_stream: bool, ctx: &ReplyContext, time_scale: TimeScale) -> Reply {
    let rendered = render(script, api, wants_stream, ctx);
    let fault = script.fault.as_ref();
    let plan = if rendered.stream {
        plan_stream(&rendered.body, fault, scaled_ms(script.event_delay_ms(), time_scale), time_scale)
    } else {
        plan_body(rendered.body.bytes, rendered.end, fault, time_scale)
    }
    .with_header_delay(script, time_scale);
    Reply {
        status: rendered.status,
        content_type: rendered.content_type,
        plan,
        spans: rendered.body.spans,
        headers: rendered.headers,
    }
}

/// The status, content type and body the script answers with, for this context.
pub(crate) fn render(script: &Attempt, api: Api, wants_stream: bool, ctx: &ReplyContext) -> Rendered {
    let whole = |status: u16, body: String, end: EndKind, headers| Rendered {
        status: StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        content_type: JSON,
        body: Body::whole(Bytes::from(body)),
        end,
        stream: false,
        headers,
    };
    if script.is_status_reply() {
        let status = script.status_code();
        let body = match &script.body {
            Some(raw) => raw.clone(),
            None => api.scripted_error(status, script).to_string(),
        };
        return whole(status, body, EndKind::ErrorStatus, api.error_headers(status, Some(script)));
    }
    let content = script.content();
    if wants_stream {
        let events = api.stream_events(&content, ctx);
        return Rendered {
            status: StatusCode::OK,
            content_type: api.stream_content_type(),
            body: Body::of_events(&events),
            end: EndKind::Completed,
            stream: true,
            headers: Vec::new(),
        };
    }
    if let Some(failure) = &content.fail {
        // Without streaming, a provider reports the same failure as an error status.
        let (status, body, headers) = failure_as_status(api, failure);
        return whole(status, body.to_string(), EndKind::ErrorStatus, headers);
    }
    let object = match api {
        Api::Responses => responses::response_object(&content, ctx),
        Api::Chat => chat::completion_object(&content, ctx),
        Api::Messages => messages::message(&content, ctx),
        Api::Gemini => gemini::response_object(&content, ctx),
        Api::OllamaChat => ollama::response_object(ollama::Endpoint::Chat, &content, ctx),
        Api::OllamaGenerate => ollama::response_object(ollama::Endpoint::Generate, &content, ctx),
        Api::Bedrock => bedrock::response_object(&content, ctx),
        Api::BedrockInvoke => bedrock_invoke::response_object(&content, ctx),
    };
    whole(200, object.to_string(), EndKind::Completed, Vec::new())
}

/// A scripted stream failure answered without streaming: the status, error body and headers
/// the provider sends for it.
fn failure_as_status(api: Api, failure: &StreamFailure) -> (u16, Value, Vec<(&'static str, String)>) {
    let message = |say: fn(&str) -> String| failure.message.clone().unwrap_or_else(|| say(&failure.code));
    match api {
        Api::Responses | Api::Chat => {
            let (kind, status) = code_type_and_status(&failure.code);
            (status, error_body(&message(code_message), kind, None, Some(&failure.code)), Vec::new())
        }
        Api::Messages => {
            let (kind, status) = anthropic_errors::code_type_and_status(&failure.code);
            (status, anthropic_errors::error_body(kind, &message(anthropic_errors::code_message)), Vec::new())
        }
        Api::Gemini => {
            let (status, body) = gemini_errors::failure_error(&failure.code, failure.message.as_deref());
            (status, body, Vec::new())
        }
        Api::OllamaChat | Api::OllamaGenerate => {
            let (_, status) = code_type_and_status(&failure.code);
            (status, ollama::error_body(&message(code_message)), Vec::new())
        }
        Api::Bedrock | Api::BedrockInvoke => {
            let (status, exception, body) = bedrock::failure_as_status(failure);
            (status, body, vec![(bedrock::ERROR_TYPE_HEADER, bedrock::error_type_header(&exception))])
        }
    }
}

/// What an Azure OpenAI path asks of the OpenAI API it mirrors: `/openai/deployments/{name}/X`,
/// `/openai/v1/X` and `/openai/X` (what the openai SDKs' `AzureOpenAI` calls, its endpoint the
/// run's URL) are `/X`; `None` for a path that is not Azure's.
pub(crate) fn azure_openai_path(path: &str) -> Option<&str> {
    let rest = path.strip_prefix("/openai").filter(|r| r.starts_with('/'))?;
    if let Some(deployed) = rest.strip_prefix("/deployments/") {
        let slash = deployed.find('/').filter(|at| *at > 0)?;
        return Some(&deployed[slash..]);
    }
    match rest.strip_prefix("/v1") {
        Some(after) if after.starts_with('/') => Some(after),
        _ => Some(rest),
    }
}

#[cfg(test)]
mod tests {
    use super::azure_openai_path;
    use crate::api::Api;

    #[test]
    fn azure_openai_paths_are_the_openai_apis() {
        assert_eq!(azure_openai_path("/openai/deployments/gpt-4o/chat/completions"), Some("/chat/completions"));
        assert_eq!(azure_openai_path("/openai/v1/responses"), Some("/responses"));
        assert_eq!(azure_openai_path("/openai/responses"), Some("/responses"));
        assert_eq!(Api::at_path("/openai/deployments/d/chat/completions"), Some(Api::Chat));
        assert_eq!(Api::at_path("/openai/v1/chat/completions"), Some(Api::Chat));
        assert_eq!(Api::at_path("/openai/deployments//chat/completions"), None);
        assert_eq!(Api::at_path("/openaix/responses"), None);
        assert_eq!(azure_openai_path("/responses"), None);
    }
}
