//! The checks judged again, as plain functions, on the evidence the kept reports recorded
//! (`reports/*/report.json.gz`: the reference and the official SDKs' adapters), and on evidence
//! written here for the cases those runs do not show.

use std::collections::BTreeSet;
use std::path::Path;

mod drawn;
mod paired_waits;
mod written_evidence;

use super::{tables, Observation, StepChecks};
use crate::report::schema::Report;
use crate::results::CaseRecord;
use crate::verdict::{Level, Verdict};

/// Uniform draws in [0, 1) from a seed (a small LCG: the tests need no crate).
pub(crate) fn uniform(seed: u64) -> impl Iterator<Item = f64> {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    std::iter::repeat_with(move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    })
}

fn kept_reports() -> Vec<(String, Report)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports");
    let mut reports: Vec<(String, Report)> = std::fs::read_dir(&dir)
        .expect("reports/")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.is_dir())
        .map(|path| {
            let (file, report) = crate::report::read::read_report(&path).unwrap_or_else(|e| panic!("{e}"));
            (file.display().to_string(), report)
        })
        .collect();
    reports.sort_by(|a, b| a.0.cmp(&b.0));
    reports
}

/// The step a recorded check answered: its name without the part a two-check step adds.
fn step_of(check_name: &str) -> &str {
    tables()
        .into_iter()
        .flatten()
        .filter(|check| !check.part.is_empty())
        .find_map(|check| check.name_without_part(check_name))
        .unwrap_or(check_name)
}

impl super::Check {
    fn name_without_part<'a>(&self, name: &'a str) -> Option<&'a str> {
        name.strip_suffix(self.part)
    }
}

/// Checks that measure a whole tool output in a request body: a report cuts long strings in
/// its evidence to 2 KiB, head and tail, so they are judged on evidence written here instead.
const READ_WHOLE_BODIES: &str = "the request after the tool call carries ";

/// Whether a check reads the files a Task result points to, which a report does not keep.
fn reads_files(check_name: &str) -> bool {
    patterns_of(step_of(check_name)).iter().any(|p| super::tasks::CHECKS.iter().any(|c| c.pattern == *p))
}

/// Every recorded check a plain function can judge again from a report — the journal, the
/// result, the events (not the files a Task result points to; not a check read over several
/// runs, whose earlier runs a report does not keep) — with its recorded and fresh verdicts.
fn judged_again(case: &CaseRecord, level: Level) -> Vec<(String, Verdict, Verdict)> {
    let Some(observation) = Observation::of_record(case).expect("a temporary directory") else { return Vec::new() };
    let advisory = case.tags.iter().any(|t| t == "should");
    case.checks
        .iter()
        .filter(|recorded| !reads_files(&recorded.name) && !recorded.name.starts_with(READ_WHOLE_BODIES))
        .filter(|recorded| recorded.draws.is_none())
        .filter_map(|recorded| {
            let checks = StepChecks::for_step(step_of(&recorded.name))?;
            let fresh =
                checks.judge(&observation, level, advisory).into_iter().find(|c| c.record.name == recorded.name)?;
            // Reports written before checks could be `inconclusive` called such a check `error`.
            let recorded_verdict = match recorded.verdict {
                Verdict::Error => Verdict::Inconclusive,
                verdict => verdict,
            };
            Some((recorded.name.clone(), recorded_verdict, fresh.record.verdict))
        })
        .collect()
}

/// The patterns of the checks a step's text calls for.
fn patterns_of(step: &str) -> Vec<&'static str> {
    StepChecks::for_step(step).map(|checks| checks.checks.iter().map(|c| c.pattern).collect()).unwrap_or_default()
}

#[test]
fn the_checks_give_the_kept_reports_verdicts_again_from_their_evidence() {
    let reports = kept_reports();
    assert!(reports.len() >= 5, "the reference's and four SDK adapters' reports: {:?}", reports.len());
    let (mut judged, mut differ, mut verdicts_seen) = (0, Vec::new(), BTreeSet::new());
    for (path, report) in &reports {
        for case in report.cases() {
            for (name, recorded, fresh) in judged_again(case, report.iut.level) {
                judged += 1;
                verdicts_seen.insert(fresh.as_str());
                if recorded != fresh {
                    differ.push(format!("{path}: {} / {name}: recorded {recorded:?}, now {fresh:?}", case.name));
                }
            }
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {judged} checks judge the recorded evidence differently:\n{}",
        differ.len(),
        differ.join("\n")
    );
    assert!(judged > 300, "only {judged} recorded checks judged again");
    assert!(verdicts_seen.contains("pass") && verdicts_seen.contains("fail"), "{verdicts_seen:?}");
}

#[test]
fn the_written_evidence_gets_the_verdicts_it_was_written_for() {
    let mut wrong = Vec::new();
    for (step, observation, expected) in written_evidence::cases() {
        let verdicts: Vec<Verdict> = StepChecks::for_step(step)
            .expect(step)
            .judge(&observation, Level::Tasks, false)
            .iter()
            .map(|c| c.record.verdict)
            .collect();
        if verdicts != [expected] {
            wrong.push(format!("{step}: expected {expected:?}, judged {verdicts:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Every check is judged on evidence — a kept report's or one written here — somewhere above.
#[test]
fn every_check_is_judged_on_recorded_or_written_evidence() {
    let mut exercised: BTreeSet<&str> = BTreeSet::new();
    for (_, report) in kept_reports() {
        for case in report.cases() {
            for (name, _, _) in judged_again(case, report.iut.level) {
                exercised.extend(patterns_of(step_of(&name)));
            }
        }
    }
    for (step, _, _) in written_evidence::cases() {
        exercised.extend(patterns_of(step));
    }
    let unexercised: Vec<&str> =
        tables().into_iter().flatten().map(|c| c.pattern).filter(|p| !exercised.contains(p)).collect();
    assert!(unexercised.is_empty(), "checks judged on no evidence: {unexercised:?}");
}

#[test]
fn then_steps_also_match_their_advisory_form_with_the_same_arguments() {
    let pattern =
        regex::Regex::new(&super::advisory_form(r"^the server sees exactly (\d+) attempts?$")).expect("compiles");
    for text in ["the server sees exactly 7 attempts", "ideally the server sees exactly 7 attempts"] {
        let captures = pattern.captures(text).expect(text);
        assert_eq!(&captures[1], "7");
    }
    assert!(!pattern.is_match("ideally  the server sees exactly 7 attempts"));
}

#[test]
fn a_step_that_makes_two_checks_judges_each_at_its_own_level() {
    let checks = StepChecks::for_step("the result is a success").expect("a step");
    let names: Vec<String> = checks.not_applicable(false).into_iter().map(|c| c.name).collect();
    assert_eq!(names, ["the result is a success: ok", "the result is a success: stop_reason and text"]);
    assert!(StepChecks::for_step("the moon is made of cheese").is_none());
}
