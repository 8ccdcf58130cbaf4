//! Verdicts true for real clients: what a client spends of its own per retry is never read as
//! its retry policy. The independent implementation spending 50, 150 or 300 ms of real time
//! before each retry gets exactly the verdicts of its fast twin at the default time scale; a jittery
//! one (20-300 ms, drawn anew) gets its twin's verdict on every check or an explained
//! `inconclusive` where the noise is too large to decide; a slow client that ignores "try again
//! in 3s" warns on that SHOULD at every time scale; on the sped-up clock, one whose 140 ms of its
//! own come only after an in-stream failure — which the calibration never shows, and which a
//! run at ×100 reads as 14 s of waiting — gets no pass from "at least 3 s" it does not meet, and
//! its fast twin's verdicts elsewhere. (A client slow to start: `mostly_waiting::slow_clients`.)

use squall::clock::TimeScale;
use squall_suite::{run_suite, CaseRecord, SuiteConfig, SuiteOutcome, Verdict};

use crate::kit::harness::require;
use crate::kit::independent_suites::{IndependentSuites, SLOW_TWINS_MS};
use crate::kit::suites::{slow_independent_config, verdicts};

/// The requirements whose verdicts differ between a twin and its slow variant.
fn differences(fast: &SuiteOutcome, slow: &SuiteOutcome) -> Vec<String> {
    let (fast, slow) = (verdicts(fast), verdicts(slow));
    if fast.len() != slow.len() {
        return vec![format!("{} requirements judged, not {}", slow.len(), fast.len())];
    }
    fast.iter()
        .zip(&slow)
        .filter(|(f, s)| f != s)
        .map(|((id, f), (_, s))| format!("{id}: {} for the fast twin, {} for the slow one", f.as_str(), s.as_str()))
        .collect()
}

/// Where a jittery client's checks differ from its twin's other than by an explained
/// `inconclusive`.
fn wrong_checks(fast: &SuiteOutcome, jittery: &SuiteOutcome) -> Vec<String> {
    let case = |outcome: &SuiteOutcome, name: &str| -> Option<CaseRecord> {
        outcome.cases.iter().find(|c| c.name == name).cloned()
    };
    let mut wrong = Vec::new();
    for twin in &fast.cases {
        let Some(seen) = case(jittery, &twin.name) else {
            wrong.push(format!("{}: not run", twin.name));
            continue;
        };
        for check in &seen.checks {
            let expected = twin.checks.iter().find(|c| c.name == check.name).map(|c| c.verdict);
            let explained =
                check.verdict == Verdict::Inconclusive && check.observed.starts_with("cannot decide: the noise");
            if Some(check.verdict) != expected && !explained {
                wrong.push(format!(
                    "{} — {}: {} (the fast twin: {:?}); observed {}",
                    twin.name,
                    check.name,
                    check.verdict.as_str(),
                    expected.map(Verdict::as_str),
                    check.observed
                ));
            }
        }
        if seen.verdict == Verdict::Inconclusive && !seen.checks.iter().any(|c| c.verdict == Verdict::Inconclusive) {
            wrong.push(format!(
                "{}: inconclusive without a check that could not decide: {:?}",
                twin.name, seen.inconclusive
            ));
        }
        if seen.verdict == Verdict::Error {
            wrong.push(format!("{}: error: {:?}", twin.name, seen.error));
        }
    }
    wrong
}

/// Its slow and jittery twins get the verdicts of the correct one.
pub(super) fn slow_and_jittery_twins_get_its_verdicts(suites: &IndependentSuites) {
    let fast = &suites.correct;
    let mut wrong = Vec::new();
    for (slow, ms) in suites.slow.iter().zip(SLOW_TWINS_MS) {
        let name = format!("+{ms} ms");
        wrong.extend(differences(fast, slow).into_iter().map(|d| format!("{name}: {d}")));
        require(slow.calibration.reaction.median_ms > 40.0, &format!("{name}: {}", slow.calibration.summary()));
    }
    wrong.extend(wrong_checks(fast, &suites.jittery).into_iter().map(|d| format!("+20-300 ms: {d}")));
    require(wrong.is_empty(), &wrong.join("\n"));
}

/// The independent implementation ignores "try again in 3s" in an in-stream rate limit and
/// backs off 1-2 s (seed 002): slowed by 300 ms, it must still be caught at any time scale.
#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
#[ignore = "slow: runs whole suites (scripts/test.sh runs it)"]
async fn a_slow_client_that_ignores_try_again_in_warns_at_every_time_scale() {
    // The five scales at once: each is one case that mostly waits.
    let scales = [0.002, 0.01, 0.04, 0.25, 1.0];
    let runs = scales.map(|time_scale| async move {
        let config = SuiteConfig {
            time_scale: TimeScale::of(time_scale),
            tags: Some("@REQ-0006-001 and @should".to_owned()),
            ..slow_independent_config("300")
        };
        (time_scale, run_suite(&config).await.expect("the suite runs"))
    });
    for (time_scale, outcome) in futures_util::future::join_all(runs).await {
        let case = outcome
            .cases
            .iter()
            .find(|c| c.name == "An in-stream rate limit waits as long as it asks")
            .expect("the case ran");
        require(
            case.verdict == Verdict::Warn,
            &format!("at {time_scale}: {} {:?} {:?}", case.verdict.as_str(), case.checks, case.error),
        );
    }
}

/// Its twin that works only after an in-stream failure gets no pass from a lower bound it
/// does not meet, and its fast twin's verdicts elsewhere.
pub(super) fn work_after_one_kind_of_failure_never_passes_a_lower_bound(suites: &IndependentSuites) {
    let in_stream = "An in-stream rate limit waits as long as it asks";
    let lower_bound = "attempt 2 starts at least 3 seconds after attempt 1 ends";
    let check = |outcome: &SuiteOutcome| {
        let case = outcome.cases.iter().find(|c| c.name == in_stream);
        case.and_then(|c| c.checks.iter().find(|k| k.name == lower_bound)).map(|k| (k.verdict, k.observed.clone()))
    };
    let (fast, slow) = (check(&suites.sped_up), check(&suites.path_work));
    require(fast.as_ref().is_some_and(|(v, _)| *v == Verdict::Warn), &format!("its fast twin waits 1-2 s: {fast:?}"));
    require(
        slow.as_ref().is_some_and(|(v, _)| *v != Verdict::Pass && *v != Verdict::Fail),
        &format!("no pass from its own work, and a SHOULD never fails: {slow:?}"),
    );
    // Elsewhere, its fast twin's verdicts.
    let fast: std::collections::BTreeMap<&str, Verdict> =
        suites.sped_up.cases.iter().map(|c| (c.name.as_str(), c.verdict)).collect();
    let differ: Vec<String> = suites
        .path_work
        .cases
        .iter()
        .filter(|c| c.name != in_stream && fast.get(c.name.as_str()) != Some(&c.verdict))
        .map(|c| format!("{}: {} (the fast twin: {:?})", c.name, c.verdict.as_str(), fast.get(c.name.as_str())))
        .collect();
    require(suites.path_work.cases.len() >= 19 && differ.is_empty(), &differ.join("\n"));
}
