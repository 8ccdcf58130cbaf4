//! Google-shaped errors, as the Gemini API sends them:
//! `{"error": {"code", "message", "status", "details"}}`, with the canonical status Google maps
//! each HTTP status to (`RESOURCE_EXHAUSTED` for 429, `UNAVAILABLE` for 503, ...), the failure
//! codes scenarios share with the other APIs mapped to their Gemini counterpart, and a
//! `google.rpc.RetryInfo` detail carrying the wait a scripted `retry-after` asks for.

use serde_json::{json, Value};

use crate::scenario_model::{Attempt, ErrorSpec};

/// The canonical `status` and default message Google sends with an HTTP status.
pub(crate) fn status_defaults(status: u16) -> (&'static str, &'static str) {
    match status {
        400 | 413 | 422 => ("INVALID_ARGUMENT", "Request contains an invalid argument."),
        401 => ("UNAUTHENTICATED", "API key not valid. Please pass a valid API key."),
        403 => ("PERMISSION_DENIED", "The caller does not have permission."),
        404 => ("NOT_FOUND", "Requested entity was not found."),
        408 | 504 => ("DEADLINE_EXCEEDED", "Deadline expired before operation could complete."),
        409 => ("ABORTED", "The operation was aborted."),
        429 => ("RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
        499 => ("CANCELLED", "The operation was cancelled."),
        501 => ("UNIMPLEMENTED", "The operation is not implemented."),
        502 | 503 | 529 => ("UNAVAILABLE", "The model is overloaded. Please try again later."),
        s if s >= 500 => ("INTERNAL", "An internal error has occurred (scripted by squall). Please retry."),
        _ => ("FAILED_PRECONDITION", "Request failed (scripted by squall)."),
    }
}

/// The HTTP status of a failure code scenarios share with the other APIs (OpenAI's codes,
/// Anthropic's types and Google's own statuses alike); anything else is a 500.
pub(crate) fn code_status(code: &str) -> u16 {
    match code {
        "rate_limit_exceeded" | "rate_limit_error" | "insufficient_quota" | "billing_error" | "RESOURCE_EXHAUSTED" => {
            429
        }
        "context_length_exceeded" | "invalid_request_error" | "INVALID_ARGUMENT" => 400,
        "overloaded_error" | "overloaded" | "UNAVAILABLE" => 503,
        "invalid_api_key" | "authentication_error" | "UNAUTHENTICATED" => 401,
        "permission_error" | "PERMISSION_DENIED" => 403,
        "timeout_error" | "DEADLINE_EXCEEDED" => 504,
        _ => 500,
    }
}

/// The message of a failure code. A quota that is used up and a context overflow read as the
/// Gemini API words them, which is how clients tell them from a rate limit and a bad request.
pub(crate) fn code_message(code: &str) -> String {
    match code {
        "insufficient_quota" | "billing_error" => {
            "You exceeded your current quota, please check your plan and billing details.".to_owned()
        }
        "context_length_exceeded" => {
            "The input token count (1048577) exceeds the maximum number of tokens allowed (1048576).".to_owned()
        }
        other => match code_status(other) {
            500 => format!("Scripted failure `{other}` (squall)."),
            status => status_defaults(status).1.to_owned(),
        },
    }
}

/// The details of a failure code: a used-up quota is a daily quota (no `RetryInfo`: waiting a
/// minute will not help); nothing else carries any.
fn code_details(code: &str) -> Vec<Value> {
    match code {
        "insufficient_quota" | "billing_error" => vec![json!({
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            "violations": [{
                "quotaMetric": "generativelanguage.googleapis.com/generate_content_requests",
                "quotaId": "GenerateRequestsPerDayPerProjectPerModel",
            }],
        })],
        _ => Vec::new(),
    }
}

/// The error body of a scripted status reply: a scripted `message` wins, then a scripted `code`
/// (`insufficient_quota`, `context_length_exceeded`, ...), then the status's default; a scripted
/// `type` is taken as the canonical status. A `retry-after` or `retry-after-ms` header the attempt
/// sends becomes a `RetryInfo` detail with the same wait.
pub(crate) fn scripted_error(status: u16, attempt: &Attempt) -> Value {
    let spec: Option<&ErrorSpec> = attempt.error.as_ref();
    let (status_name, status_message) = status_defaults(status);
    let code = spec.and_then(|s| s.code.as_deref());
    let name = spec.and_then(|s| s.kind.as_deref()).unwrap_or(status_name);
    let message = match (spec.and_then(|s| s.message.as_deref()), code) {
        (Some(message), _) => message.to_owned(),
        (None, Some(code)) if code_status(code) == status => code_message(code),
        _ => status_message.to_owned(),
    };
    let mut details = code.map(code_details).unwrap_or_default();
    details.extend(retry_info(attempt));
    error_body(status, name, &message, details)
}

/// The error of a scripted in-stream failure, and its HTTP status when sent without a stream.
pub(crate) fn failure_error(code: &str, message: Option<&str>) -> (u16, Value) {
    let status = code_status(code);
    let message = message.map_or_else(|| code_message(code), str::to_owned);
    (status, error_body(status, status_defaults(status).0, &message, code_details(code)))
}

/// A Google error body.
pub(crate) fn error_body(code: u16, status: &str, message: &str, details: Vec<Value>) -> Value {
    let mut error = json!({"code": code, "message": message, "status": status});
    if !details.is_empty() {
        error["details"] = Value::Array(details);
    }
    json!({"error": error})
}

/// A `RetryInfo` detail for the wait an attempt's `retry-after-ms` or `retry-after` (seconds)
/// header asks for; an HTTP-date is left to the header.
fn retry_info(attempt: &Attempt) -> Option<Value> {
    let header = |name: &str| attempt.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.trim());
    let seconds = header("retry-after-ms")
        .and_then(|ms| ms.parse::<f64>().ok())
        .map(|ms| ms / 1000.0)
        .or_else(|| header("retry-after").and_then(|s| s.parse::<f64>().ok()))
        .filter(|s| s.is_finite() && *s >= 0.0)?;
    Some(json!({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": duration_text(seconds)}))
}

/// A protobuf `Duration` in JSON: seconds with up to nine fractional digits and an `s`.
fn duration_text(seconds: f64) -> String {
    let text = format!("{seconds:.9}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}s")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(status: u16, headers: &[(&str, &str)], code: Option<&str>) -> Attempt {
        Attempt {
            status: Some(status),
            headers: headers.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
            error: code.map(|c| ErrorSpec { code: Some(c.to_owned()), ..ErrorSpec::default() }),
            ..Attempt::default()
        }
    }

    #[test]
    fn each_status_has_googles_canonical_name() {
        for (status, name) in [
            (429, "RESOURCE_EXHAUSTED"),
            (503, "UNAVAILABLE"),
            (500, "INTERNAL"),
            (400, "INVALID_ARGUMENT"),
            (504, "DEADLINE_EXCEEDED"),
        ] {
            let body = scripted_error(status, &attempt(status, &[], None));
            assert_eq!(
                (body["error"]["code"].as_u64(), body["error"]["status"].as_str()),
                (Some(u64::from(status)), Some(name))
            );
        }
    }

    #[test]
    fn a_scripted_retry_after_becomes_retry_info() {
        let seconds = scripted_error(429, &attempt(429, &[("Retry-After", "2")], None));
        assert_eq!(seconds["error"]["details"][0]["retryDelay"], "2s");
        let ms = scripted_error(429, &attempt(429, &[("retry-after-ms", "1500")], None));
        assert_eq!(ms["error"]["details"][0]["retryDelay"], "1.5s");
        let date = scripted_error(429, &attempt(429, &[("retry-after", "@now+3s")], None));
        assert!(date["error"].get("details").is_none(), "{date}");
    }

    #[test]
    fn a_used_up_quota_says_so_and_asks_for_no_retry() {
        let body = scripted_error(429, &attempt(429, &[], Some("insufficient_quota")));
        assert!(body["error"]["message"].as_str().is_some_and(|m| m.contains("check your plan and billing")));
        assert_eq!(body["error"]["details"][0]["@type"], "type.googleapis.com/google.rpc.QuotaFailure");
        let (status, overflow) = failure_error("context_length_exceeded", None);
        assert_eq!((status, overflow["error"]["status"].as_str()), (400, Some("INVALID_ARGUMENT")));
    }
}
