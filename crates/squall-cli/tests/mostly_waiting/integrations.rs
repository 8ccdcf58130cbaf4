//! The judge as a service from other languages' test runners, with real clients called as
//! shipped, each runner on squall's clock: the pytest plugin (from the squall wheel, which
//! starts pytest again under `squall clock` and the wheel's `squall serve` off it) driving the
//! official openai Python SDK, and an application's own code with no callback; squall-judge
//! under node:test (`squall clock -- node --test`) driving the official openai npm package, and
//! under vitest, with its default test timeout, driving the Vercel AI SDK (`integrations/`).
//! Each run fails where its client breaks PRD-0006, names the failing checks in its own output,
//! and gives every case the verdict `squall run` gave through the client's adapter.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::kit::command::{squall_bin, text};
use crate::kit::harness::require;
use crate::kit::sdks::{examples_js, python};
use crate::kit::suites::root;

/// The verdicts a run of an integration wrote (`--squall-verdicts` / `SQUALL_VERDICTS`), with
/// their case's name, in the order given (calibration runs have none).
fn verdicts(file: &Path) -> Vec<(String, Value)> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a verdict a line"))
        .filter(|verdict| verdict.get("verdict").is_some())
        .map(|verdict| (verdict["name"].as_str().unwrap_or("").to_owned(), verdict))
        .collect()
}

/// Each case's verdict in a kept report (`reports/NAME/report.json.gz`).
fn kept(name: &str) -> BTreeMap<String, String> {
    let file = squall_suite::report::read::report_file(&root().join("reports").join(name));
    let text = squall_suite::report::read::report_text(&file).expect("a kept report");
    let report: Value = serde_json::from_str(&text).expect("JSON");
    let cases = report["requirements"].as_array().expect("requirements").iter().flat_map(|r| {
        r["cases"]
            .as_array()
            .expect("cases")
            .iter()
            .map(|c| (c["name"].as_str().unwrap_or("").to_owned(), c["verdict"].as_str().unwrap_or("").to_owned()))
    });
    cases.collect()
}

/// Every verdict equals the kept report's for the same case.
fn same_as_kept(verdicts: &[(String, Value)], report: &str, output: &str) {
    let kept = kept(report);
    let differ: Vec<String> = verdicts
        .iter()
        .filter(|(name, v)| kept.get(name).map(String::as_str) != v["verdict"].as_str())
        .map(|(name, v)| format!("{name}: {} through the integration, {:?} kept", v["verdict"], kept.get(name)))
        .collect();
    require(differ.is_empty(), &format!("{}\n{output}", differ.join("\n")));
}

/// A test beside the examples: pytest runs on squall's clock, and the `squall serve` the
/// plugin started (its child) does not.
const CLOCK_HERE_NOT_THERE: &str = r#"
import os

def field(pid, name):
    try:
        return open(f"/proc/{pid}/{name}", "rb").read()
    except (FileNotFoundError, ProcessLookupError):  # a process of another test that ended meanwhile
        return b""

def parent(pid):
    stat = field(pid, "stat")
    return int(stat.rsplit(b")", 1)[1].split()[1]) if stat else None

def test_pytest_is_on_squalls_clock_and_its_squall_serve_is_not():
    assert b"libsquall_clock" in field(os.getpid(), "maps")
    children = [p for p in os.listdir("/proc") if p.isdigit() and field(p, "comm").strip() == b"squall"
                and parent(p) == os.getpid()]
    assert children, "the plugin started squall serve"
    for pid in children:
        assert b"libsquall_clock" not in field(pid, "maps"), "squall serve has the preload"
        assert b"SQUALL_CLOCK_FRAME" not in field(pid, "environ"), "squall serve names a frame"
"#;

#[test]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
fn pytest_judges_the_openai_python_sdk_and_an_application_as_squall_run_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("verdicts.jsonl");
    let clock_check = dir.path().join("test_clock_here_not_there.py");
    std::fs::write(&clock_check, CLOCK_HERE_NOT_THERE).expect("writes");
    // As a user runs it: the plugin starts the squall the wheel installed beside it (no
    // --squall-bin, no SQUALL_BIN, none on PATH), pytest again under its clock first.
    let examples = root().join("integrations/python/examples");
    let output = Command::new(python())
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir"])
        .arg(&examples)
        .arg(examples.join("test_openai_sdk.py"))
        .arg(examples.join("test_application.py"))
        .arg(&clock_check)
        .env("PATH", "/usr/bin:/bin")
        .env_remove("SQUALL_BIN")
        .arg("--squall-tags=@REQ-0006-001")
        .arg(format!("--squall-verdicts={}", file.display()))
        .current_dir(dir.path())
        .output()
        .expect("pytest runs");
    let text = text(&output);
    // The SDK does not retry a 425 (REQ-0006-001 lists it): pytest fails that case, naming the check.
    require(output.status.code() == Some(1), &format!("exit {:?}\n{text}", output.status.code()));
    require(text.contains("status-425-is-retried (REQ-0006-001): fail"), &text);
    require(text.contains("[MUST fail] the server sees exactly 2 attempts"), &text);
    // The 425 fails through the SDK and through the application; the clock check passes.
    require(text.contains("2 failed") && !text.contains("test_pytest_is_on_squalls_clock"), &text);
    require(!text.contains("squall: the clients ran on real time"), &text);
    let verdicts = verdicts(&file);
    // Once through the SDK's callback, once through the application's own code.
    require(verdicts.len() >= 38, &format!("{} verdicts\n{text}", verdicts.len()));
    same_as_kept(&verdicts, "python-openai", &text);
}

#[test]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
fn node_test_judges_the_openai_node_sdk_as_squall_run_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("verdicts.jsonl");
    let output = Command::new(squall_bin())
        .args(["clock", "--", "node", "--test", "openai.test.mjs"])
        .env("SQUALL_BIN", squall_bin())
        .env("SQUALL_TAGS", "@REQ-0006-001")
        .env("SQUALL_VERDICTS", &file)
        .current_dir(examples_js())
        .output()
        .expect("node runs");
    let text = text(&output);
    require(output.status.code() == Some(1), &format!("exit {:?}\n{text}", output.status.code()));
    require(text.contains("[MUST fail] the server sees exactly 2 attempts"), &text);
    let verdicts = verdicts(&file);
    require(verdicts.len() >= 19, &format!("{} verdicts\n{text}", verdicts.len()));
    same_as_kept(&verdicts, "node-openai", &text);
}

/// The Vercel AI SDK (ai 7.0.173) retries the request that opens a stream (`maxRetries` 2) but
/// not a stream that breaks after it started (`streamRetries` defaults to 0); a stalled stream
/// ends at undici's 300 s body timeout, on the runner's clock (integrations/js/README.md cites
/// the lines): REQ-0006-010's breaks fail with one attempt. vitest keeps its default test timeout.
#[test]
#[ignore = "needs the SDKs scripts/setup-sdks.sh installs (scripts/test.sh runs it)"]
fn vitest_judges_the_vercel_ai_sdk_and_names_what_it_misses() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("verdicts.jsonl");
    let output = Command::new(squall_bin())
        .args(["clock", "--", "node", "node_modules/vitest/vitest.mjs", "run", "ai-sdk.test.mjs"])
        .env("SQUALL_BIN", squall_bin())
        .env("SQUALL_TAGS", "@REQ-0006-010")
        .env("SQUALL_CASE_TIMEOUT", "15")
        .env("SQUALL_VERDICTS", &file)
        .current_dir(examples_js())
        .output()
        .expect("vitest runs");
    let text = text(&output);
    require(output.status.code() == Some(1), &format!("exit {:?}\n{text}", output.status.code()));
    let verdicts = verdicts(&file);
    require(verdicts.len() == 8, &format!("{} verdicts\n{text}", verdicts.len()));
    let by_name: BTreeMap<&str, &Value> = verdicts.iter().map(|(name, v)| (name.as_str(), v)).collect();
    let failed = |name: &str| -> Vec<String> {
        let checks = by_name.get(name).and_then(|v| v["checks"].as_array().cloned()).unwrap_or_default();
        checks.iter().filter(|c| c["verdict"] == "fail").map(|c| c["name"].as_str().unwrap_or("").to_owned()).collect()
    };
    for kind in ["eof", "reset", "truncate", "stall"] {
        let name = format!("A stream broken by {kind} is retried and recorded as a provider error");
        require(
            failed(&name) == ["the server sees exactly 2 attempts"],
            &format!("{name}: {:?}\n{text}", failed(&name)),
        );
    }
    require(text.contains("SquallVerdictError") && !text.contains("timed out in 5000ms"), &text);
    same_as_kept(&verdicts, "node-ai-sdk", &text);
}
