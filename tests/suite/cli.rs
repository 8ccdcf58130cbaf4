//! The `squall` binary as a user runs it.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

fn squall() -> Command {
    Command::new(env!("CARGO_BIN_EXE_squall"))
}

#[test]
fn help_never_shows_the_admin_token_from_the_environment() {
    let help = Command::new(env!("CARGO_BIN_EXE_squall"))
        .args(["serve", "--help"])
        .env("SQUALL_ADMIN_TOKEN", "s3cret-token")
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("SQUALL_ADMIN_TOKEN") && !text.contains("s3cret-token"), "{text}");
}

/// The first line `squall serve --addr ADDR` prints, then it is stopped.
fn first_line_serving_on(addr: &str) -> String {
    let mut child = squall()
        .args(["serve", "--addr", addr])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
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
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    // Task cases at the wire level: nothing is judged, which --allow-empty accepts.
    let output = squall()
        .args(["run", "--iut", "OPENAI_X=1 sh -c true", "--level", "wire", "--tags", "@REQ-0006-030", "--allow-empty"])
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
    let list = squall().args(["scenarios", "list"]).current_dir(env!("CARGO_MANIFEST_DIR")).output().expect("runs");
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
