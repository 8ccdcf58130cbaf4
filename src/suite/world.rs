//! The per-case state of the conformance suite: the scenario being scripted, what the case
//! observed, and the checks made so far. [`SuiteWorld::judge`] judges a Then step's checks
//! ([`super::checks`]) on the observation and records them; a failed MUST fails the step.

use std::sync::Arc;
use std::time::Duration;

use crate::iut::Iut;
use crate::scenario::Catalogue;
use crate::server::Server;

use super::checks::{Observation, Planned, StepChecks, SHOULD_PREFIX};
use super::results::CheckRecord;
use super::script::CaseSetup;
use super::timing::Calibration;
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
    /// Instances a herd case runs at once.
    pub herd: u32,
    /// The implementation's reaction, measured before any case ran.
    pub calibration: Calibration,
    /// Calibration instances at each scale (for a case that measures the reaction again).
    pub calibration_instances: usize,
}

#[derive(Debug, Default)]
pub(super) struct SuiteWorld {
    pub ctx: Option<Arc<SuiteContext>>,
    /// What the Given steps set up.
    pub setup: CaseSetup,
    /// The case's timing checks, read from its steps before it runs.
    pub timing: Vec<Planned>,
    /// What the case's run left behind, once the When step ran it.
    pub run: Option<Observation>,
    pub checks: Vec<CheckRecord>,
    /// Set when the IUT's level does not reach the case: every check is `n/a`.
    pub not_applicable: Option<String>,
    /// The case is tagged `@should`: every check in it is advisory.
    pub advisory: bool,
    /// A MUST check failed (and failed its step).
    pub failed_a_must: bool,
}

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

    /// Judge a Then step's checks on what the case observed and record them: `n/a` when the
    /// case does not apply to the implementation or a check is above its level. A failed MUST
    /// fails the step (and so the case); a failed SHOULD is recorded as a warning and the case
    /// goes on.
    pub(super) fn judge(&mut self, checks: &StepChecks) {
        let records = match (&self.not_applicable, &self.run) {
            (Some(_), _) => checks.not_applicable(self.advisory),
            (None, Some(observation)) => checks.judge(observation, self.ctx().level, self.advisory),
            // A harness error: the step fails without a failed check, so the case is `error`.
            (None, None) => panic!("no case ran before `{}`: the scenario is missing its When step", checks.step()),
        };
        self.record(records);
    }

    /// Record a check the harness judged itself, at `wire`: a MUST unless the case is `@should`.
    pub(super) fn judged_by_harness(&mut self, name: &str, expected: &str, observed: String, held: bool) {
        let strength = if self.advisory || name.starts_with(SHOULD_PREFIX) { Strength::Should } else { Strength::Must };
        self.record(vec![CheckRecord {
            name: name.to_owned(),
            level: Level::Wire,
            strength,
            verdict: Verdict::of_check(strength, true, held),
            expected: expected.to_owned(),
            observed,
        }]);
    }

    fn record(&mut self, records: Vec<CheckRecord>) {
        let failed: Vec<String> = records
            .iter()
            .filter(|c| c.verdict == Verdict::Fail)
            .map(|c| format!("{}\n  expected: {}\n  observed: {}", c.name, c.expected, c.observed))
            .collect();
        self.checks.extend(records);
        if !failed.is_empty() {
            self.failed_a_must = true;
            // A failed MUST fails its step by unwinding, without the panic hook: a verdict is not
            // a crash, and a message and backtrace on stderr per failed check would bury the
            // output of whoever runs the suite (the records hold everything).
            std::panic::resume_unwind(Box::new(failed.join("\n")));
        }
    }
}
