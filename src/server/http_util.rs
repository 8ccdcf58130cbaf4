//! Small HTTP helpers shared by the admin API and the model endpoints: JSON replies,
//! OpenAI- and Anthropic-shaped errors and bounded request bodies.

use std::io;

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Response, StatusCode};
use serde_json::Value;

use crate::api::Api;
use crate::wire::errors::error_body;
use crate::wire::{anthropic_errors, gemini_errors};

/// Every response body squall sends.
pub(super) type ResponseBody = BoxBody<Bytes, io::Error>;

/// A JSON reply.
pub(super) fn json(status: StatusCode, value: &Value) -> Response<ResponseBody> {
    let bytes = Bytes::from(value.to_string());
    let mut response = Response::new(Full::new(bytes).map_err(|never| match never {}).boxed());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("application/json"));
    response
}

/// An error in OpenAI's shape: `{"error": {"message", "type", "param", "code"}}`.
pub(super) fn openai_error(
    status: StatusCode,
    message: &str,
    code: &str,
    param: Option<&str>,
) -> Response<ResponseBody> {
    let kind = if status.is_server_error() { "server_error" } else { "invalid_request_error" };
    json(status, &error_body(message, kind, param, Some(code)))
}

/// A refusal of a model request, in the shape of the API it was sent to: Anthropic's for
/// the Messages API, Google's for the Gemini API, Ollama's for its APIs, AWS's for Bedrock's
/// (with `x-amzn-errortype`), OpenAI's for the others
/// and for paths that are no API.
pub(super) fn model_api_error(
    api: Option<Api>,
    status: StatusCode,
    message: &str,
    code: &str,
) -> Response<ResponseBody> {
    match api {
        Some(Api::Messages) => {
            let (kind, _) = anthropic_errors::status_defaults(status.as_u16());
            json(status, &anthropic_errors::error_body(kind, message))
        }
        Some(Api::Gemini) => {
            let (name, _) = gemini_errors::status_defaults(status.as_u16());
            json(status, &gemini_errors::error_body(status.as_u16(), name, message, Vec::new()))
        }
        Some(Api::OllamaChat | Api::OllamaGenerate) => json(status, &crate::wire::ollama::error_body(message)),
        Some(api @ (Api::Bedrock | Api::BedrockInvoke)) => {
            let mut response = json(status, &serde_json::json!({"message": message}));
            insert_api_headers(response.headers_mut(), &api.error_headers(status.as_u16(), None));
            response
        }
        _ => openai_error(status, message, code, None),
    }
}

/// An API's own headers for a reply (Bedrock's `x-amzn-errortype`), those that are valid values.
pub(super) fn insert_api_headers(out: &mut hyper::HeaderMap, headers: &[(&'static str, String)]) {
    for (name, value) in headers {
        if let Ok(value) = hyper::header::HeaderValue::from_str(value) {
            out.insert(*name, value);
        }
    }
}

/// Why a request body could not be read.
#[derive(Debug)]
pub(super) enum BodyError {
    TooLarge {
        limit: usize,
    },
    /// The client sent a broken body.
    Broken(String),
    /// The client went away before its body was complete.
    ClientLeft,
}

/// Whether a request declares a body over `limit` and waits for `100 Continue` before sending
/// it: such a request is refused at once, without inviting the body.
pub(super) fn declares_too_large(headers: &hyper::HeaderMap, limit: usize) -> bool {
    let expects_continue =
        headers.get(hyper::header::EXPECT).is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    let declared = headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    expects_continue && declared.is_some_and(|length| length > limit as u64)
}

/// After a body passed its limit, this much more of it is read and thrown away, within
/// [`DRAIN_TIME`], so that a client that writes its whole body before reading the reply gets
/// the 413 instead of a broken pipe. Past either bound the connection is closed.
pub(super) const DRAIN_BYTES: usize = 256 * 1024 * 1024;
/// See [`DRAIN_BYTES`].
pub(super) const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(30);

/// Read a whole request body, refusing more than `limit` bytes.
pub(super) async fn read_body(mut body: Incoming, limit: usize) -> Result<Bytes, BodyError> {
    let mut kept = Vec::new();
    loop {
        match body.frame().await {
            None => return Ok(Bytes::from(kept)),
            Some(Err(e)) => {
                let left = e.is_incomplete_message()
                    || std::error::Error::source(&e).is_some_and(|source| source.is::<io::Error>());
                return Err(if left { BodyError::ClientLeft } else { BodyError::Broken(e.to_string()) });
            }
            Some(Ok(frame)) => {
                let Ok(data) = frame.into_data() else { continue };
                if kept.len() + data.len() > limit {
                    drain(body, data.len()).await;
                    return Err(BodyError::TooLarge { limit });
                }
                kept.extend_from_slice(&data);
            }
        }
    }
}

/// Read and discard the rest of a body, up to [`DRAIN_BYTES`] and [`DRAIN_TIME`].
async fn drain(mut body: Incoming, mut drained: usize) {
    let reading = async {
        while drained <= DRAIN_BYTES {
            match body.frame().await {
                Some(Ok(frame)) => drained += frame.data_ref().map_or(0, Bytes::len),
                _ => break,
            }
        }
    };
    let _ = tokio::time::timeout(DRAIN_TIME, reading).await;
}

impl BodyError {
    pub(super) fn into_response(self, api: Option<Api>) -> Response<ResponseBody> {
        match self {
            BodyError::TooLarge { limit } => {
                let mut refusal = model_api_error(
                    api,
                    StatusCode::PAYLOAD_TOO_LARGE,
                    &format!("The request body is larger than the server's limit of {limit} bytes."),
                    "request_too_large",
                );
                // The body was not read (or not all of it): the connection cannot carry another request.
                refusal
                    .headers_mut()
                    .insert(hyper::header::CONNECTION, hyper::header::HeaderValue::from_static("close"));
                refusal
            }
            BodyError::ClientLeft => model_api_error(
                api,
                StatusCode::BAD_REQUEST,
                "The client closed the connection before its request body was complete.",
                "incomplete_body",
            ),
            BodyError::Broken(reason) => model_api_error(
                api,
                StatusCode::BAD_REQUEST,
                &format!("The request body could not be read: {reason}"),
                "invalid_body",
            ),
        }
    }
}
