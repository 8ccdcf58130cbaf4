//! What squall does with time it cannot read as policy: a client that reports another time
//! scale than the one it was told, in every calibration run, stops the run before any case; a
//! herd's spread counts only beyond what a lockstep herd shows on the
//! machine. (A silent provider and a client whose sleeps do not scale, both waited out at real
//! time: `mostly_waiting::timing_verdicts`.)

use squall_suite::iut::Iut;
use squall_suite::{run_suite, SuiteConfig, Verdict};

use crate::kit::command::squall_bin;
use crate::kit::harness::require;
use crate::kit::suites::{config, independent_config, python};

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
#[ignore = "slow: runs whole suites (scripts/test.sh runs it)"]
async fn an_implementation_that_reports_another_time_scale_cannot_be_judged() {
    // The reference, with an adapter that claims it ran in real time.
    let rewrite = r#"import json, os; p = os.path.join(os.environ["SQUALL_OUT"], "result.json"); r = json.load(open(p)); r["time_scale"] = 1.0; json.dump(r, open(p, "w"))"#;
    let command = format!("'{}' reference-iut && {} -c '{rewrite}'", squall_bin(), python());
    let config = SuiteConfig { tags: Some("@SEED-002-SESSION".to_owned()), ..config(Iut::Command(command)) };
    let stopped = run_suite(&config).await.expect_err("the run stops before any case").to_string();
    require(
        stopped.contains("does not scale its own waits")
            && stopped.contains("time_scale 1 where it was told 0.01")
            && stopped.contains("--time-scale 1"),
        &stopped,
    );
}

/// A herd without jitter — every client waits exactly 1 s × 2ⁿ — spreads its first retries only
/// by what the machine adds, which a lockstep herd shows too: twelve Python clients on two cores
/// never pass seed 002's spread MUST (they fail it, or it cannot decide), while the reference's
/// jittered herd, on the virtual clock, passes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
#[ignore = "slow: runs whole suites (scripts/test.sh runs it)"]
async fn a_herd_without_jitter_never_passes_the_spread_and_a_jittered_one_does() {
    let spread = "Clients that failed at once spread their first retries";
    let tags = Some("@SEED-002-JITTER and @herd".to_owned());
    let lockstep = SuiteConfig { herd: 12, tags: tags.clone(), ..independent_config(Some("zero-jitter")) };
    let jittered = SuiteConfig { herd: 12, tags, ..config(Iut::Reference { mutant: None }) };
    for (config, passes) in [(lockstep, false), (jittered, true)] {
        let outcome = run_suite(&config).await.expect("the suite runs");
        let case = outcome.cases.iter().find(|c| c.name == spread).expect("the spread case ran");
        require(
            (case.verdict == Verdict::Pass) == passes && case.verdict != Verdict::Error,
            &format!(
                "{}: {} {:?} {:?}",
                config.iut.describe(),
                case.verdict.as_str(),
                case.checks,
                outcome.calibration.lockstep
            ),
        );
    }
}
