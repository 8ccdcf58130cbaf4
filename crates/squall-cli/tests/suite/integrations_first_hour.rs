//! The integrations as a new user meets them (issue 44): a fresh pytest project keeps its own
//! rootdir with `--squall-bin=PATH` as the README writes it and is told how to write the option
//! otherwise; one timed case selected alone (`-k`, vitest `-t`) is calibrated and judged for
//! real; a missed SHOULD shows in vitest's output; a missing binary says how to give one; the
//! type declarations accept a typed test under `tsc --strict`.

use std::path::Path;
use std::process::{Command, Output};

use super::sdk::{examples_js, python};
use crate::kit::command::{squall_bin, text};
use crate::kit::harness::require;
use crate::kit::machine::take_turn_blocking;
use crate::kit::suites::root;

fn verdict_lines(file: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines().map(|line| serde_json::from_str(line).expect("a verdict a line")).collect()
}

/// A pytest project of one's own: a pytest.ini and the README's test of the openai SDK.
fn pytest_project(dir: &Path) {
    std::fs::write(dir.join("pytest.ini"), "[pytest]\nmarkers =\n    mine: a marker of the project's own\n")
        .expect("writes");
    let example =
        std::fs::read_to_string(root().join("integrations/python/examples/test_openai_sdk.py")).expect("the example");
    std::fs::write(dir.join("test_client.py"), example).expect("writes");
}

fn pytest(dir: &Path, args: &[String]) -> Output {
    Command::new(python())
        .args(["-m", "pytest", "-p", "no:cacheprovider"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("pytest runs")
}

#[test]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs; scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn a_fresh_pytest_project_keeps_its_rootdir_and_one_timed_case_alone_is_calibrated() {
    super::sdk::wait_for_the_wheel();
    let _one = take_turn_blocking();
    let dir = tempfile::tempdir().expect("a project directory");
    pytest_project(dir.path());
    // The two-argument form: pytest would take the path for a test path; the plugin says how to write it.
    let spaced = pytest(dir.path(), &["--squall-bin".into(), squall_bin().into()]);
    require(spaced.status.code() == Some(4), &format!("exit {:?}\n{}", spaced.status.code(), text(&spaced)));
    require(text(&spaced).contains("write --squall-bin=PATH, not --squall-bin PATH"), &text(&spaced));

    // The README's form, one timed case selected with -k: the project's rootdir and ini, the
    // calibration run inside the case, a real verdict, and one test counted.
    let file = dir.path().join("verdicts.jsonl");
    let output = pytest(
        dir.path(),
        &[
            format!("--squall-bin={}", squall_bin()),
            "--squall-tags=@REQ-0006-001".into(),
            format!("--squall-verdicts={}", file.display()),
            "-k".into(),
            "a-429-with-retry-after-ms".into(),
        ],
    );
    let out = text(&output);
    let project = dir.path().canonicalize().expect("a path");
    require(out.contains(&format!("rootdir: {}", project.display())), &out);
    require(out.contains("configfile: pytest.ini"), &out);
    require(output.status.code() == Some(0), &format!("exit {:?}\n{out}", output.status.code()));
    require(out.contains("1 passed"), &out);
    require(out.contains("squall calibration of session pytest-") && out.contains("client reaction: median"), &out);
    let verdicts = verdict_lines(&file);
    require(verdicts.len() == 1, &format!("{verdicts:?}"));
    require(verdicts[0]["verdict"] == "pass", &format!("{}\n{out}", verdicts[0]));

    // A client whose waits cannot be scaled: every case at production time.
    let real = dir.path().join("real.jsonl");
    let output = pytest(
        dir.path(),
        &[
            format!("--squall-bin={}", squall_bin()),
            "--squall-tags=@REQ-0006-001".into(),
            "--squall-time-scale=1".into(),
            format!("--squall-verdicts={}", real.display()),
            "-k".into(),
            "status-503-is-retried".into(),
        ],
    );
    let verdicts = verdict_lines(&real);
    require(output.status.code() == Some(0), &text(&output));
    require(verdicts.len() == 1 && verdicts[0]["time_scale"] == 1.0, &format!("{verdicts:?}"));
}

/// The Vercel AI SDK reads no in-stream "try again in 3s" (a SHOULD, reports/MATRIX.md): run
/// alone with `-t` on squall's clock, the case is calibrated first, and its warning shows in
/// vitest's output.
#[test]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs; scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn vitest_runs_one_timed_case_alone_calibrated_and_shows_its_should_miss() {
    let _one = take_turn_blocking();
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("verdicts.jsonl");
    let output = Command::new(squall_bin())
        .args([
            "clock",
            "--",
            "node",
            "node_modules/vitest/vitest.mjs",
            "run",
            "ai-sdk.test.mjs",
            "-t",
            "in-stream-rate-limit",
        ])
        .env("SQUALL_BIN", squall_bin())
        .env("SQUALL_TAGS", "@REQ-0006-001")
        .env("SQUALL_VERDICTS", &file)
        .current_dir(examples_js())
        .output()
        .expect("vitest runs");
    let out = text(&output);
    require(output.status.code() == Some(0), &format!("exit {:?}\n{out}", output.status.code()));
    let verdicts = verdict_lines(&file);
    require(verdicts.len() == 1 && verdicts[0]["verdict"] == "warn", &format!("{verdicts:?}\n{out}"));
    require(out.contains("squall: SHOULD missed") && out.contains("[SHOULD warn]"), &out);
    require(out.contains("squall calibration of session js-"), &out);
}

#[test]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs; scripts/test.sh runs it (cargo test -- --include-ignored)"]
fn squall_judge_names_the_ways_to_give_a_server_and_its_types_hold_a_typed_test() {
    let examples = examples_js();
    let script = "import { findOrStart } from 'squall-judge';\n\
                  try { await findOrStart({ bin: 'no-such-squall-here' }); } catch (error) { console.log(error.message); }";
    let output = Command::new("node")
        .args(["--input-type=module", "-e", script])
        .env_remove("SQUALL_URL")
        .current_dir(&examples)
        .output()
        .expect("node runs");
    let out = text(&output);
    require(out.contains("cannot start squall serve: `no-such-squall-here` is not an executable here"), &out);
    require(out.contains("$SQUALL_URL") && out.contains("$SQUALL_BIN"), &out);

    // A client that throws during the calibration fails that case, and the next timed case
    // calibrates again (the failure is not kept for the session).
    let script = "import { squall } from 'squall-judge';\n\
                  const judge = await squall({ tags: '@REQ-0006-001' });\n\
                  const timed = judge.entries.filter((e) => e.description.timed).slice(0, 2);\n\
                  let calls = 0;\n\
                  const boom = () => { calls += 1; throw new Error('boom'); };\n\
                  for (const entry of timed) { try { await entry.verify(boom); } catch (e) { console.log(`${e.message} ${calls}`); } }\n\
                  judge.stop();";
    let output = Command::new("node")
        .args(["--input-type=module", "-e", script])
        .env("SQUALL_BIN", squall_bin())
        .env_remove("SQUALL_URL")
        .current_dir(&examples)
        .output()
        .expect("node runs");
    let out = text(&output);
    require(out.contains("boom 1") && out.contains("boom 2"), &out);

    let tsc = |file: &Path| {
        Command::new("node")
            .args([
                "node_modules/typescript/bin/tsc",
                "--strict",
                "--noEmit",
                "--target",
                "es2022",
                "--module",
                "nodenext",
            ])
            .args(["--moduleResolution", "nodenext", "--lib", "es2022,dom"])
            .arg(file)
            .current_dir(&examples)
            .output()
            .expect("tsc runs")
    };
    let typed = tsc(&examples.join("typed.ts"));
    require(typed.status.success(), &text(&typed));
    // And it is a check: a client of the wrong type is refused.
    let dir = tempfile::tempdir_in(&examples).expect("a directory beside the examples");
    let wrong = std::fs::read_to_string(examples.join("typed.ts"))
        .expect("typed.ts")
        .replace("entry.verify(streamOnce)", "entry.verify(42)");
    std::fs::write(dir.path().join("wrong.ts"), wrong).expect("writes");
    let refused = tsc(&dir.path().join("wrong.ts"));
    require(!refused.status.success() && text(&refused).contains("TS2345"), &text(&refused));
}
