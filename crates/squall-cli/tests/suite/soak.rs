//! `squall soak`: the reference passes a soak of the catalogue's chaos scenario; each of the
//! soak's checks is failed — alone — by an implementation with the bug it exists for; a run
//! replays alone from its seed; the command line writes both reports and refuses a scenario it
//! cannot soak.

use std::collections::BTreeSet;
use std::time::Duration;

use squall::clock::TimeScale;
use squall::scenario::Catalogue;
use squall_suite::iut::{ClockMode, Iut};
use squall_suite::soak::{run_soak, SoakConfig, SoakOutcome};
use squall_suite::Verdict;

use crate::kit::command::squall;
use crate::kit::suites::root;

const SCENARIO: &str = "chaos-30-percent";

/// The seed of every soak here: the verdicts below are those of these draws.
const SEED: u64 = 1;

pub(crate) fn config(iut: Iut, runs: usize) -> SoakConfig {
    let catalogue = Catalogue::load_dir(&root().join("scenarios")).expect("catalogue");
    let scenario = catalogue.get(SCENARIO).expect("the chaos scenario");
    SoakConfig {
        iut,
        catalogue,
        scenario,
        runs,
        seed: Some(SEED),
        time_scale: TimeScale::of(0.01),
        clock: ClockMode::Scaled,
        max_retries: 6,
        concurrency: 8,
        case_timeout: Duration::from_secs(60),
        replay: format!("squall soak --scenario {SCENARIO}"),
    }
}

fn mutant(name: &str) -> Iut {
    Iut::Reference { mutant: Some(name.to_owned()) }
}

/// The checks that did not pass.
pub(crate) fn failed(outcome: &SoakOutcome) -> BTreeSet<&str> {
    outcome.checks.iter().filter(|c| c.verdict != Verdict::Pass).map(|c| c.name.as_str()).collect()
}

pub(crate) fn soak(config: &SoakConfig) -> SoakOutcome {
    tokio::runtime::Runtime::new().expect("runtime").block_on(run_soak(config)).expect("the soak runs")
}

#[test]
fn the_reference_passes_a_soak_and_the_report_says_how_to_replay_any_run() {
    let outcome = soak(&config(Iut::Reference { mutant: None }, 200));
    assert_eq!(outcome.verdict, Verdict::Pass, "{:#?}", outcome.checks);
    let prediction = outcome.prediction.as_ref().expect("chaos over streamed answers is predicted");
    assert!(outcome.successes >= prediction.minimum_successes);
    assert_eq!(outcome.every_run.len(), 200);
    assert_eq!(outcome.attempts_histogram.values().sum::<usize>(), 200);
    assert!(outcome.attempts_histogram.keys().any(|attempts| *attempts > 1), "chaos made some runs retry");
    let run = &outcome.every_run[25];
    assert_eq!(
        (run.seed, run.replay.as_str()),
        (SEED + 25, "squall soak --scenario chaos-30-percent --runs 1 --seed 26")
    );
    // The replay: the same faults, request by request.
    let alone = soak(&SoakConfig { runs: 1, seed: Some(run.seed), ..config(Iut::Reference { mutant: None }, 1) });
    assert_eq!(alone.every_run[0].requests, run.requests);
    assert!(
        outcome.every_run.iter().any(|r| r.requests.iter().any(|q| q.contains("chaos (seed"))),
        "the draws are recorded"
    );
}

#[test]
fn each_check_is_failed_alone_by_the_bug_it_exists_for() {
    for (name, iut, check) in [
        (
            "a 5xx is final",
            mutant("never-retry-5xx"),
            "the success rate is at least what the chaos and the retry budget predict",
        ),
        ("ok: true after giving up", mutant("ok-after-exhaustion"), "never ok: true with a truncated or empty answer"),
        ("a raw EOFException", mutant("raw-eof-error"), "every failure is ok: false with a provider error type"),
        (
            "an implementation that never starts",
            Iut::Command("exit 3".to_owned()),
            "every run ends and leaves a usable result.json",
        ),
    ] {
        let outcome = soak(&config(iut, if name.contains("never starts") { 5 } else { 200 }));
        let seen = failed(&outcome);
        let mut expected = BTreeSet::from([check]);
        if name.contains("never starts") {
            // Nothing ends ok: the success rate fails with it.
            expected.insert("the success rate is at least what the chaos and the retry budget predict");
        }
        assert_eq!(seen, expected, "{name}: {:#?}", outcome.checks);
        assert_eq!(outcome.verdict, Verdict::Fail, "{name}");
    }
}

#[test]
fn the_command_line_writes_both_reports_and_refuses_what_it_cannot_soak() {
    let dir = tempfile::tempdir().expect("tempdir");
    let soak = |args: &[&str]| squall().arg("soak").args(args).current_dir(root()).output().expect("squall runs");
    let report_dir = dir.path().join("soak");
    let ok = soak(&[
        "--scenario",
        SCENARIO,
        "--runs",
        "40",
        "--seed",
        "7",
        "--report-dir",
        report_dir.to_str().expect("utf-8"),
    ]);
    let stdout = String::from_utf8_lossy(&ok.stdout);
    assert_eq!(ok.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&ok.stderr));
    assert!(stdout.starts_with("seed 7: "), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report_dir.join("soak.json")).expect("soak.json")).expect("JSON");
    assert_eq!(
        (json["seed"].as_u64(), json["runs"].as_u64(), json["verdict"].as_str()),
        (Some(7), Some(40), Some("pass"))
    );
    assert_eq!(json["every_run"][3]["replay"], format!("squall soak --iut reference --scenario {SCENARIO} --time-scale 0.01 --clock auto --max-retries 6 --case-timeout 60 --runs 1 --seed 10"));
    let markdown = std::fs::read_to_string(report_dir.join("soak.md")).expect("soak.md");
    assert!(markdown.contains("## Attempts per run") && markdown.contains("P(Binomial(40,"), "{markdown}");

    let no_chaos = soak(&["--scenario", "always-503", "--runs", "3"]);
    let stderr = String::from_utf8_lossy(&no_chaos.stderr);
    assert_eq!(no_chaos.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--scenario always-503") && stderr.contains("has no [chaos]"), "{stderr}");
    let unknown = soak(&["--scenario", "nope", "--runs", "3"]);
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(stderr.contains("no such scenario") && stderr.contains(SCENARIO), "{stderr}");
    assert!(!dir.path().join("nope").exists());
}
