//! The squall wheel as a user installs it: `scripts/test.sh` builds it with maturin
//! (`scripts/build-wheel.sh --dev`, into target/wheels); here pip installs it offline into a
//! fresh venv and under `--user`, `--target` and `--prefix`, and each install finds the
//! executable it carries with no squall on `PATH`; the installed `squall` judges the reference;
//! and pytest, installed beside it from pytest's own wheels, loads the plugin, which starts that
//! executable by itself (no `--squall-bin`, no `SQUALL_BIN`); with nothing but sh and Python on
//! `PATH`, the installed squall runs a client on its own sped-up clock (the wheel carries it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::kit::command::text;
use crate::kit::harness::require;
use crate::kit::sdks::sdk_dir;
use crate::kit::suites::{python_interpreter, root};

/// A `PATH` without squall on it: the system's programs only.
const BARE_PATH: &str = "/usr/bin:/bin";

/// The wheel scripts/test.sh built.
pub(crate) fn wheel() -> PathBuf {
    let dir = root().join("target/wheels");
    let found = std::fs::read_dir(&dir).into_iter().flatten().flatten().map(|e| e.path()).find(|p| {
        p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("squall-") && n.ends_with(".whl"))
    });
    found.unwrap_or_else(|| panic!("no squall wheel in {}: run scripts/build-wheel.sh --dev", dir.display()))
}

pub(crate) fn run(command: &mut Command) -> Output {
    command.env("PATH", BARE_PATH).env("PIP_DISABLE_PIP_VERSION_CHECK", "1").output().expect("it runs")
}

pub(crate) fn succeeded(output: &Output, what: &str) -> String {
    let text = text(output);
    require(output.status.success(), &format!("{what}: exit {:?}\n{text}", output.status.code()));
    text
}

/// `python -m pip install`, offline: wheels from the ones scripts/setup-sdks.sh keeps only. The caller adds where
/// to, then [`install`] adds the squall wheel and runs it.
pub(crate) fn pip(python: &Path) -> Command {
    let mut command = Command::new(python);
    command.args(["-m", "pip", "install", "--quiet", "--no-index", "--find-links"]).arg(sdk_dir().join("wheels"));
    command
}

pub(crate) fn install(command: &mut Command, what: &str) {
    succeeded(&run(command.arg(wheel())), what);
}

/// A fresh venv (with pip) in `dir`; its interpreter.
pub(crate) fn venv(dir: &Path) -> PathBuf {
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
#[ignore = "needs the wheel and pytest's wheels scripts/test.sh makes"]
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
