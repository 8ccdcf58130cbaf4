//! The switches the mutants flip. Each function is called at one point of a case run by the
//! reference's IUT adapter (`crate::contract`) and does nothing for the reference itself.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::Mutant;
use crate::decide::backoff::DECORRELATED_MULTIPLE;
use crate::decide::classify::TransportFailure;
use crate::decide::policy::{KindLimits, RetryPolicy};
use crate::run::engine::AttemptFailure;
use crate::task::research_report::write_atomically;

/// Why a mutant could not distort a case's outputs, or how it ends a case badly. The IUT contract
/// reports it as its own error (`CaseError::Mutant`).
#[derive(Debug, thiserror::Error)]
pub enum Distortion {
    /// A file the distortion reads or writes.
    #[error("cannot {action} {}: {source}", path.display())]
    File {
        /// read, write or copy.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The `crash` mutant's end: it exits before writing its result.
    #[error("the crash mutant exits before writing its result")]
    Crashed,
}

impl Distortion {
    /// A file operation that failed on `path`.
    fn file(action: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Distortion {
        let path = path.into();
        move |source| Distortion::File { action, path, source }
    }
}

/// Flip the policy switches (after the profile is chosen, before `SQUALL_MAX_RETRIES`).
pub fn adjust_policy(mutant: Mutant, policy: &mut RetryPolicy) {
    match mutant {
        Mutant::IgnoreRetryAfter => policy.honour_retry_after = false,
        Mutant::GiveUpAfter3 => policy.max_retries = policy.max_retries.min(3),
        Mutant::Retry10ByDefault if policy.max_retries == 6 => policy.max_retries = 10,
        Mutant::RetryOnceExcept429 => {
            policy.kind_limits = KindLimits { timeout: Some(2), rate_limit: None, server: Some(2) };
        }
        Mutant::UncappedBackoff => policy.backoff.cap = std::time::Duration::from_secs(1 << 20),
        Mutant::ConstantBackoff => policy.backoff.factor = 1.0,
        Mutant::ZeroJitter => policy.backoff = policy.backoff.without_jitter(),
        Mutant::FullJitter => policy.backoff.full_jitter = true,
        Mutant::DecorrelatedJitter => policy.backoff.decorrelated = Some(DECORRELATED_MULTIPLE),
        Mutant::SlowDecorrelatedJitter => policy.backoff.decorrelated = Some(2.5),
        Mutant::Base2s => policy.backoff.initial = std::time::Duration::from_secs(2),
        Mutant::NoTimeoutLadder => policy.timeout_ladder.clear(),
        Mutant::WriterRetries if policy.max_retries == 0 => policy.max_retries = 6,
        Mutant::NoKindLimits => policy.kind_limits = KindLimits::default(),
        Mutant::NeverRetry => policy.max_retries = 0,
        _ => {}
    }
}

/// Whether `SQUALL_MAX_RETRIES` is applied.
pub fn honours_max_retries(mutant: Option<Mutant>) -> bool {
    !matches!(mutant, Some(Mutant::IgnoreMaxRetries | Mutant::NeverRetry))
}

/// Distort what a failed attempt reports, the way the mutant's bug would.
pub fn adjust_failure(mutant: Mutant, failure: &mut AttemptFailure) {
    let status = failure.error.status.unwrap_or(0);
    match mutant {
        Mutant::NeverRetry5xx if (500..600).contains(&status) => failure.error.should_retry = Some(false),
        Mutant::Retry400 if status == 400 => failure.error.should_retry = Some(true),
        Mutant::NoStreamRetry
            if matches!(
                failure.error.transport,
                Some(
                    TransportFailure::Eof
                        | TransportFailure::Reset
                        | TransportFailure::Truncated
                        | TransportFailure::Garbage
                )
            ) =>
        {
            failure.error.should_retry = Some(false)
        }
        Mutant::RetryAfterVisibleOutput => failure.observed.visible_output = false,
        _ => {}
    }
}

/// Rewrite the events file the way the mutant's bug writes it.
pub fn distort_events(mutant: Mutant, events: &Path) -> Result<(), Distortion> {
    let rewrite = |change: &dyn Fn(&mut Value)| -> Result<(), Distortion> {
        let text = std::fs::read_to_string(events).unwrap_or_default();
        let lines: Vec<String> = text
            .lines()
            .map(|line| match serde_json::from_str::<Value>(line) {
                Ok(mut event) => {
                    change(&mut event);
                    event.to_string()
                }
                Err(_) => line.to_owned(),
            })
            .collect();
        std::fs::write(events, lines.join("\n") + "\n").map_err(Distortion::file("write", events))
    };
    match mutant {
        Mutant::RawEofError => rewrite(&|event| {
            for pointer in ["/error_type", "/decision/error_type"] {
                if let Some(field) = event.pointer_mut(pointer).filter(|f| **f == "ProviderTimeoutException") {
                    *field = json!("EOFException");
                }
            }
        }),
        Mutant::AnnounceZeroDelay => rewrite(&|event| {
            if event["type"] == "provider.retry" {
                event["delay_ms"] = json!(0);
                event["decision"]["delay_ms"] = json!(0);
            }
        }),
        Mutant::DecisionsWithoutValues => rewrite(&|event| {
            if event["decision"].is_object() {
                event["decision"]["timeout_ms"] = Value::Null;
                event["decision"]["technically_retryable"] = Value::Null;
            }
        }),
        _ => Ok(()),
    }
}

/// The output-level bugs: the result a case reports, the report it leaves.
pub fn distort_outputs(mutant: Mutant, stream_case: bool, out: &Path, result: &mut Value) -> Result<(), Distortion> {
    match mutant {
        Mutant::OkAfterExhaustion if stream_case && result["ok"] == json!(false) => {
            result["ok"] = json!(true);
            result["stop_reason"] = json!("end_turn");
        }
        Mutant::OkTrueTaskFailure if result.get("task_result").is_some() => result["ok"] = json!(true),
        Mutant::RawEofError if result["error_type"] == "ProviderTimeoutException" => {
            result["error_type"] = json!("EOFException");
        }
        Mutant::EmptyReport => {
            if let Some(path) = result["report_path"].as_str() {
                write_atomically(Path::new(path), "(empty)").map_err(Distortion::file("write", path))?;
            }
        }
        Mutant::FakeReportSources => {
            if let Some(path) = result["report_path"].as_str().filter(|_| result["ok"] == json!(false)) {
                let report = std::fs::read_to_string(path).map_err(Distortion::file("read", path))?;
                let faked = report.replace("https://fixtures.squall.invalid/", "https://made-up.invalid/")
                    + "\n- Tool output kept at .agents/artifacts/never-written.txt\n";
                write_atomically(Path::new(path), &faked).map_err(Distortion::file("write", path))?;
            }
        }
        Mutant::EventsOutsideSession => {
            if let Some(events) = result["events_path"].as_str() {
                let moved = out.join("sub-session-events.jsonl");
                std::fs::copy(events, &moved).map_err(Distortion::file("copy", events))?;
                result["events_path"] = json!(moved);
            }
        }
        _ => {}
    }
    Ok(())
}

/// How a case ends for the mutants that never finish it properly: `crash` removes its result
/// and fails; `hang` never returns. Everyone else returns `Ok`.
pub async fn finish_badly(mutant: Mutant, out: &Path) -> Result<(), Distortion> {
    match mutant {
        Mutant::Crash => {
            let _ = std::fs::remove_file(out.join("result.json"));
            Err(Distortion::Crashed)
        }
        Mutant::Hang => std::future::pending().await,
        _ => Ok(()),
    }
}
