//! The per-case state of the conformance suite: the scenario being scripted, the run, and
//! the checks made so far. [`SuiteWorld::check`] is the one place a verdict is decided.

use std::sync::Arc;
use std::time::Duration;

use crate::iut::{Iut, IutRun};
use crate::journal::JournalEntry;
use crate::scenario::Catalogue;
use crate::server::Server;

use super::results::{CheckRecord, Level, Verdict};
use super::script::ScriptBuilder;

/// What every case of one suite run shares.
#[derive(Debug)]
pub struct SuiteContext {
    pub server: Server,
    pub catalogue: Catalogue,
    pub iut: Iut,
    pub level: Level,
    /// Production values run at this fraction of real time.
    pub time_scale: f64,
    /// Real time an implementation gets per case.
    pub case_timeout: Duration,
}

/// What a case produced.
#[derive(Debug)]
pub struct CaseRun {
    pub journal: Vec<JournalEntry>,
    pub iut: IutRun,
    pub time_scale: f64,
}

impl CaseRun {
    /// Model calls only (`/responses`, `/chat/completions`), in arrival order.
    pub fn attempts(&self) -> Vec<&JournalEntry> {
        self.journal.iter().filter(|e| e.attempt.is_some()).collect()
    }

    /// The implementation's `result.json` (the Task result in `task` cases), or null.
    pub fn result(&self) -> &serde_json::Value {
        static NULL: serde_json::Value = serde_json::Value::Null;
        self.iut.result.as_ref().unwrap_or(&NULL)
    }

    /// A real-time span in ms as policy seconds.
    pub fn policy_seconds(&self, real_ms: f64) -> f64 {
        real_ms / self.time_scale / 1000.0
    }
}

#[derive(Debug, Default)]
pub struct SuiteWorld {
    pub ctx: Option<Arc<SuiteContext>>,
    pub script: ScriptBuilder,
    pub profile: Option<String>,
    pub fallback: Option<String>,
    /// A time scale for this case, when it needs more precision than the suite's.
    pub time_scale: Option<f64>,
    pub run: Option<CaseRun>,
    pub checks: Vec<CheckRecord>,
    /// Set when the IUT's level does not reach the case: every check is `n/a`.
    pub not_applicable: Option<String>,
}

impl cucumber::World for SuiteWorld {
    type Error = std::convert::Infallible;

    async fn new() -> Result<Self, Self::Error> {
        Ok(SuiteWorld::default())
    }
}

impl SuiteWorld {
    pub fn ctx(&self) -> &Arc<SuiteContext> {
        self.ctx.as_ref().expect("the runner's before hook sets the context")
    }

    /// Judge one check. Above the IUT's level, or in a case it cannot run, the check is
    /// `n/a` and `judge` is not called. A failing check fails the step (and so the case).
    pub fn check(
        &mut self,
        level: Level,
        name: &str,
        expected: impl Into<String>,
        judge: impl FnOnce(&CaseRun) -> (String, bool),
    ) {
        let expected = expected.into();
        let applicable = self.not_applicable.is_none() && self.ctx().level >= level;
        let (verdict, observed) = match (&self.run, applicable) {
            (_, false) => (Verdict::NotApplicable, String::new()),
            (None, true) => (Verdict::Error, "no case ran: a When step is missing".to_owned()),
            (Some(run), true) => match run.iut.failure().filter(|_| level >= Level::Events) {
                Some(failure) => (Verdict::Fail, failure),
                None => {
                    let (observed, passed) = judge(run);
                    (if passed { Verdict::Pass } else { Verdict::Fail }, observed)
                }
            },
        };
        self.checks.push(CheckRecord {
            name: name.to_owned(),
            level,
            verdict,
            expected: expected.clone(),
            observed: observed.clone(),
        });
        if matches!(verdict, Verdict::Fail | Verdict::Error) {
            panic!("{name}\n  expected: {expected}\n  observed: {observed}");
        }
    }
}
