//! A new user's first hour, timed: a fresh pytest project keeps its rootdir and one timed case
//! run alone is calibrated; vitest runs one timed case alone, calibrated, showing its SHOULD miss.

use crate::kit::command::{squall_bin, text};
use crate::kit::harness::require;
use crate::kit::sdks::{examples_js, python};
use crate::kit::suites::root;
use std::path::Path;
use std::process::{Command, Output};

#[test]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
fn a_fresh_pytest_project_keeps_its_rootdir_and_one_timed_case_alone_is_calibrated() {
    let dir = tempfile::tempdir().expect("a project directory");
    pytest_project(dir.path());
    // The two-argument form: pytest would take the path for a test path; the plugin says how to write it.
    let spaced = pytest(dir.path(), &["--squall-bin".into(), squall_bin().into()]);
    require(spaced.status.code() == Some(4), &format!("exit {:?}\n{}", spaced.status.code(), text(&spaced)));
    require(text(&spaced).contains("write --squall-bin=PATH, not --squall-bin PATH"), &text(&spaced));

    // The README's form, one timed case selected with -k: the project's rootdir and ini, the
    // calibration run inside the case, a real verdict, and one test counted.
    let file = dir.path().join("verdicts.jsonl");
    let output = pytest(
        dir.path(),
        &[
            format!("--squall-bin={}", squall_bin()),
            "--squall-tags=@REQ-0006-001".into(),
            format!("--squall-verdicts={}", file.display()),
            "-k".into(),
            "a-429-with-retry-after-ms".into(),
        ],
    );
    let out = text(&output);
    let project = dir.path().canonicalize().expect("a path");
    require(out.contains(&format!("rootdir: {}", project.display())), &out);
    require(out.contains("configfile: pytest.ini"), &out);
    require(output.status.code() == Some(0), &format!("exit {:?}\n{out}", output.status.code()));
    require(out.contains("1 passed"), &out);
    require(out.contains("squall calibration of session pytest-") && out.contains("client reaction: median"), &out);
    let verdicts = verdict_lines(&file);
    require(verdicts.len() == 1, &format!("{verdicts:?}"));
    require(verdicts[0]["verdict"] == "pass", &format!("{}\n{out}", verdicts[0]));

    // A client whose waits cannot be scaled: every case at production time.
    let real = dir.path().join("real.jsonl");
    let output = pytest(
        dir.path(),
        &[
            format!("--squall-bin={}", squall_bin()),
            "--squall-tags=@REQ-0006-001".into(),
            "--squall-time-scale=1".into(),
            format!("--squall-verdicts={}", real.display()),
            "-k".into(),
            "status-503-is-retried".into(),
        ],
    );
    let verdicts = verdict_lines(&real);
    require(output.status.code() == Some(0), &text(&output));
    require(verdicts.len() == 1 && verdicts[0]["time_scale"] == 1.0, &format!("{verdicts:?}"));
}

/// The Vercel AI SDK reads no in-stream "try again in 3s" (a SHOULD, reports/MATRIX.md): run
/// alone with `-t` on squall's clock, the case is calibrated first, and its warning shows in
/// vitest's output.
#[test]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
fn vitest_runs_one_timed_case_alone_calibrated_and_shows_its_should_miss() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("verdicts.jsonl");
    let output = Command::new(squall_bin())
        .args([
            "clock",
            "--",
            "node",
            "node_modules/vitest/vitest.mjs",
            "run",
            "ai-sdk.test.mjs",
            "-t",
            "in-stream-rate-limit",
        ])
        .env("SQUALL_BIN", squall_bin())
        .env("SQUALL_TAGS", "@REQ-0006-001")
        .env("SQUALL_VERDICTS", &file)
        .current_dir(examples_js())
        .output()
        .expect("vitest runs");
    let out = text(&output);
    require(output.status.code() == Some(0), &format!("exit {:?}\n{out}", output.status.code()));
    let verdicts = verdict_lines(&file);
    require(verdicts.len() == 1 && verdicts[0]["verdict"] == "warn", &format!("{verdicts:?}\n{out}"));
    require(out.contains("squall: SHOULD missed") && out.contains("[SHOULD warn]"), &out);
    require(out.contains("squall calibration of session js-"), &out);
}

fn verdict_lines(file: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines().map(|line| serde_json::from_str(line).expect("a verdict a line")).collect()
}

/// A pytest project of one's own: a pytest.ini and the README's test of the openai SDK.
fn pytest_project(dir: &Path) {
    std::fs::write(dir.join("pytest.ini"), "[pytest]\nmarkers =\n    mine: a marker of the project's own\n")
        .expect("writes");
    let example =
        std::fs::read_to_string(root().join("integrations/python/examples/test_openai_sdk.py")).expect("the example");
    std::fs::write(dir.join("test_client.py"), example).expect("writes");
}

fn pytest(dir: &Path, args: &[String]) -> Output {
    Command::new(python())
        .args(["-m", "pytest", "-p", "no:cacheprovider"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("pytest runs")
}
