//! `squall init`: each adapter it offers is written as `adapters/` keeps it, with its client's
//! version pinned and the command that judges it printed; it never writes over a file (nothing
//! is written when one exists), names what it knows when asked for what it does not, and says
//! why it leaves an adapter out. With the wheel, on a machine without libfaketime: a newcomer's
//! path — the wheel in a fresh venv, `squall init python-openai`, the install it prints, then the
//! command it prints — gives every REQ-0006-001 case the kept report's verdict, on squall's own clock.

use std::path::Path;
use std::process::Output;

use crate::kit::command::squall;
use crate::kit::command::text;
use crate::kit::harness::require;
use crate::kit::suites::root;

pub(crate) fn init(dir: &Path, args: &[&str]) -> Output {
    squall().arg("init").args(args).current_dir(dir).output().expect("squall runs")
}

/// The command `squall init` printed to judge the adapter.
pub(crate) fn printed_command(said: &str) -> String {
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
