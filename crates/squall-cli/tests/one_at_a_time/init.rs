//! `squall init`'s whole path: the wheel installed into a fresh venv, an adapter written, its
//! install and its printed command giving the kept verdicts, with no libfaketime anywhere.

use crate::kit::command::text;
use crate::kit::harness::require;
use crate::kit::suites::root;
use crate::suite::init::printed_command;
use std::path::Path;
use std::process::Command;

#[test]
#[ignore = "needs the wheel and the SDK wheels scripts/test.sh keeps"]
fn the_wheel_then_squall_init_its_install_and_its_command_give_the_kept_verdicts_without_libfaketime() {
    let wheel = crate::suite::python_wheel::wheel();
    let project = tempfile::tempdir().expect("an empty directory");
    let dir = project.path();
    // The wheel in a fresh venv, offline.
    let python = crate::suite::python_wheel::venv(&dir.join("venv"));
    let installed = crate::suite::python_wheel::run(crate::suite::python_wheel::pip(&python).arg(&wheel));
    crate::suite::python_wheel::succeeded(&installed, "pip install squall");
    let squall = dir.join("venv/bin/squall");
    let said = text(&Command::new(&squall).args(["init", "python-openai"]).current_dir(dir).output().expect("runs"));
    // The install it prints, offline from the kept wheels.
    let printed = said.lines().find_map(|l| l.split_once("pip install ")).map(|(_, words)| words);
    let printed = printed.unwrap_or_else(|| panic!("no install printed: {said}"));
    let mut pip = crate::suite::python_wheel::pip(&python);
    pip.args(printed.split_whitespace().filter(|word| *word != "--quiet")).current_dir(dir);
    crate::suite::python_wheel::succeeded(
        &crate::suite::python_wheel::run(&mut pip),
        "the install squall init printed",
    );
    // The command it prints, as typed where `python3` and `squall` are the venv's, on
    // REQ-0006-001's cases of one client each (the herd's are the kept reports' test's).
    let command = format!("{} --tags '@REQ-0006-001 and not @herd' --report-dir report", printed_command(&said));
    let path = format!("{}:/usr/bin:/bin", dir.join("venv/bin").display());
    let output = without_libfaketime(&command).env("PATH", path).current_dir(dir).output().expect("runs");
    let text = text(&output);
    require(matches!(output.status.code(), Some(0 | 1)), &format!("exit {:?}\n{text}", output.status.code()));
    require(text.contains("accelerated (squall-clock 2)"), &format!("the report names squall's own clock\n{text}"));
    let fresh = verdicts_of(&dir.join("report/report.json"));
    let kept = verdicts_of(&root().join("reports/python-openai"));
    let differ: Vec<String> = fresh
        .iter()
        .filter(|(name, verdict)| kept.get(*name) != Some(verdict))
        .map(|(name, verdict)| format!("{name}: {verdict} now, {:?} kept", kept.get(name)))
        .collect();
    require(fresh.len() >= 19 && differ.is_empty(), &format!("{} cases\n{}\n{text}", fresh.len(), differ.join("\n")));
}

/// Where Debian's libfaketime lives, when it is installed.
const LIBFAKETIME: [&str; 2] = ["/usr/bin/faketime", "/usr/lib/x86_64-linux-gnu/faketime"];

/// `sh -c script` as it runs on a machine without libfaketime: where it is installed, in a
/// private mount namespace with its program and library folder hidden.
fn without_libfaketime(script: &str) -> Command {
    let present: Vec<&str> = LIBFAKETIME.into_iter().filter(|path| Path::new(path).exists()).collect();
    if present.is_empty() {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        return command;
    }
    let hide: Vec<String> = present
        .iter()
        .map(|path| match Path::new(path).is_dir() {
            true => format!("mount -t tmpfs none '{path}'"),
            false => format!("mount --bind /dev/null '{path}'"),
        })
        .collect();
    let mut command = Command::new("unshare");
    command.args(["--mount", "--propagation", "private", "sh", "-c", &format!("{} && {script}", hide.join(" && "))]);
    command
}

/// Each REQ-0006-001 case's verdict in `report.json`, by name.
fn verdicts_of(report: &Path) -> std::collections::BTreeMap<String, String> {
    let (_, report) = squall_suite::report::read::read_report(report).unwrap_or_else(|e| panic!("{e}"));
    report
        .requirements
        .iter()
        .filter(|r| r.id == "REQ-0006-001")
        .flat_map(|r| r.cases.iter().map(|c| (c.name.clone(), c.verdict.as_str().to_owned())))
        .collect()
}
