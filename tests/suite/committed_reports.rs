//! The reports kept in `reports/` still tell the truth: each is re-run the way its report.json
//! says it was made (`iut.run_as`, level, time scale, case timeout, concurrency, profiles) and
//! the fresh verdicts must equal the kept ones, case by case. The reference is re-run whole;
//! the official SDKs' adapters on the cases that show what they retry (REQ-0006-001, -010).
//! Timestamps and durations may differ. A difference means: run `scripts/refresh-reports.sh`,
//! and explain any verdict that changed in the adapter's README.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::suite_kit::{root, ONE_SUITE_AT_A_TIME};
use super::support::require;

/// The SDK cases re-run in CI: what they retry, and how they take a stream that breaks.
const SDK_TAGS: &str = "@REQ-0006-001 or @REQ-0006-010";

type Verdicts = BTreeMap<(String, String, String), String>;

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// (requirement, feature, case) → verdict.
fn verdicts(report: &Value) -> Verdicts {
    let mut out = Verdicts::new();
    for requirement in report["requirements"].as_array().into_iter().flatten() {
        for case in requirement["cases"].as_array().into_iter().flatten() {
            let key = (
                requirement["id"].as_str().unwrap_or("").to_owned(),
                case["feature"].as_str().unwrap_or("").to_owned(),
                case["name"].as_str().unwrap_or("").to_owned(),
            );
            out.insert(key, case["verdict"].as_str().unwrap_or("").to_owned());
        }
    }
    out
}

/// The `squall run` arguments that made `report`, with `tags` narrowing the cases if given.
fn arguments(report: &Value, tags: Option<&str>) -> Vec<String> {
    let text =
        |v: &Value| v.as_str().map(str::to_owned).or_else(|| v.as_f64().map(|n| n.to_string())).unwrap_or_default();
    let mut args = vec![
        "--iut".to_owned(),
        text(&report["iut"]["run_as"]),
        "--level".to_owned(),
        text(&report["iut"]["level"]),
        "--time-scale".to_owned(),
        text(&report["time_scale"]),
        "--case-timeout".to_owned(),
        text(&report["case_timeout_s"]),
        "--concurrency".to_owned(),
        text(&report["concurrency"]),
    ];
    for profile in report["profiles"]["judged"].as_array().into_iter().flatten() {
        args.extend(["--profile".to_owned(), text(&profile["id"])]);
    }
    if let Some(tags) = tags.map(str::to_owned).or_else(|| report["tags"].as_str().map(str::to_owned)) {
        args.extend(["--tags".to_owned(), tags]);
    }
    args
}

fn agrees_with_a_fresh_run(name: &str, tags: Option<&str>) {
    let kept = read(&root().join("reports").join(name).join("report.json"));
    let dir = tempfile::tempdir().expect("tempdir");
    let args = arguments(&kept, tags);
    let output = {
        let _one = ONE_SUITE_AT_A_TIME.blocking_lock();
        Command::new(env!("CARGO_BIN_EXE_squall"))
            .arg("run")
            .args(&args)
            .arg("--report-dir")
            .arg(dir.path())
            .current_dir(root())
            .output()
            .expect("squall runs")
    };
    require(
        matches!(output.status.code(), Some(0 | 1)),
        &format!("squall run {args:?} exited {:?}: {}", output.status.code(), String::from_utf8_lossy(&output.stderr)),
    );
    let (before, now) = (verdicts(&kept), verdicts(&read(&dir.path().join("report.json"))));
    let mut differences: Vec<String> = now
        .iter()
        .filter(|(case, verdict)| before.get(*case) != Some(*verdict))
        .map(|(case, verdict)| format!("{case:?}: kept {:?}, now {verdict}", before.get(case)))
        .collect();
    if tags.is_none() {
        differences.extend(
            before.keys().filter(|case| !now.contains_key(*case)).map(|case| format!("{case:?}: kept, now gone")),
        );
    }
    require(!now.is_empty(), &format!("{name}: no case ran with {args:?}"));
    require(
        differences.is_empty(),
        &format!("reports/{name} is stale (run scripts/refresh-reports.sh):\n{}", differences.join("\n")),
    );
}

#[test]
fn the_reference_sign_off_agrees_with_a_fresh_run() {
    agrees_with_a_fresh_run("reference", None);
}

#[test]
fn the_python_openai_report_agrees_with_a_fresh_run() {
    agrees_with_a_fresh_run("python-openai", Some(SDK_TAGS));
}

#[test]
fn the_node_openai_report_agrees_with_a_fresh_run() {
    agrees_with_a_fresh_run("node-openai", Some(SDK_TAGS));
}

#[test]
fn the_python_anthropic_report_agrees_with_a_fresh_run() {
    agrees_with_a_fresh_run("python-anthropic", Some(SDK_TAGS));
}

#[test]
fn the_node_anthropic_report_agrees_with_a_fresh_run() {
    agrees_with_a_fresh_run("node-anthropic", Some(SDK_TAGS));
}
