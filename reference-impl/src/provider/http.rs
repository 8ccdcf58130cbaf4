//! The HTTP transport shared by every API: send, time out, read the stream, classify (the
//! Responses API's WebSocket is `super::websocket`).

use futures_util::StreamExt;
use reqwest::header::HeaderMap;

use super::bedrock::{self, BedrockAccumulator};
use super::chat::{self, ChatAccumulator};
use super::event_stream::EventStreamDecoder;
use super::gemini::{self, GeminiAccumulator};
use super::messages::{self, MessagesAccumulator};
use super::responses::{self, Observed, Progress, ResponsesAccumulator};
use super::sse::SseDecoder;
use super::websocket::WebSocketTarget;
use super::{Api, Delta, ModelOutput, ModelRequest, OutputMode};
use super::{AttemptContext, AttemptFailure};
use crate::decide::classify::{classify_status, classify_transport, ProviderError, TransportFailure};
use crate::decide::gate::AttemptObservation;

/// Which HTTP the reference speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HttpVersion {
    /// HTTP/1.1 over cleartext; over TLS, what ALPN chooses (HTTP/2 from squall).
    #[default]
    Negotiated,
    /// HTTP/1.1 only.
    Http1,
    /// HTTP/2 only: with prior knowledge (h2c) over cleartext.
    Http2,
}

/// How the reference reaches the server: its HTTP, and the CA certificates (PEM) it trusts
/// over TLS.
#[derive(Debug, Clone, Default)]
pub struct Transport {
    /// See [`HttpVersion`].
    pub http: HttpVersion,
    /// The PEM of the CAs to trust instead of any built in (squall's test CA).
    pub ca_pem: Option<Vec<u8>>,
}

/// A provider over reqwest, speaking one of the [`Api`]s.
#[derive(Debug, Clone)]
pub struct HttpProvider {
    client: reqwest::Client,
    base_url: String,
    api_key: String,
    api: Api,
    /// Where the Responses API's WebSocket is, and its idle sockets (`Api::ResponsesWebSocket`).
    websocket: Option<WebSocketTarget>,
}

impl HttpProvider {
    /// `base_url` ends in `/v1`, as with the OpenAI SDKs (the Messages API is `{base_url}/messages`;
    /// the Gemini API is under the URL without `/v1`, which Google's SDKs add the version to).
    pub fn new(base_url: &str, api_key: &str, api: Api) -> Self {
        let base_url = base_url.trim_end_matches('/').to_owned();
        let websocket = (api == Api::ResponsesWebSocket).then(|| WebSocketTarget::new(&base_url, api_key));
        HttpProvider { client: reqwest::Client::new(), base_url, api_key: api_key.to_owned(), api, websocket }
    }

    /// The same provider over `transport`: the HTTP it speaks, and the CA it trusts for an
    /// `https://` base URL. The error says what could not be set up.
    pub fn over(self, transport: &Transport) -> Result<Self, String> {
        let mut builder = reqwest::Client::builder();
        builder = match transport.http {
            HttpVersion::Negotiated => builder,
            HttpVersion::Http1 => builder.http1_only(),
            HttpVersion::Http2 => builder.http2_prior_knowledge(),
        };
        if let Some(pem) = &transport.ca_pem {
            // Only the CA the case names: a test server's certificate is issued by nothing else.
            let certificates = reqwest::Certificate::from_pem_bundle(pem).map_err(|e| format!("the CA file: {e}"))?;
            builder = builder.tls_built_in_root_certs(false);
            for certificate in certificates {
                builder = builder.add_root_certificate(certificate);
            }
        }
        let client = builder.build().map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(HttpProvider { client, ..self })
    }

    /// One attempt: stream the reply, showing deltas through `display` when `mode` is visible.
    pub async fn attempt(
        &self,
        request: &ModelRequest,
        context: AttemptContext,
        mode: OutputMode,
        display: &(dyn Fn(Delta<'_>) + Send + Sync),
    ) -> Result<ModelOutput, AttemptFailure> {
        let mut observed = AttemptObservation::default();
        let result = self.stream(request, context, mode, display, &mut observed).await;
        result.map_err(|error| AttemptFailure { error, observed })
    }

    async fn stream(
        &self,
        request: &ModelRequest,
        context: AttemptContext,
        mode: OutputMode,
        display: &(dyn Fn(Delta<'_>) + Send + Sync),
        observed: &mut AttemptObservation,
    ) -> Result<ModelOutput, ProviderError> {
        if let Some(websocket) = &self.websocket {
            return websocket.attempt(request, context, &mut observer(observed, mode, display)).await;
        }
        let base = self.base_url.as_str();
        let (url, body) = match self.api {
            Api::Responses | Api::ResponsesWebSocket => (format!("{base}/responses"), responses::request_body(request)),
            Api::Chat => (format!("{base}/chat/completions"), chat::request_body(request)),
            Api::Messages => (format!("{base}/messages"), messages::request_body(request)),
            Api::Gemini => {
                let root = base.strip_suffix("/v1").unwrap_or(base);
                (format!("{root}{}", gemini::stream_path(&request.model)), gemini::request_body(request))
            }
            Api::Bedrock => {
                let root = base.strip_suffix("/v1").unwrap_or(base);
                (format!("{root}{}", bedrock::stream_path(&request.model)), bedrock::request_body(request))
            }
        };
        let builder = self.client.post(url).json(&body);
        let mut builder = match self.api {
            Api::Messages => builder.header("x-api-key", &self.api_key).header("anthropic-version", ANTHROPIC_VERSION),
            Api::Gemini => builder.header("x-goog-api-key", &self.api_key),
            // Bedrock's API keys are bearer tokens (no SigV4 signing needed).
            Api::Responses | Api::Chat | Api::ResponsesWebSocket | Api::Bedrock => builder.bearer_auth(&self.api_key),
        };
        if let Some(session_id) = &request.session_id {
            builder = builder.header("x-session-id", session_id);
        }
        let send = builder.send();
        let response = match context.within(send).await {
            None => return Err(classify_transport(TransportFailure::RequestTimeout, "")),
            Some(Err(e)) => return Err(transport_error(&e)),
            Some(Ok(response)) => response,
        };
        let status = response.status();
        if !status.is_success() {
            let headers = response.headers().clone();
            let body = context.within(response.text()).await.and_then(Result::ok).unwrap_or_default();
            let header = |name: &str| header(&headers, name);
            let classify = if self.api == Api::Bedrock { bedrock::classify_bedrock_status } else { classify_status };
            return Err(classify(status.as_u16(), &header, &body, context.wall_now()));
        }

        let mut observe = observer(observed, mode, display);
        let mut decoder = Decoder::new(self.api);
        let mut accumulator = Accumulator::new(self.api);
        let mut chunks = response.bytes_stream();
        loop {
            let bytes = match context.within(chunks.next()).await {
                None => return Err(classify_transport(TransportFailure::IdleTimeout, "")),
                Some(None) => return Err(classify_transport(TransportFailure::Truncated, "")),
                Some(Some(Err(e))) => return Err(transport_error(&e)),
                Some(Some(Ok(bytes))) => bytes,
            };
            let messages = decoder.push(&bytes)?;
            for message in messages {
                if accumulator.on_message(&message, &mut observe)? == Progress::Done {
                    return Ok(accumulator.into_output());
                }
            }
        }
    }
}

/// What the gate learns from each thing an attempt sees, and the deltas shown when `mode` is
/// visible.
fn observer<'a>(
    observed: &'a mut AttemptObservation,
    mode: OutputMode,
    display: &'a (dyn Fn(Delta<'_>) + Send + Sync),
) -> impl FnMut(Observed<'_>) + Send + 'a {
    move |seen| match (seen, mode) {
        (Observed::Delta(delta), OutputMode::Visible) => {
            observed.visible_output = true;
            display(delta);
        }
        (Observed::ToolCallStarted, OutputMode::Visible) => observed.tool_call_started = true,
        (_, OutputMode::Buffered) => observed.buffered_output = true,
    }
}

/// The `anthropic-version` header the Messages API requires.
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The stream's framing: server-sent events, or AWS event-stream messages (Bedrock).
enum Decoder {
    Sse(SseDecoder),
    EventStream(EventStreamDecoder),
}

impl Decoder {
    fn new(api: Api) -> Self {
        match api {
            Api::Bedrock => Decoder::EventStream(EventStreamDecoder::default()),
            _ => Decoder::Sse(SseDecoder::new()),
        }
    }

    /// The messages `bytes` complete; bytes that cannot be a stream of its framing are garbage.
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<super::sse::SseMessage>, ProviderError> {
        let garbage = |e: &dyn std::fmt::Display| classify_transport(TransportFailure::Garbage, &e.to_string());
        match self {
            Decoder::Sse(decoder) => decoder.push(bytes).map_err(|e| garbage(&e)),
            Decoder::EventStream(decoder) => decoder.push(bytes).map_err(|e| garbage(&e)),
        }
    }
}

/// One accumulator per API, behind one interface.
enum Accumulator {
    Responses(ResponsesAccumulator),
    Chat(ChatAccumulator),
    Messages(MessagesAccumulator),
    Gemini(GeminiAccumulator),
    Bedrock(BedrockAccumulator),
}

impl Accumulator {
    fn new(api: Api) -> Self {
        match api {
            Api::Responses | Api::ResponsesWebSocket => Accumulator::Responses(ResponsesAccumulator::default()),
            Api::Chat => Accumulator::Chat(ChatAccumulator::default()),
            Api::Messages => Accumulator::Messages(MessagesAccumulator::default()),
            Api::Gemini => Accumulator::Gemini(GeminiAccumulator::default()),
            Api::Bedrock => Accumulator::Bedrock(BedrockAccumulator::default()),
        }
    }

    fn on_message(
        &mut self,
        message: &super::sse::SseMessage,
        observe: &mut dyn FnMut(Observed<'_>),
    ) -> Result<Progress, ProviderError> {
        match self {
            Accumulator::Responses(a) => a.on_message(message, observe),
            Accumulator::Chat(a) => a.on_message(message, observe),
            Accumulator::Messages(a) => a.on_message(message, observe),
            Accumulator::Gemini(a) => a.on_message(message, observe),
            Accumulator::Bedrock(a) => a.on_message(message, observe),
        }
    }

    fn into_output(self) -> ModelOutput {
        match self {
            Accumulator::Responses(a) => a.into_output(),
            Accumulator::Chat(a) => a.into_output(),
            Accumulator::Messages(a) => a.into_output(),
            Accumulator::Gemini(a) => a.into_output(),
            Accumulator::Bedrock(a) => a.into_output(),
        }
    }
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
}

/// Map a reqwest failure onto the transport failures the classifier knows. Over HTTP/2 a
/// stream reset by the server (RST_STREAM, or a GOAWAY that ended it) is a reset, whatever its
/// code: the stream broke.
fn transport_error(error: &reqwest::Error) -> ProviderError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(reason) = e.downcast_ref::<h2::Error>().and_then(h2::Error::reason) {
            return classify_transport(TransportFailure::Reset, &format!("HTTP/2 stream reset: {reason:?}"));
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            let failure = match io.kind() {
                std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::ConnectionAborted => TransportFailure::Reset,
                std::io::ErrorKind::ConnectionRefused => TransportFailure::Connect,
                _ => TransportFailure::Eof,
            };
            return classify_transport(failure, &io.to_string());
        }
        source = e.source();
    }
    let failure = if error.is_connect() {
        TransportFailure::Connect
    } else if error.is_timeout() {
        TransportFailure::RequestTimeout
    } else {
        TransportFailure::Eof
    };
    classify_transport(failure, &error.to_string())
}
