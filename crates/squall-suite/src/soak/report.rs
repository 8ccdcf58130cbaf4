//! A soak's reports: `soak.json` (the whole [`SoakOutcome`], every run with its replay command)
//! and `soak.md` (the verdict, the checks, the prediction, the histogram of attempts and the runs
//! with problems), written whole or not at all.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::SoakOutcome;
use crate::report::cell;
use crate::report::write_atomically;
use crate::SuiteError;

/// Runs with problems the Markdown report lists (the JSON has every run).
const LISTED: usize = 20;

/// Write both reports into `dir` (created if missing); their paths.
pub fn write(dir: &Path, outcome: &SoakOutcome) -> Result<Vec<PathBuf>, SuiteError> {
    std::fs::create_dir_all(dir)
        .map_err(SuiteError::io(format!("cannot create the report directory {}", dir.display())))?;
    let json = serde_json::to_string_pretty(outcome)
        .map_err(|e| SuiteError::Harness(format!("cannot serialize soak.json: {e}")))?;
    let written = [("soak.json", json), ("soak.md", markdown(outcome))];
    let mut paths = Vec::new();
    for (name, text) in written {
        let path = dir.join(name);
        write_atomically(&path, &text).map_err(SuiteError::io(format!("cannot write {}", path.display())))?;
        paths.push(path);
    }
    Ok(paths)
}

/// The Markdown report.
pub fn markdown(outcome: &SoakOutcome) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Soak: {} under `{}`\n", outcome.implementation, outcome.scenario);
    let _ = writeln!(
        out,
        "**{}** — {} runs, seed {} (run k draws from seed {} + k), time scale {}, maxRetries {}, {:.1} s.\n",
        outcome.verdict.as_str(),
        outcome.runs,
        outcome.seed,
        outcome.seed,
        outcome.time_scale,
        outcome.max_retries,
        outcome.duration_s
    );
    out.push_str("| check | verdict | expected | observed | source |\n|---|---|---|---|---|\n");
    for check in &outcome.checks {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            cell(&check.name),
            check.verdict.as_str(),
            cell(&check.expected),
            cell(&check.observed),
            cell(&check.source)
        );
    }
    match (&outcome.prediction, &outcome.unpredicted) {
        (Some(p), _) => {
            let _ = writeln!(
                out,
                "\n## Prediction\n\nChaos takes {} of attempts; {:.4} of what it draws must be retried (error statuses, and breaks before any output); with {} attempts a run succeeds with probability at least {:.4}. {} runs: {:.1} successes expected; the allowance is the largest k with P(Binomial({}, {:.4}) < k) ≤ {}: **{}**. Observed: {}.",
                p.chaos_rate, p.must_retry_share, p.attempts, p.success_probability, p.runs, p.expected_successes, p.runs, p.success_probability, p.alpha, p.minimum_successes, outcome.successes
            );
        }
        (None, why) => {
            let _ = writeln!(out, "\n## Prediction\n\nNone: {}.", why.as_deref().unwrap_or("unknown"));
        }
    }
    out.push_str("\n## Attempts per run\n\n| model requests | runs |\n|---|---|\n");
    for (attempts, runs) in &outcome.attempts_histogram {
        let _ = writeln!(out, "| {attempts} | {runs} {} |", "█".repeat((*runs * 40).div_ceil(outcome.runs.max(1))));
    }
    let troubled: Vec<_> = outcome.every_run.iter().filter(|r| !r.problems.is_empty()).collect();
    if !troubled.is_empty() {
        let _ = writeln!(out, "\n## Runs with problems ({} of {})\n", troubled.len(), outcome.runs);
        for run in troubled.iter().take(LISTED) {
            let _ = writeln!(
                out,
                "- run {} (seed {}): {}\n  requests: {}\n  replay: `{}`",
                run.index,
                run.seed,
                run.problems.join("; "),
                run.requests.join(", "),
                run.replay
            );
        }
        if troubled.len() > LISTED {
            let _ = writeln!(out, "- … and {} more in soak.json", troubled.len() - LISTED);
        }
    }
    if let Some(first) = outcome.every_run.first() {
        let _ = writeln!(out, "\nReplay any run alone: `{}` (with its own seed).", first.replay);
    }
    out
}
