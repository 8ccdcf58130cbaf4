//! A soak judged: what each run broke, and the soak's four checks over every run — with the
//! expected values taken from PRD-0006's text and the prediction's arithmetic.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use super::prediction::Prediction;
use super::{SoakCheck, SoakConfig, SoakOutcome, SoakRun};
use crate::iut::Execution;
use crate::Verdict;
use squall::journal::{EndKind, JournalEntry};

/// "不误报成功": a run that says `ok: true` must have its whole answer.
pub(super) const NO_FALSE_SUCCESS: &str = "never ok: true with a truncated or empty answer";
/// A give-up is a provider-layer error (`ProviderTimeoutException` "或同类").
pub(super) const PROVIDER_ERRORS: &str = "every failure is ok: false with a provider error type";
/// The IUT contract: every run leaves a `result.json` with a boolean `ok`.
pub(super) const USABLE_RESULT: &str = "every run ends and leaves a usable result.json";
/// The retry budget at work: as many successes as the chaos and the budget predict.
pub(super) const SUCCESS_RATE: &str = "the success rate is at least what the chaos and the retry budget predict";

/// How many failing runs a check's observation names.
const NAMED: usize = 5;

/// One run as the soak keeps it, with what it broke.
pub(super) fn run_record(index: usize, seed: u64, execution: &Execution, replay: String) -> SoakRun {
    let result = execution.iut.result.as_ref();
    let field = |name: &str| result.and_then(|r| r.get(name)).and_then(Value::as_str).map(str::to_owned);
    let ok = result.and_then(|r| r["ok"].as_bool());
    let model_calls: Vec<&JournalEntry> = execution.journal.iter().filter(|e| e.track.is_some()).collect();
    let requests = model_calls
        .iter()
        .map(|e| {
            let end = e.end.map_or("unfinished", EndKind::as_str);
            e.condition.as_ref().map_or(end.to_owned(), |c| format!("{end}: {c}"))
        })
        .collect();
    let mut record = SoakRun {
        index,
        seed,
        ok,
        stop_reason: field("stop_reason"),
        error_type: field("error_type"),
        final_text: field("final_text"),
        attempts: model_calls.len(),
        requests,
        problems: Vec::new(),
        replay,
        stderr: String::new(),
    };
    record.problems = problems(&record, execution, model_calls.last().copied());
    if !record.problems.is_empty() {
        record.stderr = execution.iut.stderr.clone();
    }
    record
}

/// The checks `run` breaks, each as `check: why`.
fn problems(run: &SoakRun, execution: &Execution, last_call: Option<&JournalEntry>) -> Vec<String> {
    let iut = &execution.iut;
    let mut problems = Vec::new();
    if iut.timed_out || run.ok.is_none() {
        let why = if iut.timed_out {
            format!("killed after {:.0} s", iut.timeout.as_secs_f64())
        } else {
            let errors = iut.output_errors.join("; ");
            format!(
                "no usable result.json (exit {:?}{})",
                iut.exit_code,
                if errors.is_empty() { String::new() } else { format!(": {errors}") }
            )
        };
        problems.push(format!("{USABLE_RESULT}: {why}"));
        return problems;
    }
    if run.ok == Some(true) {
        let whole = last_call.is_some_and(|e| e.end == Some(EndKind::Completed) && e.terminal_sent);
        let text = run.final_text.as_deref().unwrap_or("");
        if !whole {
            let end = last_call.and_then(|e| e.end).map_or("no model request", EndKind::as_str);
            problems.push(format!(
                "{NO_FALSE_SUCCESS}: ok: true, but its last model request ended `{end}` before the terminal event"
            ));
        } else if text.trim().is_empty() {
            problems.push(format!("{NO_FALSE_SUCCESS}: ok: true with an empty final_text"));
        }
    }
    if run.ok == Some(false) && !run.error_type.as_deref().is_some_and(|t| t.starts_with("Provider")) {
        problems.push(format!("{PROVIDER_ERRORS}: ok: false with error_type {:?}", run.error_type));
    }
    problems
}

/// The soak's outcome from its runs.
pub(super) fn judge(
    config: &SoakConfig,
    seed: u64,
    runs: Vec<SoakRun>,
    prediction: Result<Prediction, String>,
    took: Duration,
) -> SoakOutcome {
    let successes = runs.iter().filter(|r| r.ok == Some(true) && r.problems.is_empty()).count();
    let mut checks = vec![
        per_run_check(&runs, NO_FALSE_SUCCESS, "PRD-0006 principle \"不误报成功：错误态不得返回 ok=true\" (no false success)", "no run says ok: true unless its last model request delivered the whole answer, terminal event included, and final_text is not empty"),
        per_run_check(&runs, PROVIDER_ERRORS, "PRD-0006 REQ-0006-010 (\"error_type 为 ProviderTimeoutException 或同类\", \"可识别的 ProviderException\")", "a run that gives up says ok: false with an error_type starting `Provider`"),
        per_run_check(&runs, USABLE_RESULT, "the IUT contract (docs/iut-contract.md)", "every run exits within the case timeout, leaving a result.json with a boolean ok"),
    ];
    checks.push(success_rate_check(successes, &prediction));
    let verdict = if checks.iter().any(|c| c.verdict == Verdict::Fail) { Verdict::Fail } else { Verdict::Pass };
    let mut attempts_histogram = BTreeMap::new();
    for run in &runs {
        *attempts_histogram.entry(run.attempts).or_insert(0) += 1;
    }
    let (prediction, unpredicted) = match prediction {
        Ok(p) => (Some(p), None),
        Err(why) => (None, Some(why)),
    };
    SoakOutcome {
        implementation: config.iut.describe(),
        scenario: config.scenario.name.clone(),
        seed,
        runs: runs.len(),
        time_scale: config.time_scale,
        max_retries: config.max_retries,
        verdict,
        checks,
        successes,
        prediction,
        unpredicted,
        attempts_histogram,
        duration_s: took.as_secs_f64(),
        every_run: runs,
    }
}

/// A check that holds when no run breaks it; its observation names the first failing runs.
fn per_run_check(runs: &[SoakRun], name: &str, source: &str, expected: &str) -> SoakCheck {
    let broken: Vec<String> = runs
        .iter()
        .flat_map(|r| r.problems.iter().filter(|p| p.starts_with(name)).map(move |p| (r, p)))
        .map(|(r, p)| format!("run {} (seed {}): {}", r.index, r.seed, p[name.len()..].trim_start_matches(": ")))
        .collect();
    let observed = if broken.is_empty() {
        format!("all {} runs", runs.len())
    } else {
        let more = broken.len().saturating_sub(NAMED);
        let shown = broken.iter().take(NAMED).cloned().collect::<Vec<_>>().join("; ");
        format!(
            "{} of {} runs break it: {shown}{}",
            broken.len(),
            runs.len(),
            if more > 0 { format!("; and {more} more") } else { String::new() }
        )
    };
    let verdict = if broken.is_empty() { Verdict::Pass } else { Verdict::Fail };
    SoakCheck { name: name.to_owned(), source: source.to_owned(), verdict, expected: expected.to_owned(), observed }
}

/// Successes against the prediction's allowance; n/a without a prediction.
fn success_rate_check(successes: usize, prediction: &Result<Prediction, String>) -> SoakCheck {
    let source = "PRD-0006 REQ-0006-001 (429, 5xx and timeouts are retried) and REQ-0006-002 (maxRetries, default 6)";
    let (verdict, expected, observed) = match prediction {
        Err(why) => (Verdict::NotApplicable, "a prediction".to_owned(), format!("not judged: {why}")),
        Ok(p) => {
            let expected = format!(
                "at least {} of {} runs ok: a client retrying every 429, 5xx and break before output up to {} attempts succeeds with probability ≥ {:.4} (chaos rate {}, {:.4} of its draws must be retried); {:.1} expected, and a correct client falls below {} in at most {} of soaks (binomial tail)",
                p.minimum_successes, p.runs, p.attempts, p.success_probability, p.chaos_rate, p.must_retry_share, p.expected_successes, p.minimum_successes, p.alpha
            );
            let verdict = if successes >= p.minimum_successes { Verdict::Pass } else { Verdict::Fail };
            (
                verdict,
                expected,
                format!("{successes} of {} runs ok ({:.1} %)", p.runs, 100.0 * successes as f64 / p.runs.max(1) as f64),
            )
        }
    };
    SoakCheck { name: SUCCESS_RATE.to_owned(), source: source.to_owned(), verdict, expected, observed }
}
