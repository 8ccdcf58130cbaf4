//! The `squall` binary as a user runs it.

use crate::kit::command::{squall, squall_bin};
use std::io::{BufRead, BufReader};
use std::process::Stdio;

#[test]
fn help_never_shows_the_admin_token_or_the_upstream_key_from_the_environment() {
    let help = squall()
        .args(["serve", "--help"])
        .env("SQUALL_ADMIN_TOKEN", "s3cret-token")
        .env("SQUALL_UPSTREAM_KEY", "sk-upstream-s3cret")
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("SQUALL_ADMIN_TOKEN") && !text.contains("s3cret-token"), "{text}");
    assert!(text.contains("SQUALL_UPSTREAM_KEY") && !text.contains("sk-upstream-s3cret"), "{text}");
}

#[test]
fn an_upstream_squall_cannot_forward_to_is_refused_at_start_with_the_reason() {
    let refused =
        squall().args(["serve", "--addr", "127.0.0.1:0", "--upstream", "ftp://gateway/v1"]).output().expect("runs");
    let text = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{text}");
    assert!(text.contains("--upstream") && text.contains("expected http://"), "{text}");
    // An https upstream with a CA file that is not there: refused before serving, naming it.
    let missing = "/nonexistent/squall-ca.pem";
    let refused = squall()
        .args(["serve", "--addr", "127.0.0.1:0", "--upstream", "https://gateway.internal/v1", "--upstream-ca", missing])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success() && text.contains("cannot read the CA file") && text.contains(missing), "{text}");
}

/// The first line `squall serve --addr ADDR` prints, then it is stopped.
fn first_line_serving_on(addr: &str) -> String {
    let mut child = squall()
        .args(["serve", "--addr", addr])
        .current_dir(crate::kit::suites::root())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("squall starts");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut first).expect("a line");
    let _ = child.kill();
    let _ = child.wait();
    first
}

#[test]
fn serve_prints_the_listening_line_first_with_the_real_port() {
    let first = first_line_serving_on("127.0.0.1:0");
    let url = first.trim_end().strip_prefix("squall listening on http://127.0.0.1:").expect(&first).to_owned();
    let port: u16 = url.parse().expect("a port number");
    assert_ne!(port, 0);
}

#[test]
fn bad_flags_and_paths_exit_2_with_one_clear_line() {
    let output = squall().args(["serve", "--addr", "nonsense"]).output().expect("runs");
    assert_eq!(output.status.code(), Some(2));
    let output =
        squall().args(["serve", "--addr", "127.0.0.1:0", "--scenarios", "/no/such/dir"]).output().expect("runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("/no/such/dir"), "{stderr}");
}

#[test]
fn scenarios_check_reports_each_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let good = dir.path().join("good.toml");
    let bad = dir.path().join("bad.toml");
    std::fs::write(&good, "name = \"good\"\n").expect("write");
    std::fs::write(&bad, "name = \"bad\"\nafter = \"sometimes\"\n").expect("write");
    let output = squall().args(["scenarios", "check"]).arg(&good).arg(&bad).output().expect("runs");
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("ok    ") && stdout.contains("bad.toml:2:") && stdout.contains("after"), "{stdout}");
}

#[test]
fn squall_run_writes_under_target_squall_named_after_the_implementation_and_leaves_the_checkout_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = crate::kit::suites::root();
    // Task cases at the wire level: nothing is judged, which --allow-empty accepts. The command
    // runs the reference (an implementation that does nothing at all stops the run instead).
    let command = format!("OPENAI_X=1 sh -c '{} reference-iut'", squall_bin());
    let output = squall()
        .args(["run", "--iut", &command, "--level", "wire", "--tags", "@REQ-0006-030", "--allow-empty"])
        .arg("--features")
        .arg(root.join("features"))
        .arg("--scenarios")
        .arg(root.join("scenarios"))
        .current_dir(dir.path())
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(dir.path().join("target/squall/sh/report.json").is_file(), "named after the program, `sh`");
    let listed: Vec<_> =
        std::fs::read_dir(dir.path()).expect("dir").filter_map(Result::ok).map(|e| e.file_name()).collect();
    assert_eq!(listed, [std::ffi::OsString::from("target")], "nothing else is written");
    let refused = squall().args(["run", "--iut", "reference:nonsense"]).output().expect("runs");
    assert_eq!(refused.status.code(), Some(2));
    let refusal = String::from_utf8_lossy(&refused.stderr);
    assert!(
        refusal.contains("reference:nonsense: expected a mutant squall knows") && refusal.contains("zero-jitter"),
        "{refusal}"
    );
}

#[test]
fn the_catalogue_lists_each_scenario_with_its_description() {
    let list = squall().args(["scenarios", "list"]).current_dir(crate::kit::suites::root()).output().expect("runs");
    let text = String::from_utf8_lossy(&list.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| l.starts_with("outage-40s-then-ok ")).expect("the outage scenario is listed");
    assert!(lines[at].contains("REQ-0006-001"), "{}", lines[at]);
    assert!(lines[at + 1].starts_with("    A 40-second regional outage"), "{}", lines[at + 1]);
}

#[test]
fn a_missing_file_is_named_without_a_field() {
    let check = squall().args(["scenarios", "check", "/nonexistent/x.toml"]).output().expect("runs");
    // `scenarios check` reports each file on stdout.
    let report = String::from_utf8_lossy(&check.stdout);
    assert!(report.starts_with("error /nonexistent/x.toml: cannot read the file"), "{report}");
    assert!(!report.contains("field"), "{report}");
}

#[test]
fn serve_listens_on_a_host_name() {
    let first = first_line_serving_on("localhost:0");
    assert!(first.starts_with("squall listening on http://127.0.0.1:"), "{first}");
}

/// `squall run --iut COMMAND` writing its reports under a fresh directory: exit code, stderr and
/// the directory (which must stay empty when the run could not be judged).
fn run_command_iut(command: &str) -> (Option<i32>, String, Vec<std::path::PathBuf>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let reports = dir.path().join("reports");
    let output = squall()
        .args(["run", "--iut", command, "--report-dir"])
        .arg(&reports)
        .current_dir(crate::kit::suites::root())
        .output()
        .expect("runs");
    let written =
        std::fs::read_dir(&reports).map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect()).unwrap_or_default();
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned(), written)
}

#[test]
fn an_implementation_that_cannot_start_stops_the_run_with_one_clear_line() {
    let (code, stderr, written) = run_command_iut("no-such-squall-client --flag");
    assert_eq!(code, Some(2), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("squall: ")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains("cannot run a case") && errors[0].contains("exited 127"), "{stderr}");
    assert!(errors[0].contains("no-such-squall-client"), "it names the command: {stderr}");
    assert!(written.is_empty(), "no report of a run that judged nothing: {written:?}");
    let (code, stderr, _) = run_command_iut("true");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("exited 0 without sending a request or writing $SQUALL_OUT/result.json"), "{stderr}");
}
