//! Classify: is a failure *technically* retryable? One error taxonomy, named after PRD-0006.
//!
//! Pure functions from what went wrong (an HTTP status with its headers and body, a transport
//! failure, an in-stream error event) to a [`ProviderError`]. Whether a retry is *safe* is the
//! gate's question ([`crate::decide::gate`]); how long to wait is the engine's.

use std::time::Duration;

use serde_json::Value;

use crate::decide::retry_after::{
    retry_after_from_headers, retry_after_from_message, retry_after_from_retry_info, RetryAfter,
};

/// The error taxonomy. `error_type()` gives the PRD-0006 names used in events and results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// 429 (or an in-stream `rate_limit_exceeded`): `ProviderRateLimitException`.
    RateLimit,
    /// A timeout or any stream break (EOF, reset, idle timeout, truncation, garbage):
    /// `ProviderTimeoutException` (REQ-0006-010).
    Timeout,
    /// Any other HTTP failure: `ProviderHttpException`; retryable for 408/425/500/502/503/504.
    Http,
    /// `insufficient_quota`: billing, never retried.
    Quota,
    /// `context_length_exceeded`: never retried.
    ContextOverflow,
    /// 400/422 and unknown in-stream codes.
    InvalidRequest,
    /// 401.
    Auth,
    /// 403.
    Permission,
    /// 404.
    NotFound,
    /// The user cancelled.
    Cancelled,
}

impl ErrorKind {
    /// The error type observability records for the kind (`ProviderRateLimitException`, ...).
    pub fn error_type(self) -> &'static str {
        match self {
            ErrorKind::RateLimit => "ProviderRateLimitException",
            ErrorKind::Timeout => "ProviderTimeoutException",
            ErrorKind::Http => "ProviderHttpException",
            ErrorKind::Quota => "ProviderQuotaException",
            ErrorKind::ContextOverflow => "ProviderContextOverflowException",
            ErrorKind::InvalidRequest => "ProviderInvalidRequestException",
            ErrorKind::Auth => "ProviderAuthException",
            ErrorKind::Permission => "ProviderPermissionException",
            ErrorKind::NotFound => "ProviderNotFoundException",
            ErrorKind::Cancelled => "ProviderCancelledException",
        }
    }
}

/// How a stream or connection broke, before classification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportFailure {
    /// Could not connect.
    Connect,
    /// No response headers within the attempt's timeout.
    RequestTimeout,
    /// No stream event within the attempt's idle timeout.
    IdleTimeout,
    /// The body ended mid-message (FIN before the end of the chunked body).
    Eof,
    /// The connection was reset.
    Reset,
    /// The body ended cleanly without the terminal event.
    Truncated,
    /// Bytes that are not a valid event stream.
    Garbage,
}

impl TransportFailure {
    /// What failed, in words.
    pub fn describe(self) -> &'static str {
        match self {
            TransportFailure::Connect => "could not connect to the provider",
            TransportFailure::RequestTimeout => "no response from the provider within the attempt timeout",
            TransportFailure::IdleTimeout => "the provider stream went silent past the idle timeout",
            TransportFailure::Eof => "the provider stream ended mid-message (EOF)",
            TransportFailure::Reset => "the provider connection was reset (ECONNRESET)",
            TransportFailure::Truncated => "the provider stream ended without a terminal event",
            TransportFailure::Garbage => "the provider stream sent data that is not a valid event",
        }
    }
}

/// A classified provider failure.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderError {
    /// What kind of failure it is.
    pub kind: ErrorKind,
    /// The HTTP status, when the provider answered with one.
    pub status: Option<u16>,
    /// The provider's message, or what went wrong on the way.
    pub message: String,
    /// A wait the provider asked for, and where the hint came from.
    pub retry_after: Option<RetryAfter>,
    /// `x-should-retry` from the server, which overrides the status rule.
    pub should_retry: Option<bool>,
    /// The transport failure behind a `Timeout`, if any.
    pub transport: Option<TransportFailure>,
}

impl ProviderError {
    /// A failure of `kind` without a status or a retry hint.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ProviderError {
            kind,
            status: None,
            message: message.into(),
            retry_after: None,
            should_retry: None,
            transport: None,
        }
    }

    /// Its kind's error type, as observability records it.
    pub fn error_type(&self) -> &'static str {
        self.kind.error_type()
    }

    /// The user cancelled the call.
    pub fn cancelled() -> Self {
        ProviderError::new(ErrorKind::Cancelled, "cancelled by the user")
    }
}

impl std::fmt::Display for ProviderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.status {
            Some(status) => write!(f, "{}: HTTP {status}: {}", self.error_type(), self.message),
            None => write!(f, "{}: {}", self.error_type(), self.message),
        }
    }
}

impl std::error::Error for ProviderError {}

/// Statuses PRD-0006 REQ-0006-001 retries: its list "408/425/429/500/502/503/504 and such
/// temporary errors", with Anthropic's 529 (overloaded, documented as temporary) as one of them.
pub const RETRYABLE_STATUSES: [u16; 8] = [408, 425, 429, 500, 502, 503, 504, 529];

/// The fields of an error body (`{"error": {...}}`: OpenAI's, or Google's with `status` and
/// `details`) the classifier reads; the rest is skipped without being built. A body of another
/// shape reads as no fields at all.
#[derive(Debug, Default, serde::Deserialize)]
struct ErrorBody {
    #[serde(default)]
    error: ErrorFields,
}

#[derive(Debug, Default, serde::Deserialize)]
struct ErrorFields {
    code: Option<Value>,
    #[serde(rename = "type")]
    kind: Option<Value>,
    message: Option<Value>,
    /// Google's canonical status (`RESOURCE_EXHAUSTED`, `INVALID_ARGUMENT`, ...).
    status: Option<Value>,
    /// Google's details: `RetryInfo`, `QuotaFailure`, ...
    details: Option<Value>,
}

impl ErrorFields {
    /// A Google error names a quota that waiting will not refill: a per-day quota, without a
    /// `RetryInfo`.
    fn google_quota_used_up(&self) -> bool {
        let Some(details) = self.details.as_ref().and_then(Value::as_array) else { return false };
        let has = |kind: &str| details.iter().any(|d| d["@type"].as_str() == Some(kind));
        let daily = details
            .iter()
            .flat_map(|d| d["violations"].as_array().into_iter().flatten())
            .any(|v| v["quotaId"].as_str().is_some_and(|id| id.contains("PerDay")));
        daily && has("type.googleapis.com/google.rpc.QuotaFailure") && !has("type.googleapis.com/google.rpc.RetryInfo")
    }
}

/// Classify an HTTP error reply from its status, headers and body, `now` being when it came (a
/// `Retry-After` HTTP date is read against it).
pub fn classify_status(
    status: u16,
    header: &dyn Fn(&str) -> Option<String>,
    body: &str,
    now: std::time::SystemTime,
) -> ProviderError {
    let error = serde_json::from_str::<ErrorBody>(body).unwrap_or_default().error;
    let code = error.code.as_ref().and_then(Value::as_str).unwrap_or("");
    let kind_field = error.kind.as_ref().and_then(Value::as_str).unwrap_or("");
    let message =
        error.message.as_ref().and_then(Value::as_str).map_or_else(|| format!("HTTP {status}"), str::to_owned);
    let google_status = error.status.as_ref().and_then(Value::as_str).unwrap_or("");
    let kind = match (status, code, kind_field) {
        (_, "insufficient_quota", _) | (_, _, "insufficient_quota" | "billing_error") => ErrorKind::Quota,
        (429, ..) if error.google_quota_used_up() => ErrorKind::Quota,
        // Google has no code either: its context overflow names the token limit.
        (400, ..)
            if google_status == "INVALID_ARGUMENT" && message.contains("exceeds the maximum number of tokens") =>
        {
            ErrorKind::ContextOverflow
        }
        (_, "context_length_exceeded", _) => ErrorKind::ContextOverflow,
        // Anthropic has no code: a context overflow is an invalid request saying so.
        (400, _, "invalid_request_error") if message.starts_with("prompt is too long") => ErrorKind::ContextOverflow,
        (429, ..) => ErrorKind::RateLimit,
        (400 | 422, ..) => ErrorKind::InvalidRequest,
        (401, ..) => ErrorKind::Auth,
        (403, ..) => ErrorKind::Permission,
        (404, ..) => ErrorKind::NotFound,
        _ => ErrorKind::Http,
    };
    let should_retry = header("x-should-retry").and_then(|v| match v.trim() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    });
    ProviderError {
        kind,
        status: Some(status),
        message,
        retry_after: retry_after_from_headers(header, now)
            .or_else(|| error.details.as_ref().and_then(retry_after_from_retry_info)),
        should_retry,
        transport: None,
    }
}

/// Every stream break and timeout is a `ProviderTimeoutException` (REQ-0006-010).
pub fn classify_transport(failure: TransportFailure, detail: &str) -> ProviderError {
    let message =
        if detail.is_empty() { failure.describe().to_owned() } else { format!("{}: {detail}", failure.describe()) };
    ProviderError { transport: Some(failure), ..ProviderError::new(ErrorKind::Timeout, message) }
}

/// Classify an in-stream failure (`response.failed`, an `error` event, a chat error chunk).
pub fn classify_stream_error(code: &str, message: &str) -> ProviderError {
    let kind = match code {
        // OpenAI codes, and Anthropic's error types for the same failures.
        "rate_limit_exceeded" | "rate_limit_error" => ErrorKind::RateLimit,
        "insufficient_quota" | "billing_error" => ErrorKind::Quota,
        "context_length_exceeded" => ErrorKind::ContextOverflow,
        "invalid_request_error" if message.starts_with("prompt is too long") => ErrorKind::ContextOverflow,
        "server_error"
        | "internal_error"
        | "server_overloaded"
        | "service_unavailable"
        | "api_error"
        | "overloaded_error" => ErrorKind::Http,
        _ => ErrorKind::InvalidRequest,
    };
    let mut error = ProviderError::new(kind, if message.is_empty() { code.to_owned() } else { message.to_owned() });
    if kind == ErrorKind::Http {
        // An in-stream server error is the same failure as a 500 reply.
        error.status = Some(500);
    }
    if kind == ErrorKind::RateLimit {
        error.retry_after = retry_after_from_message(message);
    }
    error
}

/// Whether a failure is technically retryable: the server's `x-should-retry` first, then the
/// error kind and status. Quota, context overflow and cancellation are never retryable.
pub fn is_retryable(error: &ProviderError) -> bool {
    match error.kind {
        ErrorKind::Quota | ErrorKind::ContextOverflow | ErrorKind::Cancelled => return false,
        _ => {}
    }
    if let Some(should_retry) = error.should_retry {
        return should_retry;
    }
    match error.kind {
        ErrorKind::RateLimit | ErrorKind::Timeout => true,
        _ => error.status.is_some_and(|s| RETRYABLE_STATUSES.contains(&s)),
    }
}

/// A retry-after hint as a plain duration, for callers that do not care about the source.
pub fn retry_after_duration(error: &ProviderError) -> Option<Duration> {
    error.retry_after.map(|r| r.delay)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify_status_now(status: u16, header: &dyn Fn(&str) -> Option<String>, body: &str) -> ProviderError {
        classify_status(status, header, body, std::time::SystemTime::now())
    }

    fn no_headers(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn retryable_statuses_are_exactly_the_prd_list() {
        for status in 400..600 {
            let error = classify_status_now(status, &no_headers, "");
            assert_eq!(is_retryable(&error), RETRYABLE_STATUSES.contains(&status), "status {status}");
        }
    }

    #[test]
    fn quota_on_429_is_never_retried() {
        let body = r#"{"error": {"type": "insufficient_quota", "code": "insufficient_quota", "message": "quota"}}"#;
        let error = classify_status_now(429, &no_headers, body);
        assert_eq!(error.kind, ErrorKind::Quota);
        assert!(!is_retryable(&error));
    }

    #[test]
    fn google_errors_are_read_for_their_quota_overflow_and_retry_info() {
        let rate = r#"{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "Resource has been exhausted",
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}]}}"#;
        let error = classify_status_now(429, &no_headers, rate);
        assert_eq!(
            (error.kind, error.retry_after.map(|r| r.delay)),
            (ErrorKind::RateLimit, Some(Duration::from_secs(2)))
        );
        let daily = r#"{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "You exceeded your current quota",
            "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure",
                         "violations": [{"quotaId": "GenerateRequestsPerDayPerProjectPerModel"}]}]}}"#;
        assert_eq!(classify_status_now(429, &no_headers, daily).kind, ErrorKind::Quota);
        let overflow = r#"{"error": {"code": 400, "status": "INVALID_ARGUMENT",
            "message": "The input token count (1048577) exceeds the maximum number of tokens allowed (1048576)."}}"#;
        assert_eq!(classify_status_now(400, &no_headers, overflow).kind, ErrorKind::ContextOverflow);
    }

    #[test]
    fn error_bodies_of_any_shape_are_read_for_what_they_have() {
        let none = |_: &str| None;
        let quota =
            classify_status_now(429, &none, r#"{"error": {"code": "insufficient_quota", "param": [1, {"x": 2}]}}"#);
        assert_eq!((quota.kind, quota.message.as_str()), (ErrorKind::Quota, "HTTP 429"));
        let numeric = classify_status_now(503, &none, r#"{"error": {"code": 42, "type": null, "message": "busy"}}"#);
        assert_eq!((numeric.kind, numeric.message.as_str()), (ErrorKind::Http, "busy"));
        for odd in [r#"{"error": "oops"}"#, r#"{"error": null}"#, "[1, 2]", "<html>502</html>", ""] {
            let error = classify_status_now(502, &none, odd);
            assert_eq!((error.kind, error.message.as_str()), (ErrorKind::Http, "HTTP 502"), "{odd}");
        }
    }

    #[test]
    fn x_should_retry_overrides_the_status_rule() {
        let yes = |name: &str| (name == "x-should-retry").then(|| "true".to_owned());
        let no = |name: &str| (name == "x-should-retry").then(|| "false".to_owned());
        assert!(is_retryable(&classify_status_now(409, &yes, "")));
        assert!(!is_retryable(&classify_status_now(503, &no, "")));
    }

    #[test]
    fn every_stream_break_is_a_retryable_timeout() {
        for failure in [
            TransportFailure::Eof,
            TransportFailure::Reset,
            TransportFailure::IdleTimeout,
            TransportFailure::Truncated,
            TransportFailure::Garbage,
            TransportFailure::RequestTimeout,
        ] {
            let error = classify_transport(failure, "");
            assert_eq!(error.error_type(), "ProviderTimeoutException");
            assert!(is_retryable(&error));
        }
    }

    #[test]
    fn in_stream_rate_limit_carries_the_asked_delay() {
        let error = classify_stream_error("rate_limit_exceeded", "Rate limit reached. Please try again in 1.5s.");
        assert_eq!(error.kind, ErrorKind::RateLimit);
        assert_eq!(retry_after_duration(&error), Some(Duration::from_millis(1500)));
        assert!(is_retryable(&classify_stream_error("server_error", "")));
        assert!(!is_retryable(&classify_stream_error("context_length_exceeded", "")));
    }
}
