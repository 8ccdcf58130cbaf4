//! Time to degrade: for each fault profile and policy, how long from the first request to the
//! final error — as the engine's simulated time at production values (virtual clock), against
//! the analytic bound the policy documents, and as wall time against a real squall server at
//! 1/1000 of real time.

use squall::clock::TimeScale;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion};
use squall_reference::clock::{run_ready, Clock, ScaledClock, VirtualClock};
use squall_reference::decide::classify::{
    classify_status, classify_transport, ErrorKind, ProviderError, TransportFailure,
};
use squall_reference::decide::gate::AttemptObservation;
use squall_reference::decide::policy::RetryPolicy;
use squall_reference::decide::retry_after::{RetryAfter, RetryAfterSource};
use squall_reference::provider::{Api, HttpProvider, ModelRequest, OutputMode};
use squall_reference::run::call::stream_call;
use squall_reference::run::engine::{AttemptFailure, RetryEngine};
use squall_reference::run::events::{EventSink, MemoryEvents};

use super::common::{runtime, scripted, server};

/// A fault on every attempt: how the engine sees it, how long an attempt takes, the scenario.
struct Profile {
    name: &'static str,
    kind: ErrorKind,
    error: fn() -> ProviderError,
    /// An attempt lasts its full timeout (nothing arrives) rather than failing at once.
    waits_for_timeout: bool,
    /// The Retry-After every attempt asks for, if any.
    retry_after: Option<Duration>,
    scenario: &'static str,
}

const SCALE: f64 = 0.001;

fn profiles() -> Vec<Profile> {
    vec![
        Profile {
            name: "every_attempt_times_out",
            kind: ErrorKind::Timeout,
            error: || classify_transport(TransportFailure::RequestTimeout, ""),
            waits_for_timeout: true,
            retry_after: None,
            scenario: "[[attempts]]\ndelay_ms = 600000\n",
        },
        Profile {
            name: "every_attempt_429_retry_after_2s",
            kind: ErrorKind::RateLimit,
            error: || {
                let mut error = classify_status(429, &|_| None, "", std::time::SystemTime::now());
                error.retry_after =
                    Some(RetryAfter { delay: Duration::from_secs(2), source: RetryAfterSource::HeaderSeconds });
                error
            },
            waits_for_timeout: false,
            retry_after: Some(Duration::from_secs(2)),
            scenario: "[[attempts]]\nstatus = 429\nheaders = { \"retry-after\" = \"2\" }\n",
        },
        Profile {
            name: "every_attempt_503",
            kind: ErrorKind::Http,
            error: || classify_status(503, &|_| None, "", std::time::SystemTime::now()),
            waits_for_timeout: false,
            retry_after: None,
            scenario: "[[attempts]]\nstatus = 503\n",
        },
        Profile {
            name: "every_stream_reset_midway",
            kind: ErrorKind::Timeout,
            error: || classify_transport(TransportFailure::Reset, ""),
            waits_for_timeout: false,
            retry_after: None,
            scenario:
                "[[attempts]]\nstream = { text = \"a b c d e f\" }\nfault = { kind = \"reset\", after_events = 5 }\n",
        },
        Profile {
            name: "stall_forever",
            kind: ErrorKind::Timeout,
            error: || classify_transport(TransportFailure::IdleTimeout, ""),
            waits_for_timeout: true,
            retry_after: None,
            scenario: "[[attempts]]\nstream = { text = \"a b\" }\nfault = { kind = \"stall\", after_events = 2 }\n",
        },
    ]
}

fn policies() -> Vec<(&'static str, RetryPolicy)> {
    vec![("ecn_0003_defaults", RetryPolicy::default()), ("seed_004_fast_fail", RetryPolicy::fast_fail())]
}

/// Simulated time to the final error at production values.
fn simulated(policy: &RetryPolicy, profile: &Profile) -> Duration {
    let clock = Arc::new(VirtualClock::new());
    let engine = RetryEngine::new(policy.clone(), clock.clone(), Arc::new(MemoryEvents::default()));
    let _ = run_ready(engine.run(|context| {
        if profile.waits_for_timeout {
            clock.advance(context.timeout);
        }
        std::future::ready(Err::<(), _>(AttemptFailure {
            error: (profile.error)(),
            observed: AttemptObservation::default(),
        }))
    }));
    clock.now()
}

/// The documented formula (docs/reference.md): with A the attempts the policy allows for
/// this kind of failure, D_n how long attempt n lasts (its timeout when nothing arrives, else
/// 0) and w_n the n-th planned wait (the Retry-After asked, else the policy's seeded backoff
/// schedule), time to degrade = min(Σ_{n<A} D_n + Σ_{n<A−1} w_n, max_total_time).
fn analytic(policy: &RetryPolicy, profile: &Profile) -> Duration {
    let attempts = policy.max_attempts_for(&(profile.error)());
    let durations: Duration = (0..attempts).filter(|_| profile.waits_for_timeout).map(|n| policy.timeout_for(n)).sum();
    let schedule = policy.backoff.schedule(policy.max_retries, policy.jitter_seed);
    let waits: Duration = match profile.retry_after {
        Some(asked) => asked * attempts.saturating_sub(1),
        None => schedule.take(attempts.saturating_sub(1) as usize).sum(),
    };
    let total = durations + waits;
    policy.max_total_time.map_or(total, |bound| total.min(bound))
}

pub(crate) fn benches(c: &mut Criterion) {
    println!("time_to_degrade at production values: the engine on a virtual clock vs the documented formula");
    println!(
        "{:<34} {:<20} {:>11} {:>11} {:>8} {:>11}",
        "profile", "policy", "simulated s", "formula s", "ratio", "worst s"
    );
    for profile in profiles() {
        for (policy_name, policy) in policies() {
            let simulated = simulated(&policy, &profile);
            let formula = analytic(&policy, &profile);
            println!(
                "{:<34} {:<20} {:>11.2} {:>11.2} {:>8.4} {:>11.2}",
                profile.name,
                policy_name,
                simulated.as_secs_f64(),
                formula.as_secs_f64(),
                simulated.as_secs_f64() / formula.as_secs_f64(),
                policy.analytic_bound_for(profile.kind).as_secs_f64()
            );
        }
    }
    let rt = runtime();
    let server = rt.block_on(server());
    let mut group = c.benchmark_group("time_to_degrade");
    group.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(8));
    for profile in profiles() {
        for (policy_name, policy) in policies() {
            group.bench_with_input(
                BenchmarkId::new(profile.name, format!("{policy_name}@scale_{SCALE}")),
                &policy,
                |b, policy| {
                    b.to_async(&rt).iter_custom(|iterations| {
                        let (server, scenario, policy) = (&server, profile.scenario, policy.clone());
                        async move {
                            let mut total = Duration::ZERO;
                            for _ in 0..iterations {
                                let (base_url, _run) = scripted(server, scenario, TimeScale::of(SCALE));
                                let sink: Arc<dyn EventSink> = Arc::new(MemoryEvents::default());
                                let engine =
                                    RetryEngine::new(policy.clone(), Arc::new(ScaledClock::new(SCALE)), sink.clone());
                                let provider = HttpProvider::new(&base_url, "k", Api::Responses);
                                let started = Instant::now();
                                let outcome = stream_call(
                                    &engine,
                                    &provider,
                                    &ModelRequest::prompt("m", "x"),
                                    OutputMode::Buffered,
                                    &|_| {},
                                    &sink,
                                )
                                .await;
                                total += started.elapsed();
                                assert!(outcome.is_err(), "every attempt fails, so the call must end in an error");
                            }
                            total
                        }
                    })
                },
            );
        }
    }
    group.finish();
}
