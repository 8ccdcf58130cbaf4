//! squall's GitHub Action (integrations/github-action), its steps run here as a runner would run
//! them, with a fake `GITHUB_*` environment: `install.sh` puts squall from a release archive (a
//! `file://` release URL) or from the wheel on the job's PATH; `run.sh` runs the suite, writes
//! the exit code as the step's output, the verdicts and the diff against a baseline into the job
//! summary, and the comment and PR number for the comment job; the exit code is squall run's.
//! And `action.yml` passes every input the scripts read.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use regex::Regex;

use crate::kit::command::squall_bin;
use crate::kit::command::text;
use crate::kit::harness::require;
use crate::kit::suites::{python_interpreter, root};

fn action() -> PathBuf {
    root().join("integrations/github-action")
}

/// A runner's files and variables for one job, in a temporary directory.
struct Runner {
    dir: tempfile::TempDir,
}

impl Runner {
    fn new() -> Runner {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("temp")).expect("RUNNER_TEMP");
        let event = r#"{"pull_request": {"number": 42}}"#;
        std::fs::write(dir.path().join("event.json"), event).expect("the event");
        Runner { dir }
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.file(name)).unwrap_or_default()
    }

    /// The PATH a later step sees: what `$GITHUB_PATH` added, then a runner's own programs
    /// (Python's, and the system's).
    fn path(&self) -> String {
        let mut path: Vec<String> = self.read(GITHUB_PATH_FILE).lines().rev().map(str::to_owned).collect();
        let python = Path::new(python_interpreter()).parent().map(|p| p.display().to_string());
        path.extend(python);
        path.push("/usr/bin:/bin".to_owned());
        path.join(":")
    }

    /// Runs one of the Action's scripts with `inputs` (INPUT_* variables) in the job's directory.
    fn step(&self, script: &str, inputs: &[(&str, &str)]) -> std::process::Output {
        let mut command = Command::new(action().join(script));
        command
            .current_dir(self.dir.path())
            .env_clear()
            .env("PATH", self.path())
            .env("HOME", self.dir.path())
            .env("RUNNER_TEMP", self.file("temp"))
            .env("GITHUB_PATH", self.file(GITHUB_PATH_FILE))
            .env("GITHUB_OUTPUT", self.file("github_output"))
            .env("GITHUB_STEP_SUMMARY", self.file("summary.md"))
            .env("GITHUB_EVENT_PATH", self.file("event.json"));
        for (key, value) in inputs {
            command.env(key, value);
        }
        command.output().expect("the step runs")
    }

    /// The last `exit-code=` the run step wrote.
    fn exit_code(&self) -> Option<String> {
        self.read("github_output").lines().rev().find_map(|l| l.strip_prefix("exit-code=")).map(str::to_owned)
    }
}

/// The file `$GITHUB_PATH` names, in the job's directory.
const GITHUB_PATH_FILE: &str = "github_path";

/// A release directory as the Action downloads from: `v<version>/squall-<version>-<target>.tar.gz`.
fn release_dir(runner: &Runner) -> PathBuf {
    let releases = runner.file("releases");
    let version_dir = releases.join(format!("v{}", env!("CARGO_PKG_VERSION")));
    let made = Command::new(root().join("scripts/release-archive.sh"))
        .args(["--binary", squall_bin(), "--out"])
        .arg(&version_dir)
        .output();
    let made = made.expect("release-archive.sh runs");
    require(made.status.success(), &text(&made));
    releases
}

#[test]
fn the_actions_steps_install_squall_judge_summarise_and_fail_as_squall_run_does() {
    let runner = Runner::new();
    let releases = format!("file://{}", release_dir(&runner).display());
    let installed = runner.step(
        "install.sh",
        &[
            ("INPUT_INSTALL_FROM", "release"),
            ("INPUT_VERSION", env!("CARGO_PKG_VERSION")),
            ("INPUT_RELEASE_URL", &releases),
        ],
    );
    require(installed.status.success(), &text(&installed));
    require(text(&installed).contains(&format!("squall {}", env!("CARGO_PKG_VERSION"))), &text(&installed));
    let path = runner.read(GITHUB_PATH_FILE);
    require(Path::new(path.trim()).join("squall").is_file(), &path);

    // The reference on two cases: exit code 0, its verdicts in the summary, the PR's number kept.
    let cases = "--case req-0006-001/status-503-is-retried \
        --case req-0006-002/the-defaults-make-exactly-7-attempts-when-status-500-never-recovers";
    let passing = [
        ("INPUT_IUT", "reference"),
        ("INPUT_NAME", "retry"),
        ("INPUT_REPORT_DIR", "reports/retry"),
        ("INPUT_ARGS", cases),
    ];
    let ran = runner.step("run.sh", &passing);
    require(ran.status.success(), &text(&ran));
    require(runner.exit_code().as_deref() == Some("0"), &runner.read("github_output"));
    let summary = runner.read("summary.md");
    require(summary.contains("## squall: retry — pass") && summary.contains("REQ-0006-001"), &summary);
    require(runner.read("reports/retry/pr-number").trim() == "42", "the PR number");
    require(runner.file("reports/retry/report.json").is_file(), "the report");

    // A mutant that gives up after 3 attempts, against that baseline: exit code 1, the failure
    // and the diff's regressions (the requirement and its case) in the summary and the comment.
    let failing = [
        ("INPUT_IUT", "reference:give-up-after-3"),
        ("INPUT_NAME", "mutant"),
        ("INPUT_REPORT_DIR", "reports/mutant"),
        ("INPUT_BASELINE", "reports/retry"),
        ("INPUT_ARGS", cases),
    ];
    let ran = runner.step("run.sh", &failing);
    require(ran.status.success(), &text(&ran));
    require(runner.exit_code().as_deref() == Some("1"), &runner.read("github_output"));
    let comment = runner.read("reports/mutant/comment.md");
    require(comment.contains("## squall: mutant — requirements failed"), &comment);
    require(comment.contains("### Against the baseline") && comment.contains("**2 regressed**"), &comment);
    require(runner.read("summary.md").contains(&comment), "the comment is in the summary");

    // The last step fails the job with squall run's exit code.
    let last = std::fs::read_to_string(action().join("action.yml")).expect("action.yml");
    require(last.trim_end().ends_with(r#"run: exit "${{ steps.run.outputs.exit-code }}""#), "the last step");
}

#[test]
fn action_yml_declares_and_passes_every_input_its_scripts_read() {
    let yml = std::fs::read_to_string(action().join("action.yml")).expect("action.yml");
    let declared: BTreeSet<String> = {
        let inputs = &yml[yml.find("\ninputs:").expect("inputs")..yml.find("\noutputs:").expect("outputs")];
        Regex::new(r"(?m)^  ([a-z-]+):$").expect("regex").captures_iter(inputs).map(|c| c[1].to_owned()).collect()
    };
    let passed: BTreeSet<(String, String)> =
        Regex::new(r"(?m)^        (INPUT_[A-Z_]+): \$\{\{ inputs\.([a-z-]+) \}\}$")
            .expect("regex")
            .captures_iter(&yml)
            .map(|c| (c[1].to_owned(), c[2].to_owned()))
            .collect();
    for (variable, input) in &passed {
        require(declared.contains(input), &format!("{variable} passes the undeclared input {input}"));
        require(variable == &format!("INPUT_{}", input.to_uppercase().replace('-', "_")), variable);
    }
    let read = Regex::new(r"INPUT_[A-Z_]+").expect("regex");
    for script in ["install.sh", "run.sh"] {
        let text = std::fs::read_to_string(action().join(script)).expect("a script");
        for variable in read.find_iter(&text).map(|m| m.as_str()) {
            require(
                passed.iter().any(|(v, _)| v == variable),
                &format!("{script} reads {variable}, which action.yml does not pass"),
            );
        }
    }
    let passed_inputs: BTreeSet<String> = passed.iter().map(|(_, input)| input.clone()).collect();
    require(
        declared.len() >= 14 && passed_inputs == declared,
        &format!("every input declared is passed:\n{declared:?}\n{passed:?}"),
    );
}

#[test]
#[ignore = "needs the wheel scripts/test.sh builds"]
fn the_action_installs_squall_from_the_wheel_into_a_venv_of_its_own() {
    let runner = Runner::new();
    let wheel = super::python_wheel::wheel();
    let installed = runner.step(
        "install.sh",
        &[
            ("INPUT_INSTALL_FROM", "wheel"),
            ("INPUT_VERSION", env!("CARGO_PKG_VERSION")),
            ("INPUT_WHEEL", wheel.to_str().expect("UTF-8")),
            ("PIP_NO_INDEX", "1"),
        ],
    );
    require(installed.status.success(), &text(&installed));
    let path = runner.read(GITHUB_PATH_FILE);
    require(path.trim() == runner.file("temp/squall-venv/bin").display().to_string(), &path);
}
