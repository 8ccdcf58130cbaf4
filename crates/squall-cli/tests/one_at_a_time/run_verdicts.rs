//! `squall run`'s verdicts end to end: profiles decide what is judged, a run that judges
//! nothing is a usage error unless allowed, and every report states a case's times in
//! production seconds — each case un-scaled by its own time scale.

use std::path::Path;
use std::process::Output;

use regex::Regex;

use crate::kit::command::squall_run;
use serde_json::Value;

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

fn report(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).expect("report.json")).expect("JSON")
}

fn requirement_ids(report: &Value) -> Vec<String> {
    report["requirements"].as_array().into_iter().flatten().map(|r| r["id"].as_str().unwrap_or("").to_owned()).collect()
}

#[test]
fn the_default_profile_judges_prd_0006_only_and_says_what_it_did_not_judge() {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = squall_run(&["--iut", "reference", "--tags", "@REQ-0006-030 or @SEED-002-PROFILES"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let report = report(dir.path());
    assert_eq!(requirement_ids(&report), ["REQ-0006-030"]);
    assert_eq!(report["profiles"]["judged"][0]["id"], "prd-0006");
    let acceptance = std::fs::read_to_string(dir.path().join("acceptance.md")).expect("acceptance.md");
    assert!(acceptance.contains("| Profiles judged | prd-0006 |"), "{acceptance}");
    assert!(
        acceptance.contains("| Not judged | prd-0003, seed-001, seed-002, seed-004 (choose with `--profile`) |"),
        "{acceptance}"
    );
}

#[test]
fn a_chosen_profile_judges_its_own_requirements() {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = squall_run(
        &["--iut", "reference", "--profile", "seed-002", "--tags", "@SEED-002-PROFILES or @REQ-0006-030"],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_eq!(requirement_ids(&report(dir.path())), ["SEED-002-PROFILES"]);
    let output = squall_run(&["--iut", "reference", "--profile", "prd-6"], dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output).contains("--profile prd-6: expected a profile squall knows (`prd-6` is not one): prd-0006"),
        "{}",
        text(&output)
    );
}

#[test]
fn a_run_that_judges_nothing_exits_2_unless_allowed() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Task cases at the events level: every case is n/a.
    let output = squall_run(&["--iut", "reference", "--level", "events", "--tags", "@tasks"], dir.path());
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(text(&output).contains("NOTHING WAS JUDGED"), "{}", text(&output));
    assert!(!dir.path().join("report.json").exists(), "no report for a run that judged nothing");
    let output =
        squall_run(&["--iut", "reference", "--level", "events", "--tags", "@tasks", "--allow-empty"], dir.path());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_eq!(report(dir.path())["verdict"], "empty");
    let output = squall_run(&["--iut", "reference", "--tags", "@REQ-0006-999"], dir.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output).contains("no case ran"), "{}", text(&output));
}

/// The first decimal number in `text` after `prefix`.
fn number_after(text: &str, prefix: &str) -> Option<f64> {
    let pattern = Regex::new(&format!(r"{}\s*(\d+\.\d+) s", regex::escape(prefix))).expect("regex");
    pattern.captures(text).and_then(|c| c[1].parse().ok())
}

#[test]
fn every_report_states_a_slower_case_in_production_seconds() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Retry-After ignored: the case waits its backoff (1-2 s) instead of the 4 s asked. At 1/500
    // of real time the client's reaction is too uncertain for its check: the case runs slower.
    let tags = "@REQ-0006-001 and @wire and not @events and not @should";
    let output =
        squall_run(&["--iut", "reference:ignore-retry-after", "--tags", tags, "--time-scale", "0.002"], dir.path());
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let report = report(dir.path());
    let case = report["requirements"][0]["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .find(|c| c["name"] == "A 429 with retry-after in seconds is honoured")
        .expect("the retry-after case")
        .clone();
    let time_scale = case["time_scale"].as_f64().expect("the case carries its own time scale");
    assert!(time_scale > 0.002, "the case ran slower than the run: {time_scale}");
    let journal = case["evidence"]["journal"].as_array().expect("journal");
    let real_ms =
        journal[1]["received_at_ms"].as_f64().expect("ms") - journal[0]["finished_at_ms"].as_f64().expect("ms");
    let reaction_ms = case["reaction_ms"]["center"].as_f64().expect("the reaction taken out");
    let truth = (real_ms - reaction_ms) / time_scale / 1000.0;
    let check =
        case["checks"].as_array().expect("checks").iter().find(|c| c["verdict"] == "fail").expect("a failed check");
    let in_json = number_after(check["observed"].as_str().expect("observed"), "").expect("a figure in report.json");
    let acceptance = std::fs::read_to_string(dir.path().join("acceptance.md")).expect("acceptance.md");
    let after_case = acceptance
        .split("**A 429 with retry-after in seconds is honoured**")
        .nth(1)
        .expect("the case among the failures in acceptance.md");
    let line = after_case
        .lines()
        .find(|l| l.contains("attempt 2 starts at least 4 seconds"))
        .expect("its failure in acceptance.md");
    let in_markdown = number_after(line, "observed waited").expect("a figure in acceptance.md");
    let html = std::fs::read_to_string(dir.path().join("index.html")).expect("index.html");
    let section = html
        .split("A 429 with retry-after in seconds is honoured <small>")
        .nth(1)
        .expect("the case's section in index.html");
    let in_html = number_after(section, "waited").expect("a figure in the timeline");
    for (name, figure, precision) in
        [("report.json", in_json, 0.006), ("acceptance.md", in_markdown, 0.006), ("index.html", in_html, 0.01)]
    {
        assert!((figure - truth).abs() <= precision, "{name} says {figure} s, the journal {truth:.3} s");
    }
    assert!(truth < 3.0, "the mutant waited its backoff, {truth} s");
}
