//! What a scripted attempt answers to one request — status, content type, and the plan of the
//! body with its fault — for either model API, streamed or not. Pure: the server plays the plan
//! on a socket, the wiremock bridge and the fuzz targets read it.

use bytes::Bytes;
use http::StatusCode;

use super::errors::{code_message, code_type_and_status, error_body, scripted_error};
use super::plan::{plan_body, plan_events, scaled_ms, ReplyPlan};
use super::{chat, responses, ReplyContext};
use crate::journal::EndKind;
use crate::scenario::Attempt;

/// Which model API a request speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// `POST /responses`.
    Responses,
    /// `POST /chat/completions`.
    Chat,
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
}

/// What the script answers to a request of this API, streamed or not.
pub fn build_reply(script: &Attempt, api: Api, wants_stream: bool, ctx: &ReplyContext, time_scale: f64) -> Reply {
    let fault = script.fault.as_ref();
    const JSON: &str = "application/json";
    if script.is_status_reply() {
        let status = script.status_code();
        let body = match &script.body {
            Some(raw) => Bytes::from(raw.clone()),
            None => Bytes::from(scripted_error(status, script.error.as_ref()).to_string()),
        };
        return Reply {
            status: StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            content_type: JSON,
            plan: plan_body(body, EndKind::ErrorStatus, fault, time_scale),
        };
    }
    let content = script.content();
    if wants_stream {
        let events = match api {
            Api::Responses => responses::stream_events(&content, ctx),
            Api::Chat => chat::stream_events(&content, ctx),
        };
        let delay = scaled_ms(script.event_delay_ms(), time_scale);
        return Reply {
            status: StatusCode::OK,
            content_type: "text/event-stream; charset=utf-8",
            plan: plan_events(&events, fault, delay, time_scale),
        };
    }
    if let Some(failure) = &content.fail {
        // Without streaming, a provider reports the same failure as an error status.
        let (kind, status) = code_type_and_status(&failure.code);
        let message = failure.message.clone().unwrap_or_else(|| code_message(&failure.code));
        let body = Bytes::from(error_body(&message, kind, None, Some(&failure.code)).to_string());
        return Reply {
            status: StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            content_type: JSON,
            plan: plan_body(body, EndKind::ErrorStatus, fault, time_scale),
        };
    }
    let object = match api {
        Api::Responses => responses::response_object(&content, ctx),
        Api::Chat => chat::completion_object(&content, ctx),
    };
    Reply {
        status: StatusCode::OK,
        content_type: JSON,
        plan: plan_body(Bytes::from(object.to_string()), EndKind::Completed, fault, time_scale),
    }
}
