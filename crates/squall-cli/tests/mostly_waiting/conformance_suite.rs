//! The suite through the IUT contract's external path: the reference as a process gets the
//! verdicts it gets in process (0.2 of a core: the processes mostly wait); and with an
//! implementation that dies or hangs: a crash is `error` at every level with its stderr as
//! evidence, a give-up reported with a non-zero exit is a verdict, and a child that holds stderr
//! and sleeps forever cannot hang the suite.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use squall_suite::iut::Iut;
use squall_suite::{run_suite, Level, SuiteOutcome, Verdict};

use crate::kit::command::squall_bin;
use crate::kit::harness::require;
use crate::kit::suites::{config, failing, staggered};

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
#[ignore = "slow: runs whole suites (scripts/test.sh runs it)"]
async fn a_crashing_implementation_is_an_error_at_every_level_with_its_stderr_as_evidence() {
    // It makes exactly the right calls — through the reference — and then dies without a result.
    let command = format!(
        "'{}' reference-iut; rm -f \"$SQUALL_OUT/result.json\"; echo 'adapter exploded' >&2; exit 3",
        squall_bin()
    );
    let mut crashing = config(Iut::Command(command));
    crashing.level = Level::Wire;
    crashing.tags = Some("@REQ-0006-001 or @REQ-0006-002".to_owned());
    // Its cases end in error whatever their scale: none is slowed for its timing checks.
    crashing.max_time_scale = crashing.time_scale;
    let outcome = run_suite(&crashing).await.expect("suite runs");
    require(outcome.cases.len() > 20, "the wire-level cases ran");
    for case in &outcome.cases {
        require(case.verdict == Verdict::Error, &format!("{}: {}", case.name, case.verdict.as_str()));
        require(
            case.evidence.outputs.stderr.contains("adapter exploded"),
            &format!("{:?}", case.evidence.outputs.stderr),
        );
        // Said in plain words, not wrapped in cucumber's "Step panicked. Captured output: …".
        require(
            case.error.as_deref().is_some_and(|e| e.contains("no usable result.json") && !e.contains("panicked")),
            &format!("{:?}", case.error),
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
#[ignore = "slow: runs whole suites (scripts/test.sh runs it)"]
async fn a_give_up_reported_with_a_non_zero_exit_is_judged_not_an_error() {
    // The reference, with a CLI's habit: exit 1 when the call failed (ok: false in result.json).
    let command = format!(
        "'{}' reference-iut && grep -q '\"ok\": false' \"$SQUALL_OUT/result.json\" && exit 1; exit 0",
        squall_bin()
    );
    let mut cli_habit = config(Iut::Command(command));
    cli_habit.tags = Some("@REQ-0006-001".to_owned());
    let outcome = run_suite(&cli_habit).await.expect("suite runs");
    let gave_up: Vec<_> = outcome.cases.iter().filter(|c| c.evidence.outputs.exit_code == Some(1)).collect();
    require(!gave_up.is_empty(), "some cases gave up with exit 1");
    require(outcome.passed(), &format!("a reported give-up is a verdict, not an error: {:?}", failing(&outcome)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
#[ignore = "slow: runs whole suites (scripts/test.sh runs it)"]
async fn a_child_that_holds_stderr_and_sleeps_forever_cannot_hang_the_suite() {
    // The shell waits on a child that keeps the stderr pipe open and never ends.
    let mut hanging = config(Iut::Command("echo 'started' >&2; sleep 1000 & wait".to_owned()));
    // Not its herds: a herd case runs with the machine to itself, after the others.
    hanging.tags = Some("@REQ-0006-002 and @wire and not @herd".to_owned());
    hanging.case_timeout = Duration::from_secs(1);
    hanging.concurrency = 64;
    let started = Instant::now();
    let outcome = run_suite(&hanging).await.expect("suite runs");
    // The cases' share of the run: the calibration's instances of the hanging client time out
    // too, for as long whatever the number of cases (and longer on a busy machine).
    let calibration = Duration::from_secs_f64(outcome.calibration.duration_ms / 1000.0);
    let took = started.elapsed().saturating_sub(calibration);
    require(outcome.cases.len() >= 8, "cases ran");
    // One after another they would take the sum of their own durations: side by side, far less.
    // Both sides are measured in the same run, so a busy machine stretches them alike.
    let one_after_another: f64 = outcome.cases.iter().filter_map(|c| c.evidence.duration_ms).sum::<f64>() / 1000.0;
    require(
        took.as_secs_f64() < one_after_another / 2.0,
        &format!(
            "the cases ran side by side, each killed at its timeout; they took {took:?} for {} cases lasting {one_after_another:.1} s in all (the calibration before them {calibration:?})",
            outcome.cases.len()
        ),
    );
    for case in &outcome.cases {
        require(
            case.verdict == Verdict::Error && case.evidence.outputs.timed_out,
            &format!("{}: {}", case.name, case.verdict.as_str()),
        );
        require(case.evidence.outputs.stderr.contains("started"), "its stderr so far is kept");
    }
}

fn verdicts(outcome: &SuiteOutcome) -> BTreeMap<(String, String), Verdict> {
    outcome.cases.iter().map(|c| ((c.feature.clone(), c.name.clone()), c.verdict)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
#[ignore = "slow: runs whole suites (scripts/test.sh runs it)"]
async fn the_external_contract_path_gives_the_same_verdicts_as_in_process() {
    let command = format!("'{}' reference-iut", squall_bin());
    let (in_process_suite, external_suite) = (config(Iut::Reference { mutant: None }), config(Iut::Command(command)));
    let (in_process, external) = staggered(run_suite(&in_process_suite), run_suite(&external_suite)).await;
    let (in_process, external) = (in_process.expect("suite runs"), external.expect("suite runs"));
    require(in_process.passed(), &format!("the reference must pass: {:?}", failing(&in_process)));
    let (inside, outside) = (verdicts(&in_process), verdicts(&external));
    // A difference shows what each run's checks that did not pass observed.
    let missed = |outcome: &SuiteOutcome, (feature, name): &(String, String)| -> Vec<String> {
        let case = outcome.cases.iter().find(|c| (&c.feature, &c.name) == (feature, name));
        let checks = case.map(|c| c.checks.iter().filter(|k| k.verdict != Verdict::Pass));
        checks.into_iter().flatten().map(|k| format!("{} {:?}: {}", k.name, k.verdict, k.observed)).collect()
    };
    let differing: Vec<_> = inside
        .iter()
        .filter(|(case, v)| outside.get(*case) != Some(*v))
        .map(|(case, v)| {
            let (inside, outside_missed) = (missed(&in_process, case), missed(&external, case));
            format!("{case:?}: in-process {v:?} {inside:?}, external {:?} {outside_missed:?}", outside.get(case))
        })
        .collect();
    require(differing.is_empty() && inside.len() == outside.len(), &differing.join("\n"));
    require(in_process.cases.len() >= 70, &format!("only {} cases ran", in_process.cases.len()));
}
