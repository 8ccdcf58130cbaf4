//! Time squall cannot read as policy, waited out at real time: a client killed while it still
//! waits on a reply squall withholds on purpose fails "gives up on a silent provider", while a
//! kill anywhere else stays `error`; a client whose sleeps do not scale has its backoff named as
//! a wait, never read as its reaction.

use std::time::Duration;

use squall_suite::iut::Iut;
use squall_suite::{run_suite, SuiteConfig, Verdict};

use crate::kit::harness::require;
use crate::kit::suites::{config, independent_config, python, root};
use squall::clock::TimeScale;

const SILENCE: &str = "@REQ-0006-001
Feature: A silent provider
  @wire
  Scenario: Headers that never come
    Given attempt 1 sends no headers for 3600 seconds
    And attempt 2 succeeds
    When the implementation streams one model call
    Then the server sees exactly 2 attempts

  @wire @hangs
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
#[ignore = "slow: runs whole suites (scripts/test.sh runs it)"]
async fn a_client_that_never_gives_up_on_a_silent_provider_fails_and_one_that_hangs_elsewhere_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("features")).expect("features dir");
    std::fs::write(dir.path().join("features/silence.feature"), SILENCE).expect("feature");
    std::fs::write(dir.path().join("client.py"), NEVER_GIVES_UP).expect("client");
    let mut silence = config(Iut::Command(format!("{} '{}'", python(), dir.path().join("client.py").display())));
    silence.features = dir.path().join("features");
    // The silent provider's case under the default case timeout (120 s of real time): killed as
    // soon as the client has waited 1200 s of policy time (12 s at 1/100), not at the timeout.
    let mut hang = silence.clone();
    silence.tags = Some("not @hangs".to_owned());
    // A client hanging in its own code is killed at the case timeout only: 13 s of real time.
    hang.tags = Some("@hangs".to_owned());
    hang.case_timeout = Duration::from_secs(13);
    let (silence, hang) = tokio::join!(run_suite(&silence), run_suite(&hang));
    let (silence, hang) = (silence.expect("the suite runs"), hang.expect("the suite runs"));
    let silent = silence.cases.iter().find(|c| c.name == "Headers that never come").expect("the silent case");
    let gave_up = silent.checks.iter().find(|c| c.name == "the implementation gives up on a silent provider");
    require(
        silent.verdict == Verdict::Fail
            && gave_up.is_some_and(|c| c.verdict == Verdict::Fail && c.observed.contains("still waiting on attempt 1")),
        &format!("{} {:?} {:?}", silent.verdict.as_str(), silent.checks, silent.error),
    );
    let ran_s = silent.evidence.duration_ms.unwrap_or(f64::INFINITY) / 1000.0;
    require(
        ran_s < 40.0,
        &format!("killed once it had waited 1200 s of policy time, not at the case timeout: {ran_s:.1} s"),
    );
    let hung = hang.cases.first().expect("the hanging case");
    require(
        hung.verdict == Verdict::Error && hung.error.as_deref().is_some_and(|e| e.contains("case timeout")),
        &format!("{} {:?}", hung.verdict.as_str(), hung.error),
    );
}

/// A client that cannot scale its sleeps — its own 0.5 s × 1.5ⁿ backoff with jitter, in real
/// seconds, `retry-after` ignored — run at real time: its backoff is named as a wait of its own,
/// not read as its reaction, and the asked waits it ignores by seconds are judged failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
#[ignore = "slow: runs whole suites (scripts/test.sh runs it)"]
async fn a_client_that_cannot_scale_its_sleeps_is_judged_at_real_time() {
    // Only the three asked waits: at real time every other case waits out the client's backoff.
    let features = tempfile::tempdir().expect("a features directory");
    std::fs::write(
        features.path().join("honoured.feature"),
        feature_of("REQ-0006-001", "A 429 with <form> is honoured"),
    )
    .expect("the feature is written");
    let config = SuiteConfig {
        time_scale: TimeScale::REAL,
        features: features.path().to_owned(),
        ..independent_config(Some("unscaled-backoff"))
    };
    let outcome = run_suite(&config).await.expect("the suite runs");
    let reaction = &outcome.calibration.reaction;
    require(
        !reaction.unscaled_wait_ms.is_empty() && reaction.high_ms < 1_000.0,
        &format!("its backoff is a wait, not a reaction: {}", outcome.calibration.summary()),
    );
    let honoured: Vec<_> = outcome
        .cases
        .iter()
        .filter(|c| c.name.starts_with("A 429 with ") && c.name.ends_with(" is honoured"))
        .collect();
    require(honoured.len() == 3, &format!("{} cases", honoured.len()));
    for case in honoured {
        let waited =
            case.checks.iter().find(|c| c.name.contains("starts at least")).expect("the asked wait is checked");
        require(
            waited.verdict == Verdict::Fail,
            &format!("{}: {} — {}", case.name, waited.verdict.as_str(), waited.observed),
        );
    }
}

/// A feature of one scenario (or outline) of `requirement`'s feature file, with its tags: the
/// feature's header and the scenario's block, as written there.
fn feature_of(requirement: &str, scenario: &str) -> String {
    let path = root().join("features").join(format!("{requirement}.feature"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header: String =
        text.lines().take_while(|l| !l.trim_start().starts_with("Feature:")).collect::<Vec<_>>().join("\n");
    let title = text.lines().find(|l| l.trim_start().starts_with("Feature:")).expect("a Feature line");
    let at =
        text.find(&format!("Scenario Outline: {scenario}")).or_else(|| text.find(&format!("Scenario: {scenario}")));
    let at = at.unwrap_or_else(|| panic!("no scenario `{scenario}` in {}", path.display()));
    // From the scenario's tag line to the blank line that ends its block (an outline's
    // Examples follow a blank line of their own).
    let start = text[..at].trim_end_matches(' ').trim_end_matches('\n').rfind('\n').map_or(0, |n| n + 1);
    let mut end = at;
    while end < text.len() {
        end = text[end..].find("\n\n").map_or(text.len(), |n| end + n);
        if !text[end..].trim_start().starts_with("Examples:") {
            break;
        }
        end += 2;
    }
    format!("{header}\n{title}\n\n{}\n", &text[start..end])
}
