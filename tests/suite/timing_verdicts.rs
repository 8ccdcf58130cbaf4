//! What squall does with time it cannot read as policy: a reported time scale other than the
//! case's is `error`; a client killed while it still waits on a reply squall withholds on
//! purpose fails "gives up on a silent provider", while a kill anywhere else stays `error`.

use std::time::Duration;

use squall::iut::Iut;
use squall::suite::{run_suite, SuiteConfig, Verdict};

use super::suite_kit::{config, python, take_turn};
use super::support::require;

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn an_implementation_that_reports_another_time_scale_cannot_be_judged() {
    let _one = take_turn().await;
    // The reference, with an adapter that claims it ran in real time.
    let rewrite = r#"import json, os; p = os.path.join(os.environ["SQUALL_OUT"], "result.json"); r = json.load(open(p)); r["time_scale"] = 1.0; json.dump(r, open(p, "w"))"#;
    let command = format!("'{}' reference-iut && {} -c '{rewrite}'", env!("CARGO_BIN_EXE_squall"), python());
    let config = SuiteConfig { tags: Some("@SEED-002-SESSION".to_owned()), ..config(Iut::Command(command)) };
    let outcome = run_suite(&config).await.expect("the suite runs");
    let case = outcome.cases.first().expect("one case");
    let error = case.error.as_deref().unwrap_or("");
    require(
        case.verdict == Verdict::Error && error.contains("time_scale 1") && error.contains("--time-scale 1"),
        &format!("{}: {error}", case.verdict.as_str()),
    );
}

const SILENCE: &str = "@REQ-0006-001
Feature: A silent provider
  @wire
  Scenario: Headers that never come
    Given attempt 1 sends no headers for 3600 seconds
    And attempt 2 succeeds
    When the implementation streams one model call
    Then the server sees exactly 2 attempts

  @wire
  Scenario: An answer, then the client hangs in its own code
    Given attempt 1 succeeds
    When the implementation streams one model call
    Then the server sees exactly 1 attempt
";

/// A client with no timeout that, once answered, hangs in its own code.
const NEVER_GIVES_UP: &str = r#"import json, os, time, urllib.request
request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/responses",
    data=json.dumps({"model": "m", "input": "hi", "stream": True}).encode(), headers={"content-type": "application/json"})
urllib.request.urlopen(request).read()
time.sleep(1e6)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn a_client_that_never_gives_up_on_a_silent_provider_fails_and_one_that_hangs_elsewhere_is_an_error() {
    let _one = take_turn().await;
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("features")).expect("features dir");
    std::fs::write(dir.path().join("features/silence.feature"), SILENCE).expect("feature");
    std::fs::write(dir.path().join("client.py"), NEVER_GIVES_UP).expect("client");
    let mut config = config(Iut::Command(format!("{} '{}'", python(), dir.path().join("client.py").display())));
    config.features = dir.path().join("features");
    // 13 s of real time at 1/100 is 1300 s of policy time: past the 1200 s any client waits.
    config.case_timeout = Duration::from_secs(13);
    let outcome = run_suite(&config).await.expect("the suite runs");
    let case = |name: &str| outcome.cases.iter().find(|c| c.name == name).expect(name);
    let silent = case("Headers that never come");
    let gave_up = silent.checks.iter().find(|c| c.name == "the implementation gives up on a silent provider");
    require(
        silent.verdict == Verdict::Fail
            && gave_up.is_some_and(|c| c.verdict == Verdict::Fail && c.observed.contains("still waiting on attempt 1")),
        &format!("{} {:?} {:?}", silent.verdict.as_str(), silent.checks, silent.error),
    );
    let hung = case("An answer, then the client hangs in its own code");
    require(
        hung.verdict == Verdict::Error && hung.error.as_deref().is_some_and(|e| e.contains("case timeout")),
        &format!("{} {:?}", hung.verdict.as_str(), hung.error),
    );
}
