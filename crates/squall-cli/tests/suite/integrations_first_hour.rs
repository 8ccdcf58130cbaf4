//! The integrations as a new user meets them: a fresh pytest project keeps its own
//! rootdir with `--squall-bin=PATH` as the README writes it and is told how to write the option
//! otherwise; one timed case selected alone (`-k`, vitest `-t`) is calibrated and judged for
//! real; a missed SHOULD shows in vitest's output; a missing binary says how to give one; the
//! type declarations accept a typed test under `tsc --strict`.

use std::path::Path;
use std::process::Command;

use crate::kit::command::{squall_bin, text};
use crate::kit::harness::require;
use crate::kit::sdks::examples_js;

#[test]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
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
