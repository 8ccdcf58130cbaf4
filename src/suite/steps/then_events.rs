//! Then, judged on the implementation's outputs: `result.json` and `events.jsonl`.

use cucumber::step::Context;
use futures_util::future::LocalBoxFuture;
use serde_json::Value;

use super::{arg, done, num, result_field_is, StepFn};
use crate::suite::results::Level;
use crate::suite::world::{CaseRun, SuiteWorld};

pub const STEPS: &[(&str, StepFn)] = &[
    (r#"^the result is a success(?: with final text "([^"]*)")?$"#, success),
    (r#"^the result has stop_reason "([^"]+)"$"#, stop_reason),
    (r"^the result has ok (true|false)$", result_ok),
    (r#"^the events contain no "([^"]+)"$"#, no_events),
    (r#"^the events contain exactly (\d+) "([^"]+)"$"#, exactly_events),
    (r#"^the runtime.error has phase "([^"]+)" and error_type "([^"]+)"$"#, runtime_error),
    (r#"^the retry is recorded as a "([^"]+)"$"#, retry_error_type),
    (r"^every failure has a decision record$", decision_records),
    (r#"^the last decision says the gate blocked the retry for "([^"]+)"$"#, gate_blocked),
    (r"^the result records the degradation and its cause$", degraded),
    (r"^each provider.retry delay matches the wait the server saw$", delays_match),
];

fn of_type<'a>(run: &'a CaseRun, kind: &str) -> Vec<&'a Value> {
    run.iut.events.iter().filter(|e| e["type"] == kind).collect()
}

fn success(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let text = arg(&ctx, 1).to_owned();
    let expected = if text.is_empty() {
        "ok: true, stop_reason: end_turn".to_owned()
    } else {
        format!("ok: true, stop_reason: end_turn, final_text: {text:?}")
    };
    world.check(Level::Events, &ctx.step.value, expected, |run| {
        let r = run.result();
        let ok =
            r["ok"] == true && r["stop_reason"] == "end_turn" && (text.is_empty() || r["final_text"] == text.as_str());
        (format!("ok: {}, stop_reason: {}, final_text: {}", r["ok"], r["stop_reason"], r["final_text"]), ok)
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
    result_field_is(world, &ctx, Level::Events, "ok", expected);
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

fn runtime_error(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let (phase, error_type) = (arg(&ctx, 1).to_owned(), arg(&ctx, 2).to_owned());
    world.check(
        Level::Events,
        &ctx.step.value,
        format!("runtime.error phase {phase}, error_type {error_type}"),
        |run| {
            let errors = of_type(run, "runtime.error");
            let seen: Vec<String> =
                errors.iter().map(|e| format!("phase {}, error_type {}", e["phase"], e["error_type"])).collect();
            let ok = errors.len() == 1
                && errors[0]["phase"] == phase.as_str()
                && errors[0]["error_type"] == error_type.as_str();
            (if seen.is_empty() { "no runtime.error".to_owned() } else { seen.join("; ") }, ok)
        },
    );
    done()
}

fn retry_error_type(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let error_type = arg(&ctx, 1).to_owned();
    world.check(Level::Events, &ctx.step.value, format!("provider.retry with error_type {error_type}"), |run| {
        let retries = of_type(run, "provider.retry");
        let seen: Vec<String> = retries.iter().map(|e| e["error_type"].to_string()).collect();
        (
            format!("provider.retry error types {seen:?}"),
            !retries.is_empty() && retries.iter().all(|e| e["error_type"] == error_type.as_str()),
        )
    });
    done()
}

const DECISION_FIELDS: [&str; 6] = ["technically_retryable", "gate", "retried", "attempt", "timeout_ms", "outcome"];

fn decision_records(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.check(
        Level::Events,
        &ctx.step.value,
        format!("provider.retry and runtime.error each carry decision.{{{}}}", DECISION_FIELDS.join(", ")),
        |run| {
            let failures: Vec<&Value> = run
                .iut
                .events
                .iter()
                .filter(|e| e["type"] == "provider.retry" || e["type"] == "runtime.error")
                .collect();
            let missing: Vec<String> = failures
                .iter()
                .flat_map(|e| {
                    DECISION_FIELDS
                        .iter()
                        .filter(|f| e["decision"].get(**f).is_none())
                        .map(move |f| format!("{} lacks {f}", e["type"]))
                })
                .collect();
            let ok = !failures.is_empty() && missing.is_empty();
            (
                if missing.is_empty() {
                    format!("{} failure event(s), all with decisions", failures.len())
                } else {
                    missing.join("; ")
                },
                ok,
            )
        },
    );
    done()
}

fn gate_blocked(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let reason = arg(&ctx, 1).to_owned();
    world.check(Level::Events, &ctx.step.value, format!("decision.gate = {reason:?}, retried = false"), |run| {
        let last = run.iut.events.iter().rev().find(|e| e["type"] == "runtime.error").map(|e| &e["decision"]);
        match last {
            Some(decision) => (
                format!("gate {}, retried {}", decision["gate"], decision["retried"]),
                decision["gate"] == reason.as_str() && decision["retried"] == false,
            ),
            None => ("no runtime.error".to_owned(), false),
        }
    });
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

fn delays_match(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.check(Level::Events, &ctx.step.value, "each wait ≥ the delay_ms its provider.retry announced", |run| {
        let planned: Vec<f64> = of_type(run, "provider.retry")
            .iter()
            .filter_map(|e| e["delay_ms"].as_f64())
            .map(|ms| ms / 1000.0)
            .collect();
        let attempts = run.attempts();
        let seen: Vec<f64> = attempts
            .windows(2)
            .map(|w| run.policy_seconds(w[1].received_at_ms - w[0].finished_at_ms.unwrap_or(0.0)))
            .collect();
        let slack = run.policy_seconds(super::then_wire::TOLERANCE_REAL_MS);
        let ok = !planned.is_empty()
            && planned.len() == seen.len()
            && planned.iter().zip(&seen).all(|(p, s)| *s >= p - slack);
        (format!("planned {planned:?} s, waited {seen:.2?} s"), ok)
    });
    done()
}
