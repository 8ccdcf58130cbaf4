//! A Python client started warm (`squall run --warm`): one process imports what its script
//! imports, once, and each case's process is forked from it. The independent implementation,
//! unmodified on the sped-up clock and waiting on `threading.Event().wait`, gets started warm
//! exactly the verdicts it gets started cold, case by case, each child at its own case's rate;
//! a command `--warm` cannot start is refused before anything is judged, with why.

use crate::kit::command::squall;
use crate::kit::harness::require;

#[test]
fn a_command_warm_cannot_start_is_refused_with_why_before_anything_is_judged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let reports = dir.path().join("reports");
    let output = squall()
        .args(["run", "--iut", "python3 -c 'print(1)' | cat", "--warm", "--level", "wire", "--report-dir"])
        .arg(&reports)
        .output()
        .expect("squall runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    require(output.status.code() == Some(2), &format!("exit 2 before judging: {:?}\n{stderr}", output.status));
    require(stderr.contains("--warm runs `[NAME=VALUE…] PYTHON SCRIPT [ARG…]`"), &format!("it says why: {stderr}"));
    require(!reports.join("report.json").exists(), "nothing is judged, no report written");
}
