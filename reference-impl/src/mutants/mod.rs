//! Deliberately broken variants of the reference, one bug each. The conformance suite must
//! reject every one of them on exactly the requirements listed here — no more, no fewer
//! (`crates/squall-cli/tests/suite/mutation_matrix.rs` checks it, and `docs/requirements.md` shows the matrix).
//! A suite that passes a mutant is missing a check; a mutant that fails an unlisted
//! requirement means a check judges more than its requirement.
//!
//! `bugs` holds the switches each mutant flips: in the policy, in what an attempt reports,
//! in the outputs it leaves.

mod bugs;

pub use bugs::{
    adjust_failure, adjust_policy, distort_events, distort_outputs, finish_badly, honours_max_retries, Distortion,
};

/// What the suite must fail a mutant on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Breaks {
    /// Exactly these requirements (fail or error), and nothing else.
    Only(&'static [&'static str]),
    /// Every case is `error`: the implementation dies or hangs whatever the case.
    Everything,
}

macro_rules! mutants {
    ($($variant:ident = $name:literal: $doc:literal, $breaks:expr;)*) => {
        /// The mutants, by the bug they carry.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Mutant {
            $(#[doc = $doc] $variant,)*
        }

        impl Mutant {
            /// Every mutant, in the order they are declared.
            pub const ALL: &'static [Mutant] = &[$(Mutant::$variant,)*];

            /// The name used on the command line (`--iut reference:<name>`).
            pub fn name(self) -> &'static str {
                match self {
                    $(Mutant::$variant => $name,)*
                }
            }

            /// The bug, in one line.
            pub fn bug(self) -> &'static str {
                match self {
                    $(Mutant::$variant => $doc,)*
                }
            }

            /// The requirements the suite must fail this mutant on, and why where it is more
            /// than one (see the comments in the table).
            pub fn breaks(self) -> Breaks {
                match self {
                    $(Mutant::$variant => $breaks,)*
                }
            }
        }
    };
}

use Breaks::{Everything, Only};

mutants! {
    NeverRetry = "never-retry": "One attempt per call whatever maxRetries says, as an SDK whose retries are off by default.",
        // Every requirement with a case that needs a retry: to recover (-001, -010, a report or a
        // sub-session that recovers, the gate's allowed replay), to count attempts (-002, the
        // ladder, the profiles, seed 004's limits), or to measure waits and what attempts share.
        Only(&["REQ-0006-001", "REQ-0006-002", "REQ-0006-010", "REQ-0006-021", "REQ-0003-020", "SEED-001-GATE", "SEED-001-OBSERVABILITY", "SEED-001-TIMEOUT-LADDER", "SEED-002-JITTER", "SEED-002-PROFILES", "SEED-002-SESSION", "SEED-004-LIMITS"]);
    NeverRetry5xx = "never-retry-5xx": "A 5xx is final.",
        // 5xx get 2 attempts (REQ-0006-001), 7 under the defaults (-002) and 3 in fast-fail (SEED-004).
        Only(&["REQ-0006-001", "REQ-0006-002", "SEED-004-LIMITS"]);
    IgnoreRetryAfter = "ignore-retry-after": "Retry-After is ignored; the backoff decides.",
        Only(&["REQ-0006-001"]);
    Retry400 = "retry-400": "A 400 is retried.",
        Only(&["REQ-0006-001"]);
    OkAfterExhaustion = "ok-after-exhaustion": "A call that ran out of retries reports ok: true.",
        // `ok` is judged wherever a call gives up: every requirement with a give-up case.
        Only(&["REQ-0006-001", "REQ-0006-002", "REQ-0006-010", "SEED-001-GATE", "SEED-001-TIMEOUT-LADDER", "SEED-002-PROFILES", "SEED-004-LIMITS"]);
    GiveUpAfter3 = "give-up-after-3": "3 retries instead of 6 by default.",
        Only(&["REQ-0006-002"]);
    Retry10ByDefault = "retry-10-by-default": "10 retries instead of 6 by default: a herd through an outage sends 11 requests a client.",
        Only(&["REQ-0006-002"]);
    RetryOnceExcept429 = "retry-once-except-429": "The pre-PRD habit: 429 retried 6 times, everything else once.",
        // Seed 004 wants three attempts for 5xx; a herd's clients failing three times each
        // must all recover within ECN-0003's default of six retries (REQ-0006-002). It does
        // retry each status REQ-0006-001 names, so REQ-0006-001 holds.
        Only(&["REQ-0006-002", "SEED-004-LIMITS"]);
    IgnoreMaxRetries = "ignore-max-retries": "providerRetry.maxRetries is not configurable.",
        Only(&["REQ-0006-002"]);
    UncappedBackoff = "uncapped-backoff": "The backoff doubles without a cap.",
        Only(&["REQ-0006-002"]);
    ConstantBackoff = "constant-backoff": "The backoff does not grow (factor 1).",
        // Seed 002's waits double too.
        Only(&["REQ-0006-002", "SEED-002-JITTER"]);
    FullJitter = "full-jitter": "Each wait is a random share of the capped backoff (a full jitter, botocore's) instead of seed 002's 2^n plus 0-1 s.",
        // Seed 002's schedule only: its waits still grow exponentially to a cap, which one run
        // cannot tell and runs drawing anew do (REQ-0006-002 holds).
        Only(&["SEED-002-JITTER"]);
    DecorrelatedJitter = "decorrelated-jitter": "Each wait is drawn from 1 s to three times the one before, capped (AWS's decorrelated jitter) instead of seed 002's 2^n plus 0-1 s.",
        // Seed 002's schedule only: its mean waits grow 1.5x a retry to the cap, which runs
        // drawing anew read as a decorrelated jitter's (REQ-0006-002 holds).
        Only(&["SEED-002-JITTER"]);
    SlowDecorrelatedJitter = "slow-decorrelated-jitter": "A decorrelated jitter with a multiple of 2.5: each wait from 1 s to 2.5 times the one before, capped; its mean waits grow 1.25x a retry.",
        // Too slow to be exponential (√2 a retry), read as a decorrelated jitter's; its mean
        // waits still level off (each under 1.4x the one before).
        Only(&["REQ-0006-002", "SEED-002-JITTER"]);
    NoStreamRetry = "no-stream-retry": "A stream broken mid-body (EOF, reset, truncation, garbage) is final.",
        // Breaks get 7 attempts by default (-002); the gate's allowed path replays one (SEED-001).
        Only(&["REQ-0006-002", "REQ-0006-010", "SEED-001-GATE"]);
    RawEofError = "raw-eof-error": "A stream break is reported as a raw EOFException.",
        Only(&["REQ-0006-010"]);
    RetryAfterVisibleOutput = "retry-after-visible-output": "An attempt is replayed after the user saw its text.",
        Only(&["SEED-001-GATE"]);
    EmptyReport = "empty-report": "The deep-research report says (empty).",
        Only(&["REQ-0006-021"]);
    FakeReportSources = "fake-report-sources": "The failure report cites sources that were never collected and a file that does not exist.",
        Only(&["REQ-0006-021"]);
    RelaunchDeepResearch = "relaunch-deep-research": "No storm guard: a failed deep research is started again.",
        Only(&["REQ-0006-030"]);
    OkTrueTaskFailure = "ok-true-task-failure": "A failed deep-research task reports ok: true.",
        Only(&["REQ-0006-020"]);
    EventsOutsideSession = "events-outside-session": "The sub-session's events are not under `.agents/sessions/<id>/`.",
        Only(&["REQ-0003-020"]);
    NoToolOutputBudget = "no-tool-output-budget": "Tool outputs reach the provider whole.",
        Only(&["REQ-0003-001"]);
    AnnounceZeroDelay = "announce-zero-delay": "provider.retry announces a delay of 0 and sleeps the real one.",
        Only(&["SEED-001-OBSERVABILITY"]);
    DecisionsWithoutValues = "decisions-without-values": "Decision records carry null timeouts and retryability.",
        // The ladder's evidence is the timeout each attempt ran under.
        Only(&["SEED-001-OBSERVABILITY", "SEED-001-TIMEOUT-LADDER"]);
    NoTimeoutLadder = "no-timeout-ladder": "A reasoning model gets the default 60 s timeouts and 7 attempts.",
        Only(&["SEED-001-TIMEOUT-LADDER"]);
    WriterRetries = "writer-retries": "A writing agent retries like any other.",
        Only(&["SEED-002-PROFILES"]);
    ZeroJitter = "zero-jitter": "The backoff has no jitter.",
        Only(&["SEED-002-JITTER"]);
    Base2s = "base-2s": "The backoff starts at 2 s, not seed 002's 1 s.",
        Only(&["SEED-002-JITTER"]);
    NoSessionId = "no-session-id": "Attempts carry no session id.",
        Only(&["SEED-002-SESSION"]);
    NoKindLimits = "no-kind-limits": "The fast-fail profile gives timeouts as many attempts as 5xx.",
        Only(&["SEED-004-LIMITS"]);
    NoDegrade = "no-degrade": "The fallback is never used: an unavailable provider fails the call.",
        Only(&["SEED-004-DEGRADE"]);
    Crash = "crash": "Makes its calls, then exits with an error and no result.json.",
        Everything;
    Hang = "hang": "Makes its calls, then never finishes.",
        Everything;
}

impl Mutant {
    /// The mutant named `name` (as `reference:<name>` names it), if any.
    pub fn parse(name: &str) -> Option<Mutant> {
        Mutant::ALL.iter().copied().find(|m| m.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_parse_back() {
        for mutant in Mutant::ALL {
            assert_eq!(Mutant::parse(mutant.name()), Some(*mutant));
            assert_eq!(Mutant::ALL.iter().filter(|m| m.name() == mutant.name()).count(), 1);
        }
    }
}
