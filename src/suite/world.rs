//! The per-case state of the conformance suite: the scenario being scripted, the run, and
//! the checks made so far. [`SuiteWorld::check`] records each check with the verdict
//! [`super::verdict`] gives it.

use std::sync::Arc;
use std::time::Duration;

use crate::iut::{Iut, IutRun};
use crate::journal::JournalEntry;
use crate::scenario::Catalogue;
use crate::server::Server;

use super::results::CheckRecord;
use super::script::ScriptBuilder;
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
    /// Real time an implementation gets per case.
    pub case_timeout: Duration,
    /// Passed to every case as `SQUALL_SEED`, for reproducible jitter.
    pub seed: Option<u64>,
}

/// What a case produced.
#[derive(Debug)]
pub(super) struct CaseRun {
    pub journal: Vec<JournalEntry>,
    pub iut: IutRun,
    pub time_scale: f64,
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

    /// A real-time span in ms as policy seconds.
    pub(super) fn policy_seconds(&self, real_ms: f64) -> f64 {
        real_ms / self.time_scale / 1000.0
    }
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
        let expected = expected.into();
        let strength = if self.advisory || name.starts_with(SHOULD_PREFIX) { Strength::Should } else { Strength::Must };
        let applicable = self.not_applicable.is_none() && self.ctx().level >= level;
        let (verdict, observed) = match (&self.run, applicable) {
            (_, false) => (Verdict::NotApplicable, String::new()),
            // A harness error: the step fails without a failed check, so the case is `error`.
            (None, true) => panic!("no case ran before `{name}`: the scenario is missing its When step"),
            (Some(run), true) => {
                let (observed, passed) = judge(run);
                (Verdict::of_check(strength, true, passed), observed)
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
