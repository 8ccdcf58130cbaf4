//! Then, judged on the wire: the server journal of what the implementation actually did.
//! Times are converted back to policy seconds with the run's time scale; each timing check
//! allows [`TOLERANCE_REAL_MS`] of real time on top of the scaled value.

use std::collections::BTreeSet;

use cucumber::step::Context;
use futures_util::future::LocalBoxFuture;

use super::{done, num, StepFn};
use crate::journal::JournalEntry;
use crate::suite::results::Level;
use crate::suite::world::{CaseRun, SuiteWorld};

pub const STEPS: &[(&str, StepFn)] = &[
    (r"^the server sees exactly (\d+) attempts?$", exactly_attempts),
    (r"^the server sees at most (\d+) attempts?$", at_most_attempts),
    (r"^attempt (\d+) starts at least ([\d.]+) seconds after attempt (\d+) ends$", gap_at_least),
    (r"^attempt (\d+) starts within ([\d.]+) seconds after attempt (\d+) ends$", gap_within),
    (r"^the waits between attempts grow at least ([\d.]+)x each until they reach a cap$", waits_grow),
    (r"^no wait between attempts is longer than ([\d.]+) seconds$", waits_capped),
    (r"^the waits stay within 1 second of a doubling schedule$", waits_jitter),
    (r"^attempt (\d+) lasts between ([\d.]+) and ([\d.]+) seconds$", attempt_lasts),
    (r"^the call ends within ([\d.]+) seconds$", call_ends_within),
    (r"^every attempt carries the same session id$", same_session),
    (r"^exactly (\d+) deep-research sub-sessions? (?:starts|start)$", sub_sessions),
    (r"^the main session's instructions forbid relaunching deep research$", instructions_forbid_relaunch),
    (r"^the request after the tool call carries at most (\d+) KB of tool output$", tool_output_budget),
];

/// Real-time slack on every timing check (timer and scheduling jitter on a loaded machine).
pub const TOLERANCE_REAL_MS: f64 = 3.0;

/// Policy seconds between attempt `later` starting and attempt `earlier` ending (1-based).
fn gap(run: &CaseRun, earlier: usize, later: usize) -> Option<f64> {
    let attempts = run.attempts();
    let (a, b) = (attempts.get(earlier.checked_sub(1)?)?, attempts.get(later.checked_sub(1)?)?);
    Some(run.policy_seconds(b.received_at_ms - a.finished_at_ms?))
}

/// All waits between consecutive attempts, in policy seconds.
fn waits(run: &CaseRun) -> Vec<f64> {
    (1..run.attempts().len()).filter_map(|n| gap(run, n, n + 1)).collect()
}

fn tolerance(run: &CaseRun) -> f64 {
    run.policy_seconds(TOLERANCE_REAL_MS)
}

fn seconds(values: &[f64]) -> String {
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
            Some(seen) => (format!("{seen:.3} s"), seen <= limit + tolerance(run)),
            None => (format!("only {} attempts", run.attempts().len()), false),
        }
    });
    done()
}

fn waits_grow(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let factor: f64 = num(&ctx, 1);
    world.check(
        Level::Wire,
        &ctx.step.value,
        format!("each wait ≥ {factor}× the previous until they level off"),
        |run| {
            let waits = waits(run);
            // Growth must hold until the first wait that does not grow: from there on the cap
            // holds the waits level (they may not shrink below 90 % of the level reached).
            let mut capped = false;
            let mut ok = waits.len() >= 2;
            for pair in waits.windows(2) {
                if !capped && pair[1] < pair[0] * factor - tolerance(run) {
                    capped = true;
                }
                if capped && pair[1] < pair[0] * 0.9 - tolerance(run) {
                    ok = false;
                }
            }
            // Growth must have happened before any cap: the second wait at least grows.
            if let [first, second, ..] = waits.as_slice() {
                ok &= *second >= *first * factor - tolerance(run);
            }
            (seconds(&waits), ok)
        },
    );
    done()
}

fn waits_capped(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let cap: f64 = num(&ctx, 1);
    world.check(Level::Wire, &ctx.step.value, format!("every wait ≤ {cap} s"), |run| {
        let waits = waits(run);
        let ok = waits.iter().all(|w| *w <= cap + tolerance(run));
        (seconds(&waits), ok)
    });
    done()
}

fn waits_jitter(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    // With wait_n = base·2^n + jitter_n and jitter in [0, 1 s): wait_{n+1} − 2·wait_n lies in
    // (−2 s, 1 s). Checked while the waits still double (before the cap).
    world.check(Level::Wire, &ctx.step.value, "−2 s < wait(n+1) − 2·wait(n) < 1 s while doubling", |run| {
        let waits = waits(run);
        let slack = tolerance(run) * 3.0;
        let pairs: Vec<&[f64]> = waits.windows(2).collect();
        let mut doubling: Vec<&[f64]> = pairs.iter().copied().take_while(|p| p[1] > p[0] * 1.4).collect();
        // When the waits level off afterwards, the last growing wait was clipped by the cap.
        if doubling.len() < pairs.len() {
            doubling.pop();
        }
        let ok = !doubling.is_empty()
            && doubling.iter().all(|p| (p[1] - 2.0 * p[0]) > -2.0 - slack && (p[1] - 2.0 * p[0]) < 1.0 + slack);
        (seconds(&waits), ok)
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

/// Sub-sessions on the wire: each maximal run of consecutive requests on the `sub` track
/// between main-session requests is one sub-session (they run one at a time, inside a Task
/// call). Implementation-agnostic: no session header needed.
fn count_sub_sessions(journal: &[JournalEntry]) -> usize {
    let tracks: Vec<Option<&str>> =
        journal.iter().filter(|e| e.attempt.is_some()).map(|e| e.track.as_deref()).collect();
    tracks.iter().enumerate().filter(|(i, t)| **t == Some("sub") && (*i == 0 || tracks[i - 1] != Some("sub"))).count()
}

fn sub_sessions(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let expected: usize = num(&ctx, 1);
    world.check(Level::Wire, &ctx.step.value, format!("{expected} sub-session(s)"), |run| {
        let seen = count_sub_sessions(&run.journal);
        (format!("{seen} sub-session(s)"), seen == expected)
    });
    done()
}

fn instructions_forbid_relaunch(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    world.check(Level::Wire, &ctx.step.value, "the first main-session request states the no-relaunch rule", |run| {
        let first = run.journal.iter().find(|e| e.track.as_deref() == Some("main"));
        let text = first.map(|e| e.body.to_string().to_lowercase()).unwrap_or_default();
        let names_task = text.contains("deep-research") || text.contains("deep research");
        let forbids =
            ["do not start it again", "not start it again", "do not relaunch", "不得", "不要再次", "not restart"]
                .iter()
                .any(|p| text.contains(p));
        (
            if names_task && forbids {
                "the rule is stated".to_owned()
            } else {
                "no no-relaunch rule found in the instructions".to_owned()
            },
            names_task && forbids,
        )
    });
    done()
}

fn tool_output_budget(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let limit_kb: usize = num(&ctx, 1);
    world.check(Level::Wire, &ctx.step.value, format!("tool output ≤ {limit_kb} KB in the next request"), |run| {
        let next =
            run.journal.iter().filter(|e| e.attempt.is_some()).find(|e| {
                e.body.to_string().contains("function_call_output") || e.body.to_string().contains("\"tool\"")
            });
        match next {
            Some(entry) => {
                let size = entry.body.to_string().len();
                (format!("{} KB request body", size / 1024), size <= limit_kb * 1024)
            }
            None => ("no request carried a tool output".to_owned(), false),
        }
    });
    done()
}

#[cfg(test)]
mod tests {
    use super::count_sub_sessions;
    use crate::journal::JournalEntry;

    fn entry(track: &str) -> JournalEntry {
        let mut value = serde_json::json!({
            "index": 0, "track": track, "attempt": 0, "method": "POST", "path": "/responses", "headers": {}, "body": null,
            "stream": true, "received_at_ms": 0.0, "finished_at_ms": 1.0, "status": 200, "fault": null, "end": "completed",
            "events_sent": 1, "bytes_sent": 1, "terminal_sent": true
        });
        value["track"] = serde_json::json!(track);
        serde_json::from_value(value).expect("entry")
    }

    #[test]
    fn sub_sessions_are_runs_of_sub_requests_between_main_requests() {
        let journal: Vec<JournalEntry> =
            ["main", "sub", "sub", "main", "main", "sub", "main"].iter().map(|t| entry(t)).collect();
        assert_eq!(count_sub_sessions(&journal), 2);
        let refused: Vec<JournalEntry> = ["main", "sub", "sub", "main", "main"].iter().map(|t| entry(t)).collect();
        assert_eq!(count_sub_sessions(&refused), 1);
    }
}
