//! Then, judged on the implementation's outputs: the outcome in `result.json` (`ok`, at every
//! level), the rest of `result.json`, and `events.jsonl` with its decision records.

use cucumber::step::Context;
use futures_util::future::LocalBoxFuture;
use serde_json::Value;

use super::timed::{Args, Timed, TimedCheck};
use super::{arg, done, num, result_field_is, StepFn};
use crate::suite::timing::Margin;
use crate::suite::verdict::Level;
use crate::suite::world::{CaseRun, SuiteWorld};

pub(super) const STEPS: &[(&str, StepFn)] = &[
    (r#"^the result is a success(?: with final text "([^"]*)")?$"#, success),
    (r#"^the result has stop_reason "([^"]+)"$"#, stop_reason),
    (r"^the result has ok (true|false)$", result_ok),
    (r#"^the events contain no "([^"]+)"$"#, no_events),
    (r#"^the events contain exactly (\d+) "([^"]+)"$"#, exactly_events),
    (r#"^the runtime.error has phase "([^"]+)" and a provider error type$"#, runtime_error_phase),
    (r#"^the runtime.error has error_type "([^"]+)"$"#, runtime_error_type),
    (r"^the retries are recorded as provider errors$", retries_are_provider_errors),
    (r#"^the retries are recorded as "([^"]+)"$"#, retries_recorded_as),
    (r"^every failure has a decision record with values$", decision_records),
    (r"^the decisions count the attempts up from 1$", decisions_count_up),
    (r"^the decisions record the attempt timeouts ([\d, ]+) ms$", decision_timeouts),
    (r"^the last decision says the gate blocked the retry$", gate_blocked),
    (r#"^the last decision says the gate blocked the retry for "([^"]+)"$"#, gate_blocked_for),
    (r"^the last decision says the retry was not made$", not_retried),
    (r"^the first decision says the gate allowed the retry$", gate_allowed),
    (r"^the result records the degradation and its cause$", degraded),
];

pub(super) const TIMED: &[TimedCheck] = &[TimedCheck {
    pattern: r"^each provider.retry delay matches the wait the server saw$",
    level: Level::Events,
    margin: |_| ANNOUNCED_WAIT,
    expected: |_| {
        format!(
            "one provider.retry per wait, each wait between its delay_ms and delay_ms + {ANNOUNCED_SLACK_S} s + {}%",
            ANNOUNCED_SLACK_SHARE * 100.0
        )
    },
    judge: delays_match,
    lower_bound_only: false,
}];

fn of_type<'a>(run: &'a CaseRun, kind: &str) -> Vec<&'a Value> {
    run.iut.events.iter().filter(|e| e["type"] == kind).collect()
}

/// The failures in order: every `provider.retry` and `runtime.error`.
fn failures(run: &CaseRun) -> Vec<&Value> {
    run.iut.events.iter().filter(|e| e["type"] == "provider.retry" || e["type"] == "runtime.error").collect()
}

/// A provider-layer exception, as PRD-0006 names them (`ProviderTimeoutException` "或同类"):
/// not a raw transport error such as `EOFException` or `ConnectionResetError`.
fn is_provider_error(error_type: &Value) -> bool {
    error_type.as_str().is_some_and(|t| t.starts_with("Provider"))
}

fn success(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    // The outcome (`ok`) is part of every level of the contract; the rest of the result is not.
    let name = ctx.step.value.clone();
    world.check(Level::Wire, &format!("{name}: ok"), "ok: true", |run| {
        let seen = &run.result()["ok"];
        (format!("ok: {seen}"), *seen == true)
    });
    let text = arg(&ctx, 1).to_owned();
    let expected = match text.as_str() {
        "" => "stop_reason: end_turn".to_owned(),
        text => format!("stop_reason: end_turn, final_text: {text:?}"),
    };
    world.check(Level::Events, &format!("{name}: stop_reason and text"), expected, |run| {
        let r = run.result();
        let ok = r["stop_reason"] == "end_turn" && (text.is_empty() || r["final_text"] == text.as_str());
        (format!("stop_reason: {}, final_text: {}", r["stop_reason"], r["final_text"]), ok)
    });
    done()
}

fn stop_reason(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let expected = Value::from(arg(&ctx, 1));
    result_field_is(world, &ctx, Level::Events, "stop_reason", expected);
    done()
}

fn result_ok(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let expected = Value::from(arg(&ctx, 1) == "true");
    result_field_is(world, &ctx, Level::Wire, "ok", expected);
    done()
}

fn no_events(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let kind = arg(&ctx, 1).to_owned();
    world.check(Level::Events, &ctx.step.value, format!("no {kind} event"), |run| {
        let seen = of_type(run, &kind).len();
        (format!("{seen} {kind} event(s)"), seen == 0)
    });
    done()
}

fn exactly_events(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let (count, kind): (usize, String) = (num(&ctx, 1), arg(&ctx, 2).to_owned());
    world.check(Level::Events, &ctx.step.value, format!("{count} {kind} event(s)"), |run| {
        let seen = of_type(run, &kind).len();
        (format!("{seen} {kind} event(s)"), seen == count)
    });
    done()
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

fn runtime_error_phase(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let phase = arg(&ctx, 1).to_owned();
    world.check(
        Level::Events,
        &ctx.step.value,
        format!("one runtime.error, phase {phase}, error_type Provider…"),
        |run| {
            let errors = of_type(run, "runtime.error");
            let ok = errors.len() == 1
                && errors[0]["phase"] == phase.as_str()
                && is_provider_error(&errors[0]["error_type"]);
            (describe_errors(&errors), ok)
        },
    );
    done()
}

fn runtime_error_type(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let error_type = arg(&ctx, 1).to_owned();
    world.check(Level::Events, &ctx.step.value, format!("runtime.error with error_type {error_type}"), |run| {
        let errors = of_type(run, "runtime.error");
        (describe_errors(&errors), errors.len() == 1 && errors[0]["error_type"] == error_type.as_str())
    });
    done()
}

fn retry_types(run: &CaseRun) -> (Vec<&Value>, String) {
    let retries = of_type(run, "provider.retry");
    let seen: Vec<String> = retries.iter().map(|e| e["error_type"].to_string()).collect();
    (retries, format!("provider.retry error types [{}]", seen.join(", ")))
}

fn retries_are_provider_errors(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.check(Level::Events, &ctx.step.value, "provider.retry events, each with an error_type Provider…", |run| {
        let (retries, seen) = retry_types(run);
        (seen, !retries.is_empty() && retries.iter().all(|e| is_provider_error(&e["error_type"])))
    });
    done()
}

fn retries_recorded_as(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let error_type = arg(&ctx, 1).to_owned();
    world.check(Level::Events, &ctx.step.value, format!("provider.retry with error_type {error_type}"), |run| {
        let (retries, seen) = retry_types(run);
        (seen, !retries.is_empty() && retries.iter().all(|e| e["error_type"] == error_type.as_str()))
    });
    done()
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

fn decision_records(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let expected = "every provider.retry and runtime.error has decision.{technically_retryable, gate, retried, attempt, timeout_ms, outcome} with values";
    world.check(Level::Events, &ctx.step.value, expected, |run| {
        let failures = failures(run);
        let problems: Vec<String> = failures.iter().flat_map(|e| decision_problems(e)).collect();
        let ok = !failures.is_empty() && problems.is_empty();
        (
            if problems.is_empty() {
                format!("{} failure event(s), all with values", failures.len())
            } else {
                problems.join("; ")
            },
            ok,
        )
    });
    done()
}

fn decisions_count_up(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.check(Level::Events, &ctx.step.value, "decision.attempt = 1, 2, 3, … in order", |run| {
        let attempts: Vec<Value> = failures(run).iter().map(|e| e["decision"]["attempt"].clone()).collect();
        let ok = !attempts.is_empty() && attempts.iter().enumerate().all(|(i, a)| a.as_u64() == Some(i as u64 + 1));
        (format!("decision.attempt {attempts:?}"), ok)
    });
    done()
}

fn decision_timeouts(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let expected: Vec<u64> = arg(&ctx, 1).split(',').filter_map(|t| t.trim().parse().ok()).collect();
    world.check(Level::Events, &ctx.step.value, format!("decision.timeout_ms {expected:?}"), |run| {
        let seen: Vec<Value> = failures(run).iter().map(|e| e["decision"]["timeout_ms"].clone()).collect();
        let ok = seen.len() == expected.len() && seen.iter().zip(&expected).all(|(s, e)| s.as_u64() == Some(*e));
        (format!("decision.timeout_ms {seen:?}"), ok)
    });
    done()
}

fn last_decision(run: &CaseRun) -> Option<&Value> {
    run.iut.events.iter().rev().find(|e| e["type"] == "runtime.error").map(|e| &e["decision"])
}

fn gate_blocked(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.check(
        Level::Events,
        &ctx.step.value,
        "decision.gate names a reason (not \"allowed\"), retried = false",
        |run| match last_decision(run) {
            Some(d) => {
                let blocked = d["gate"].as_str().is_some_and(|g| !g.is_empty() && g != "allowed");
                (format!("gate {}, retried {}", d["gate"], d["retried"]), blocked && d["retried"] == false)
            }
            None => ("no runtime.error".to_owned(), false),
        },
    );
    done()
}

fn gate_blocked_for(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let reason = arg(&ctx, 1).to_owned();
    world.check(Level::Events, &ctx.step.value, format!("decision.gate = {reason:?}"), |run| {
        match last_decision(run) {
            Some(d) => (format!("gate {}", d["gate"]), d["gate"] == reason.as_str()),
            None => ("no runtime.error".to_owned(), false),
        }
    });
    done()
}

fn not_retried(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.check(Level::Events, &ctx.step.value, "a runtime.error whose decision.retried = false", |run| {
        match last_decision(run) {
            Some(d) => (format!("retried {}, outcome {}", d["retried"], d["outcome"]), d["retried"] == false),
            None => ("no runtime.error".to_owned(), false),
        }
    });
    done()
}

fn gate_allowed(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.check(
        Level::Events,
        &ctx.step.value,
        "the first provider.retry has decision.gate = \"allowed\", retried = true",
        |run| match of_type(run, "provider.retry").first().map(|e| &e["decision"]) {
            Some(d) => (
                format!("gate {}, retried {}", d["gate"], d["retried"]),
                d["gate"] == "allowed" && d["retried"] == true,
            ),
            None => ("no provider.retry".to_owned(), false),
        },
    );
    done()
}

fn degraded(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.check(Level::Events, &ctx.step.value, "stop_reason degraded with the cause's error_type", |run| {
        let r = run.result();
        let cause = r["error_type"].as_str().or_else(|| r["degraded"]["error_type"].as_str()).unwrap_or("");
        (
            format!("stop_reason {}, cause {cause:?}", r["stop_reason"]),
            r["stop_reason"] == "degraded" && !cause.is_empty(),
        )
    });
    done()
}

/// How much longer than announced a wait may be: connection set-up and scheduling, in policy
/// time (the client's calibrated reaction is already taken out of the waits).
const ANNOUNCED_SLACK_S: f64 = 0.25;
const ANNOUNCED_SLACK_SHARE: f64 = 0.1;

/// It rejects a record whose wait is not the one slept: announcing 0 and sleeping seed 002's
/// first wait (1 s or more, 0.75 s beyond the slack) or sleeping a multiple of the announced one.
const ANNOUNCED_WAIT: Margin = Margin::of_waits(0.75);

fn delays_match(run: &CaseRun, _: &Args) -> Timed {
    let planned: Vec<f64> =
        of_type(run, "provider.retry").iter().filter_map(|e| e["delay_ms"].as_f64()).map(|ms| ms / 1000.0).collect();
    let seen = super::then_wire::waits(run);
    let held = !planned.is_empty()
        && planned.len() == seen.len()
        && planned.iter().zip(&seen).all(|(p, s)| {
            s.may_be_at_least(*p) && s.may_be_at_most(p * (1.0 + ANNOUNCED_SLACK_SHARE) + ANNOUNCED_SLACK_S)
        });
    let (shown, noise) = super::then_wire::waits_and_noise(run);
    Timed { observed: format!("planned {planned:.2?} s, waited {shown:.2?} s"), held, noise }
}
