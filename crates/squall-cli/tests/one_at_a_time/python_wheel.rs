//! An installed wheel judges the reference, and pytest starts the wheel's squall by itself.

use crate::kit::command::text;
use crate::kit::harness::require;
use crate::kit::suites::{python_interpreter, root};
use crate::suite::python_wheel::{install, pip, run, succeeded, venv};
use std::process::Command;

#[test]
#[ignore = "needs the wheel and pytest's wheels scripts/test.sh makes"]
fn an_installed_wheel_judges_the_reference_and_pytest_starts_it_by_itself() {
    let dir = tempfile::tempdir().expect("tempdir");
    let python_in_venv = venv(&dir.path().join("venv"));
    // The wheel and pytest, as `pip install squall pytest` would, from the kept wheels.
    install(pip(&python_in_venv).arg("pytest"), "pip install squall pytest");

    // `squall run --iut reference`, the README's first command, by the installed executable.
    let squall = dir.path().join("venv/bin/squall");
    let reports = dir.path().join("report");
    let judged = run(Command::new(&squall)
        .args(["run", "--iut", "reference", "--case", "req-0006-001/status-429-is-retried", "--report-dir"])
        .arg(&reports)
        .current_dir(dir.path()));
    let said = succeeded(&judged, "squall run --iut reference");
    require(reports.join("report.json").is_file() && reports.join("acceptance.md").is_file(), &said);

    // With only sh and Python on PATH, the client runs on squall's own clock, which the wheel
    // carries: nothing is installed beside it.
    let bare_bin = dir.path().join("bin");
    std::fs::create_dir(&bare_bin).expect("a bin");
    std::os::unix::fs::symlink(python_interpreter(), bare_bin.join("python3")).expect("links");
    std::os::unix::fs::symlink("/bin/sh", bare_bin.join("sh")).expect("links");
    let independent = root().join("crates/squall-cli/tests/iut/prd0006");
    let adapter = format!("python3 '{}'", independent.display());
    let sped_up = Command::new(&squall)
        .args(["run", "--iut", &adapter, "--case", "req-0006-001/status-503-is-retried", "--report-dir"])
        .arg(dir.path().join("sped-up"))
        .env("PATH", &bare_bin)
        .current_dir(dir.path())
        .output()
        .expect("squall runs");
    let said = text(&sped_up);
    require(sped_up.status.code() == Some(0) && said.contains("accelerated (squall-clock 2)"), &said);
    require(!said.contains("scaled, not sped up"), &said);

    // pytest in a project of its own: the plugin loads from the wheel's entry point and starts
    // the wheel's squall (nothing on PATH, no --squall-bin): the 400 passes, the 429 fails.
    let project = dir.path().join("project");
    std::fs::create_dir(&project).expect("a project");
    std::fs::write(project.join("test_client.py"), ONE_REQUEST_CLIENT).expect("writes");
    let output = run(Command::new(&python_in_venv)
        .args(["-m", "pytest", "-p", "no:cacheprovider", "-q", "-k", "status-400-is-final or status-429-is-retried"])
        .env_remove("SQUALL_BIN")
        .env_remove("SQUALL_URL")
        .current_dir(&project));
    let said = text(&output);
    require(output.status.code() == Some(1), &format!("exit {:?}\n{said}", output.status.code()));
    require(said.contains("1 failed, 1 passed"), &said);
    require(said.contains("status-429-is-retried (REQ-0006-001): fail"), &said);
}

/// A client with no retries of its own, over the standard library: one request, its outcome.
const ONE_REQUEST_CLIENT: &str = r#"# A client that never retries: the plugin judges it with the squall it started itself.
import json
import urllib.error
import urllib.request

import pytest


def one_request(case):
    body = json.dumps({"model": "gpt-4o-mini", "input": case.prompt, "stream": True}).encode()
    request = urllib.request.Request(case.base_url + "/responses", data=body, method="POST",
                                     headers={"content-type": "application/json", "authorization": "Bearer test"})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            reply.read()
        return {"ok": True, "stop_reason": "end_turn"}
    except urllib.error.HTTPError as error:
        return {"ok": False, "stop_reason": "error", "error_type": type(error).__name__, "error_message": str(error)}


@pytest.mark.squall(profile="prd-0006", level="wire", tags="@REQ-0006-001")
def test_one_request(squall_case):
    squall_case.verify(one_request)
"#;
