//! Deliberately broken variants of the reference, one switch flipped each. The conformance
//! suite must reject every one of them on exactly the requirements listed here
//! (`tests/suite/mutants.rs` checks it); a suite that passes a mutant is missing a check.

use crate::classify::TransportFailure;
use crate::engine::AttemptFailure;
use crate::policy::RetryPolicy;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutant {
    /// Never retries a 5xx.
    NeverRetry5xx,
    /// Ignores Retry-After and uses its backoff.
    IgnoreRetryAfter,
    /// Retries a 400.
    Retry400,
    /// Reports `ok: true` after the retries are exhausted.
    OkAfterExhaustion,
    /// Gives up after 3 retries instead of 6.
    GiveUpAfter3,
    /// Does not retry a stream broken mid-body (EOF, reset, truncation, garbage).
    NoStreamRetry,
    /// Reports a stream break as a raw `EOFException`.
    RawEofError,
    /// Replays an attempt after output was shown to the user.
    RetryAfterVisibleOutput,
    /// Writes `(empty)` as the deep-research report.
    EmptyReport,
    /// Relaunches deep research after it failed.
    RelaunchDeepResearch,
    /// Reports a failed deep-research task as `ok: true`.
    OkTrueTaskFailure,
}

impl Mutant {
    pub const ALL: [Mutant; 11] = [
        Mutant::NeverRetry5xx,
        Mutant::IgnoreRetryAfter,
        Mutant::Retry400,
        Mutant::OkAfterExhaustion,
        Mutant::GiveUpAfter3,
        Mutant::NoStreamRetry,
        Mutant::RawEofError,
        Mutant::RetryAfterVisibleOutput,
        Mutant::EmptyReport,
        Mutant::RelaunchDeepResearch,
        Mutant::OkTrueTaskFailure,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mutant::NeverRetry5xx => "never-retry-5xx",
            Mutant::IgnoreRetryAfter => "ignore-retry-after",
            Mutant::Retry400 => "retry-400",
            Mutant::OkAfterExhaustion => "ok-after-exhaustion",
            Mutant::GiveUpAfter3 => "give-up-after-3",
            Mutant::NoStreamRetry => "no-stream-retry",
            Mutant::RawEofError => "raw-eof-error",
            Mutant::RetryAfterVisibleOutput => "retry-after-visible-output",
            Mutant::EmptyReport => "empty-report",
            Mutant::RelaunchDeepResearch => "relaunch-deep-research",
            Mutant::OkTrueTaskFailure => "ok-true-task-failure",
        }
    }

    pub fn parse(name: &str) -> Option<Mutant> {
        Mutant::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The requirements the suite must fail this mutant on — and no others. Where a mutant
    /// breaks a second requirement for real, it is listed with the reason.
    pub fn breaks(self) -> &'static [&'static str] {
        match self {
            // SEED-004-LIMITS: "5xx get 3 attempts" cannot hold if 5xx is never retried.
            Mutant::NeverRetry5xx => &["REQ-0006-001", "SEED-004-LIMITS"],
            Mutant::IgnoreRetryAfter | Mutant::Retry400 | Mutant::OkAfterExhaustion => &["REQ-0006-001"],
            Mutant::GiveUpAfter3 => &["REQ-0006-002"],
            // SEED-001-GATE: the gate's allowed path (a break before any output is replayed).
            Mutant::NoStreamRetry => &["REQ-0006-010", "SEED-001-GATE"],
            Mutant::RawEofError => &["REQ-0006-010"],
            Mutant::RetryAfterVisibleOutput => &["SEED-001-GATE"],
            Mutant::EmptyReport => &["REQ-0006-021"],
            Mutant::RelaunchDeepResearch => &["REQ-0006-030"],
            Mutant::OkTrueTaskFailure => &["REQ-0006-020"],
        }
    }

    /// Flip the policy switches this mutant flips.
    pub fn adjust_policy(self, policy: &mut RetryPolicy) {
        match self {
            Mutant::IgnoreRetryAfter => policy.honour_retry_after = false,
            Mutant::GiveUpAfter3 => policy.max_retries = policy.max_retries.min(3),
            _ => {}
        }
    }

    /// Distort what an attempt reports, the way this mutant's bug would.
    pub fn adjust_failure(self, failure: &mut AttemptFailure) {
        let status = failure.error.status.unwrap_or(0);
        match self {
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
}
