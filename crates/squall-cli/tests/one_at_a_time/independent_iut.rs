//! A correct PRD-0006 implementation written for the test (`crates/squall-cli/tests/iut/prd0006`, Python, no code
//! shared with the reference) passes: every `prd-0006` MUST, exit 0 under the default profile,
//! its SHOULD misses reported as warnings in every report format.

use serde_json::Value;
use squall_suite::{Strength, Verdict};

use crate::kit::command::squall;
use crate::kit::harness::require;
use crate::kit::independent_suites::IndependentSuites;
use crate::kit::suites::{failing, independent_command, root, unexpected_findings, INDEPENDENT_WARNS};

/// The correct one passes every profile, its SHOULD misses reported as warnings.
pub(super) fn passes_every_profile_with_its_should_misses_as_warnings(suites: &IndependentSuites) {
    let outcome = &suites.correct;
    let findings = unexpected_findings(outcome, &Default::default());
    require(outcome.passed(), &format!("it follows the seeds, yet failed {:?}:\n{findings}", failing(outcome)));
    let warned: Vec<&str> =
        outcome.requirements.iter().filter(|r| r.verdict == Verdict::Warn).map(|r| r.id.as_str()).collect();
    require(warned == INDEPENDENT_WARNS, &format!("warned on {warned:?}"));
    let warnings: Vec<_> = outcome.cases.iter().flat_map(|c| c.findings(Verdict::Warn)).collect();
    require(warnings.iter().all(|c| c.strength == Strength::Should), "only SHOULD checks warn");
    // Its own choices, each a SHOULD it misses: literal ProviderTimeoutException, garbage not
    // retried, x-should-retry and in-stream "try again in" not read.
    require(warnings.iter().any(|c| c.name.contains("ProviderTimeoutException")), "the literal error type is advice");
    require(warnings.iter().any(|c| c.name.contains("exactly 1 attempt")), "x-should-retry is advice");
}

#[test]
#[ignore = "slow: runs whole suites (scripts/test.sh runs it)"]
fn squall_run_exits_0_and_every_report_shows_the_warnings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let command = independent_command(None);
    let output = squall()
        .args(["run", "--iut", &command, "--level", "tasks", "--tags", "@REQ-0006-001", "--report-dir"])
        .arg(dir.path())
        .current_dir(root())
        .output()
        .expect("squall runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    require(
        output.status.code() == Some(0),
        &format!("exit {:?}\n{stdout}\n{}", output.status.code(), String::from_utf8_lossy(&output.stderr)),
    );
    require(stdout.contains("warn  REQ-0006-001"), &stdout);
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).expect(name);
    let acceptance = read("acceptance.md");
    require(acceptance.contains("## Warnings (SHOULD)") && acceptance.contains("x-should-retry"), &acceptance);
    require(!acceptance.contains("## Failures"), "no failures section for a passing implementation");
    let junit = read("junit.xml");
    require(!junit.contains("<failure") && !junit.contains("<error"), "warnings are not failures in JUnit");
    require(junit.contains("passed with warnings (SHOULD)"), "a warned case passes with its warnings as output");
    let report: Value = serde_json::from_str(&read("report.json")).expect("report.json");
    require(report["verdict"] == "passed" && report["summary"]["warn"] == 1, &format!("{}", report["summary"]));
}
