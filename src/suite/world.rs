//! The per-case state of the conformance suite: the scenario being scripted, the run, and
//! the checks made so far. [`SuiteWorld::check`] records each check with the verdict
//! [`super::verdict`] gives it; [`SuiteWorld::check_timed`] does so for a timing check, which
//! refuses to judge when the measurement's noise is too large for its margin.

use std::sync::Arc;
use std::time::Duration;

use crate::iut::{Iut, IutRun};
use crate::journal::JournalEntry;
use crate::scenario::Catalogue;
use crate::server::Server;

use super::results::CheckRecord;
use super::script::ScriptBuilder;
use super::timing::margin::describe_needed;
use super::timing::{scale_name, Calibration, CaseClock, Margin};
use super::verdict::{Level, Strength, Verdict};

/// What every case of one suite run shares.
#[derive(Debug)]
pub(super) struct SuiteContext {
    pub server: Server,
    pub catalogue: Catalogue,
    pub iut: Iut,
    pub level: Level,
    /// Production values run at this fraction of real time.
    pub time_scale: f64,
    /// The most a case's time scale may be raised to so that its timing checks can judge.
    pub max_time_scale: f64,
    /// Real time an implementation gets per case (at the case's own time scale; more when the
    /// scale is raised).
    pub case_timeout: Duration,
    /// Passed to every case as `SQUALL_SEED`, for reproducible jitter.
    pub seed: Option<u64>,
    /// The implementation's reaction, measured before any case ran.
    pub calibration: Calibration,
    /// Calibration instances at each scale (for a case that measures the reaction again).
    pub calibration_instances: usize,
}

/// What a case produced.
#[derive(Debug)]
pub(super) struct CaseRun {
    pub journal: Vec<JournalEntry>,
    pub iut: IutRun,
    /// The case's time scale and the client's reaction: real time as policy time.
    pub clock: CaseClock,
    /// Why the case ran at another scale than it asked for, if it did.
    pub scale_note: Option<String>,
    /// Real time from starting the implementation to collecting its outputs.
    pub real_duration: Duration,
}

impl CaseRun {
    /// Model calls only (`/responses`, `/chat/completions`), in arrival order.
    pub(super) fn attempts(&self) -> Vec<&JournalEntry> {
        self.journal.iter().filter(|e| e.attempt.is_some()).collect()
    }

    /// The implementation's `result.json` (the Task result in `task` cases), or null.
    pub(super) fn result(&self) -> &serde_json::Value {
        static NULL: serde_json::Value = serde_json::Value::Null;
        self.iut.result.as_ref().unwrap_or(&NULL)
    }

    /// The case's time scale.
    pub(super) fn time_scale(&self) -> f64 {
        self.clock.time_scale
    }
}

/// What a check found: what it observed, and whether the bound held — `None` when it could not
/// be judged (the verdict is then `error`, with the reason as the observation).
struct Judgement {
    observed: String,
    held: Option<bool>,
    /// Added to the expectation once the run is known (a timing check's margin in real time).
    expected_note: String,
}

#[derive(Debug, Default)]
pub(super) struct SuiteWorld {
    pub ctx: Option<Arc<SuiteContext>>,
    pub script: ScriptBuilder,
    pub profile: Option<String>,
    pub fallback: Option<String>,
    /// `SQUALL_MAX_RETRIES` for this case: the configured `providerRetry.maxRetries`.
    pub max_retries: Option<u32>,
    /// A time scale for this case, when it needs more precision than the suite's.
    pub time_scale: Option<f64>,
    /// The case's timing checks, read from its steps before it runs.
    pub timing: Vec<super::steps::Planned>,
    pub run: Option<CaseRun>,
    pub checks: Vec<CheckRecord>,
    /// Set when the IUT's level does not reach the case: every check is `n/a`.
    pub not_applicable: Option<String>,
    /// The case is tagged `@should`: every check in it is advisory.
    pub advisory: bool,
    /// A MUST check failed (and failed its step).
    pub failed_a_must: bool,
}

/// A Then step starting with this word is a SHOULD in a case whose other checks are MUSTs.
pub(super) const SHOULD_PREFIX: &str = "ideally ";

impl cucumber::World for SuiteWorld {
    type Error = std::convert::Infallible;

    async fn new() -> Result<Self, Self::Error> {
        Ok(SuiteWorld::default())
    }
}

impl SuiteWorld {
    pub(super) fn ctx(&self) -> &Arc<SuiteContext> {
        self.ctx.as_ref().expect("the runner's before hook sets the context")
    }

    /// Judge one check and record it. Above the IUT's level the check is `n/a` and `judge` is
    /// not called. The check is a SHOULD in a `@should` case or when its step starts with
    /// "ideally", else a MUST. A failed MUST fails the step (and so the case); a failed
    /// SHOULD is recorded as a warning and the case goes on.
    pub(super) fn check(
        &mut self,
        level: Level,
        name: &str,
        expected: impl Into<String>,
        judge: impl FnOnce(&CaseRun) -> (String, bool),
    ) {
        self.record(level, name, expected.into(), |run| {
            let (observed, held) = judge(run);
            Judgement { observed, held: Some(held), expected_note: String::new() }
        });
    }

    /// Judge a timing check. `judge` returns what it observed, whether the bound held with the
    /// benefit of the doubt (within the noise), and that noise in policy seconds. When the noise
    /// is not under half of `margin`, the check would let through clients it exists to reject:
    /// it is `error`, with the reason, instead of a guess.
    pub(super) fn check_timed(
        &mut self,
        level: Level,
        name: &str,
        expected: impl Into<String>,
        margin: Margin,
        judge: impl FnOnce(&CaseRun) -> (String, bool, f64),
    ) {
        self.record(level, name, expected.into(), |run| {
            let (observed, held, noise) = judge(run);
            let scale = run.time_scale();
            let expected_note = format!(
                " (it tells apart clients {} s beyond: {:.1} ms real at {})",
                margin.seconds,
                margin.seconds * scale * 1000.0,
                scale_name(scale)
            );
            if margin.judges(held, noise) {
                return Judgement { observed, held: Some(held), expected_note };
            }
            let reaction = &run.clock.reaction;
            let why = match &reaction.missing {
                Some(missing) => missing.clone(),
                None => format!(
                    "the noise, ±{noise:.2} s (the client's reaction varies over {:.1}–{:.1} ms real at {}), is not under half the {} s margin; it needs {} (--max-time-scale)",
                    reaction.low_ms,
                    reaction.high_ms,
                    scale_name(scale),
                    margin.seconds,
                    describe_needed(scale * noise / margin.max_noise())
                ),
            };
            Judgement { observed: format!("cannot judge: {why}; observed {observed}"), held: None, expected_note }
        });
    }

    fn record(&mut self, level: Level, name: &str, expected: String, judge: impl FnOnce(&CaseRun) -> Judgement) {
        let strength = if self.advisory || name.starts_with(SHOULD_PREFIX) { Strength::Should } else { Strength::Must };
        let applicable = self.not_applicable.is_none() && self.ctx().level >= level;
        let (verdict, observed, expected) = match (&self.run, applicable) {
            (_, false) => (Verdict::NotApplicable, String::new(), expected),
            // A harness error: the step fails without a failed check, so the case is `error`.
            (None, true) => panic!("no case ran before `{name}`: the scenario is missing its When step"),
            (Some(run), true) => {
                let judgement = judge(run);
                let verdict = match judgement.held {
                    Some(held) => Verdict::of_check(strength, true, held),
                    None => Verdict::Error,
                };
                (verdict, judgement.observed, expected + &judgement.expected_note)
            }
        };
        self.checks.push(CheckRecord {
            name: name.to_owned(),
            level,
            strength,
            verdict,
            expected: expected.clone(),
            observed: observed.clone(),
        });
        if verdict == Verdict::Fail {
            self.failed_a_must = true;
            panic!("{name}\n  expected: {expected}\n  observed: {observed}");
        }
    }
}
