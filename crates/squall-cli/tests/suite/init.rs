//! `squall init`: each adapter it offers is written as `adapters/` keeps it, with its client's
//! version pinned and the command that judges it printed; it never writes over a file (nothing
//! is written when one exists), names what it knows when asked for what it does not, and says
//! why it leaves an adapter out. With the wheel, on a machine without libfaketime: a newcomer's
//! path — the wheel in a fresh venv, `squall init python-openai`, the install it prints, then the
//! command it prints — gives every REQ-0006-001 case the kept report's verdict, on squall's own clock.

use std::path::Path;
use std::process::{Command, Output};

use crate::kit::command::squall;
use crate::kit::command::text;
use crate::kit::harness::require;
use crate::kit::machine::take_turn_blocking;
use crate::kit::suites::root;

fn init(dir: &Path, args: &[&str]) -> Output {
    squall().arg("init").args(args).current_dir(dir).output().expect("squall runs")
}

/// The command `squall init` printed to judge the adapter.
fn printed_command(said: &str) -> String {
    let line = said.lines().find_map(|l| l.strip_prefix("then judge it:")).unwrap_or_else(|| panic!("{said}"));
    line.trim().to_owned()
}

#[test]
fn squall_init_writes_each_adapter_as_kept_and_never_over_a_file() {
    let project = tempfile::tempdir().expect("a project");
    let dir = project.path();
    let listed = text(&init(dir, &["--list"]));
    for name in ["python-openai", "python-boto3-bedrock", "python-litellm", "node-ai-sdk", "node-aws-bedrock"] {
        require(listed.lines().any(|l| l.starts_with(name)), &listed);
    }

    let output = init(dir, &["python-openai"]);
    let said = text(&output);
    require(output.status.success(), &said);
    let written = dir.join("squall-adapters/python-openai");
    let kept = std::fs::read_to_string(root().join("adapters/python-openai/adapter.py")).expect("the kept adapter");
    require(std::fs::read_to_string(written.join("adapter.py")).ok().as_ref() == Some(&kept), "adapter.py as kept");
    let pinned = std::fs::read_to_string(written.join("requirements.txt")).expect("requirements.txt");
    require(pinned.trim() == "openai==3.51.0", &pinned);
    require(said.contains("pip install -r squall-adapters/python-openai/requirements.txt"), &said);
    let command = printed_command(&said);
    require(
        command == r#"squall run --iut "python3 squall-adapters/python-openai/adapter.py" --warm --level wire"#,
        &command,
    );

    // Again: refused, naming both files, and nothing changed (the edit below survives).
    std::fs::write(written.join("adapter.py"), "# mine now\n").expect("writes");
    let again = init(dir, &["python-openai"]);
    let refused = text(&again);
    require(again.status.code() == Some(2), &refused);
    require(refused.contains("writes no file over another") && refused.contains("requirements.txt exist"), &refused);
    require(
        std::fs::read_to_string(written.join("adapter.py")).expect("reads") == "# mine now\n",
        "kept the user's edit",
    );

    // One file in the way of a Node adapter: none of its files is written.
    let node = dir.join("node");
    std::fs::create_dir(&node).expect("a dir");
    std::fs::write(node.join("package.json"), "{}").expect("writes");
    let blocked = init(dir, &["node-openai", "--dir", "node"]);
    require(blocked.status.code() == Some(2) && !node.join("adapter.mjs").exists(), &text(&blocked));

    // With its pinned lockfile, and a directory with a space quoted in the printed command.
    let spaced = init(dir, &["node-ai-sdk", "--dir", "my adapters"]);
    let said = text(&spaced);
    require(spaced.status.success(), &said);
    let kept = std::fs::read_to_string(root().join("adapters/node-ai-sdk/package-lock.json")).expect("the lock");
    let lock = std::fs::read_to_string(dir.join("my adapters/package-lock.json")).expect("written");
    require(lock == kept, "package-lock.json as kept");
    require(
        printed_command(&said) == r#"squall run --iut "node 'my adapters/adapter.mjs'" --concurrency 4 --level wire"#,
        &said,
    );

    let unknown = init(dir, &["python-requests"]);
    require(
        unknown.status.code() == Some(2) && text(&unknown).contains("squall init knows python-openai"),
        &text(&unknown),
    );
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

#[test]
#[ignore = "needs the wheel and the SDK wheels scripts/test.sh keeps (cargo test -- --include-ignored)"]
fn the_wheel_then_squall_init_its_install_and_its_command_give_the_kept_verdicts_without_libfaketime() {
    let wheel = super::python_wheel::wheel();
    let _one = take_turn_blocking();
    let project = tempfile::tempdir().expect("an empty directory");
    let dir = project.path();
    // The wheel in a fresh venv, offline.
    let python = super::python_wheel::venv(&dir.join("venv"));
    let installed = super::python_wheel::run(super::python_wheel::pip(&python).arg(&wheel));
    super::python_wheel::succeeded(&installed, "pip install squall");
    let squall = dir.join("venv/bin/squall");
    let said = text(&Command::new(&squall).args(["init", "python-openai"]).current_dir(dir).output().expect("runs"));
    // The install it prints, offline from the kept wheels.
    let printed = said.lines().find_map(|l| l.split_once("pip install ")).map(|(_, words)| words);
    let printed = printed.unwrap_or_else(|| panic!("no install printed: {said}"));
    let mut pip = super::python_wheel::pip(&python);
    pip.args(printed.split_whitespace().filter(|word| *word != "--quiet")).current_dir(dir);
    super::python_wheel::succeeded(&super::python_wheel::run(&mut pip), "the install squall init printed");
    // The command it prints, as typed where `python3` and `squall` are the venv's.
    let command = format!("{} --tags @REQ-0006-001 --report-dir report", printed_command(&said));
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
    require(fresh.len() >= 20 && differ.is_empty(), &format!("{} cases\n{}\n{text}", fresh.len(), differ.join("\n")));
}
