//! A statically linked client, which no preload reaches, is named as such before anything is
//! judged: it waits out the sped-up clock's probe at real time. Under `--clock auto` it is run
//! scaled instead, and since it says it does not scale its waits either (time scale 1), the run
//! stops before any case too, saying both.

use std::process::Command;

use crate::kit::command::squall_run;
use crate::kit::harness::require;

#[test]
#[ignore = "slow: waits out the probe's 10 s of real time (scripts/test.sh runs it)"]
fn a_client_the_sped_up_clock_cannot_reach_is_named_before_anything_is_judged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let client = dir.path().join("static-client");
    let source = crate::kit::suites::root().join("crates/squall-cli/tests/fixtures/static-client.c");
    let built = Command::new("gcc").args(["-static", "-O1", "-o"]).arg(&client).arg(&source).status();
    require(built.is_ok_and(|s| s.success()), "gcc -static builds the client (Debian's libc6-dev has libc.a)");
    let reports = dir.path().join("reports");
    let command = client.display().to_string();
    // It waits out the probe's 10 s of real time.
    let output = squall_run(&["--iut", &command, "--clock", "accelerated", "--level", "wire"], &reports);
    let stderr = String::from_utf8_lossy(&output.stderr);
    require(output.status.code() == Some(2), &format!("exit 2 before judging: {:?}\n{stderr}", output.status));
    require(
        stderr.contains("is not reached by the sped-up clock") && stderr.contains("it waited 10.0"),
        &format!("it names the client, what it saw and why: {stderr}"),
    );
    require(stderr.contains("--clock scaled"), &format!("and the ways out: {stderr}"));
    require(!reports.join("report.json").exists(), "nothing is judged, no report written");

    let auto = dir.path().join("auto");
    let output = squall_run(&["--iut", &command, "--level", "wire"], &auto);
    let stderr = String::from_utf8_lossy(&output.stderr);
    require(output.status.code() == Some(2), &format!("auto: exit 2 before judging: {:?}\n{stderr}", output.status));
    let said: Vec<&str> = stderr.lines().filter(|l| l.contains("does not scale its own waits")).collect();
    require(said.len() == 1, &format!("one line says why: {stderr}"));
    require(
        said[0].contains("squall's clock did not reach it")
            && said[0].contains("time_scale 1")
            && said[0].contains("--time-scale 1"),
        &format!("what it saw and the ways out: {}", said[0]),
    );
    require(!auto.join("report.json").exists(), "auto: nothing is judged, no report written");
}
