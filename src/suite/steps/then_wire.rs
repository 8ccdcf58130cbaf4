//! Then, judged on the wire: the server journal of what the implementation actually did.
//! Times are converted back to policy seconds with the run's time scale; each timing check
//! allows [`TOLERANCE_REAL_MS`] of real time on top of the scaled value, and an upper bound on
//! a wait allows the client's own overhead too ([`CLIENT_OVERHEAD_REAL_MS`]).

use std::collections::BTreeSet;

use cucumber::step::Context;
use futures_util::future::LocalBoxFuture;

use super::{done, num, StepFn};
use crate::journal::JournalEntry;
use crate::suite::verdict::Level;
use crate::suite::world::{CaseRun, SuiteWorld};

pub(super) const STEPS: &[(&str, StepFn)] = &[
    (r"^the server sees exactly (\d+) attempts?$", exactly_attempts),
    (r"^the server sees at most (\d+) attempts?$", at_most_attempts),
    (r"^attempt (\d+) starts at least ([\d.]+) seconds after attempt (\d+) ends$", gap_at_least),
    (r"^attempt (\d+) starts within ([\d.]+) seconds after attempt (\d+) ends$", gap_within),
    (r"^attempt (\d+) lasts between ([\d.]+) and ([\d.]+) seconds$", attempt_lasts),
    (r"^the call ends within ([\d.]+) seconds$", call_ends_within),
    (r"^every attempt carries the same session id$", same_session),
];

/// Real-time slack on every timing check (timer and scheduling jitter on a loaded machine).
pub(super) const TOLERANCE_REAL_MS: f64 = 3.0;

/// What a client itself adds to a measured wait — noticing the failure, opening a connection,
/// sending the request — in real time, which does not shrink with the time scale: an
/// interpreted client on a busy machine takes tens of milliseconds. Upper bounds on waits
/// allow it; lower bounds never need it.
pub(super) const CLIENT_OVERHEAD_REAL_MS: f64 = 25.0;

/// Policy seconds between attempt `later` starting and attempt `earlier` ending (1-based).
pub(super) fn gap(run: &CaseRun, earlier: usize, later: usize) -> Option<f64> {
    let attempts = run.attempts();
    let (a, b) = (attempts.get(earlier.checked_sub(1)?)?, attempts.get(later.checked_sub(1)?)?);
    Some(run.policy_seconds(b.received_at_ms - a.finished_at_ms?))
}

/// All waits between consecutive attempts, in policy seconds.
pub(super) fn waits(run: &CaseRun) -> Vec<f64> {
    (1..run.attempts().len()).filter_map(|n| gap(run, n, n + 1)).collect()
}

pub(super) fn tolerance(run: &CaseRun) -> f64 {
    run.policy_seconds(TOLERANCE_REAL_MS)
}

/// The slack on an upper bound: the tolerance and the client's overhead, in policy seconds.
pub(super) fn upper_slack(run: &CaseRun) -> f64 {
    run.policy_seconds(TOLERANCE_REAL_MS + CLIENT_OVERHEAD_REAL_MS)
}

pub(super) fn seconds(values: &[f64]) -> String {
    let shown: Vec<String> = values.iter().map(|v| format!("{v:.2}")).collect();
    format!("[{}] s", shown.join(", "))
}

fn exactly_attempts(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let expected: usize = num(&ctx, 1);
    world.check(Level::Wire, &ctx.step.value, format!("{expected} attempts"), |run| {
        let seen = run.attempts().len();
        (format!("{seen} attempts"), seen == expected)
    });
    done()
}

fn at_most_attempts(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let limit: usize = num(&ctx, 1);
    world.check(Level::Wire, &ctx.step.value, format!("at most {limit} attempts"), |run| {
        let seen = run.attempts().len();
        (format!("{seen} attempts"), seen <= limit)
    });
    done()
}

fn gap_at_least(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let (later, wait, earlier): (usize, f64, usize) = (num(&ctx, 1), num(&ctx, 2), num(&ctx, 3));
    world.check(Level::Wire, &ctx.step.value, format!("a wait of at least {wait} s"), |run| {
        match gap(run, earlier, later) {
            Some(seen) => (format!("{seen:.3} s"), seen >= wait - tolerance(run)),
            None => (format!("only {} attempts", run.attempts().len()), false),
        }
    });
    done()
}

fn gap_within(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let (later, limit, earlier): (usize, f64, usize) = (num(&ctx, 1), num(&ctx, 2), num(&ctx, 3));
    world.check(Level::Wire, &ctx.step.value, format!("a wait of at most {limit} s"), |run| {
        match gap(run, earlier, later) {
            Some(seen) => (format!("{seen:.3} s"), seen <= limit + upper_slack(run)),
            None => (format!("only {} attempts", run.attempts().len()), false),
        }
    });
    done()
}

fn attempt_lasts(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let (number, low, high): (usize, f64, f64) = (num(&ctx, 1), num(&ctx, 2), num(&ctx, 3));
    world.check(Level::Wire, &ctx.step.value, format!("between {low} and {high} s"), |run| {
        let attempts = run.attempts();
        match attempts.get(number.saturating_sub(1)) {
            Some(entry) => {
                let lasted = run.policy_seconds(entry.finished_at_ms.unwrap_or(f64::INFINITY) - entry.received_at_ms);
                (format!("{lasted:.2} s"), lasted >= low - tolerance(run) && lasted <= high + tolerance(run))
            }
            None => (format!("only {} attempts", attempts.len()), false),
        }
    });
    done()
}

fn call_ends_within(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let limit: f64 = num(&ctx, 1);
    world.check(
        Level::Wire,
        &ctx.step.value,
        format!("≤ {limit} s from the first request to the last reply"),
        |run| {
            let attempts = run.attempts();
            let span = match (attempts.first(), attempts.last().and_then(|e| e.finished_at_ms)) {
                (Some(first), Some(end)) => run.policy_seconds(end - first.received_at_ms),
                _ => f64::INFINITY,
            };
            (format!("{span:.2} s"), span <= limit)
        },
    );
    done()
}

/// The session id a request carried, in any of the headers clients use for it.
fn session_id(entry: &JournalEntry) -> Option<&String> {
    ["x-session-id", "session_id", "session-id", "x-client-request-session"].iter().find_map(|h| entry.headers.get(*h))
}

fn same_session(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.check(
        Level::Wire,
        &ctx.step.value,
        "one session id header (x-session-id or session_id) on every attempt",
        |run| {
            let ids: Vec<Option<&String>> = run.attempts().iter().map(|e| session_id(e)).collect();
            let distinct: BTreeSet<_> = ids.iter().collect();
            let ok = ids.len() > 1 && ids.iter().all(Option::is_some) && distinct.len() == 1;
            (format!("{ids:?}"), ok)
        },
    );
    done()
}
