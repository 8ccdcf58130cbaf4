//! Step definitions, registered with regexes (no macros, so they live in the library and
//! `squall run` uses the very same steps as `cargo test`). Steps read like the PRD.

mod given;
mod then_events;
mod then_tasks;
mod then_wire;
mod when;

use cucumber::step::{Collection, Context};
use futures_util::future::LocalBoxFuture;
use regex::Regex;

use super::world::SuiteWorld;

pub type StepFn = for<'a> fn(&'a mut SuiteWorld, Context) -> LocalBoxFuture<'a, ()>;

/// Every step squall knows.
pub fn collection() -> Collection<SuiteWorld> {
    let mut steps = Collection::new();
    for (pattern, step) in given::STEPS {
        steps = steps.given(None, regex(pattern), *step);
    }
    for (pattern, step) in when::STEPS {
        steps = steps.when(None, regex(pattern), *step);
    }
    for (pattern, step) in then_wire::STEPS.iter().chain(then_events::STEPS).chain(then_tasks::STEPS) {
        steps = steps.then(None, regex(pattern), *step);
    }
    steps
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
    level: crate::suite::results::Level,
    field: &str,
    expected: serde_json::Value,
) {
    world.check(level, &ctx.step.value, format!("{field}: {expected}"), |run| {
        let seen = &run.result()[field];
        (format!("{field}: {seen}"), *seen == expected)
    });
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
}
