//! A case raised for a client's wide reaction looks first at its own scale: a backoff without a
//! cap misses "the waits level off at a cap" there (confirmed, where a busy machine could explain
//! the miss, at the scale the cap's own margin needs) in seconds, instead of waiting out 1,023 s
//! of doubling at the raised scale; a capped backoff, which the look cannot decide, is passed by
//! the raised run as before. The verdicts are read from what the engine recorded: the time scale
//! each case was decided at, and the note on how it got there.

use std::time::Duration;

use squall_suite::iut::Iut;
use squall_suite::{run_suite, CaseRecord, Level, SuiteConfig, Verdict};

use crate::kit::harness::require;
use crate::kit::suites::{config, python};
use squall::clock::TimeScale;

/// REQ-0006-002's cap case with 8 retries instead of 10 (a doubling from 1 s without a cap waits
/// 255 s of policy time, not 1,023 s: the test is four times shorter, and still long enough at
/// the raised scale for a first look).
const CAP_CASE: &str = "@REQ-0006-002
Feature: Backoff reaches a cap
  @wire
  Scenario: With more retries configured, the waits reach a cap
    Given the implementation is configured with maxRetries = 8
    And every attempt answers with status 503
    When the implementation streams one model call
    Then the server sees exactly 9 attempts
    And the waits between attempts grow exponentially
    And the waits level off at a cap
";

/// A client that backs off 1 s × 2ⁿ (capped at `$CAP` seconds when set), honours
/// `retry-after-ms`, and spends 60 ms of real time of its own before its first retry and 0–5 ms
/// before each later one, as a Node client's first retry costs most (on a sped-up clock it
/// sleeps that times the rate, so the time stays real): a reaction that wide raises the cap case
/// to about 1/4. (Drawn 0–60 ms at every retry, a calibration's few gaps sometimes read as
/// draws of a policy, which narrow the reaction and the raise below a look's.)
const DOUBLING_CLIENT: &str = r#"import json, os, random, time, urllib.error, urllib.request
env = os.environ
rate = float(env.get("SQUALL_CLOCK_RATE", "1")) if env.get("SQUALL_CLOCK") == "accelerated" else 1.0
scale, cap = float(env.get("SQUALL_TIME_SCALE", "1")), float(env.get("CAP", "inf"))
body = json.dumps({"model": "m", "input": "hi", "stream": True}).encode()
retries, ok, error = int(env.get("SQUALL_MAX_RETRIES", "6")), False, None
for attempt in range(retries + 1):
    try:
        request = urllib.request.Request(env["OPENAI_BASE_URL"] + "/responses", data=body, headers={"content-type": "application/json"})
        urllib.request.urlopen(request, timeout=600 * scale).read()
        ok = True
        break
    except urllib.error.HTTPError as e:
        e.read()
        asked, error = e.headers.get("retry-after-ms"), f"HTTP {e.code}"
    if attempt < retries:
        time.sleep((0.06 if attempt == 0 else random.uniform(0.0, 0.005)) * rate)
        time.sleep((float(asked) / 1000 if asked else min(cap, 2.0 ** attempt)) * scale)
result = {"ok": ok, "stop_reason": "end_turn" if ok else "error", "final_text": "" if ok else None,
          "error_type": None if ok else "ProviderError", "error_message": error, "time_scale": scale}
json.dump(result, open(os.path.join(env["SQUALL_OUT"], "result.json"), "w"))
"#;

/// The cap case's record, run against the doubling client capped at `cap` (none: uncapped).
async fn cap_case(dir: &std::path::Path, cap: Option<u32>) -> CaseRecord {
    let cap = cap.map(|cap| format!("CAP={cap} ")).unwrap_or_default();
    let config = SuiteConfig {
        level: Level::Wire,
        features: dir.join("features"),
        case_timeout: Duration::from_secs(60),
        time_scale: TimeScale::of(0.01),
        ..config(Iut::Command(format!("{cap}{} '{}'", python(), dir.join("doubling.py").display())))
    };
    let outcome = run_suite(&config).await.expect("the suite runs");
    outcome.cases.into_iter().next().expect("the cap case ran")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
#[ignore = "slow: runs whole suites (scripts/test.sh runs it)"]
async fn an_uncapped_backoff_fails_at_its_own_scale_and_a_capped_one_passes_at_the_raised_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("doubling.py"), DOUBLING_CLIENT).expect("the client is written");
    std::fs::create_dir(dir.path().join("features")).expect("features dir");
    std::fs::write(dir.path().join("features/cap.feature"), CAP_CASE).expect("the feature is written");
    // Side by side: the uncapped client's looks end in seconds, the capped one's raised run in
    // a few; the uncapped one at the raised scale would take over a minute. The cap is 8 s: at
    // 4 s its longest wait would be exactly 4× the first, the least growth passes.
    let (uncapped, capped) = tokio::join!(cap_case(dir.path(), None), cap_case(dir.path(), Some(8)));
    let shown = |record: &CaseRecord| {
        format!(
            "{} at {:?} ({:?}): {:?} {:?}",
            record.verdict.as_str(),
            record.time_scale,
            record.time_scale_note,
            record.checks.iter().map(|c| (&c.name, c.verdict.as_str(), &c.observed)).collect::<Vec<_>>(),
            record.error
        )
    };
    let cap_check = |record: &CaseRecord| {
        record.checks.iter().find(|c| c.name == "the waits level off at a cap").map(|c| c.verdict)
    };
    let looked = |record: &CaseRecord| record.time_scale_note.as_deref().unwrap_or("").to_owned();
    require(
        uncapped.verdict == Verdict::Fail
            && cap_check(&uncapped) == Some(Verdict::Fail)
            && uncapped.time_scale.is_some_and(|scale| scale.get() < 0.1)
            && (looked(&uncapped).starts_with("run first at 1/100")
                || looked(&uncapped).contains("to confirm what `the waits level off at a cap` missed at 1/")),
        &format!("the uncapped backoff, failed by its first look: {}", shown(&uncapped)),
    );
    require(
        capped.verdict == Verdict::Pass
            && capped.time_scale.is_some_and(|scale| scale.get() >= 0.04)
            && looked(&capped).starts_with("a first look at 1/100 could not decide"),
        &format!("the capped backoff, passed by the raised run after its look: {}", shown(&capped)),
    );
}
