//! Engine tests on a virtual clock: no runtime, no network, production values.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use proptest::prelude::*;

use super::*;
use crate::clock::{run_ready, VirtualClock};
use crate::decide::classify::{classify_status, classify_transport, is_retryable, ErrorKind, TransportFailure};
use crate::decide::decision::Outcome;
use crate::decide::gate::{gate, AttemptObservation};
use crate::decide::retry_after::{RetryAfter, RetryAfterSource};
use crate::run::events::MemoryEvents;

/// How a scripted attempt ends.
#[derive(Debug, Clone)]
enum Step {
    Succeed,
    Fail(ProviderError, AttemptObservation),
}

fn status(code: u16) -> ProviderError {
    classify_status(code, &|_| None, "", std::time::SystemTime::now())
}

fn timeout() -> ProviderError {
    classify_transport(TransportFailure::IdleTimeout, "")
}

struct Run {
    result: Result<u32, CallFailure>,
    attempts: u32,
    elapsed: Duration,
    events: Vec<serde_json::Value>,
}

/// Run the engine over scripted steps (the last step repeats), each attempt taking `took`.
fn run(policy: RetryPolicy, steps: &[Step], took: Duration) -> Run {
    let clock = Arc::new(VirtualClock::new());
    let events = Arc::new(MemoryEvents::default());
    let engine = RetryEngine::new(policy, clock.clone(), events.clone());
    let attempts = Mutex::new(0u32);
    let result = run_ready(engine.run(|context| {
        let mut count = attempts.lock().expect("lock");
        *count += 1;
        clock.advance(took.min(context.timeout));
        let step = steps.get(context.attempt as usize).or(steps.last()).cloned().unwrap_or(Step::Succeed);
        std::future::ready(match step {
            Step::Succeed => Ok(context.attempt),
            Step::Fail(error, observed) => Err(AttemptFailure { error, observed }),
        })
    }));
    let attempts = *attempts.lock().expect("lock");
    Run { result, attempts, elapsed: clock.now(), events: events.events() }
}

fn fail(error: ProviderError) -> Step {
    Step::Fail(error, AttemptObservation::default())
}

#[test]
fn retries_timeout_then_succeeds() {
    let run = run(RetryPolicy::default(), &[fail(timeout()), Step::Succeed], Duration::ZERO);
    assert_eq!(run.result.ok(), Some(1));
    assert_eq!(run.events.len(), 1);
    assert_eq!(run.events[0]["type"], "provider.retry");
}

#[test]
fn exhaustion_makes_seven_attempts_and_one_runtime_error() {
    let run = run(RetryPolicy::default(), &[fail(status(503))], Duration::ZERO);
    assert_eq!(run.attempts, 7);
    let failure = run.result.expect_err("exhausted");
    assert_eq!((failure.attempts, failure.decision.outcome), (7, Outcome::Exhausted));
    let types: Vec<&str> = run.events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(types, [vec!["provider.retry"; 6], vec!["runtime.error"]].concat());
}

#[test]
fn planned_sleeps_are_the_schedule_at_production_values() {
    let policy = RetryPolicy {
        backoff: crate::decide::backoff::BackoffConfig::default().without_jitter(),
        ..RetryPolicy::default()
    };
    let run = run(policy, &[fail(status(500))], Duration::ZERO);
    assert_eq!(run.elapsed, Duration::from_secs(1 + 2 + 4 + 8 + 16 + 30));
}

#[test]
fn retry_after_replaces_the_backoff_delay() {
    let mut limited = status(429);
    limited.retry_after = Some(RetryAfter { delay: Duration::from_millis(1500), source: RetryAfterSource::HeaderMs });
    let run = run(RetryPolicy::default(), &[fail(limited), Step::Succeed], Duration::ZERO);
    assert_eq!(run.elapsed, Duration::from_millis(1500));
    assert_eq!(run.events[0]["decision"]["delay_source"], "retry-after-ms");
}

#[test]
fn retry_after_beyond_the_ceiling_gives_up_instead_of_sleeping() {
    let mut limited = status(429);
    limited.retry_after =
        Some(RetryAfter { delay: Duration::from_secs(3600), source: RetryAfterSource::HeaderSeconds });
    let run = run(RetryPolicy::default(), &[fail(limited), Step::Succeed], Duration::ZERO);
    assert_eq!(run.result.expect_err("gave up").decision.outcome, Outcome::RetryAfterTooLong);
    assert_eq!(run.elapsed, Duration::ZERO);
}

#[test]
fn every_attempt_timing_out_still_gets_seven_attempts_under_the_defaults() {
    // ECN-0003 bounds attempts, not time: 7 attempts of 60 s and the six waits between them.
    let run = run(RetryPolicy::default(), &[fail(timeout())], Duration::from_secs(60));
    assert_eq!(run.attempts, 7);
    assert!(
        run.elapsed >= Duration::from_secs(7 * 60 + 31) && run.elapsed <= Duration::from_secs(7 * 60 + 66),
        "{:?}",
        run.elapsed
    );
}

#[test]
fn the_fast_fail_time_bound_holds_when_every_attempt_times_out() {
    // Seed 004: the worst case within 5 minutes, even with more attempts allowed.
    let mut policy = RetryPolicy::fast_fail();
    policy.kind_limits.timeout = None;
    policy.max_retries = 6;
    let run = run(policy, &[fail(timeout())], Duration::from_secs(60));
    assert!(run.elapsed <= Duration::from_secs(300), "{:?}", run.elapsed);
    assert!(run.result.is_err());
}

#[test]
fn gate_blocks_are_recorded_with_their_reason() {
    let observed = AttemptObservation { visible_output: true, ..AttemptObservation::default() };
    let run = run(RetryPolicy::default(), &[Step::Fail(timeout(), observed), Step::Succeed], Duration::ZERO);
    let failure = run.result.expect_err("blocked");
    assert_eq!((failure.decision.outcome, failure.decision.gate.as_str()), (Outcome::BlockedByGate, "visible_output"));
    assert!(failure.decision.technically_retryable);
}

#[test]
fn on_retry_is_called_before_the_sleep() {
    let clock = Arc::new(VirtualClock::new());
    let seen_at = Arc::new(Mutex::new(Vec::new()));
    let on_retry: OnRetry = {
        let (clock, seen_at) = (clock.clone(), seen_at.clone());
        Arc::new(move |_notice: &RetryNotice| seen_at.lock().expect("lock").push(clock.now()))
    };
    let policy = RetryPolicy {
        backoff: crate::decide::backoff::BackoffConfig::default().without_jitter(),
        ..RetryPolicy::default()
    };
    let engine = RetryEngine::new(policy, clock.clone(), Arc::new(MemoryEvents::default())).with_on_retry(on_retry);
    let mut attempts = 0;
    let _ = run_ready(engine.run(|_| {
        attempts += 1;
        std::future::ready(if attempts < 3 {
            Err(AttemptFailure { error: status(503), observed: AttemptObservation::default() })
        } else {
            Ok(())
        })
    }));
    // Notified at t=0 (before the 1 s sleep) and at t=1 s (before the 2 s sleep).
    assert_eq!(*seen_at.lock().expect("lock"), [Duration::ZERO, Duration::from_secs(1)]);
}

fn any_error() -> impl Strategy<Value = ProviderError> {
    prop_oneof![
        Just(timeout()),
        prop::sample::select(vec![400u16, 401, 403, 404, 408, 409, 422, 425, 429, 500, 502, 503, 504]).prop_map(status),
        (0u64..200_000).prop_map(|ms| {
            let mut limited = status(429);
            limited.retry_after =
                Some(RetryAfter { delay: Duration::from_millis(ms), source: RetryAfterSource::HeaderMs });
            limited
        }),
        Just(ProviderError::new(ErrorKind::Quota, "quota")),
        Just(ProviderError::new(ErrorKind::ContextOverflow, "overflow")),
    ]
}

fn any_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        1 => Just(Step::Succeed),
        6 => (any_error(), any::<bool>()).prop_map(|(error, visible)| {
            Step::Fail(error, AttemptObservation { visible_output: visible, ..AttemptObservation::default() })
        }),
    ]
}

fn any_policy() -> impl Strategy<Value = RetryPolicy> {
    prop_oneof![
        Just(RetryPolicy::default()),
        Just(RetryPolicy::fast_fail()),
        Just(RetryPolicy::reasoning_ladder()),
        (0u32..10).prop_map(|n| RetryPolicy::default().with_max_retries(n)),
    ]
}

proptest! {
    #[test]
    fn attempts_never_exceed_max_retries_plus_one(policy in any_policy(), steps in prop::collection::vec(any_step(), 1..12), took in 0u64..90) {
        let limit = policy.max_retries + 1;
        let run = run(policy, &steps, Duration::from_secs(took));
        prop_assert!(run.attempts <= limit);
    }

    #[test]
    fn total_time_never_exceeds_the_bound(policy in any_policy(), steps in prop::collection::vec(any_step(), 1..12), took in 0u64..90) {
        let bound = policy.max_total_time;
        let run = run(policy, &steps, Duration::from_secs(took));
        if let Some(bound) = bound {
            prop_assert!(run.elapsed <= bound, "{:?} > {:?}", run.elapsed, bound);
        }
    }

    #[test]
    fn success_only_when_the_last_attempt_succeeded(policy in any_policy(), steps in prop::collection::vec(any_step(), 1..12)) {
        let run = run(policy, &steps, Duration::ZERO);
        let last = steps.get(run.attempts as usize - 1).or(steps.last()).cloned();
        prop_assert_eq!(run.result.is_ok(), matches!(last, Some(Step::Succeed)));
        // And a failure always ends with exactly one runtime.error.
        let errors = run.events.iter().filter(|e| e["type"] == "runtime.error").count();
        prop_assert_eq!(errors, usize::from(run.result.is_err()));
    }

    #[test]
    fn never_retries_what_classify_or_the_gate_refuse(error in any_error(), visible in any::<bool>()) {
        let observed = AttemptObservation { visible_output: visible, ..AttemptObservation::default() };
        let refused = !is_retryable(&error) || !gate(&error, &observed).allows();
        let run = run(RetryPolicy::default(), &[Step::Fail(error, observed), Step::Succeed], Duration::ZERO);
        if refused {
            prop_assert_eq!(run.attempts, 1);
        }
    }
}

/// Header values a provider might send, extremes and garbage included.
fn any_header_value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<f64>().prop_map(|n| n.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        prop::sample::select(vec![
            "1e300",
            "18446744073709551616",
            "NaN",
            "inf",
            "-0",
            "",
            " ",
            "Wed, 21 Oct 2015 07:28:00 GMT"
        ])
        .prop_map(str::to_owned),
        ".{0,40}",
    ]
}

proptest! {
    #[test]
    fn arbitrary_response_headers_never_panic_the_pipeline(
        status in 100u16..600,
        retry_after in any_header_value(),
        retry_after_ms in any_header_value(),
        should_retry in any_header_value(),
        body in ".{0,200}",
    ) {
        let headers = move |name: &str| match name {
            "retry-after" => Some(retry_after.clone()),
            "retry-after-ms" => Some(retry_after_ms.clone()),
            "x-should-retry" => Some(should_retry.clone()),
            _ => None,
        };
        let error = classify_status(status, &headers, &body, std::time::SystemTime::now());
        let run = run(RetryPolicy::default(), &[fail(error), Step::Succeed], Duration::ZERO);
        // Whatever was asked, the pipeline ends: retried once within the Retry-After ceiling,
        // or stopped, never asleep for an absurd time.
        prop_assert!(run.attempts <= 2);
        prop_assert!(run.elapsed <= Duration::from_secs(60), "{:?}", run.elapsed);
    }
}
