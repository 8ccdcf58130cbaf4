//! What a suite run found, as data: checks, cases, requirements, profiles. Verdicts are
//! decided by [`super::verdict`]; this module only groups them. `report.json` renders these.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::clauses::Clause;
use super::requirements::{
    requirement_clauses, requirement_tags, requirement_title, Profile, ProfileSelection, CUSTOM,
};
use super::timing::ReactionMs;
use super::verdict::{Level, Strength, Tally, Verdict};
use squall::clock::TimeScale;
use squall::journal::JournalEntry;

/// One check: what was expected, what was observed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckRecord {
    /// The step's text (an `ideally ` prefix marks a SHOULD).
    pub name: String,
    /// The IUT contract level the check needs.
    pub level: Level,
    /// MUST or SHOULD.
    pub strength: Strength,
    /// pass, warn (a failed SHOULD), fail (a failed MUST), inconclusive (a timing check whose
    /// measurement could not decide) or n/a.
    pub verdict: Verdict,
    /// What the seed demands, in words.
    pub expected: String,
    /// What the implementation did (figures in production seconds).
    pub observed: String,
    /// When the check read a client's random waits over several runs of the case: how many, and
    /// the seeds they were given. Absent for a check read on one run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draws: Option<Draws>,
}

/// The runs a check over random waits was read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Draws {
    /// Runs of the case read together.
    pub runs: usize,
    /// `SQUALL_SEED` of each run, in order; empty when the suite ran without `--seed` (each run
    /// drew from the client's own randomness).
    pub seeds: Vec<u64>,
}

/// What a case leaves behind for a person to look at.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// The server journal of the case's run (a herd's requests each name their `client`).
    pub journal: Vec<JournalEntry>,
    /// What the implementation left (a herd's client 0), as fields of the evidence itself.
    #[serde(flatten)]
    pub outputs: ClientOutputs,
    /// Real milliseconds the implementation ran (null when it was not run).
    pub duration_ms: Option<f64>,
    /// A herd's other clients' outputs, client 1 first (absent when one instance ran).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<ClientOutputs>,
    /// The run just before at another time scale, whose waits a lower bound read this run's
    /// against (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired: Option<PairedEvidence>,
}

/// A case's run at another time scale, as a lower bound's pass read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedEvidence {
    /// The time scale it ran at.
    pub time_scale: TimeScale,
    /// The client's reaction it was read with, in real ms.
    pub reaction_ms: ReactionMs,
    /// Its server journal.
    pub journal: Vec<JournalEntry>,
}

/// What one instance of the implementation left behind.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientOutputs {
    /// Its `events.jsonl`.
    pub events: Vec<Value>,
    /// Its `result.json`, when it left a usable one.
    pub result: Option<Value>,
    /// The tail of its standard error.
    pub stderr: String,
    /// How its process ended: the exit code (null when killed or not run).
    pub exit_code: Option<i32>,
    /// Whether squall killed it: at the case timeout, or as soon as it had awaited a reply squall
    /// withholds past 1200 s of policy time (a lone instance; its case is then decided).
    pub timed_out: bool,
}

impl ClientOutputs {
    /// What `run` left.
    pub(crate) fn of(run: &crate::iut::IutRun) -> ClientOutputs {
        ClientOutputs {
            events: run.events.clone(),
            result: run.result.clone(),
            stderr: run.stderr.clone(),
            exit_code: run.exit_code,
            timed_out: run.timed_out,
        }
    }
}

/// One scenario (or one Examples row of an outline).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseRecord {
    /// The case's stable id (`req-0006-001/status-408-is-retried`; absent from reports written
    /// before it was added).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    /// The scenario's name (an outline's with its example filled in).
    pub name: String,
    /// The feature's name.
    pub feature: String,
    /// The requirement ids it is tagged with (absent from reports written before it was added).
    #[serde(default)]
    pub requirements: Vec<String>,
    /// All its tags, the feature's included (without `@`).
    pub tags: Vec<String>,
    /// The seed clauses it answers, as its scenario names them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clauses: Vec<Clause>,
    /// The SHA-256 of the scenario the server played for it, as JSON (absent when none was
    /// played).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario_sha256: Option<String>,
    /// The case's verdict (see `verdict`).
    pub verdict: Verdict,
    /// Its checks, in step order.
    pub checks: Vec<CheckRecord>,
    /// Why the case could not be judged (`error`), or why the implementation failed to run.
    pub error: Option<String>,
    /// Why the measurement could not decide (`inconclusive`): the first check that could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inconclusive: Option<String>,
    /// Production values ran at this fraction of real time in this case (null when the
    /// implementation was not run). Journal times are real; divide by this to get policy time.
    pub time_scale: Option<TimeScale>,
    /// Why the case ran at another scale than it asked for (raised so that its timing checks
    /// could judge the client's measured reaction), or which checks could not be judged even at
    /// the largest scale allowed.
    pub time_scale_note: Option<String>,
    /// The client's reaction taken out of this case's waits, in real ms: the run's calibration,
    /// reaching down to the fastest reaction measured again before a confirming run (see
    /// `time_scale_note`). Null when not run.
    pub reaction_ms: Option<crate::timing::ReactionMs>,
    /// What the verdict allowed a busy machine to hold the client back at each wait and attempt,
    /// in real ms, where a longer span could fake an outcome (0 on squall's virtual clock; absent
    /// from reports written before it was recorded, and when not run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_allowance_ms: Option<f64>,
    /// For a herd: how far a herd in lockstep spread its retries on this machine, in real ms;
    /// only spread beyond it counts as the herd's own (absent when not measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lockstep_ms: Option<f64>,
    /// What was left behind to look at.
    pub evidence: Evidence,
}

/// Which case a record is of: its scenario's name, its feature's, and every tag.
#[derive(Debug, Clone)]
pub(crate) struct CaseName {
    pub id: String,
    pub name: String,
    pub feature: String,
    pub tags: Vec<String>,
    pub clauses: Vec<Clause>,
}

impl CaseRecord {
    /// A case judged: its checks, and why it could not be judged if it could not (an
    /// implementation that died, a harness problem; not a failed check). What it observed, when
    /// it ran, is added by `Observation::recorded_in`. The suite's steps and the judge as a
    /// service both record cases so.
    pub(crate) fn judged(case: CaseName, checks: Vec<CheckRecord>, unjudgeable: Option<String>) -> CaseRecord {
        let verdict = Verdict::of_case(unjudgeable.as_deref(), checks.iter().map(|c| c.verdict));
        let error = match verdict {
            Verdict::Error => Some(unjudgeable.unwrap_or_else(|| "the case made no check".to_owned())),
            _ => None,
        };
        let inconclusive = (verdict == Verdict::Inconclusive)
            .then(|| checks.iter().find(|c| c.verdict == Verdict::Inconclusive))
            .flatten()
            .map(|c| format!("`{}`: {}", c.name, c.observed));
        CaseRecord {
            id: case.id,
            requirements: requirement_tags(&case.tags),
            clauses: case.clauses,
            scenario_sha256: None,
            name: case.name,
            feature: case.feature,
            tags: case.tags,
            verdict,
            checks,
            error,
            inconclusive,
            time_scale: None,
            time_scale_note: None,
            reaction_ms: None,
            machine_allowance_ms: None,
            lockstep_ms: None,
            evidence: Evidence::default(),
        }
    }

    /// The checks that failed a MUST or warned on a SHOULD.
    pub fn findings(&self, verdict: Verdict) -> impl Iterator<Item = &CheckRecord> {
        self.checks.iter().filter(move |c| c.verdict == verdict)
    }
}

/// All cases of one requirement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequirementResult {
    /// `REQ-0006-001`, `SEED-002-JITTER`, ...
    pub id: String,
    /// What the requirement asks, in one line.
    pub title: String,
    /// The seed clauses it is written from (none for a requirement of your own features).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clauses: Vec<Clause>,
    /// The profile it belongs to.
    pub profile: String,
    /// The worst verdict of its cases.
    pub verdict: Verdict,
    /// The requirement's cases by verdict.
    pub cases_tally: Tally,
    /// The checks of its cases by verdict: `n/a` ones were above the declared level, so a
    /// passing requirement with some is only partly judged.
    pub checks_tally: Tally,
    /// Its cases (a case tagged with two requirements appears in both).
    pub cases: Vec<CaseRecord>,
}

/// One profile's requirements, as judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileResult {
    /// `prd-0006`, ...
    pub id: String,
    /// The seed document it comes from.
    pub title: String,
    /// The worst verdict of its requirements.
    pub verdict: Verdict,
    /// The profile's requirements by verdict.
    pub requirements_tally: Tally,
    /// The ids of its requirements that ran.
    pub requirements: Vec<String>,
}

/// Group cases by requirement id (a case may count for several), in id order.
pub(crate) fn by_requirement(cases: &[CaseRecord]) -> Vec<RequirementResult> {
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
                clauses: requirement_clauses(id),
                profile: Profile::of(id).id.to_owned(),
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
pub(crate) fn by_profile(selection: &ProfileSelection, requirements: &[RequirementResult]) -> Vec<ProfileResult> {
    selection
        .profiles()
        .iter()
        .filter(|p| **p != CUSTOM || requirements.iter().any(|r| r.profile == CUSTOM.id))
        .map(|profile| {
            let own: Vec<&RequirementResult> = requirements.iter().filter(|r| r.profile == profile.id).collect();
            ProfileResult {
                id: profile.id.to_owned(),
                title: profile.title.to_owned(),
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
