//! Judged on the wire: the server journal of what the implementation actually did — how many
//! attempts, with which session id, how long each lasted and waited. Times are converted back to
//! policy seconds by the case's clock (its time scale undone, the client's calibrated reaction
//! taken out), each with its noise; every timing check names what it must tell apart
//! ([`Margin`]).

use std::collections::BTreeSet;

use super::{number, Args, Check, Found, Observation, Timed, Timing};
use crate::timing::{Estimate, Margin, SpanShape};
use crate::verdict::Level;
use squall::journal::JournalEntry;

pub(super) const CHECKS: &[Check] = &[
    Check::plain(
        r"^the server sees exactly (\d+) attempts?$",
        Level::Wire,
        |args| format!("{} attempts", args[1]),
        exactly_attempts,
    ),
    Check::plain(
        r"^the server sees at most (\d+) attempts?$",
        Level::Wire,
        |args| format!("at most {} attempts", args[1]),
        at_most_attempts,
    ),
    Check::plain(
        r"^every attempt carries the same session id$",
        Level::Wire,
        |_| "one session id header (x-session-id or session_id) on every attempt".to_owned(),
        same_session,
    ),
    Check::timed(
        r"^attempt (\d+) starts at least ([\d.]+) seconds after attempt (\d+) ends$",
        Level::Wire,
        |args| format!("a wait of at least {} s", args[2]),
        Timing { margin: asked_wait_margin, measure: gap_at_least },
    ),
    Check::timed(
        r"^attempt (\d+) starts within ([\d.]+) seconds after attempt (\d+) ends$",
        Level::Wire,
        |args| format!("a wait of at most {} s", args[2]),
        Timing { margin: |_| WAIT_ALLOWANCE, measure: gap_within },
    ),
    Check::timed(
        r"^attempt (\d+) lasts between ([\d.]+) and ([\d.]+) seconds$",
        Level::Wire,
        |args| format!("between {} and {} s", args[2], args[3]),
        Timing { margin: |args| Margin::of_attempts(number::<f64>(args, 2) / 2.0), measure: attempt_lasts },
    ),
    Check::timed(
        r"^the call ends within ([\d.]+) seconds$",
        Level::Wire,
        |args| format!("≤ {} s from the first request to the last reply", args[1]),
        Timing { margin: |_| DEGRADE_BUDGET, measure: call_ends_within },
    ),
];

/// Seed 002's first backoff wait is 1-2 s ("第 1 次 | 1-2 秒"): a client that ignores an asked
/// wait and backs off instead waits at most this long before its first retry.
const SEED_002_FIRST_WAIT_MAX_S: f64 = 2.0;

/// "At least W s": it rejects a client that ignores the asked wait and backs off instead (at
/// most seed 002's 2 s first wait), so the margin is W − 2 s. An ask of 2 s or less cannot be
/// told from a backoff; the check then rejects a client that waits under half of it.
fn asked_wait_margin(args: &Args) -> Margin {
    let wait: f64 = number(args, 2);
    Margin::of_waits(if wait > SEED_002_FIRST_WAIT_MAX_S { wait - SEED_002_FIRST_WAIT_MAX_S } else { wait / 2.0 })
        .at_least()
}

/// "Within W s" (an allowance above the asked wait): it rejects a client that adds a backoff
/// of its own on top — at least seed 002's 1 s base delay ("base_delay: 基础延迟（默认 1 秒）").
const WAIT_ALLOWANCE: Margin = Margin::of_waits(1.0).at_most();

/// "Lasts between lo and hi s": seed 001's ladder doubles the timeout ("60s -> 120s"), so the
/// behaviour to reject is the other rung, at least half of lo away (see the table's margin).
///
/// "The call ends within T s": seed 004's worst case before its fix was "~366s" against
/// "≤5 分钟" (300 s), 66 s apart; the span holds up to 3 attempts (429/5xx "3") and 2 waits.
const DEGRADE_BUDGET: Margin = Margin { waits: 2, attempts: 3, ..Margin::of_waits(60.0) }.at_most();

/// The wait between attempt `earlier` ending and attempt `later` starting (1-based), in real
/// ms and as policy time.
pub(super) fn gap(observation: &Observation, earlier: usize, later: usize) -> Option<(f64, Estimate)> {
    let attempts = observation.attempts();
    let (a, b) = (attempts.get(earlier.checked_sub(1)?)?, attempts.get(later.checked_sub(1)?)?);
    let real = b.received_at_ms - a.finished_at_ms?;
    Some((real, observation.clock.wait(real)))
}

/// All waits between consecutive attempts, as policy time.
pub(super) fn waits(observation: &Observation) -> Vec<Estimate> {
    (1..observation.attempts().len()).filter_map(|n| gap(observation, n, n + 1)).map(|(_, wait)| wait).collect()
}

/// The waits' best estimates, and the largest noise among them: what a check over all of
/// them must tolerate.
pub(super) fn waits_and_noise(observation: &Observation) -> (Vec<f64>, f64) {
    let waits = waits(observation);
    (waits.iter().map(|w| w.value).collect(), waits.iter().map(|w| w.noise).fold(0.0, f64::max))
}

pub(super) fn seconds(values: &[f64]) -> String {
    let shown: Vec<String> = values.iter().map(|v| format!("{v:.2}")).collect();
    format!("[{}] s", shown.join(", "))
}

/// "waited 4.02 s ± 0.06 (158.4 ms real, the client's reaction of 118.0 ms taken out)".
fn describe_wait(observation: &Observation, real_ms: f64, wait: &Estimate) -> String {
    format!(
        "waited {} ({real_ms:.1} ms real, the client's reaction of {:.1} ms taken out)",
        wait.describe(),
        observation.clock.reaction.center_ms
    )
}

fn exactly_attempts(observation: &Observation, args: &Args) -> Found {
    let seen = observation.attempts().len();
    Found::new(format!("{seen} attempts"), seen == number::<usize>(args, 1))
}

fn at_most_attempts(observation: &Observation, args: &Args) -> Found {
    let seen = observation.attempts().len();
    Found::new(format!("{seen} attempts"), seen <= number::<usize>(args, 1))
}

/// A lower bound: on squall's virtual clock as measured; else a pass stands once read across a
/// run at another scale too ([`super::paired`]).
fn gap_at_least(observation: &Observation, args: &Args) -> Timed {
    let single = judge_gap(observation, args, Estimate::may_be_at_least);
    if observation.clock.is_exact() {
        return single;
    }
    let (later, bound, earlier): (usize, f64, usize) = (number(args, 1), number(args, 2), number(args, 3));
    match &observation.paired {
        Some(paired) => super::paired::at_least(observation, paired, earlier, later, bound, &single).unwrap_or(single),
        None => single.paired_if(Some(super::paired::WHY.to_owned())),
    }
}

/// A wait within W s even when all of it is counted as waiting is within W whatever the
/// client's reaction.
fn gap_within(observation: &Observation, args: &Args) -> Timed {
    let (later, bound, earlier): (usize, f64, usize) = (number(args, 1), number(args, 2), number(args, 3));
    match gap(observation, earlier, later) {
        Some((real, seen)) if observation.clock.all_policy(real) <= bound => {
            Timed::decided(describe_wait(observation, real, &seen), true)
        }
        _ => judge_gap(observation, args, Estimate::may_be_at_most),
    }
}

/// "attempt N starts … W seconds after attempt M ends": the wait between them, against W.
fn judge_gap(observation: &Observation, args: &Args, holds: fn(&Estimate, f64) -> bool) -> Timed {
    let (later, bound, earlier): (usize, f64, usize) = (number(args, 1), number(args, 2), number(args, 3));
    match gap(observation, earlier, later) {
        Some((real, seen)) => Timed::bound(describe_wait(observation, real, &seen), holds(&seen, bound), seen.noise),
        None => missing_attempts(observation),
    }
}

/// A check that cannot find the attempts it measures fails, by count.
fn missing_attempts(observation: &Observation) -> Timed {
    Timed::decided(format!("only {} attempts", observation.attempts().len()), false)
}

fn attempt_lasts(observation: &Observation, args: &Args) -> Timed {
    let (number_of, low, high): (usize, f64, f64) = (number(args, 1), number(args, 2), number(args, 3));
    let attempts = observation.attempts();
    let Some(entry) = attempts.get(number_of.saturating_sub(1)) else { return missing_attempts(observation) };
    let real = entry.finished_at_ms.unwrap_or(f64::INFINITY) - entry.received_at_ms;
    let lasted = observation.clock.duration(real);
    let held = lasted.may_be_at_least(low) && lasted.may_be_at_most(high);
    Timed::bound(format!("lasted {} ({real:.1} ms real)", lasted.describe()), held, lasted.noise)
}

fn call_ends_within(observation: &Observation, args: &Args) -> Timed {
    let limit: f64 = number(args, 1);
    let attempts = observation.attempts();
    let (Some(first), Some(end)) = (attempts.first(), attempts.last().and_then(|e| e.finished_at_ms)) else {
        return Timed::decided("no finished attempt", false);
    };
    let real = end - first.received_at_ms;
    let span = observation.clock.span(real, SpanShape { waits: attempts.len() - 1, attempts: attempts.len() });
    let observed = format!("{} ({real:.1} ms real)", span.describe());
    if observation.clock.all_policy(real) <= limit {
        return Timed::decided(observed, true);
    }
    Timed::bound(observed, span.may_be_at_most(limit), span.noise)
}

/// The session id a request carried, in any of the headers clients use for it.
fn session_id(entry: &JournalEntry) -> Option<&String> {
    ["x-session-id", "session_id", "session-id", "x-client-request-session"].iter().find_map(|h| entry.headers.get(*h))
}

fn same_session(observation: &Observation, _: &Args) -> Found {
    let ids: Vec<Option<&String>> = observation.attempts().iter().map(|e| session_id(e)).collect();
    let distinct: BTreeSet<_> = ids.iter().collect();
    let held = ids.len() > 1 && ids.iter().all(Option::is_some) && distinct.len() == 1;
    Found::new(format!("{ids:?}"), held)
}
