//! A case drawing its random waits alone runs its draws at once, in the slots the run has spare;
//! a linear backoff with a full jitter, which 30 runs cannot tell from an exponential one, fails
//! "the waits between attempts grow exponentially" from the runs drawn beyond them, end to end.

use crate::kit::harness::require;
use crate::kit::suites::{config, independent_command};
use crate::suite::drawn_waits::{shown, wait_checks, CASES, SEED};
use squall::clock::TimeScale;
use squall_suite::iut::Iut;
use squall_suite::{run_suite, Draws, SuiteConfig, Verdict};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "slow: runs a suite of processes (scripts/test.sh runs it)"]
async fn a_case_drawing_alone_runs_its_draws_at_once_in_the_spare_slots() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("runs.log");
    // Each case process (not the calibration's) notes when it starts and ends, in ns.
    let command = format!(
        "case \"$SQUALL_CASE\" in squall*) ;; *) echo \"start $(date +%s%N)\" >> '{log}' ;; esac; \
         PRD0006_JITTER=full {iut}; status=$?; \
         case \"$SQUALL_CASE\" in squall*) ;; *) echo \"end $(date +%s%N)\" >> '{log}' ;; esac; exit $status",
        log = log.display(),
        iut = independent_command(None)
    );
    let suite = SuiteConfig {
        cases: vec![CASES[1].to_owned()],
        seed: Some(SEED),
        concurrency: 4,
        // 1/100 decides it on a quiet machine; a busy calibration may need a gentler scale, and
        // a case that cannot be decided draws nothing: up to 1/5 keeps the draws in every run.
        max_time_scale: TimeScale::of(0.2),
        ..config(Iut::Command(command))
    };
    let outcome = run_suite(&suite).await.expect("the suite runs");
    let checks = wait_checks(&outcome.cases);
    let runs = checks.iter().filter_map(|(_, _, draws, _)| draws.as_ref().map(|d| d.runs)).max().unwrap_or(1);
    require(runs >= 4, &format!("a full jitter is read over several runs:\n{}", shown(&checks)));
    // The most processes of the case running at once, from their starts and ends in order.
    let noted = std::fs::read_to_string(&log).expect("the runs' log");
    let mut events: Vec<(u128, i32)> = noted
        .lines()
        .filter_map(|line| line.split_once(' '))
        .map(|(what, ns)| (ns.trim().parse().expect("ns"), if what == "start" { 1 } else { -1 }))
        .collect();
    events.sort();
    let most = events.iter().scan(0, |running, (_, step)| Some(*running + step).inspect(|r| *running = *r)).max();
    require(most.is_some_and(|m| m >= 2), &format!("{runs} runs, at most {most:?} at once:\n{noted}"));
}

/// The independent implementation's linear-backoff bug (1, 2, 3, … s) with a full jitter: 30 runs
/// leave its growth undecided (docs/requirements.md: 100 % of the simulated clients); its runs of
/// the seven-attempt case take about a second at the scale its reaction needs (forked warm), so
/// more are drawn within the case's budget of real time, eight at a time, and it fails. It mostly
/// waits (4 CPU-s in 28 s alone), but what its runs read depends on the machine's noise: on a
/// machine busy compiling, 100 runs left it undecided. Its runs are drawn within five case
/// timeouts of real time, summed over runs side by side: a doubled timeout leaves room for them.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "slow: runs a suite of processes (scripts/test.sh runs it)"]
async fn a_linear_backoff_with_a_full_jitter_fails_growth_from_runs_drawn_beyond_thirty() {
    let command = format!("PRD0006_JITTER=full {}", independent_command(Some("linear-backoff")));
    let suite = SuiteConfig {
        cases: vec![CASES[0].to_owned()],
        seed: Some(SEED),
        concurrency: 8,
        warm: true,
        case_timeout: std::time::Duration::from_secs(120),
        ..config(Iut::Command(command))
    };
    let outcome = run_suite(&suite).await.expect("the suite runs");
    let checks = wait_checks(&outcome.cases);
    let growth = checks.iter().find(|(name, ..)| name.contains("grow exponentially"));
    let failed_beyond_thirty = |(_, verdict, draws, _): &&(String, Verdict, Option<Draws>, String)| {
        *verdict == Verdict::Fail && draws.as_ref().is_some_and(|d| d.runs > 30 && d.seeds.len() == d.runs)
    };
    require(growth.is_some_and(|g| failed_beyond_thirty(&g)), &shown(&checks));
}
