//! The squall wheel as a user installs it: `scripts/test.sh` builds it with maturin
//! (`scripts/build-wheel.sh --dev`, into target/wheels); here pip installs it offline into a
//! fresh venv and under `--user`, `--target` and `--prefix`, and each install finds the
//! executable it carries with no squall on `PATH`; the installed `squall` judges the reference;
//! and pytest, installed beside it from pytest's own wheels, loads the plugin, which starts that
//! executable by itself (no `--squall-bin`, no `SQUALL_BIN`); with nothing but sh and Python on
//! `PATH`, the installed squall runs a client on its own sped-up clock (the wheel carries it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::sdk::sdk_dir;
use crate::kit::command::text;
use crate::kit::harness::require;
use crate::kit::machine::take_turn_blocking;
use crate::kit::suites::{python_interpreter, root};

/// A `PATH` without squall on it: the system's programs only.
const BARE_PATH: &str = "/usr/bin:/bin";

/// The wheel scripts/test.sh built.
pub(super) fn wheel() -> PathBuf {
    super::sdk::wait_for_the_wheel();
    let dir = root().join("target/wheels");
    let found = std::fs::read_dir(&dir).into_iter().flatten().flatten().map(|e| e.path()).find(|p| {
        p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("squall-") && n.ends_with(".whl"))
    });
    found.unwrap_or_else(|| panic!("no squall wheel in {}: run scripts/build-wheel.sh --dev", dir.display()))
}

pub(super) fn run(command: &mut Command) -> Output {
    command.env("PATH", BARE_PATH).env("PIP_DISABLE_PIP_VERSION_CHECK", "1").output().expect("it runs")
}

pub(super) fn succeeded(output: &Output, what: &str) -> String {
    let text = text(output);
    require(output.status.success(), &format!("{what}: exit {:?}\n{text}", output.status.code()));
    text
}

/// `python -m pip install`, offline: wheels from the ones scripts/setup-sdks.sh keeps only. The caller adds where
/// to, then [`install`] adds the squall wheel and runs it.
pub(super) fn pip(python: &Path) -> Command {
    let mut command = Command::new(python);
    command.args(["-m", "pip", "install", "--quiet", "--no-index", "--find-links"]).arg(sdk_dir().join("wheels"));
    command
}

fn install(command: &mut Command, what: &str) {
    succeeded(&run(command.arg(wheel())), what);
}

/// A fresh venv (with pip) in `dir`; its interpreter.
pub(super) fn venv(dir: &Path) -> PathBuf {
    succeeded(&run(Command::new(python_interpreter()).args(["-m", "venv"]).arg(dir)), "python -m venv");
    dir.join("bin/python")
}

/// What `squall.find_squall_bin()` answers to `python` with `PYTHONPATH` (and more) set.
fn found_by(python: &Path, env: &[(&str, &Path)]) -> String {
    let mut command = Command::new(python);
    command.args(["-c", "import squall; print(squall.find_squall_bin())"]);
    for (key, value) in env {
        command.env(key, value);
    }
    succeeded(&run(&mut command), "find_squall_bin").trim().to_owned()
}

/// The executable found is the one the install put there, and it is squall of this version.
fn is_the_installed_squall(found: &str, expected: &Path) {
    require(Path::new(found) == expected, &format!("found {found}, expected {}", expected.display()));
    let version = succeeded(&run(Command::new(found).arg("--version")), "squall --version");
    require(version.trim() == format!("squall {}", env!("CARGO_PKG_VERSION")), &version);
}

#[test]
#[ignore = "needs the wheel and pytest's wheels scripts/test.sh makes (cargo test -- --include-ignored)"]
fn the_wheel_finds_its_executable_wherever_pip_puts_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root_dir = dir.path();

    // A venv: its bin, and `python -m squall`.
    let python_in_venv = venv(&root_dir.join("venv"));
    install(pip(&python_in_venv).arg("--no-deps"), "pip install into a venv");
    is_the_installed_squall(&found_by(&python_in_venv, &[]), &root_dir.join("venv/bin/squall"));
    let module = succeeded(&run(Command::new(&python_in_venv).args(["-m", "squall", "--version"])), "python -m squall");
    require(module.trim() == format!("squall {}", env!("CARGO_PKG_VERSION")), &module);

    // --target DIR: the package in DIR, the executable in DIR/bin.
    let target = root_dir.join("target");
    install(pip(Path::new(python_interpreter())).args(["--no-deps", "--target"]).arg(&target), "pip install --target");
    is_the_installed_squall(
        &found_by(Path::new(python_interpreter()), &[("PYTHONPATH", &target)]),
        &target.join("bin/squall"),
    );

    // --prefix DIR: the package in DIR/lib/pythonX.Y/site-packages, the executable in DIR/bin.
    let prefix = root_dir.join("prefix");
    install(pip(Path::new(python_interpreter())).args(["--no-deps", "--prefix"]).arg(&prefix), "pip install --prefix");
    let lib = std::fs::read_dir(prefix.join("lib")).expect("DIR/lib").flatten().next().expect("pythonX.Y").path();
    let site = lib.join("site-packages");
    is_the_installed_squall(
        &found_by(Path::new(python_interpreter()), &[("PYTHONPATH", &site)]),
        &prefix.join("bin/squall"),
    );

    // --user, the user base in the temporary directory (pip refuses --user where Python is
    // the system's, unless told: this installs nothing outside the temporary directory).
    let user = root_dir.join("user");
    let mut user_install = pip(Path::new(python_interpreter()));
    user_install.args(["--no-deps", "--user", "--break-system-packages"]).env("PYTHONUSERBASE", &user);
    install(&mut user_install, "pip install --user");
    is_the_installed_squall(
        &found_by(Path::new(python_interpreter()), &[("PYTHONUSERBASE", &user)]),
        &user.join("bin/squall"),
    );

    // The sources alone, nothing installed and nothing on PATH: an error naming where it looked.
    let source = root().join("integrations/python");
    let output = run(Command::new(python_interpreter())
        .args(["-c", "import squall; squall.find_squall_bin()"])
        .env("PYTHONPATH", &source)
        .env("PYTHONNOUSERSITE", "1"));
    let said = text(&output);
    require(!output.status.success() && said.contains("SquallNotFound: no squall executable: not in"), &said);
    require(said.contains("nor on PATH"), &said);
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

#[test]
#[ignore = "needs the wheel and pytest's wheels scripts/test.sh makes (cargo test -- --include-ignored)"]
fn an_installed_wheel_judges_the_reference_and_pytest_starts_it_by_itself() {
    let _one = take_turn_blocking();
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
