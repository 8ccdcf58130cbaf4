//! Small HTTP helpers shared by the admin API and the model endpoints: JSON replies,
//! OpenAI-shaped errors and bounded request bodies.

use std::collections::BTreeMap;
use std::io;

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{HeaderMap, Response, StatusCode};
use serde_json::Value;

use crate::wire::errors::error_body;

/// Every response body squall sends.
pub type ResponseBody = BoxBody<Bytes, io::Error>;

/// A JSON reply.
pub fn json(status: StatusCode, value: &Value) -> Response<ResponseBody> {
    let bytes = Bytes::from(value.to_string());
    let mut response = Response::new(Full::new(bytes).map_err(|never| match never {}).boxed());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("application/json"));
    response
}

/// An error in OpenAI's shape: `{"error": {"message", "type", "param", "code"}}`.
pub fn openai_error(status: StatusCode, message: &str, code: &str, param: Option<&str>) -> Response<ResponseBody> {
    let kind = if status.is_server_error() { "server_error" } else { "invalid_request_error" };
    json(status, &error_body(message, kind, param, Some(code)))
}

/// Why a request body could not be read.
#[derive(Debug)]
pub enum BodyError {
    TooLarge {
        limit: usize,
    },
    /// The client went away or sent a broken body.
    Broken(String),
}

/// Read a whole request body, refusing more than `limit` bytes.
pub async fn read_body(body: Incoming, limit: usize) -> Result<Bytes, BodyError> {
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(BodyError::TooLarge { limit }),
        Err(e) => Err(BodyError::Broken(e.to_string())),
    }
}

impl BodyError {
    pub fn into_response(self) -> Response<ResponseBody> {
        match self {
            BodyError::TooLarge { limit } => openai_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("The request body is larger than the server's limit of {limit} bytes."),
                "request_too_large",
                None,
            ),
            BodyError::Broken(reason) => openai_error(
                StatusCode::BAD_REQUEST,
                &format!("The request body could not be read: {reason}"),
                "invalid_body",
                None,
            ),
        }
    }
}

/// Request headers as a sorted map with lower-case names (values that are not text are
/// shown lossily). `authorization` is kept: squall only ever sees test keys.
pub fn header_map(headers: &HeaderMap) -> BTreeMap<String, String> {
    headers
        .iter()
        .map(|(name, value)| (name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
        .collect()
}
