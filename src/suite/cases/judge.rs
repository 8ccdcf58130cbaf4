//! One case judged on what it observed, as the suite's steps judge it: nothing when the run
//! cannot be judged (the When step's verdict on a dead implementation), else its Then steps in
//! order, stopping at the first that fails a MUST (as cucumber stops a failed scenario). The
//! judge as a service judges posted outcomes with it; the checks are [`crate::suite::checks`]'.

use super::CasePlan;
use crate::suite::checks::Observation;
use crate::suite::results::{CaseName, CaseRecord, CheckRecord};
use crate::suite::steps::when::{still_waiting_on_silence, unjudgeable_case, GIVES_UP_ON_SILENCE, SILENCE_EXPECTED};
use crate::suite::verdict::{Level, Strength, Verdict};

/// The case's record for `observation`, judged at `level`; `ended_at_ms` is when the client
/// ended, in the run's journal time (a client stopped at its timeout while squall withheld a
/// reply on purpose fails [`GIVES_UP_ON_SILENCE`] instead of being unjudgeable, as in the suite).
pub(crate) fn judge_case(plan: &CasePlan, observation: &Observation, level: Level, ended_at_ms: f64) -> CaseRecord {
    let name = CaseName { name: plan.name.clone(), feature: plan.feature.clone(), tags: plan.tags.clone() };
    if let Some(observed) = still_waiting_on_silence(observation, ended_at_ms) {
        let strength = if plan.advisory() { Strength::Should } else { Strength::Must };
        let check = CheckRecord {
            name: GIVES_UP_ON_SILENCE.to_owned(),
            level: Level::Wire,
            strength,
            verdict: Verdict::of_check(strength, true, false),
            expected: SILENCE_EXPECTED.to_owned(),
            observed,
        };
        return CaseRecord::judged(name, vec![check], None, Some(observation));
    }
    let unjudgeable = unjudgeable_case(observation);
    let mut checks: Vec<CheckRecord> = Vec::new();
    if unjudgeable.is_none() {
        for step in &plan.then {
            let records = step.judge(observation, level, plan.advisory());
            let failed = records.iter().any(|c| c.verdict == Verdict::Fail);
            checks.extend(records);
            if failed {
                break;
            }
        }
    }
    CaseRecord::judged(name, checks, unjudgeable, Some(observation))
}
