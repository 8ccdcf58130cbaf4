//! When: run the implementation on the scripted case — one instance, or a herd of them at once
//! against one run (`--herd`) — at a time scale at which every timing check of the case can
//! judge (see [`crate::suite::timing::margin`]).

use std::sync::OnceLock;

use cucumber::step::Context;
use futures_util::future::LocalBoxFuture;
use regex::Regex;

use crate::iut::{CaseSpec, TaskKind};
use crate::journal::{EndKind, JournalEntry};
use crate::scenario::FaultKind;
use crate::suite::checks::Observation;
use crate::suite::execute::{execute, Execution};
use crate::suite::timing::calibration::calibrate;
use crate::suite::timing::margin::slower;
use crate::suite::timing::{choose_scale, scale_name, CaseClock, Margin, Reaction, ScaleChoice};
use crate::suite::verdict::{unjudgeable_run, Level};
use crate::suite::world::{SuiteContext, SuiteWorld};

/// What a When step has the implementation do: one call, a task or a turn (the IUT contract's
/// `SQUALL_TASK`), the contract level that needs, and whether a herd does it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Action {
    pub task: TaskKind,
    pub needs: Level,
    pub herd: bool,
}

const fn action(task: TaskKind, needs: Level, herd: bool) -> Action {
    Action { task, needs, herd }
}

pub(super) const STEPS: &[(&str, Action)] = &[
    (r"^the implementation streams one model call$", action(TaskKind::Stream, Level::Wire, false)),
    (r"^the implementation runs a deep-research task$", action(TaskKind::Task, Level::Tasks, false)),
    (r"^the implementation runs a main-session turn$", action(TaskKind::Main, Level::Tasks, false)),
    (r"^a herd of clients each streams one model call$", action(TaskKind::Stream, Level::Wire, true)),
    (r"^a herd of clients each runs a deep-research task$", action(TaskKind::Task, Level::Tasks, true)),
    (r"^a herd of clients each runs a main-session turn$", action(TaskKind::Main, Level::Tasks, true)),
];

/// The action a When step names; `None` when no When step reads so.
pub(crate) fn find(step: &str) -> Option<Action> {
    static COMPILED: OnceLock<Vec<(Regex, Action)>> = OnceLock::new();
    let compiled = COMPILED.get_or_init(|| STEPS.iter().map(|(pattern, a)| (super::regex(pattern), *a)).collect());
    compiled.iter().find(|(regex, _)| regex.is_match(step)).map(|(_, action)| *action)
}

/// The prompt every case gives the implementation (`SQUALL_PROMPT`).
pub(crate) const PROMPT: &str = "Survey how LLM clients retry provider failures";

/// Runs of one case at most: the first, and a slower one to confirm a timing check's failure.
const MAX_RUNS: usize = 2;

/// The check recorded when an implementation is killed while it waits on a reply squall
/// withholds on purpose: it never gave up on a silent provider (REQ-0006-001's
/// `ProviderTimeoutException`, seed 004's timeouts), which is a failure, not an unjudgeable case.
pub(crate) const GIVES_UP_ON_SILENCE: &str = "the implementation gives up on a silent provider";

/// The When step: run the implementation as the step's action says.
pub(super) fn step(world: &mut SuiteWorld, ctx: Context) -> LocalBoxFuture<'_, ()> {
    let action = find(&ctx.step.value).unwrap_or_else(|| {
        panic!("no When step reads `{}` (its pattern matched one squall registered)", ctx.step.value)
    });
    Box::pin(run(world, ctx, action))
}

async fn run(world: &mut SuiteWorld, ctx: Context, action: Action) {
    let Action { task, needs, herd } = action;
    let suite = world.ctx().clone();
    let herd = herd.then_some(suite.herd);
    if suite.level < needs {
        world.not_applicable = Some(format!(
            "the case needs level `{}`; the implementation declares `{}`",
            needs.as_str(),
            suite.level.as_str()
        ));
        return;
    }
    let scenario = world
        .setup
        .script
        .build("case", &suite.catalogue)
        .unwrap_or_else(|e| panic!("cannot build the case's scenario: {e}"));
    let asked = world.setup.asked_time_scale(suite.time_scale);
    let max = suite.max_time_scale.max(asked);
    let margins: Vec<(String, Margin)> = world.timing.iter().map(|p| (p.step.clone(), p.margin())).collect();
    let first: Vec<(String, Margin)> = margins.iter().filter(|(_, m)| m.sets_first_scale()).cloned().collect();
    let mut reaction = suite.calibration.reaction.clone();
    let mut choice = choose_scale(asked, max, &first, &reaction);
    let mut runs = 0;
    let (run, ended_at_ms) = loop {
        runs += 1;
        // A raised case gets as much more real time as it runs slower.
        let timeout = suite.case_timeout.mul_f64((choice.time_scale / asked).max(1.0));
        let spec = CaseSpec {
            case: ctx.step.value.clone(),
            task,
            prompt: PROMPT.to_owned(),
            base_url: String::new(),
            time_scale: choice.time_scale,
            profile: world.setup.profile.clone(),
            fallback: world.setup.fallback.clone(),
            max_retries: world.setup.max_retries,
            seed: suite.seed,
            client: None,
            timeout,
        };
        let Execution { journal, iut, others, real_duration, ended_at_ms } =
            execute(&suite.server, &suite.iut, scenario.clone(), spec, herd).await.unwrap_or_else(|e| panic!("{e}"));
        let clock = CaseClock::new(choice.time_scale, reaction.clone());
        let mut run = Observation { journal, iut, others, clock, scale_note: choice.note.clone(), real_duration };
        // A timing check that fails where a busy machine could explain it, misses evidence,
        // or cannot judge, is confirmed by a run at least twice as slow: a client a margin
        // beyond its bound fails both; one that met it but was held back passes the second.
        // The reaction is measured again first, and the second run — the one judged — takes
        // the client to react as fast as either measurement saw it (a calibration taken while
        // the machine was busier than during the case cannot fail it on a lower bound), at a
        // scale slow enough for every margin of the case.
        let Some(slower_scale) = slower(choice.time_scale, max) else { break (run, ended_at_ms) };
        let confirm = runs < MAX_RUNS
            && dead_client(&run).is_none()
            && world.timing.iter().any(|check| check.needs_confirmation(&mut run));
        if !confirm {
            break (run, ended_at_ms);
        }
        let fresh = measure_reaction(&suite).await;
        reaction = reaction.reaching_down_to(&fresh);
        let scale = slower_scale.max(choose_scale(asked, max, &margins, &reaction).time_scale);
        let why = format!(
            "run again at {} to confirm what a timing check found at {} (the client's reaction measured again: {:.1}–{:.1} ms real)",
            scale_name(scale),
            scale_name(choice.time_scale),
            fresh.low_ms,
            fresh.high_ms
        );
        choice = ScaleChoice {
            time_scale: scale,
            note: Some(choice.note.map_or(why.clone(), |earlier| format!("{earlier}; {why}"))),
            ..choice
        };
    };
    let silent = still_waiting_on_silence(&run, ended_at_ms);
    let unjudgeable = unjudgeable_case(&run);
    world.run = Some(run);
    if let Some(observed) = silent {
        world.judged_by_harness(GIVES_UP_ON_SILENCE, SILENCE_EXPECTED, observed, false);
    }
    // The step fails without a failed check: the case is `error`, whatever it would have
    // judged — a dead implementation never passes.
    if let Some(reason) = unjudgeable {
        panic!("{reason}");
    }
}

/// Why a case's run cannot be judged, whatever its checks would say: an instance that died, hung
/// or left no usable result, or one that reports another time scale than it was given.
pub(crate) fn unjudgeable_case(run: &Observation) -> Option<String> {
    dead_client(run).or_else(|| reported_scale_mismatch(run.iut.result.as_ref(), run.time_scale()))
}

/// Why an instance's run cannot be judged (a herd's: the first such client, named), if one
/// cannot.
fn dead_client(run: &Observation) -> Option<String> {
    let herd = run.is_herd();
    run.clients().enumerate().find_map(|(k, client)| {
        unjudgeable_run(client).map(|why| if herd { format!("client {k} of the herd: {why}") } else { why })
    })
}

/// A withheld reply still awaited after this much policy time is awaited forever: twice the
/// longest default timeout of the official SDKs (openai's 600 s read timeout), and far past seed
/// 001's 60 s → 120 s ladder and seed 004's 5-minute budget for a whole call.
const GIVES_UP_WITHIN_S: f64 = 1200.0;

/// The client's reaction measured now, as the run's calibration measured it.
async fn measure_reaction(suite: &SuiteContext) -> Reaction {
    let calibration = calibrate(
        &suite.server,
        &suite.iut,
        suite.time_scale,
        suite.calibration_instances,
        suite.case_timeout,
        suite.seed,
    )
    .await;
    calibration.map_or_else(|e| Reaction::unknown(e.to_string()), |c| c.reaction)
}

/// What [`GIVES_UP_ON_SILENCE`] expects.
pub(crate) const SILENCE_EXPECTED: &str =
    "it gives up on a silent attempt (its own timeout) and retries or reports the failure";

/// What [`GIVES_UP_ON_SILENCE`] observed, when the implementation was killed at the case timeout
/// (at `ended_at_ms` of the run's journal time) while still waiting on a reply squall withholds
/// ([`waiting_on_silence`]); `None` when it was not.
pub(crate) fn still_waiting_on_silence(run: &Observation, ended_at_ms: f64) -> Option<String> {
    let time_scale = run.time_scale();
    let (attempt, open_ms) =
        run.iut.timed_out.then(|| waiting_on_silence(&run.journal, ended_at_ms, time_scale)).flatten()?;
    Some(format!(
        "still waiting on attempt {attempt}, whose reply squall withholds, after {:.1} s real ({:.0} s of policy time), when it was killed at the case timeout",
        open_ms / 1000.0,
        open_ms / 1000.0 / time_scale
    ))
}

/// Why a kill at the case timeout is a verdict rather than no verdict: the implementation was
/// still waiting on a reply squall withholds on purpose (headers delayed, or a stall) — its last
/// model request had no reply yet or was stalled, ended only with the kill, and had been open for
/// more than [`GIVES_UP_WITHIN_S`] of policy time (a client whose timeouts are merely longer than
/// the case allows is not judged so). Returns the 1-based attempt and how long it was open (ms).
fn waiting_on_silence(journal: &[JournalEntry], killed_at_ms: f64, time_scale: f64) -> Option<(usize, f64)> {
    /// A hang-up noticed this long after the kill is the kill's.
    const KILL_NOTICED_MS: f64 = 1000.0;
    let calls: Vec<&JournalEntry> = journal.iter().filter(|e| e.attempt.is_some()).collect();
    let last = calls.last()?;
    let withheld = last.status.is_none() || last.fault == Some(FaultKind::Stall);
    let ended_by_kill = match (last.end, last.finished_at_ms) {
        (None, _) => true,
        (Some(EndKind::ClientClosed | EndKind::Stalled), Some(at)) => at >= killed_at_ms - KILL_NOTICED_MS,
        _ => false,
    };
    let open_ms = killed_at_ms - last.received_at_ms;
    let forever = open_ms / 1000.0 / time_scale > GIVES_UP_WITHIN_S;
    (withheld && ended_by_kill && forever).then_some((calls.len(), open_ms))
}

/// Why the case cannot be judged when the implementation reports a time scale other than the
/// one it was given (`time_scale` in `result.json` is optional).
fn reported_scale_mismatch(result: Option<&serde_json::Value>, time_scale: f64) -> Option<String> {
    let reported = result.map(|r| &r["time_scale"]).filter(|v| !v.is_null())?;
    let fix = "honour SQUALL_TIME_SCALE (multiply every wait and timeout by it), or run with --time-scale 1 if the implementation cannot scale its waits";
    match reported.as_f64() {
        Some(seen) if (seen - time_scale).abs() <= 1e-6 * time_scale => None,
        Some(seen) => Some(format!(
            "result.json says time_scale {seen}, but the case ran at {time_scale} ({}): squall would misread every wait; {fix}",
            scale_name(time_scale)
        )),
        None => Some(format!("result.json's time_scale is not a number ({reported}); {fix}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(
        status: Option<u16>,
        fault: Option<FaultKind>,
        end: Option<EndKind>,
        finished: Option<f64>,
    ) -> JournalEntry {
        let mut entry: JournalEntry = serde_json::from_value(json!({
            "index": 0, "track": "default", "attempt": 0, "method": "POST", "path": "/responses", "headers": {},
            "body": null, "stream": true, "received_at_ms": 0.0, "finished_at_ms": null, "status": null,
            "fault": null, "end": null, "events_sent": 0, "bytes_sent": 0, "terminal_sent": false
        }))
        .expect("entry");
        (entry.status, entry.fault, entry.end, entry.finished_at_ms) = (status, fault, end, finished);
        entry
    }

    #[test]
    fn a_kill_while_squall_withholds_a_reply_is_waiting_on_silence_and_a_hang_elsewhere_is_not() {
        let answered = call(Some(503), None, Some(EndKind::ErrorStatus), Some(10.0));
        let header_delay = call(None, None, Some(EndKind::ClientClosed), Some(60_010.0));
        assert_eq!(waiting_on_silence(&[answered.clone(), header_delay], 60_000.0, 0.01), Some((2, 60_000.0)));
        let stalled_until_killed = call(Some(200), Some(FaultKind::Stall), None, None);
        assert_eq!(
            waiting_on_silence(std::slice::from_ref(&stalled_until_killed), 60_000.0, 0.01),
            Some((1, 60_000.0))
        );
        // It gave up on the stall long before, then hung in its own code.
        let gave_up = call(Some(200), Some(FaultKind::Stall), Some(EndKind::Stalled), Some(600.0));
        assert_eq!(waiting_on_silence(&[gave_up], 60_000.0, 0.01), None);
        assert_eq!(waiting_on_silence(&[answered], 60_000.0, 0.01), None);
        // Killed 4 s into its run at 1/50, its attempt open 200 s of policy time: its timeouts
        // may just be longer than the case allows.
        assert_eq!(waiting_on_silence(&[stalled_until_killed], 4_000.0, 0.02), None);
    }

    #[test]
    fn a_reported_time_scale_must_be_the_one_given() {
        assert_eq!(reported_scale_mismatch(Some(&json!({"ok": true, "time_scale": 0.01})), 0.01), None);
        assert_eq!(reported_scale_mismatch(Some(&json!({"ok": true})), 0.01), None, "missing is allowed");
        let wrong = reported_scale_mismatch(Some(&json!({"ok": true, "time_scale": 1.0})), 0.01).expect("an error");
        assert!(wrong.contains("time_scale 1") && wrong.contains("--time-scale 1"), "{wrong}");
        assert!(reported_scale_mismatch(Some(&json!({"ok": true, "time_scale": "fast"})), 0.01).is_some());
    }
}
