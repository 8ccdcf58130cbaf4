//! Anthropic-shaped errors: `{"type": "error", "error": {"type", "message"}}`, with the error
//! type Anthropic documents for each HTTP status (`rate_limit_error` for 429,
//! `overloaded_error` for 529, ...) and for each scripted stream failure code.

use serde_json::{json, Value};

use crate::scenario_model::ErrorSpec;

/// The error `type` and default message Anthropic sends with an HTTP status.
pub(crate) fn status_defaults(status: u16) -> (&'static str, &'static str) {
    match status {
        400 => ("invalid_request_error", "Invalid request (scripted by squall)."),
        401 => ("authentication_error", "invalid x-api-key"),
        402 => ("billing_error", "Your credit balance is too low to access the Anthropic API."),
        403 => ("permission_error", "Your API key does not have permission to use the specified resource."),
        404 => ("not_found_error", "The requested resource could not be found."),
        413 => ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
        429 => ("rate_limit_error", "Number of requests has exceeded your rate limit (scripted by squall)."),
        504 => ("timeout_error", "Request timed out."),
        529 => ("overloaded_error", "Overloaded"),
        s if s >= 500 => ("api_error", "Internal server error (scripted by squall)."),
        _ => ("invalid_request_error", "Request failed (scripted by squall)."),
    }
}

/// The error type and HTTP status for a scripted failure code. Anthropic's own types are
/// taken as they are; OpenAI codes used by scenarios written for both APIs map to their
/// Anthropic counterpart; anything else is an `api_error`.
pub(crate) fn code_type_and_status(code: &str) -> (&'static str, u16) {
    match code {
        "overloaded_error" | "overloaded" => ("overloaded_error", 529),
        "rate_limit_error" | "rate_limit_exceeded" => ("rate_limit_error", 429),
        "billing_error" | "insufficient_quota" => ("billing_error", 402),
        "invalid_request_error" | "context_length_exceeded" => ("invalid_request_error", 400),
        "authentication_error" | "invalid_api_key" => ("authentication_error", 401),
        "permission_error" => ("permission_error", 403),
        "not_found_error" => ("not_found_error", 404),
        "request_too_large" => ("request_too_large", 413),
        "timeout_error" => ("timeout_error", 504),
        _ => ("api_error", 500),
    }
}

/// The default message for a scripted failure code. A context overflow reads as Anthropic
/// words it (`prompt is too long: …`), which is how clients recognise one.
pub(crate) fn code_message(code: &str) -> String {
    let (_, status) = code_type_and_status(code);
    match code {
        "overloaded_error"
        | "overloaded"
        | "rate_limit_error"
        | "rate_limit_exceeded"
        | "billing_error"
        | "insufficient_quota" => status_defaults(status).1.to_owned(),
        "context_length_exceeded" => "prompt is too long: 210000 tokens > 200000 maximum".to_owned(),
        _ => format!("Scripted failure `{code}` (squall)."),
    }
}

/// The error body of a scripted status reply. Anthropic errors have no `code`: a scripted
/// `code` that has an Anthropic counterpart (`insufficient_quota` → `billing_error`,
/// `context_length_exceeded` → `invalid_request_error` saying the prompt is too long) gives
/// the type and message; a scripted `type` and `message` win over everything.
pub(crate) fn scripted_error(status: u16, spec: Option<&ErrorSpec>) -> Value {
    let (status_kind, status_message) = status_defaults(status);
    let code = spec.and_then(|s| s.code.as_deref()).filter(|code| code_type_and_status(code).0 != "api_error");
    let kind = spec.and_then(|s| s.kind.as_deref()).or(code.map(|c| code_type_and_status(c).0)).unwrap_or(status_kind);
    let message = match (spec.and_then(|s| s.message.as_deref()), code) {
        (Some(message), _) => message.to_owned(),
        (None, Some(code)) => code_message(code),
        (None, None) => status_message.to_owned(),
    };
    error_body(kind, &message)
}

/// An Anthropic error body.
pub(crate) fn error_body(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;

    // Each status's type, over HTTP: tests/library/server_messages.rs.

    #[test]
    fn openai_codes_become_their_anthropic_counterparts() {
        let quota = ErrorSpec { code: Some("insufficient_quota".into()), ..ErrorSpec::default() };
        assert_eq!(scripted_error(429, Some(&quota))["error"]["type"], "billing_error");
        let overflow = ErrorSpec { code: Some("context_length_exceeded".into()), ..ErrorSpec::default() };
        let body = scripted_error(400, Some(&overflow));
        assert_eq!(body["error"]["type"], "invalid_request_error");
        assert!(body["error"]["message"].as_str().is_some_and(|m| m.starts_with("prompt is too long")));
    }

    #[test]
    fn a_scripted_type_and_message_win() {
        let spec =
            ErrorSpec { kind: Some("overloaded_error".into()), message: Some("busy".into()), ..ErrorSpec::default() };
        let body = scripted_error(503, Some(&spec));
        assert_eq!(body["error"], json!({"type": "overloaded_error", "message": "busy"}));
    }
}
