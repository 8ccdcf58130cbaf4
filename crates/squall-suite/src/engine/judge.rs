//! One run of a case judged: a pure function of the case's plan and what its run left. It gives
//! the case's record — the verdict this run supports — and, when a slower run could change that
//! verdict and one is allowed, asks for it: a timing check's miss that a busy machine could
//! explain, or a measurement too noisy to decide. A MUST that failed for certain needs no other
//! run: the case fails whatever the rest could not show.

use super::liveness::{still_waiting_on_silence, unjudgeable_case, GIVES_UP_ON_SILENCE, SILENCE_EXPECTED};
use crate::cases::CasePlan;
use crate::checks::{Finding, Observation, Unsure};
use crate::results::{CaseRecord, CheckRecord};
use crate::timing::margin::{paired_scale, slower};
use crate::timing::{choose_scale, scale_name};
use crate::verdict::{Level, Strength, Verdict};
use squall::clock::TimeScale;

/// Where a run of a case stands among its runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Stage {
    /// The time scale the run went at.
    pub time_scale: TimeScale,
    /// The case's own scale (the suite's, or the feature's "timing is measured at 1/N").
    pub asked: TimeScale,
    /// The slowest scale allowed.
    pub max: TimeScale,
    /// No slower run is allowed: what this one found stands.
    pub last: bool,
    /// Another run at this scale may be drawn, for a check that reads a client's random waits
    /// over several runs.
    pub draws_left: bool,
    /// A draw at this scale comes before a slower run (a first look at the case's own scale,
    /// where draws are cheap and only a miss is sought).
    pub draws_first: bool,
}

/// What a run left, beyond its observation: how it was judged and when its client ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Judging {
    /// The contract level the implementation declares.
    pub level: Level,
    /// When the client ended, in the run's journal time (ms since the run was created).
    pub ended_at_ms: f64,
}

/// Another run the judge asks for, and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunAgain {
    /// The scale to run at: for a slower run at least twice as slow, and slow enough for every
    /// margin of the case given the reaction this run was read with; for a draw, this run's.
    pub time_scale: TimeScale,
    pub why: String,
    /// A draw: the same case again at the same scale, with a seed of its own, its waits read
    /// with this run's.
    pub draw: bool,
    /// The checks that asked for the draw (read over every run drawn).
    pub drawn_for: Vec<String>,
    /// A run at another scale read with this one (a lower bound's pass, against the client's
    /// own work on the path it judges): this run is kept for it.
    pub pair: bool,
}

/// The verdict of one run, and a slower run when one could change it.
#[derive(Debug, Clone)]
pub(crate) struct Judgement {
    pub record: CaseRecord,
    pub again: Option<RunAgain>,
}

/// Judge one run of `plan`. Its Then steps are judged in order and stop at the first that fails
/// a MUST (the rest would describe a run already failed).
pub(crate) fn judge(plan: &CasePlan, observation: &Observation, judging: Judging, stage: &Stage) -> Judgement {
    let name = plan.case_name();
    if let Some(observed) = still_waiting_on_silence(observation, judging.ended_at_ms) {
        let check = harness_check(plan, GIVES_UP_ON_SILENCE, SILENCE_EXPECTED, observed);
        return Judgement { record: observation.recorded_in(CaseRecord::judged(name, vec![check], None)), again: None };
    }
    if let Some(why) = unjudgeable_case(observation) {
        return Judgement {
            record: observation.recorded_in(CaseRecord::judged(name, Vec::new(), Some(why))),
            again: None,
        };
    }
    let mut findings: Vec<Finding> = Vec::new();
    for step in &plan.then {
        let judged = step.judge(observation, judging.level, plan.advisory());
        let failed_a_must = judged.iter().any(|f| f.record.verdict == Verdict::Fail);
        findings.extend(judged);
        if failed_a_must {
            break;
        }
    }
    let again = run_again(plan, observation, &findings, stage);
    let checks = findings.into_iter().map(|f| f.record).collect();
    Judgement { record: observation.recorded_in(CaseRecord::judged(name, checks, None)), again }
}

/// Another run, when some finding is unsure, none failed a MUST for certain, and the stage
/// allows one: a slower run for what noise left open (first: it changes the clock), else a draw
/// for what the client's randomness did — the draw first where the stage says so.
fn run_again(plan: &CasePlan, observation: &Observation, findings: &[Finding], stage: &Stage) -> Option<RunAgain> {
    let failed_for_certain = findings.iter().any(|f| f.record.verdict == Verdict::Fail && f.unsure.is_none());
    if failed_for_certain {
        return None;
    }
    let unsure = |slower: bool| {
        findings.iter().find_map(|f| match &f.unsure {
            Some(Unsure::Slower(why)) if slower => Some((&f.record.name, why)),
            Some(Unsure::Draws(why)) if !slower => Some((&f.record.name, why)),
            _ => None,
        })
    };
    let slower = || unsure(true).and_then(|(check, why)| slower_run(plan, observation, stage, check, why));
    let draw = || {
        let (check, why) = unsure(false).filter(|_| stage.draws_left)?;
        let why = format!("draw again at {} to settle what `{check}` found: {why}", scale_name(stage.time_scale));
        let drawn_for = findings
            .iter()
            .filter(|f| matches!(f.unsure, Some(Unsure::Draws(_))))
            .map(|f| f.record.name.clone())
            .collect();
        Some(RunAgain { time_scale: stage.time_scale, why, draw: true, drawn_for, pair: false })
    };
    let paired = || {
        let (check, why) = findings.iter().find_map(|f| match &f.unsure {
            Some(Unsure::Paired(why)) => Some((&f.record.name, why)),
            _ => None,
        })?;
        paired_run(plan, observation, stage, check, why)
    };
    match stage.draws_first {
        true => draw().or_else(slower).or_else(paired),
        false => slower().or_else(paired).or_else(draw),
    }
}

/// The run at another scale that a lower bound's pass asks for, when a rung far enough is allowed
/// (none: the pass stands, read at a scale where the client's own work counts least).
fn paired_run(plan: &CasePlan, observation: &Observation, stage: &Stage, check: &str, why: &str) -> Option<RunAgain> {
    if stage.last || observation.paired.is_some() {
        return None;
    }
    let clock = &observation.clock;
    let time_scale = paired_scale(stage.time_scale, stage.max, &plan.margins(), &clock.reaction, clock.machine)?;
    let why = format!(
        "run again at {} to read what `{check}` found at {} across both: {why}",
        scale_name(time_scale),
        scale_name(stage.time_scale)
    );
    Some(RunAgain { time_scale, why, draw: false, drawn_for: Vec::new(), pair: true })
}

/// A slower run for what `check` found, when the stage allows one.
fn slower_run(plan: &CasePlan, observation: &Observation, stage: &Stage, check: &str, why: &str) -> Option<RunAgain> {
    if stage.last {
        return None;
    }
    let slower = slower(stage.time_scale, stage.max)?;
    let clock = &observation.clock;
    let needed = choose_scale(stage.asked, stage.max, &plan.margins(), &clock.reaction, clock.machine).time_scale;
    let time_scale = slower.max(needed);
    let why = format!(
        "run again at {} to settle what `{check}` found at {}: {why}",
        scale_name(time_scale),
        scale_name(stage.time_scale)
    );
    Some(RunAgain { time_scale, why, draw: false, drawn_for: Vec::new(), pair: false })
}

/// A check the harness judges itself, at `wire`: a MUST unless the case is `@should`.
fn harness_check(plan: &CasePlan, name: &str, expected: &str, observed: String) -> CheckRecord {
    let strength = if plan.advisory() { Strength::Should } else { Strength::Must };
    CheckRecord {
        name: name.to_owned(),
        level: Level::Wire,
        strength,
        verdict: Verdict::of_check(strength, true, false),
        expected: expected.to_owned(),
        observed,
        draws: None,
    }
}
