//! Given: how the provider behaves on each attempt, and how the implementation is set up.

use std::sync::OnceLock;

use regex::Regex;

use crate::checks::{arg, number as num, Args};
use crate::script::CaseSetup;
use squall::clock::TimeScale;
use squall::scenario::{
    Attempt, ErrorSpec, Fault, FaultKind, FaultPoint, FunctionCallSpec, Outage, Quota, StreamFailure, StreamSpec,
};

/// What a Given step does to the case's setup, with the step's arguments (`[0]` is its text).
pub(crate) type GivenFn = fn(&mut CaseSetup, &Args);

pub(super) const STEPS: &[(&str, GivenFn)] = &[
    (r#"^attempt (\d+) answers with status (\d+)$"#, status),
    (r#"^attempt (\d+) answers with status (\d+) and header "([^"]+)" set to "([^"]*)"$"#, status_with_header),
    (r#"^attempt (\d+) answers with status (\d+) and error code "([^"]+)"$"#, status_with_code),
    (r#"^every attempt answers with status (\d+)$"#, every_status),
    (r#"^attempt (\d+) sends no headers for (\d+) seconds$"#, no_headers),
    (r#"^every attempt sends no headers for (\d+) seconds$"#, every_no_headers),
    (r#"^attempt (\d+) succeeds(?: with "([^"]*)")?$"#, succeeds),
    (
        r#"^the provider breaks the stream with "(eof|reset|truncate|stall|garbage)" (.+) on (?:attempt (\d+)|(every) attempt)$"#,
        breaks,
    ),
    (r#"^the provider resets the stream (.+) on attempt (\d+)$"#, resets),
    (r#"^attempt (\d+) streams "([^"]*)" and breaks with "(eof|reset)" (.+)$"#, text_then_break),
    (r#"^attempt (\d+) streams a call to tool "([^"]+)" and breaks with "(eof|reset)" (.+)$"#, call_then_break),
    (r#"^attempt (\d+) fails in the stream with "([^"]+)"(?: and message "([^"]*)")?$"#, stream_failure),
    (r#"^the scenario "([^"]+)"$"#, catalogue),
    (r#"^the implementation runs with the "([^"]+)" profile$"#, profile),
    (r#"^a fallback answering "([^"]*)" is attached$"#, fallback),
    (r"^the implementation is configured with maxRetries = (\d+)$", max_retries),
    (r"^timing is measured at 1/(\d+) of real time$", time_scale),
    (r"^an outage answers every model request with status (\d+) for the whole run$", outage),
    (r"^a quota shared by every client admits (\d+) requests? a minute$", quota),
];

/// The Given step `step` and its arguments; `None` when no Given step reads so.
pub(crate) fn find(step: &str) -> Option<(GivenFn, Vec<String>)> {
    static COMPILED: OnceLock<Vec<(Regex, GivenFn)>> = OnceLock::new();
    let compiled = COMPILED.get_or_init(|| STEPS.iter().map(|(pattern, f)| (super::regex(pattern), *f)).collect());
    compiled.iter().find_map(|(regex, f)| Some((*f, super::captures(&regex.captures(step)?))))
}

/// The text streamed by scripted successes and broken streams.
const TEXT: &str = "The quick brown fox jumps over the lazy dog";

fn status_reply(status: u16) -> Attempt {
    Attempt::status(status)
}

fn broken(kind: FaultKind, point: FaultPoint) -> Attempt {
    let mut attempt = Attempt::text(TEXT);
    attempt.fault = Some(Fault::at(kind, point));
    attempt
}

/// Where in the stream a step's fault fires. The API-neutral points name what the client has
/// seen: "right after the headers" (no event yet), "before any output" (the framing events of
/// whichever API it speaks, no text), "after N output deltas" (N pieces of text, reasoning or
/// tool input). "after N events" counts raw events, which differ between APIs.
fn fault_point(text: &str) -> FaultPoint {
    let count = |rest: &str, units: [&str; 2]| {
        let rest = units.iter().find_map(|unit| rest.strip_suffix(unit))?;
        rest.trim().parse::<u32>().ok()
    };
    let point = match text {
        "right after the headers" => Some(FaultPoint::Events(0)),
        "before any output" => Some(FaultPoint::Deltas(0)),
        _ => text.strip_prefix("after ").and_then(|rest| {
            count(rest, [" output deltas", " output delta"])
                .map(FaultPoint::Deltas)
                .or_else(|| count(rest, [" events", " event"]).map(FaultPoint::Events))
        }),
    };
    point.unwrap_or_else(|| {
        panic!(
            "unknown point in the stream `{text}`: say \"right after the headers\", \"before any output\", \"after N output deltas\" or \"after N events\""
        )
    })
}

fn fault_kind(text: &str) -> FaultKind {
    FaultKind::ALL.into_iter().find(|k| k.as_str() == text).unwrap_or_else(|| panic!("unknown fault `{text}`"))
}

fn status(setup: &mut CaseSetup, args: &Args) {
    *setup.script.attempt(num(args, 1)) = status_reply(num(args, 2));
}

fn status_with_header(setup: &mut CaseSetup, args: &Args) {
    let mut reply = status_reply(num(args, 2));
    reply.headers.insert(arg(args, 3).to_owned(), arg(args, 4).to_owned());
    *setup.script.attempt(num(args, 1)) = reply;
}

fn status_with_code(setup: &mut CaseSetup, args: &Args) {
    let mut reply = status_reply(num(args, 2));
    reply.error = Some(ErrorSpec { code: Some(arg(args, 3).to_owned()), ..ErrorSpec::default() });
    *setup.script.attempt(num(args, 1)) = reply;
}

fn every_status(setup: &mut CaseSetup, args: &Args) {
    setup.script.every = Some(status_reply(num(args, 1)));
}

fn silent(seconds: u64) -> Attempt {
    let mut attempt = Attempt::default();
    attempt.delay_ms = Some(seconds.saturating_mul(1000));
    attempt
}

fn no_headers(setup: &mut CaseSetup, args: &Args) {
    *setup.script.attempt(num(args, 1)) = silent(num(args, 2));
}

fn every_no_headers(setup: &mut CaseSetup, args: &Args) {
    setup.script.every = Some(silent(num(args, 1)));
}

fn succeeds(setup: &mut CaseSetup, args: &Args) {
    let text = Some(arg(args, 2)).filter(|t| !t.is_empty()).unwrap_or(TEXT);
    *setup.script.attempt(num(args, 1)) = Attempt::text(text);
}

fn breaks(setup: &mut CaseSetup, args: &Args) {
    let reply = broken(fault_kind(arg(args, 1)), fault_point(arg(args, 2)));
    if arg(args, 4) == "every" {
        setup.script.every = Some(reply);
    } else {
        *setup.script.attempt(num(args, 3)) = reply;
    }
}

fn resets(setup: &mut CaseSetup, args: &Args) {
    *setup.script.attempt(num(args, 2)) = broken(FaultKind::Reset, fault_point(arg(args, 1)));
}

fn text_then_break(setup: &mut CaseSetup, args: &Args) {
    let mut reply = broken(fault_kind(arg(args, 3)), fault_point(arg(args, 4)));
    reply.stream = Some(StreamSpec { text: Some(arg(args, 2).to_owned()), ..StreamSpec::default() });
    *setup.script.attempt(num(args, 1)) = reply;
}

fn call_then_break(setup: &mut CaseSetup, args: &Args) {
    let mut reply = broken(fault_kind(arg(args, 3)), fault_point(arg(args, 4)));
    let call = FunctionCallSpec {
        name: arg(args, 2).to_owned(),
        arguments: r#"{"path": "notes.md", "content": "draft"}"#.to_owned(),
        call_id: None,
    };
    reply.stream = Some(StreamSpec { function_call: Some(call), ..StreamSpec::default() });
    *setup.script.attempt(num(args, 1)) = reply;
}

fn stream_failure(setup: &mut CaseSetup, args: &Args) {
    let fail = StreamFailure {
        code: arg(args, 2).to_owned(),
        message: Some(arg(args, 3).to_owned()).filter(|m| !m.is_empty()),
        ..StreamFailure::default()
    };
    let attempt = setup.script.attempt(num(args, 1));
    *attempt = Attempt::default();
    attempt.stream = Some(StreamSpec { fail: Some(fail), ..StreamSpec::default() });
}

fn catalogue(setup: &mut CaseSetup, args: &Args) {
    setup.script.catalogue = Some(arg(args, 1).to_owned());
}

fn profile(setup: &mut CaseSetup, args: &Args) {
    setup.profile = Some(arg(args, 1).to_owned());
}

fn fallback(setup: &mut CaseSetup, args: &Args) {
    setup.fallback = Some(arg(args, 1).to_owned());
}

/// `providerRetry.maxRetries`, passed to the implementation as `SQUALL_MAX_RETRIES`.
fn max_retries(setup: &mut CaseSetup, args: &Args) {
    setup.max_retries = Some(num(args, 1));
}

/// Timing-precise cases run slower than the suite's default scale, so that scheduling noise
/// on a busy machine stays small next to what they measure.
fn time_scale(setup: &mut CaseSetup, args: &Args) {
    let divisor: f64 = num(args, 1);
    let scale = TimeScale::new(1.0 / divisor);
    setup.time_scale = Some(scale.unwrap_or_else(|e| panic!("in step `{}`: {e}", args[0])));
}

/// A run-wide outage as long as a window may be (a week): every model request gets the status, whichever client or
/// attempt sent it. (A window of run time would count from the run's creation, and instances
/// that start slowly — an interpreter loading an SDK while a herd starts — could arrive after it
/// closed: the verdict would depend on the machine's speed.)
fn outage(setup: &mut CaseSetup, args: &Args) {
    let whole_run = squall::scenario::limits::MAX_DELAY_MS;
    setup.script.outages.push(Outage::between(0, whole_run, status_reply(num(args, 1))));
}

/// A run-wide quota of requests per minute of policy time, one token bucket for the run: every
/// model request draws on it, whichever client sent it, and a refusal is a 429 whose
/// `retry-after` says when the bucket holds a request again (docs/scenarios.md).
fn quota(setup: &mut CaseSetup, args: &Args) {
    setup.script.quota = Some(Quota { requests_per_minute: Some(num(args, 1)), tokens_per_minute: None });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_in_the_stream_read_as_written() {
        assert_eq!(fault_point("right after the headers"), FaultPoint::Events(0));
        assert_eq!(fault_point("before any output"), FaultPoint::Deltas(0));
        assert_eq!(fault_point("after 1 output delta"), FaultPoint::Deltas(1));
        assert_eq!(fault_point("after 4 output deltas"), FaultPoint::Deltas(4));
        assert_eq!(fault_point("after 3 events"), FaultPoint::Events(3));
    }

    #[test]
    #[should_panic(expected = "unknown point in the stream `after lunch`")]
    fn an_unknown_point_names_itself() {
        fault_point("after lunch");
    }
}
