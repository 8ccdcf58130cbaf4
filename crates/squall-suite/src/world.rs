//! cucumber's per-scenario state, as the glue keeps it: the case read from the scenario before
//! its steps run, and the record the case engine gave it. No verdict is made here.

use std::sync::Arc;

use super::cases::CasePlan;
use super::engine::SuiteContext;
use super::results::CaseRecord;

#[derive(Default)]
pub(super) struct SuiteWorld {
    pub ctx: Option<Arc<SuiteContext>>,
    /// The scenario read as a case, or why it cannot be.
    pub plan: Option<Result<CasePlan, String>>,
    /// The case's record, once the engine judged it.
    pub record: Option<CaseRecord>,
}

/// The case and its verdict only. cucumber 0.21 formats the world of every failed step, shown or
/// not: the whole suite's context there cost a tenth of a mutant suite's CPU.
impl std::fmt::Debug for SuiteWorld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let case = match &self.plan {
            Some(Ok(plan)) => plan.id.as_str(),
            Some(Err(why)) => why.as_str(),
            None => "no case yet",
        };
        let verdict = self.record.as_ref().map(|record| record.verdict.as_str());
        f.debug_struct("SuiteWorld").field("case", &case).field("verdict", &verdict).finish()
    }
}

impl cucumber::World for SuiteWorld {
    type Error = std::convert::Infallible;

    async fn new() -> Result<Self, Self::Error> {
        Ok(SuiteWorld::default())
    }
}
