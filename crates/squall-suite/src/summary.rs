//! A plain-text summary of a suite run: one line per requirement, grouped by profile, and the
//! cases that failed, erred or warned with what was expected and observed.

use std::fmt::Write as _;

use super::runner::SuiteOutcome;
use super::verdict::{RunVerdict, Verdict};

/// One line per requirement: verdict, id, cases passed of judged, title.
pub fn requirement_table(outcome: &SuiteOutcome) -> String {
    let mut out = String::new();
    for profile in &outcome.profiles {
        let _ = writeln!(out, "profile {} — {}: {}", profile.id, profile.title, profile.verdict.as_str());
        for requirement in outcome.requirements.iter().filter(|r| r.profile == profile.id) {
            let _ = writeln!(
                out,
                "  {:<5} {:<26} {:>8} {}",
                requirement.verdict.as_requirement(),
                requirement.id,
                requirement.cases_tally.passed_of_judged(),
                requirement.title
            );
        }
    }
    let others: Vec<&str> = outcome.selection.others().iter().map(|p| p.id).collect();
    if !others.is_empty() {
        let _ = writeln!(out, "not judged: {} (choose with --profile / SQUALL_PROFILES, or `all`)", others.join(", "));
    }
    out
}

/// Every case that did not simply pass, with its findings: MUSTs failed, SHOULDs missed,
/// why it could not be judged.
pub fn findings(outcome: &SuiteOutcome) -> String {
    let mut out = String::new();
    let shown =
        |verdict: Verdict| matches!(verdict, Verdict::Fail | Verdict::Error | Verdict::Inconclusive | Verdict::Warn);
    for case in outcome.cases.iter().filter(|c| shown(c.verdict)) {
        let _ = writeln!(out, "\n{} — {} [{}]", case.feature, case.name, case.verdict.as_str());
        for check in case.checks.iter().filter(|c| shown(c.verdict)) {
            let _ = writeln!(
                out,
                "  {} {}: expected {}; observed {}",
                check.strength.as_str(),
                check.name,
                check.expected,
                check.observed
            );
        }
        if let Some(error) = &case.error {
            let _ = writeln!(out, "  {error}");
        }
    }
    out
}

/// A run that judged nothing: a green that would prove nothing, so `squall run` and `cargo test
/// --test conformance` exit 2 with this message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmptyRun {
    /// No scenario of the chosen profiles matches the tags.
    #[error("no case ran: no scenario of profile {profiles} matches the tags {tags:?}")]
    NoCase {
        /// The chosen profiles.
        profiles: String,
        /// The tag expression.
        tags: String,
    },
    /// Every case was `n/a` at the declared level.
    #[error(
        "NOTHING WAS JUDGED: all {cases} cases are n/a at the declared level, so a green run would prove nothing. \
         Declare the level your implementation reaches, choose cases it can answer (tags, profiles), \
         or allow an empty run explicitly"
    )]
    AllNotApplicable {
        /// How many cases ran.
        cases: usize,
    },
}

/// The exit code of a run, for `squall run` and `cargo test --test conformance` alike: 0 when
/// every judged requirement passes (warnings allowed) or an empty run is allowed, 1 when one
/// fails or could not be judged; a run that judged nothing is an [`EmptyRun`] (exit 2).
pub fn exit_code(outcome: &SuiteOutcome, allow_empty: bool) -> Result<u8, EmptyRun> {
    match outcome.verdict() {
        RunVerdict::Passed => Ok(0),
        RunVerdict::Failed => Ok(1),
        RunVerdict::Empty if outcome.cases.is_empty() => Err(EmptyRun::NoCase {
            profiles: outcome.selection.describe(),
            tags: outcome.tags.clone().unwrap_or_default(),
        }),
        RunVerdict::Empty if allow_empty => Ok(0),
        RunVerdict::Empty => Err(EmptyRun::AllNotApplicable { cases: outcome.cases.len() }),
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::{exit_code, EmptyRun};
    use crate::requirements::ProfileSelection;
    use crate::results::{by_requirement, CaseRecord, Evidence};
    use crate::runner::SuiteOutcome;
    use crate::verdict::Verdict;

    fn outcome(verdicts: &[Verdict]) -> SuiteOutcome {
        let cases: Vec<CaseRecord> = verdicts
            .iter()
            .map(|v| CaseRecord {
                id: "req-0006-001/case".into(),
                clauses: vec![],
                scenario_sha256: None,
                name: "case".into(),
                feature: "feature".into(),
                requirements: vec!["REQ-0006-001".into()],
                tags: vec![],
                verdict: *v,
                checks: vec![],
                error: None,
                inconclusive: None,
                time_scale: None,
                time_scale_note: None,
                reaction_ms: None,
                machine_allowance_ms: None,
                lockstep_ms: None,
                evidence: Evidence::default(),
            })
            .collect();
        SuiteOutcome {
            requirements: by_requirement(&cases),
            cases,
            profiles: vec![],
            calibration: crate::timing::Calibration::assumed(crate::timing::Reaction::exactly(1.0)),
            clock: crate::iut::ClockMode::Scaled,
            tls: false,
            warm: false,
            selection: ProfileSelection::default(),
            tags: Some("@typo".into()),
            started_at: SystemTime::now(),
            duration: Duration::ZERO,
            features: vec![],
            host: crate::provenance::Host::now(),
            waivers: vec![],
        }
    }

    #[test]
    fn warnings_pass_failures_and_errors_fail_and_an_empty_run_is_a_usage_error() {
        assert_eq!(exit_code(&outcome(&[Verdict::Pass, Verdict::Warn]), false), Ok(0));
        assert_eq!(exit_code(&outcome(&[Verdict::Pass, Verdict::Fail]), false), Ok(1));
        assert_eq!(exit_code(&outcome(&[Verdict::Pass, Verdict::Error]), false), Ok(1));
        let none = exit_code(&outcome(&[]), true).expect_err("no case ran");
        assert_eq!(none, EmptyRun::NoCase { profiles: ProfileSelection::default().describe(), tags: "@typo".into() });
        assert!(none.to_string().contains("no case ran") && none.to_string().contains("@typo"), "{none}");
        let all_na = exit_code(&outcome(&[Verdict::NotApplicable]), false).expect_err("nothing judged");
        assert_eq!(all_na, EmptyRun::AllNotApplicable { cases: 1 });
        assert!(all_na.to_string().contains("NOTHING WAS JUDGED"), "{all_na}");
        assert_eq!(exit_code(&outcome(&[Verdict::NotApplicable]), true), Ok(0));
    }
}
