//! Reuse squall's scenarios in wiremock-rs tests (feature `wiremock`).
//!
//! [`ScenarioResponder`] turns a scenario's attempts into a [`::wiremock::Respond`] that answers
//! the n-th request with the n-th attempt — statuses with their headers and error bodies, whole
//! bodies (streamed or not, in the API the request's path speaks: Responses, Chat Completions,
//! Messages, Gemini, Ollama's chat and generate, Bedrock's Converse), `delay_ms`, and the
//! faults that end a body cleanly (`truncate`, `garbage`). wiremock sends whole bodies, so
//! faults *inside* a body (`reset`, `eof`, `stall`, event delays) are refused with an error that
//! names them and points to squall's own server ([`crate::embedded::MockProvider`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use ::wiremock::{Request, Respond, ResponseTemplate};
use bytes::Bytes;
use serde_json::Value;

use crate::api::Api;
use crate::scenario::headers::parse_header_template;
use crate::scenario::routing::TrackScript;
use crate::scenario::{AfterScript, Attempt, FaultKind, Scenario};
use crate::wire::plan::Step;
use crate::wire::reply::build_reply;
use crate::wire::{estimate_tokens, ReplyContext};

/// A scenario attempt wiremock cannot play.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} of scenario `{scenario}` uses {what}, which wiremock cannot express (it answers request by request, with whole bodies); run this scenario against squall's server instead: squall::embedded::MockProvider::start()", place(*attempt))]
pub struct Unsupported {
    /// The scenario's name.
    pub scenario: String,
    /// 1-based; 0 for what applies to the whole run (an `outage`).
    pub attempt: usize,
    /// The feature at fault, e.g. "fault `reset`".
    pub what: String,
}

/// "attempt 3", or "the whole run" for attempt 0.
fn place(attempt: usize) -> String {
    match attempt {
        0 => "the whole run".to_owned(),
        n => format!("attempt {n}"),
    }
}

/// Answers the n-th request with the scenario's n-th attempt (then its `after` rule).
#[derive(Debug)]
pub struct ScenarioResponder {
    name: String,
    attempts: Vec<Attempt>,
    after: AfterScript,
    served: AtomicUsize,
}

impl ScenarioResponder {
    /// The default track of `scenario`; fails on the first attempt wiremock cannot play, and on
    /// run-wide conditions (outages and quotas answer by run time, chaos by track and attempt,
    /// which wiremock does not keep).
    pub fn new(scenario: &Scenario) -> Result<Self, Unsupported> {
        let run_wide = [
            (!scenario.outage.is_empty(), "`outage` windows"),
            (scenario.chaos.is_some(), "`chaos`"),
            (scenario.quota.is_some(), "a `quota`"),
        ];
        if let Some((_, what)) = run_wide.iter().find(|(used, _)| *used) {
            return Err(Unsupported { scenario: scenario.name.clone(), attempt: 0, what: (*what).to_owned() });
        }
        for (i, attempt) in scenario.attempts.iter().enumerate() {
            let refuse = |what: String| Unsupported { scenario: scenario.name.clone(), attempt: i + 1, what };
            if let Some(fault) = &attempt.fault {
                // What a WireMock response cannot do: cut the connection, refuse the stream, or
                // go away (a graceful `goaway` closes the connection after the reply).
                if matches!(
                    fault.kind,
                    FaultKind::Reset
                        | FaultKind::Eof
                        | FaultKind::Stall
                        | FaultKind::Refuse
                        | FaultKind::Goaway
                        | FaultKind::Close
                ) {
                    return Err(refuse(format!("fault `{}`", fault.kind.as_str())));
                }
            }
            if attempt.event_delay_ms() > 0 {
                return Err(refuse("`event_delay_ms`".to_owned()));
            }
        }
        Ok(ScenarioResponder {
            name: scenario.name.clone(),
            attempts: scenario.attempts.clone(),
            after: scenario.after,
            served: AtomicUsize::new(0),
        })
    }

    /// How many requests were answered.
    pub fn served(&self) -> usize {
        self.served.load(Ordering::SeqCst)
    }
}

impl Respond for ScenarioResponder {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let n = self.served.fetch_add(1, Ordering::SeqCst);
        let track =
            TrackScript { name: "default", index: 0, attempts: &self.attempts, after: self.after, outages: &[] };
        let script = track.attempt(track.slot_for(n as u32)).into_owned();
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let (api, by_path) = Api::ending_path(request.url.path()).unwrap_or((Api::Responses, None));
        let stream = by_path.map_or(body["stream"].as_bool().unwrap_or(api.streams_by_default()), |(stream, _)| stream);
        let model = by_path.map(|(_, model)| model).or(body["model"].as_str()).unwrap_or(api.default_model());
        let ctx = ReplyContext {
            id_seed: format!("{}_{n}", self.name),
            model: model.to_owned(),
            created_at: SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
            input_tokens: estimate_tokens(&String::from_utf8_lossy(&request.body)),
            include_usage: body.pointer("/stream_options/include_usage").and_then(Value::as_bool) == Some(true),
        };
        let reply = build_reply(&script, api, stream, &ctx, crate::clock::TimeScale::REAL);
        let mut bytes = Vec::new();
        for step in reply.plan.steps {
            if let Step::Data { bytes: data, .. } = step {
                bytes.extend_from_slice(&data);
            }
        }
        let mut template =
            ResponseTemplate::new(reply.status.as_u16()).set_body_raw(Bytes::from(bytes).to_vec(), reply.content_type);
        for (name, value) in &reply.headers {
            template = template.insert_header(*name, value.as_str());
        }
        let now = SystemTime::now();
        for (name, value) in &script.headers {
            if let Ok(template_value) = parse_header_template(value) {
                template = template.insert_header(name.as_str(), template_value.render(now).as_str());
            }
        }
        if let Some(ms) = script.delay_ms {
            template = template.set_delay(Duration::from_millis(ms));
        }
        template
    }
}
