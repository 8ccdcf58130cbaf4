//! OpenAI-shaped error bodies: `{"error": {"message", "type", "param", "code"}}`, with the
//! defaults a real provider sends for each status and error code.

use serde_json::{json, Value};

use crate::scenario_model::ErrorSpec;

/// The default `(type, code, message)` for an HTTP status.
pub(crate) fn status_defaults(status: u16) -> (&'static str, Option<&'static str>, &'static str) {
    match status {
        400 => ("invalid_request_error", None, "Invalid request (scripted by squall)."),
        401 => ("invalid_request_error", Some("invalid_api_key"), "Incorrect API key provided."),
        403 => (
            "invalid_request_error",
            Some("unsupported_country_region_territory"),
            "Permission denied (scripted by squall).",
        ),
        404 => (
            "invalid_request_error",
            Some("model_not_found"),
            "The model does not exist or you do not have access to it.",
        ),
        408 => ("timeout", Some("timeout"), "Request timed out."),
        409 => ("invalid_request_error", Some("conflict"), "Conflict (scripted by squall)."),
        413 => ("invalid_request_error", Some("request_too_large"), "Request body too large."),
        422 => ("invalid_request_error", Some("unprocessable_entity"), "Unprocessable entity (scripted by squall)."),
        425 => ("server_error", Some("too_early"), "Too early; retry the request."),
        429 => ("requests", Some("rate_limit_exceeded"), "Rate limit reached for requests. Please try again in 1s."),
        500 => (
            "server_error",
            Some("server_error"),
            "The server had an error while processing your request. Sorry about that!",
        ),
        502 => ("server_error", Some("bad_gateway"), "Bad gateway."),
        503 => {
            ("server_error", Some("service_unavailable"), "The engine is currently overloaded, please try again later.")
        }
        504 => ("server_error", Some("gateway_timeout"), "Gateway timeout."),
        s if s >= 500 => ("server_error", Some("server_error"), "Server error (scripted by squall)."),
        _ => ("invalid_request_error", None, "Request failed (scripted by squall)."),
    }
}

/// The default message for an error code used in stream failures.
pub(crate) fn code_message(code: &str) -> String {
    match code {
        "rate_limit_exceeded" => "Rate limit reached for requests. Please try again in 1s.".to_owned(),
        "server_error" => "The server had an error while processing your request. Sorry about that!".to_owned(),
        "insufficient_quota" => {
            "You exceeded your current quota, please check your plan and billing details.".to_owned()
        }
        "context_length_exceeded" => {
            "Your input exceeds the context window of this model. Please adjust your input and try again.".to_owned()
        }
        other => format!("Scripted failure `{other}` (squall)."),
    }
}

/// The `type` and HTTP status a real provider uses for an error code.
pub(crate) fn code_type_and_status(code: &str) -> (&'static str, u16) {
    match code {
        "rate_limit_exceeded" => ("requests", 429),
        "insufficient_quota" => ("insufficient_quota", 429),
        "context_length_exceeded" => ("invalid_request_error", 400),
        "invalid_api_key" => ("invalid_request_error", 401),
        _ => ("server_error", 500),
    }
}

/// The error body of a scripted status reply.
pub(crate) fn scripted_error(status: u16, spec: Option<&ErrorSpec>) -> Value {
    let (kind, code, message) = status_defaults(status);
    let spec = spec.cloned().unwrap_or_default();
    if spec.code.as_deref() == Some(CONTENT_FILTER) {
        return content_filter_error(status, &spec);
    }
    let code = spec.code.or(code.map(str::to_owned));
    let kind = match (&spec.kind, code.as_deref()) {
        (Some(kind), _) => kind.clone(),
        (None, Some("insufficient_quota")) => "insufficient_quota".to_owned(),
        _ => kind.to_owned(),
    };
    let message = spec.message.unwrap_or_else(|| match code.as_deref() {
        Some(code @ ("insufficient_quota" | "context_length_exceeded")) => code_message(code),
        _ => message.to_owned(),
    });
    error_body(&message, &kind, spec.param.as_deref(), code.as_deref())
}

/// The code of Azure OpenAI's content-filter refusal.
const CONTENT_FILTER: &str = "content_filter";

/// Azure OpenAI's refusal of a prompt its content filter flagged, as Azure sends it: the OpenAI
/// shape with `type` null, `param` "prompt", the `status`, and an `innererror` naming the policy
/// and each category's result (here, a jailbreak detected).
fn content_filter_error(status: u16, spec: &ErrorSpec) -> Value {
    let message = spec.message.clone().unwrap_or_else(|| {
        "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. \
         Please modify your prompt and retry."
            .to_owned()
    });
    let safe = json!({"filtered": false, "severity": "safe"});
    json!({"error": {
        "message": message,
        "type": spec.kind,
        "param": spec.param.as_deref().unwrap_or("prompt"),
        "code": CONTENT_FILTER,
        "status": status,
        "innererror": {
            "code": "ResponsibleAIPolicyViolation",
            "content_filter_result": {
                "hate": safe, "self_harm": safe, "sexual": safe, "violence": safe,
                "jailbreak": {"filtered": true, "detected": true},
            },
        },
    }})
}

/// An OpenAI error body.
pub(crate) fn error_body(message: &str, kind: &str, param: Option<&str>, code: Option<&str>) -> Value {
    json!({"error": {"message": message, "type": kind, "param": param, "code": code}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quota_error_keeps_its_own_type() {
        let spec = ErrorSpec { code: Some("insufficient_quota".into()), ..ErrorSpec::default() };
        let body = scripted_error(429, Some(&spec));
        assert_eq!(body["error"]["type"], "insufficient_quota");
        assert_eq!(body["error"]["code"], "insufficient_quota");
    }

    #[test]
    fn a_content_filter_refusal_has_azures_inner_error() {
        let spec = ErrorSpec { code: Some("content_filter".into()), ..ErrorSpec::default() };
        let body = scripted_error(400, Some(&spec));
        assert_eq!(body["error"]["innererror"]["code"], "ResponsibleAIPolicyViolation");
        assert_eq!((body["error"]["param"].as_str(), body["error"]["status"].as_u64()), (Some("prompt"), Some(400)));
        assert!(body["error"]["type"].is_null(), "Azure sends no type");
    }

    #[test]
    fn every_field_of_the_shape_is_present() {
        let body = scripted_error(503, None);
        let error = body["error"].as_object().expect("object");
        for key in ["message", "type", "param", "code"] {
            assert!(error.contains_key(key), "missing {key}");
        }
    }
}
