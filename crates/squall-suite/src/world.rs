//! cucumber's per-scenario state, as the glue keeps it: the case read from the scenario before
//! its steps run, and the record the case engine gave it. No verdict is made here.

use std::sync::Arc;

use super::cases::CasePlan;
use super::engine::SuiteContext;
use super::results::CaseRecord;

#[derive(Debug, Default)]
pub(super) struct SuiteWorld {
    pub ctx: Option<Arc<SuiteContext>>,
    /// The scenario read as a case, or why it cannot be.
    pub plan: Option<Result<CasePlan, String>>,
    /// The case's record, once the engine judged it.
    pub record: Option<CaseRecord>,
}

impl cucumber::World for SuiteWorld {
    type Error = std::convert::Infallible;

    async fn new() -> Result<Self, Self::Error> {
        Ok(SuiteWorld::default())
    }
}
