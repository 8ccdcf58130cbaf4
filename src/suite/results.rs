//! What a suite run found, as data: checks, cases, requirements, profiles. Verdicts are
//! decided by [`super::verdict`]; this module only groups them. `report.json` renders these.

use serde::Serialize;
use serde_json::Value;

use super::requirements::{requirement_title, Profile, ProfileSelection, CUSTOM};
use super::verdict::{Level, Strength, Tally, Verdict};
use crate::journal::JournalEntry;

/// One check: what was expected, what was observed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckRecord {
    pub name: String,
    pub level: Level,
    pub strength: Strength,
    pub verdict: Verdict,
    pub expected: String,
    pub observed: String,
}

/// What a case leaves behind for a person to look at.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Evidence {
    pub journal: Vec<JournalEntry>,
    pub events: Vec<Value>,
    pub result: Option<Value>,
    /// The tail of the implementation's standard error.
    pub stderr: String,
    /// How the implementation's process ended: its exit code (null when killed or not run).
    pub exit_code: Option<i32>,
    /// Whether it was killed at the case timeout.
    pub timed_out: bool,
    /// Real milliseconds the implementation ran (null when it was not run).
    pub duration_ms: Option<f64>,
}

/// One scenario (or one Examples row of an outline).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseRecord {
    pub name: String,
    pub feature: String,
    pub requirements: Vec<String>,
    pub tags: Vec<String>,
    pub verdict: Verdict,
    pub checks: Vec<CheckRecord>,
    /// Why the case could not be judged (`error`), or why the implementation failed to run.
    pub error: Option<String>,
    /// Production values ran at this fraction of real time in this case (null when the
    /// implementation was not run). Journal times are real; divide by this to get policy time.
    pub time_scale: Option<f64>,
    pub evidence: Evidence,
}

impl CaseRecord {
    /// The checks that failed a MUST or warned on a SHOULD.
    pub fn findings(&self, verdict: Verdict) -> impl Iterator<Item = &CheckRecord> {
        self.checks.iter().filter(move |c| c.verdict == verdict)
    }
}

/// All cases of one requirement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequirementResult {
    pub id: String,
    pub title: String,
    pub profile: &'static str,
    pub verdict: Verdict,
    /// The requirement's cases by verdict.
    pub cases_tally: Tally,
    /// The checks of its cases by verdict: `n/a` ones were above the declared level, so a
    /// passing requirement with some is only partly judged.
    pub checks_tally: Tally,
    pub cases: Vec<CaseRecord>,
}

/// One profile's requirements, as judged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileResult {
    pub id: &'static str,
    pub title: &'static str,
    pub verdict: Verdict,
    /// The profile's requirements by verdict.
    pub requirements_tally: Tally,
    pub requirements: Vec<String>,
}

/// Group cases by requirement id (a case may count for several), in id order.
pub fn by_requirement(cases: &[CaseRecord]) -> Vec<RequirementResult> {
    let mut ids: Vec<&str> = cases.iter().flat_map(|c| c.requirements.iter().map(String::as_str)).collect();
    ids.sort_unstable_by_key(|id| (profile_rank(id), *id));
    ids.dedup();
    ids.into_iter()
        .map(|id| {
            let cases: Vec<CaseRecord> =
                cases.iter().filter(|c| c.requirements.iter().any(|r| r == id)).cloned().collect();
            RequirementResult {
                id: id.to_owned(),
                title: requirement_title(id).to_owned(),
                profile: Profile::of(id).id,
                verdict: Verdict::worst(cases.iter().map(|c| c.verdict)),
                cases_tally: Tally::of(cases.iter().map(|c| c.verdict)),
                checks_tally: Tally::of(cases.iter().flat_map(|c| c.checks.iter().map(|k| k.verdict))),
                cases,
            }
        })
        .collect()
}

/// The selected profiles with the requirements judged in each (`custom` only when some
/// feature of one's own was run).
pub fn by_profile(selection: &ProfileSelection, requirements: &[RequirementResult]) -> Vec<ProfileResult> {
    selection
        .profiles()
        .iter()
        .filter(|p| **p != CUSTOM || requirements.iter().any(|r| r.profile == CUSTOM.id))
        .map(|profile| {
            let own: Vec<&RequirementResult> = requirements.iter().filter(|r| r.profile == profile.id).collect();
            ProfileResult {
                id: profile.id,
                title: profile.title,
                verdict: Verdict::worst(own.iter().map(|r| r.verdict)),
                requirements_tally: Tally::of(own.iter().map(|r| r.verdict)),
                requirements: own.iter().map(|r| r.id.clone()).collect(),
            }
        })
        .collect()
}

/// Requirements sort by profile (the sign-off first), then by id.
fn profile_rank(id: &str) -> usize {
    let profile = Profile::of(id);
    super::requirements::PROFILES.iter().position(|p| *p == profile).unwrap_or(usize::MAX)
}
