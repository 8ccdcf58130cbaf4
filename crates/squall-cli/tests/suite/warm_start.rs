//! A Python client started warm (`squall run --warm`): one process imports what its script
//! imports, once, and each case's process is forked from it. The independent implementation,
//! unmodified on the sped-up clock and waiting on `threading.Event().wait`, gets started warm
//! exactly the verdicts it gets started cold, case by case, each child at its own case's rate;
//! a command `--warm` cannot start is refused before anything is judged, with why.

use crate::kit::command::squall;
use crate::kit::harness::require;
use crate::kit::independent_suites::{independent_suites, same_verdicts};

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
#[ignore = "slow: runs whole suites; scripts/test.sh runs it (cargo test -- --include-ignored)"]
async fn a_client_started_warm_gets_the_verdicts_it_gets_cold() {
    let suites = independent_suites().await;
    let same = same_verdicts(&suites.sped_up, &suites.warm, ("cold", "warm"));
    require(same.is_ok(), &same.err().unwrap_or_default());
    require(suites.warm.passed(), "the correct implementation passes started warm");
    // Cases ran at more than one time scale (raised where timing needed it): each child took its
    // own case's rate, or the raised cases' waits would have read 4–100× too long or short.
    let scales: std::collections::BTreeSet<String> =
        suites.warm.cases.iter().filter_map(|c| c.time_scale.map(|s| s.to_string())).collect();
    require(scales.len() > 1, &format!("the warm run's cases ran at one time scale only: {scales:?}"));
    let clock = suites.warm.calibration.clock.clone().unwrap_or_default();
    require(clock.contains("accelerated") && clock.contains("started warm"), &format!("recorded: {clock}"));
}

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
