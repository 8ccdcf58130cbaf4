//! squall's npm packages as a user installs them: `scripts/build-npm.sh` packs squall-judge and
//! this platform's squall-PLATFORM (carrying the executable); `npm install` of the two tarballs
//! into a fresh project works offline with `--ignore-scripts`, and there squall-judge finds the
//! executable by itself (no `SQUALL_BIN`, nothing on `PATH`) and starts a judge with it; the
//! vitest example (the Vercel AI SDK) runs there as in the README, with no `SQUALL_BIN` either.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::kit::command::{squall_bin, text};
use crate::kit::harness::require;
use crate::kit::sdks::examples_js;
use crate::kit::suites::root;

fn succeeded(output: Output, what: &str) -> String {
    let text = text(&output);
    require(output.status.success(), &format!("{what}: exit {:?}\n{text}", output.status.code()));
    text
}

/// Where `node` is, as it says itself: the fresh project's commands run with a bare `PATH`.
fn node() -> PathBuf {
    let said = succeeded(Command::new("node").args(["-p", "process.execPath"]).output().expect("node runs"), "node");
    PathBuf::from(said.trim())
}

/// The two tarballs, packed with this test's own squall.
fn packed() -> Vec<PathBuf> {
    let output = Command::new(root().join("scripts/build-npm.sh")).args(["--binary", squall_bin()]).output();
    let said = succeeded(output.expect("build-npm.sh runs"), "scripts/build-npm.sh");
    let tarballs: Vec<PathBuf> = said.lines().filter(|l| l.ends_with(".tgz")).map(PathBuf::from).collect();
    require(tarballs.len() == 2, &said);
    tarballs
}

/// What a user's script sees: the platform's package name, the executable found, the version
/// it prints, and how many cases a judge started with it lists.
const FIND_AND_START: &str = r#"
import { execFileSync } from "node:child_process";
import { findOrStart, platformPackage, squallBinary } from "squall-judge";
const binary = squallBinary();
const version = execFileSync(binary, ["--version"]).toString().trim();
const server = await findOrStart();
const cases = await (await fetch(`${server.url}/__squall/cases`)).json();
server.stop();
console.log(JSON.stringify({ platformPackage, binary, version, cases: cases.cases.length }));
"#;

#[test]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
fn npm_installs_squall_judge_and_its_executable_offline_and_finds_it() {
    let tarballs = packed();
    let project = tempfile::tempdir().expect("a project");
    let dir = project.path();
    std::fs::write(dir.join("package.json"), r#"{"name": "my-project", "version": "1.0.0", "type": "module"}"#)
        .expect("writes");
    let mut install = Command::new("npm");
    install.args(["install", "--offline", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]);
    succeeded(install.args(&tarballs).current_dir(dir).output().expect("npm runs"), "npm install --offline");

    std::fs::write(dir.join("find.mjs"), FIND_AND_START).expect("writes");
    let output = Command::new(node())
        .arg("find.mjs")
        .env("PATH", "/usr/bin:/bin")
        .env_remove("SQUALL_BIN")
        .env_remove("SQUALL_URL")
        .current_dir(dir)
        .output()
        .expect("node runs");
    let said = succeeded(output, "the user's script");
    let seen: serde_json::Value = serde_json::from_str(said.trim()).unwrap_or_else(|_| panic!("JSON: {said}"));
    let platform = seen["platformPackage"].as_str().unwrap_or_default();
    let expected: &Path = &dir.join("node_modules").join(platform).join("bin/squall");
    require(platform.starts_with("squall-linux-"), &said);
    require(
        seen["binary"].as_str().map(Path::new) == Some(expected),
        &format!("{said}\nexpected {}", expected.display()),
    );
    require(seen["version"] == format!("squall {}", env!("CARGO_PKG_VERSION")), &said);
    require(seen["cases"].as_u64().is_some_and(|n| n > 0), &said);
    vitest_example_runs_without_squall_bin(dir);
}

/// The vitest example in that project: its packages (the AI SDK, vitest) linked from the
/// examples' install (npm would fetch them), squall-judge and the executable as installed
/// above; two cases of REQ-0006-001, each judged through the executable squall-judge found.
fn vitest_example_runs_without_squall_bin(dir: &Path) {
    let examples = examples_js();
    std::fs::create_dir_all(dir.join("node_modules")).expect("node_modules");
    for package in ["ai", "@ai-sdk", "vitest"] {
        std::os::unix::fs::symlink(examples.join("node_modules").join(package), dir.join("node_modules").join(package))
            .expect("links");
    }
    std::fs::copy(examples.join("ai-sdk.test.mjs"), dir.join("ai-sdk.test.mjs")).expect("the example");
    let output = Command::new(node())
        .args([
            "node_modules/vitest/vitest.mjs",
            "run",
            "ai-sdk.test.mjs",
            "-t",
            "status-400-is-final|status-503-is-retried",
            // Off squall's clock the AI SDK waits its 2 s backoffs in real time: a busy machine
            // took the retried case past vitest's default 5 s once.
            "--testTimeout=60000",
        ])
        .env("PATH", "/usr/bin:/bin")
        .env("SQUALL_TAGS", "@REQ-0006-001")
        .env("NO_COLOR", "1")
        .env_remove("SQUALL_BIN")
        .env_remove("SQUALL_URL")
        .current_dir(dir)
        .output()
        .expect("vitest runs");
    let said = succeeded(output, "the vitest example");
    // vitest colours its summary where CI is set, whatever NO_COLOR says: read it without.
    let plain = regex::Regex::new("\x1b\\[[0-9;]*m").expect("regex").replace_all(&said, "");
    require(plain.contains("Tests  2 passed"), &plain);
}
