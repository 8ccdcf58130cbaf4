//! Judged on the implementation's outputs: the outcome in `result.json` (`ok`, at every
//! level), the rest of `result.json`, and `events.jsonl` with its decision records.

use serde_json::Value;

use super::{arg, number, result_field_is, Args, Check, Found, Observation, Timed, Timing};
use crate::timing::Margin;
use crate::verdict::Level;

const SUCCESS: &str = r#"^the result is a success(?: with final text "([^"]*)")?$"#;

pub(super) const CHECKS: &[Check] = &[
    // The outcome (`ok`) is part of every level of the contract; the rest of the result is not.
    Check::plain(SUCCESS, Level::Wire, |_| "ok: true".to_owned(), succeeded).part(": ok"),
    Check::plain(
        SUCCESS,
        Level::Events,
        |args| match arg(args, 1) {
            "" => "stop_reason: end_turn".to_owned(),
            text => format!("stop_reason: end_turn, final_text: {text:?}"),
        },
        ended_turn,
    )
    .part(": stop_reason and text"),
    Check::plain(
        r#"^the result has stop_reason "([^"]+)"$"#,
        Level::Events,
        |args| format!("stop_reason: {:?}", args[1]),
        |observation, args| result_field_is(observation, "stop_reason", args),
    ),
    Check::plain(
        r"^the result has ok (true|false)$",
        Level::Wire,
        |args| format!("ok: {}", args[1]),
        |observation, args| result_field_is(observation, "ok", args),
    ),
    Check::plain(
        r#"^the events contain no "([^"]+)"$"#,
        Level::Events,
        |args| format!("no {} event", args[1]),
        no_events,
    ),
    Check::plain(
        r#"^the events contain exactly (\d+) "([^"]+)"$"#,
        Level::Events,
        |args| format!("{} {} event(s)", args[1], args[2]),
        exactly_events,
    ),
    Check::plain(
        r#"^the runtime.error has phase "([^"]+)" and a provider error type$"#,
        Level::Events,
        |args| format!("one runtime.error, phase {}, error_type Provider…", args[1]),
        runtime_error_phase,
    ),
    Check::plain(
        r#"^the runtime.error has error_type "([^"]+)"$"#,
        Level::Events,
        |args| format!("runtime.error with error_type {}", args[1]),
        runtime_error_type,
    ),
    Check::plain(
        r"^the retries are recorded as provider errors$",
        Level::Events,
        |_| "provider.retry events, each with an error_type Provider…".to_owned(),
        retries_are_provider_errors,
    ),
    Check::plain(
        r#"^the retries are recorded as "([^"]+)"$"#,
        Level::Events,
        |args| format!("provider.retry with error_type {}", args[1]),
        retries_recorded_as,
    ),
    Check::plain(
        r"^every failure has a decision record with values$",
        Level::Events,
        |_| {
            "every provider.retry and runtime.error has decision.{technically_retryable, gate, retried, attempt, timeout_ms, outcome} with values".to_owned()
        },
        decision_records,
    ),
    Check::plain(
        r"^the decisions count the attempts up from 1$",
        Level::Events,
        |_| "decision.attempt = 1, 2, 3, … in order".to_owned(),
        decisions_count_up,
    ),
    Check::plain(
        r"^the decisions record the attempt timeouts ([\d, ]+) ms$",
        Level::Events,
        |args| format!("decision.timeout_ms {:?}", timeouts_of(args)),
        decision_timeouts,
    ),
    Check::plain(
        r"^the last decision says the gate blocked the retry$",
        Level::Events,
        |_| "decision.gate names a reason (not \"allowed\"), retried = false".to_owned(),
        gate_blocked,
    ),
    Check::plain(
        r#"^the last decision says the gate blocked the retry for "([^"]+)"$"#,
        Level::Events,
        |args| format!("decision.gate = {:?}", args[1]),
        gate_blocked_for,
    ),
    Check::plain(
        r"^the last decision says the retry was not made$",
        Level::Events,
        |_| "a runtime.error whose decision.retried = false".to_owned(),
        not_retried,
    ),
    Check::plain(
        r"^the first decision says the gate allowed the retry$",
        Level::Events,
        |_| "the first provider.retry has decision.gate = \"allowed\", retried = true".to_owned(),
        gate_allowed,
    ),
    Check::plain(
        r"^the result records the degradation and its cause$",
        Level::Events,
        |_| "stop_reason degraded with the cause's error_type".to_owned(),
        degraded,
    ),
    Check::timed(
        r"^each provider.retry delay matches the wait the server saw$",
        Level::Events,
        |_| {
            format!(
                "one provider.retry per wait, each wait between its delay_ms and delay_ms + {ANNOUNCED_SLACK_S} s + {}%",
                ANNOUNCED_SLACK_SHARE * 100.0
            )
        },
        Timing { margin: |_| ANNOUNCED_WAIT, measure: delays_match },
    ),
];

/// The failures in order: every `provider.retry` and `runtime.error`.
fn failures(observation: &Observation) -> Vec<&Value> {
    observation.iut.events.iter().filter(|e| e["type"] == "provider.retry" || e["type"] == "runtime.error").collect()
}

/// A provider-layer exception, as PRD-0006 names them (`ProviderTimeoutException` "或同类"):
/// not a raw transport error such as `EOFException` or `ConnectionResetError`.
fn is_provider_error(error_type: &Value) -> bool {
    error_type.as_str().is_some_and(|t| t.starts_with("Provider"))
}

fn succeeded(observation: &Observation, _: &Args) -> Found {
    let seen = &observation.result()["ok"];
    Found::new(format!("ok: {seen}"), *seen == true)
}

fn ended_turn(observation: &Observation, args: &Args) -> Found {
    let (text, result) = (arg(args, 1), observation.result());
    let held = result["stop_reason"] == "end_turn" && (text.is_empty() || result["final_text"] == text);
    Found::new(format!("stop_reason: {}, final_text: {}", result["stop_reason"], result["final_text"]), held)
}

fn no_events(observation: &Observation, args: &Args) -> Found {
    let kind = arg(args, 1);
    let seen = observation.events_of(kind).len();
    Found::new(counted(observation, seen, kind), seen == 0)
}

fn exactly_events(observation: &Observation, args: &Args) -> Found {
    let (count, kind): (usize, &str) = (number(args, 1), arg(args, 2));
    let seen = observation.events_of(kind).len();
    Found::new(counted(observation, seen, kind), seen == count)
}

/// "2 runtime.error event(s)", saying so when the client gave no events at all: at level
/// `events` a count of 0 then means nothing was posted or written, not that nothing happened.
fn counted(observation: &Observation, seen: usize, kind: &str) -> String {
    match observation.iut.events.is_empty() {
        true => format!(
            "{seen} {kind} event(s): the client gave no events at all (level `events` judges them: write \
             events.jsonl, or post them as `events` with the outcome)"
        ),
        false => format!("{seen} {kind} event(s)"),
    }
}

fn describe_errors(errors: &[&Value]) -> String {
    match errors {
        [] => "no runtime.error".to_owned(),
        errors => errors
            .iter()
            .map(|e| format!("phase {}, error_type {}", e["phase"], e["error_type"]))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

fn runtime_error_phase(observation: &Observation, args: &Args) -> Found {
    let errors = observation.events_of("runtime.error");
    let held = errors.len() == 1 && errors[0]["phase"] == arg(args, 1) && is_provider_error(&errors[0]["error_type"]);
    Found::new(describe_errors(&errors), held)
}

fn runtime_error_type(observation: &Observation, args: &Args) -> Found {
    let errors = observation.events_of("runtime.error");
    Found::new(describe_errors(&errors), errors.len() == 1 && errors[0]["error_type"] == arg(args, 1))
}

fn retry_types(observation: &Observation) -> (Vec<&Value>, String) {
    let retries = observation.events_of("provider.retry");
    let seen: Vec<String> = retries.iter().map(|e| e["error_type"].to_string()).collect();
    (retries, format!("provider.retry error types [{}]", seen.join(", ")))
}

fn retries_are_provider_errors(observation: &Observation, _: &Args) -> Found {
    let (retries, seen) = retry_types(observation);
    Found::new(seen, !retries.is_empty() && retries.iter().all(|e| is_provider_error(&e["error_type"])))
}

fn retries_recorded_as(observation: &Observation, args: &Args) -> Found {
    let (retries, seen) = retry_types(observation);
    Found::new(seen, !retries.is_empty() && retries.iter().all(|e| e["error_type"] == arg(args, 1)))
}

/// What is wrong with one decision record (seed 001: "whether the failure was technically
/// retryable, whether the safety gate allowed it, whether a retry was attempted, which attempt
/// timeout was used, and how the retry ended"): values of the right kind, not nulls.
fn decision_problems(event: &Value) -> Vec<String> {
    let decision = &event["decision"];
    let kind = event["type"].as_str().unwrap_or("?");
    let retried_expected = kind == "provider.retry";
    let checks: [(&str, bool, &str); 6] = [
        ("technically_retryable", decision["technically_retryable"].is_boolean(), "a boolean"),
        ("gate", decision["gate"].as_str().is_some_and(|g| !g.is_empty()), "allowed or a reason"),
        ("retried", decision["retried"] == retried_expected, if retried_expected { "true" } else { "false" }),
        ("attempt", decision["attempt"].as_u64().is_some_and(|a| a >= 1), "a number from 1"),
        ("timeout_ms", decision["timeout_ms"].as_u64().is_some_and(|t| t > 0), "a positive number"),
        ("outcome", decision["outcome"].as_str().is_some_and(|o| !o.is_empty()), "how it ended"),
    ];
    checks
        .iter()
        .filter(|(_, ok, _)| !ok)
        .map(|(field, _, wanted)| format!("{kind}: decision.{field} should be {wanted}, found {}", decision[*field]))
        .collect()
}

fn decision_records(observation: &Observation, _: &Args) -> Found {
    let failures = failures(observation);
    let problems: Vec<String> = failures.iter().flat_map(|e| decision_problems(e)).collect();
    let held = !failures.is_empty() && problems.is_empty();
    let observed = if problems.is_empty() {
        format!("{} failure event(s), all with values", failures.len())
    } else {
        problems.join("; ")
    };
    Found::new(observed, held)
}

fn decisions_count_up(observation: &Observation, _: &Args) -> Found {
    let attempts: Vec<Value> = failures(observation).iter().map(|e| e["decision"]["attempt"].clone()).collect();
    let held = !attempts.is_empty() && attempts.iter().enumerate().all(|(i, a)| a.as_u64() == Some(i as u64 + 1));
    Found::new(format!("decision.attempt {attempts:?}"), held)
}

/// "1000, 2000 ms": the timeouts a step names.
fn timeouts_of(args: &Args) -> Vec<u64> {
    arg(args, 1).split(',').filter_map(|t| t.trim().parse().ok()).collect()
}

fn decision_timeouts(observation: &Observation, args: &Args) -> Found {
    let expected = timeouts_of(args);
    let seen: Vec<Value> = failures(observation).iter().map(|e| e["decision"]["timeout_ms"].clone()).collect();
    let held = seen.len() == expected.len() && seen.iter().zip(&expected).all(|(s, e)| s.as_u64() == Some(*e));
    Found::new(format!("decision.timeout_ms {seen:?}"), held)
}

fn last_decision(observation: &Observation) -> Option<&Value> {
    observation.iut.events.iter().rev().find(|e| e["type"] == "runtime.error").map(|e| &e["decision"])
}

fn gate_blocked(observation: &Observation, _: &Args) -> Found {
    match last_decision(observation) {
        Some(d) => {
            let blocked = d["gate"].as_str().is_some_and(|g| !g.is_empty() && g != "allowed");
            Found::new(format!("gate {}, retried {}", d["gate"], d["retried"]), blocked && d["retried"] == false)
        }
        None => Found::new("no runtime.error", false),
    }
}

fn gate_blocked_for(observation: &Observation, args: &Args) -> Found {
    match last_decision(observation) {
        Some(d) => Found::new(format!("gate {}", d["gate"]), d["gate"] == arg(args, 1)),
        None => Found::new("no runtime.error", false),
    }
}

fn not_retried(observation: &Observation, _: &Args) -> Found {
    match last_decision(observation) {
        Some(d) => Found::new(format!("retried {}, outcome {}", d["retried"], d["outcome"]), d["retried"] == false),
        None => Found::new("no runtime.error", false),
    }
}

fn gate_allowed(observation: &Observation, _: &Args) -> Found {
    match observation.events_of("provider.retry").first().map(|e| &e["decision"]) {
        Some(d) => Found::new(
            format!("gate {}, retried {}", d["gate"], d["retried"]),
            d["gate"] == "allowed" && d["retried"] == true,
        ),
        None => Found::new("no provider.retry", false),
    }
}

fn degraded(observation: &Observation, _: &Args) -> Found {
    let r = observation.result();
    let cause = r["error_type"].as_str().or_else(|| r["degraded"]["error_type"].as_str()).unwrap_or("");
    Found::new(
        format!("stop_reason {}, cause {cause:?}", r["stop_reason"]),
        r["stop_reason"] == "degraded" && !cause.is_empty(),
    )
}

/// How much longer than announced a wait may be: connection set-up and scheduling, in policy
/// time (the client's calibrated reaction is already taken out of the waits).
const ANNOUNCED_SLACK_S: f64 = 0.25;
const ANNOUNCED_SLACK_SHARE: f64 = 0.1;

/// It rejects a record whose wait is not the one slept: announcing 0 and sleeping seed 002's
/// first wait (1 s or more, 0.75 s beyond the slack) or sleeping a multiple of the announced one.
const ANNOUNCED_WAIT: Margin = Margin::of_waits(0.75);

fn delays_match(observation: &Observation, _: &Args) -> Timed {
    let planned: Vec<f64> = observation
        .events_of("provider.retry")
        .iter()
        .filter_map(|e| e["delay_ms"].as_f64())
        .map(|ms| ms / 1000.0)
        .collect();
    let seen = super::wire::waits(observation);
    let (shown, noise) = super::wire::waits_and_noise(observation);
    let observed = format!("planned {planned:.2?} s, waited {shown:.2?} s");
    if planned.is_empty() || planned.len() != seen.len() {
        return Timed::decided(observed, false);
    }
    let held = planned
        .iter()
        .zip(&seen)
        .all(|(p, s)| s.may_be_at_least(*p) && s.may_be_at_most(p * (1.0 + ANNOUNCED_SLACK_SHARE) + ANNOUNCED_SLACK_S));
    Timed::bound(observed, held, noise)
}
