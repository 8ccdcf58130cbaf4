//! `junit.xml` (written with `junit-report`): one testsuite per requirement, one testcase per
//! case. A failed MUST is a `<failure>`, a case that could not be judged an `<error>`, an `n/a`
//! case `<skipped/>`, and a case that passed with SHOULD warnings passes with the warnings in
//! its `<system-out>`.

use junit_report::{Duration, OffsetDateTime, Report as Junit, TestCase, TestSuite};

use super::markdown::finding_line;
use super::Report;
use crate::results::CaseRecord;
use crate::Verdict;

pub(super) fn render(report: &Report) -> String {
    let started = OffsetDateTime::from(report.started_at.0);
    let mut junit = Junit::new();
    for requirement in &report.requirements {
        let mut suite = TestSuite::new(&requirement.id);
        suite.set_timestamp(started);
        suite.package = requirement.profile.clone();
        for case in &requirement.cases {
            suite.add_testcase(testcase(&requirement.id, case));
        }
        junit.add_testsuite(suite);
    }
    let mut out = Vec::new();
    if let Err(e) = junit.write_xml(&mut out) {
        return format!("<!-- junit.xml could not be written: {e} -->\n");
    }
    let mut text = String::from_utf8_lossy(&out).into_owned();
    text.push('\n');
    text
}

fn testcase(requirement: &str, case: &CaseRecord) -> TestCase {
    let name = format!("{} — {}", case.feature, case.name);
    let time = Duration::seconds_f64(case.evidence.duration_ms.unwrap_or(0.0) / 1000.0);
    let lines = |verdict: Verdict| -> Vec<String> { case.findings(verdict).map(finding_line).collect() };
    let mut testcase = match case.verdict {
        Verdict::Fail => {
            let failed = lines(Verdict::Fail);
            let mut testcase = TestCase::failure(&name, time, "MUST", failed.first().map_or("", String::as_str));
            testcase.set_system_out(&failed.join("\n"));
            testcase
        }
        Verdict::Error => {
            let mut testcase = TestCase::error(&name, time, "not judged", case.error.as_deref().unwrap_or(""));
            let stderr = &case.evidence.outputs.stderr;
            if !stderr.is_empty() {
                testcase.set_system_err(tail(stderr, 4096));
            }
            testcase
        }
        // Neither a failure nor an error of the implementation's: the measurement could not say.
        Verdict::Inconclusive => {
            let why = case.inconclusive.as_deref().unwrap_or("");
            let mut testcase = TestCase::error(&name, time, "inconclusive", why);
            testcase.set_system_out(&lines(Verdict::Inconclusive).join("\n"));
            testcase
        }
        Verdict::NotApplicable => TestCase::skipped(&name),
        // Not a pass, and accepted on the record: skipped (JUnit writes no text for a skipped
        // case, so its name says which MUSTs were waived; acceptance.md says why and by whom).
        Verdict::Waived => TestCase::skipped(&format!("{name} — WAIVED: {}", lines(Verdict::Waived).join("; "))),
        Verdict::Pass | Verdict::Warn => {
            let mut testcase = TestCase::success(&name, time);
            let warnings = lines(Verdict::Warn);
            if !warnings.is_empty() {
                testcase.set_system_out(&format!("passed with warnings (SHOULD):\n{}", warnings.join("\n")));
            }
            testcase
        }
    };
    testcase.set_classname(requirement);
    testcase
}

/// The last `bytes` of `text` (on a character boundary).
fn tail(text: &str, bytes: usize) -> &str {
    let mut start = text.len().saturating_sub(bytes);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}
