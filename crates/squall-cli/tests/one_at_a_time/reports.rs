//! `squall run`'s four report files agree, for a passing and a failing implementation, with checks
//! above the level `n/a`; usage errors exit 2 with one clear line.

use crate::kit::command::{squall, squall_run};
use crate::suite::reports::reports_agree;
use std::path::Path;

#[test]
fn the_reference_passes_and_all_four_reports_agree() {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = run_subset("reference", dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let verdicts = reports_agree(dir.path());
    assert!(verdicts.values().all(|(v, ..)| v == "pass"), "{verdicts:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("REQ-0006-002") && stdout.contains("reports:"), "{stdout}");
}

#[test]
fn a_failing_implementation_exits_1_and_its_reports_agree_on_what_failed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = run_subset("reference:give-up-after-3", dir.path(), &[]);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let verdicts = reports_agree(dir.path());
    assert_eq!(verdicts["REQ-0006-002"].0, "fail");
    assert_eq!(verdicts["SEED-002-PROFILES"].0, "pass");
    let acceptance = std::fs::read_to_string(dir.path().join("acceptance.md")).expect("read");
    assert!(acceptance.contains("expected 7 attempts; observed 4 attempts"), "{acceptance}");
}

#[test]
fn checks_above_the_level_are_reported_as_not_applicable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = run_subset("reference", dir.path(), &["--level", "wire"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let verdicts = reports_agree(dir.path());
    assert_eq!(verdicts["REQ-0006-021"].0, "n/a");
}

#[test]
fn usage_errors_exit_2_with_one_clear_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (args, needle) in [
        (vec!["--level", "deep"], "--level deep"),
        (vec!["--time-scale", "7"], "--time-scale 7"),
        (vec!["--features", "/no/such/features"], "/no/such/features"),
    ] {
        let output = run_subset("reference", dir.path(), &args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
    let output = squall().args(["run", "--iut", "reference:no-such-mutant"]).output().expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(!dir.path().join("report.json").exists(), "no report is written for a usage error");
}

/// A subset that runs in about a second and has a requirement `give-up-after-3` breaks.
const TAGS: &str = "(@REQ-0006-002 and not @events) or @SEED-002-PROFILES or @REQ-0006-021";

/// `squall run` of the subset on `iut`, every profile judged.
fn run_subset(iut: &str, dir: &Path, extra: &[&str]) -> std::process::Output {
    let args: Vec<&str> =
        ["--iut", iut, "--profile", "all", "--tags", TAGS].into_iter().chain(extra.iter().copied()).collect();
    squall_run(&args, dir)
}
