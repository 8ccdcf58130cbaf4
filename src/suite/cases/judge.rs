//! One case judged on what it observed, as the suite's steps judge it: nothing when the run
//! cannot be judged (the When step's verdict on a dead implementation), else its Then steps in
//! order, stopping at the first that fails a MUST (as cucumber stops a failed scenario). The
//! judge as a service judges posted outcomes with it; the checks are [`crate::suite::checks`]'.

use super::CasePlan;
use crate::suite::checks::Observation;
use crate::suite::results::{CaseName, CaseRecord, CheckRecord};
use crate::suite::steps::when::unjudgeable_case;
use crate::suite::verdict::{Level, Verdict};

/// The case's record for `observation`, judged at `level`.
pub(crate) fn judge_case(plan: &CasePlan, observation: &Observation, level: Level) -> CaseRecord {
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
    let name = CaseName { name: plan.name.clone(), feature: plan.feature.clone(), tags: plan.tags.clone() };
    CaseRecord::judged(name, checks, unjudgeable, Some(observation))
}
