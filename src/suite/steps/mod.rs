//! Step definitions, registered with regexes (no macros, so they live in the library and
//! `squall run` uses the very same steps as `cargo test`). Steps read like the PRD.

mod given;
mod then_backoff;
mod then_events;
mod then_sessions;
mod then_tasks;
mod then_wire;
mod timed;
mod when;

pub(crate) use timed::{plan as plan_timing_checks, Planned};

use cucumber::step::{Collection, Context};
use futures_util::future::LocalBoxFuture;
use regex::Regex;

use super::world::SuiteWorld;

pub(super) type StepFn = for<'a> fn(&'a mut SuiteWorld, Context) -> LocalBoxFuture<'a, ()>;

/// Every step squall knows.
pub(super) fn collection() -> Collection<SuiteWorld> {
    let mut steps = Collection::new();
    for (pattern, step) in given::STEPS {
        steps = steps.given(None, regex(pattern), *step);
    }
    for (pattern, step) in when::STEPS {
        steps = steps.when(None, regex(pattern), *step);
    }
    let then = [then_wire::STEPS, then_sessions::STEPS, then_events::STEPS, then_tasks::STEPS];
    for (pattern, step) in then.into_iter().flatten() {
        steps = steps.then(None, regex(&advisory_form(pattern)), *step);
    }
    for pattern in timed::patterns() {
        steps = steps.then(None, pattern.clone(), timed::step);
    }
    steps
}

/// A Then pattern that also matches its SHOULD form, "ideally <step>" (see
/// [`super::world::SHOULD_PREFIX`]); the group does not capture, so arguments keep their numbers.
fn advisory_form(pattern: &str) -> String {
    let body = pattern.strip_prefix('^').unwrap_or(pattern);
    format!("^(?:{})?{body}", regex::escape(super::world::SHOULD_PREFIX))
}

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("step pattern {pattern}: {e}"))
}

/// The text of capture group `i` (1-based; empty when the group did not match).
fn arg(ctx: &Context, i: usize) -> &str {
    ctx.matches.get(i).map_or("", |(_, text)| text.as_str())
}

/// Capture group `i` parsed; a feature that does not parse is a harness error.
fn num<T: std::str::FromStr>(ctx: &Context, i: usize) -> T {
    let text = arg(ctx, i);
    text.parse().unwrap_or_else(|_| panic!("`{text}` in step `{}` is not a number", ctx.step.value))
}

/// Check that `result.json` has `field` equal to `expected`, judged at `level` (the same
/// file is the Task result in `task` cases).
fn result_field_is(
    world: &mut SuiteWorld,
    ctx: &Context,
    level: crate::suite::verdict::Level,
    field: &str,
    expected: serde_json::Value,
) {
    world.check(level, &ctx.step.value, format!("{field}: {expected}"), |run| {
        let seen = &run.result()[field];
        (format!("{field}: {seen}"), *seen == expected)
    });
}

/// The field names of a step such as "has the fields error_type, stop_reason".
fn field_list(text: &str) -> Vec<String> {
    text.split(',').map(|f| f.trim().trim_matches('"').to_owned()).filter(|f| !f.is_empty()).collect()
}

/// (observed, passed) for "every field is a non-empty string in `value`".
fn missing_fields(value: &serde_json::Value, fields: &[String]) -> (String, bool) {
    let missing: Vec<&String> =
        fields.iter().filter(|f| value[f.as_str()].as_str().is_none_or(str::is_empty)).collect();
    match missing.as_slice() {
        [] => ("all present".to_owned(), true),
        missing => (format!("missing or empty: {missing:?}"), false),
    }
}

/// A finished step (most steps do their work synchronously).
fn done<'a>() -> LocalBoxFuture<'a, ()> {
    Box::pin(std::future::ready(()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_pattern_compiles_and_no_two_overlap_on_their_examples() {
        let steps = super::collection();
        drop(steps);
    }

    #[test]
    fn then_steps_also_match_their_advisory_form_with_the_same_arguments() {
        let pattern =
            regex::Regex::new(&super::advisory_form(r"^the server sees exactly (\d+) attempts?$")).expect("compiles");
        for text in ["the server sees exactly 7 attempts", "ideally the server sees exactly 7 attempts"] {
            let captures = pattern.captures(text).expect(text);
            assert_eq!(&captures[1], "7");
        }
        assert!(!pattern.is_match("ideally  the server sees exactly 7 attempts"));
    }
}
