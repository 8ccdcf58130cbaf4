//! The run-wide conditions applied to the reply a request's track chose, in order: an outage
//! that holds the request's moment answers it; else the quota admits it (its state goes into the
//! reply's headers) or refuses it with a 429; else chaos may take it. The decisions themselves
//! are in [`crate::scenario::conditions`] and [`super::quota`]; here they become replies.

use crate::api::Api;
use crate::scenario::conditions::{chaos_taking, outage_taking, Place};
use crate::scenario::routing::{ReplySlot, TrackScript};
use crate::scenario::validate::output_deltas;
use crate::scenario::ChaosOutcome;
use crate::scenario::{Attempt, ErrorSpec, Fault, FaultKind, FaultPoint};
use crate::server::runs::Run;
use crate::wire::estimate_tokens;
use std::borrow::Cow;

/// The track, attempt and script a request gets.
pub(in crate::server) struct Chosen<'a> {
    /// The track's position, as routing numbers it.
    pub track: usize,
    pub track_name: &'a str,
    /// The herd client that sent it (`None` on the run's own base URL).
    pub client: Option<u32>,
    /// The attempt's number on its track, counted per client.
    pub attempt_number: u32,
    pub slot: ReplySlot,
    pub script: Cow<'a, Attempt>,
    /// The run-wide condition that answers instead of the track, as the journal names it.
    pub condition: Option<String>,
    /// The quota's rate-limit headers for the reply.
    pub rate_headers: Vec<(String, String)>,
}

impl Chosen<'_> {
    /// Where the request stands, as the conditions' draws know it.
    fn place(&self) -> Place<'_> {
        Place::new(self.track_name, self.attempt_number).of_client(self.client)
    }
}

/// `chosen` as the run's conditions leave it, for a request arriving `policy_ms` into the run
/// with `input_tokens` of input, speaking `api`.
pub(in crate::server) fn apply_conditions<'a>(
    run: &Run,
    track: &TrackScript<'a>,
    chosen: Chosen<'a>,
    policy_ms: f64,
    input_tokens: u64,
    api: Api,
) -> Chosen<'a> {
    if let Some(i) = outage_taking(&run.scenario.outage, policy_ms, chosen.place()) {
        let slot = ReplySlot::Outage(i);
        return Chosen { slot, script: track.attempt(slot), condition: Some(format!("outage[{i}]")), ..chosen };
    }
    let chosen = with_quota(run, chosen, policy_ms, input_tokens, api);
    if chosen.slot == ReplySlot::Made {
        return chosen;
    }
    with_chaos(run, chosen)
}

/// The quota's answer: the track's reply with the buckets' state in its headers, or a 429 that
/// says which limit refused it and when the request would fit.
fn with_quota<'a>(run: &Run, chosen: Chosen<'a>, policy_ms: f64, input_tokens: u64, api: Api) -> Chosen<'a> {
    let Some(quota) = run.quota.as_ref() else { return chosen };
    let output_tokens = chosen.script.content().text.as_deref().map_or(0, estimate_tokens);
    let admission = quota.admit(policy_ms, input_tokens + output_tokens);
    let rate_headers = admission.headers(api, run.journal.client_wall_now());
    let Some(((kind, _), message)) = admission.refused.zip(admission.message(api)) else {
        return Chosen { rate_headers, ..chosen };
    };
    // OpenAI names the limit in the error's type; Anthropic's type is `rate_limit_error` and
    // Google's status `RESOURCE_EXHAUSTED`, which the code gives them.
    let error = ErrorSpec {
        kind: matches!(api, Api::Responses | Api::Chat).then(|| kind.to_owned()),
        code: Some("rate_limit_exceeded".to_owned()),
        message: Some(message),
        param: None,
    };
    // The wait, for the Gemini API's `RetryInfo` (the header itself is in `rate_headers`).
    let wait = admission.retry_after_seconds().map(|s| ("retry-after".to_owned(), s.to_string()));
    let script = Attempt { error: Some(error), headers: wait.into_iter().collect(), ..Attempt::status(429) };
    let condition = Some(format!("quota: {kind} per minute"));
    Chosen { slot: ReplySlot::Made, script: Cow::Owned(script), condition, rate_headers, ..chosen }
}

/// A stall chaos injects lasts this long in policy time: seed 001's second rung of attempt
/// timeouts (120 s), so that a client with the ladder gives up on it.
const CHAOS_STALL_MS: u64 = 120_000;

/// The reply chaos gives the request instead of `chosen`'s, if it takes it: an error status, or
/// the track's streamed reply with a fault at a drawn output delta (a status reply is left to
/// the track).
fn with_chaos<'a>(run: &Run, chosen: Chosen<'a>) -> Chosen<'a> {
    let (Some(chaos), Some(seed)) = (run.scenario.chaos.as_ref(), run.chaos_seed) else { return chosen };
    let Some(draw) = chaos_taking(chaos, seed, chosen.place()) else { return chosen };
    let (script, what) = match draw.outcome {
        ChaosOutcome::Status(status) => (Attempt::status(status), format!("status {status}")),
        ChaosOutcome::Fault(_) if chosen.script.is_status_reply() => return chosen,
        ChaosOutcome::Fault(kind) => {
            let deltas = output_deltas(&chosen.script.content());
            let after = ((draw.point * (deltas + 1) as f64) as usize).min(deltas);
            let mut fault = Fault::at(kind, FaultPoint::Deltas(u32::try_from(after).unwrap_or(u32::MAX)));
            fault.ms = (kind == FaultKind::Stall).then_some(CHAOS_STALL_MS);
            let script = Attempt { fault: Some(fault), ..chosen.script.clone().into_owned() };
            (script, format!("{} after {after} output deltas", kind.as_str()))
        }
    };
    let condition = Some(format!("chaos (seed {seed}): {what}"));
    Chosen { slot: ReplySlot::Made, script: Cow::Owned(script), condition, ..chosen }
}
