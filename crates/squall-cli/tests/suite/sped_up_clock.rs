//! The client as shipped: an implementation's process on a clock sped up by libfaketime and
//! squall's preload (`--clock accelerated`). The independent implementation, unmodified and
//! reading `SQUALL_TIME_SCALE=1`, waiting between attempts on a thread primitive with a timeout
//! (`threading.Event().wait`, which the packaged libfaketime alone would hang), gets on it the
//! verdicts it gets scaled; a statically linked client, which no preload reaches, is named as
//! such before anything is judged.

use std::process::Command;

use crate::kit::command::squall_run_waiting;
use crate::kit::harness::require;
use crate::kit::independent_suites::{independent_suites, same_verdicts};

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
#[ignore = "slow: runs whole suites; scripts/test.sh runs it (cargo test -- --include-ignored)"]
async fn an_unmodified_client_on_the_sped_up_clock_gets_the_verdicts_it_gets_scaled() {
    let suites = independent_suites().await;
    let same = same_verdicts(&suites.correct, &suites.sped_up, ("scaled", "on the sped-up clock"));
    require(same.is_ok(), &same.err().unwrap_or_default());
    require(suites.sped_up.passed(), "the correct implementation passes on the sped-up clock");
    let summary = suites.sped_up.calibration.summary();
    require(
        summary.contains("the client's clock: accelerated (libfaketime"),
        &format!("the clock is recorded: {summary}"),
    );
    require(suites.correct.calibration.clock.is_none(), "a scaled run records no sped-up clock");
}

#[test]
#[ignore = "needs the faketime program (scripts/setup-sdks.sh installs it; scripts/test.sh runs it)"]
fn a_client_the_sped_up_clock_cannot_reach_is_named_before_anything_is_judged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let client = dir.path().join("static-client");
    let source = crate::kit::suites::root().join("crates/squall-cli/tests/fixtures/static-client.c");
    let built = Command::new("gcc").args(["-static", "-O1", "-o"]).arg(&client).arg(&source).status();
    require(built.is_ok_and(|s| s.success()), "gcc -static builds the client (Debian's libc6-dev has libc.a)");
    let reports = dir.path().join("reports");
    let command = client.display().to_string();
    // It waits out the probe's 10 s of real time.
    let output = squall_run_waiting(&["--iut", &command, "--clock", "accelerated", "--level", "wire"], &reports);
    let stderr = String::from_utf8_lossy(&output.stderr);
    require(output.status.code() == Some(2), &format!("exit 2 before judging: {:?}\n{stderr}", output.status));
    require(
        stderr.contains("is not reached by the sped-up clock") && stderr.contains("it waited 10.0"),
        &format!("it names the client, what it saw and why: {stderr}"),
    );
    require(stderr.contains("--clock scaled"), &format!("and the ways out: {stderr}"));
    require(!reports.join("report.json").exists(), "nothing is judged, no report written");
}
