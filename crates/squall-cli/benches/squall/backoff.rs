//! Backoff: what a schedule and a retry decision cost, and how close the reference's real
//! sleeps land to the delays it planned (as the squall journal observes the gaps).

use squall::clock::TimeScale;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput};
use squall_reference::clock::{run_ready, ScaledClock, VirtualClock};
use squall_reference::decide::backoff::BackoffConfig;
use squall_reference::decide::classify::classify_status;
use squall_reference::decide::gate::AttemptObservation;
use squall_reference::decide::policy::RetryPolicy;
use squall_reference::provider::{Api, HttpProvider, ModelRequest, OutputMode};
use squall_reference::run::call::stream_call;
use squall_reference::run::engine::{AttemptFailure, RetryEngine};
use squall_reference::run::events::{EventSink, MemoryEvents};

use super::common::{runtime, scripted, server, Errors};

pub(crate) fn benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("backoff");
    group.bench_function("schedule_6_retries", |b| {
        let config = BackoffConfig::default();
        b.iter(|| config.schedule(6, 42).sum::<Duration>())
    });
    let failure = AttemptFailure {
        error: classify_status(503, &|_| None, "", std::time::SystemTime::now()),
        observed: AttemptObservation::default(),
    };
    engine_decision(&mut group);
    group.throughput(Throughput::Elements(7));
    group.bench_function("engine_7_failed_attempts_virtual_clock", |b| {
        b.iter(|| {
            let engine = RetryEngine::new(
                RetryPolicy::default(),
                Arc::new(VirtualClock::new()),
                Arc::new(MemoryEvents::default()),
            );
            run_ready(engine.run(|_| std::future::ready(Err::<(), AttemptFailure>(failure.clone())))).is_err()
        })
    });
    group.finish();
    planned_vs_observed(c);
}

/// One retry decision as the engine has it made after a failed attempt, events excluded:
/// classify a 503 with an OpenAI error body and a `retry-after-ms` header, then the policy's
/// decision (the safety gate, the attempt limit, Retry-After, the time budget). The call's backoff schedule is made outside the
/// timing, as the engine makes it once per call.
fn engine_decision(group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    let engine =
        RetryEngine::new(RetryPolicy::default(), Arc::new(VirtualClock::new()), Arc::new(MemoryEvents::default()));
    let body = r#"{"error": {"message": "The server is overloaded.", "type": "server_error", "param": null, "code": "overloaded"}}"#;
    let header = |name: &str| (name == "retry-after-ms").then(|| "1200".to_owned());
    let policy = engine.policy().clone();
    group.bench_function("engine_decision_classify_gate_decide", |b| {
        b.iter_batched_ref(
            || policy.backoff.schedule(policy.max_retries, 42),
            |schedule| {
                let failure = AttemptFailure {
                    error: classify_status(503, &header, body, std::time::SystemTime::now()),
                    observed: AttemptObservation::default(),
                };
                policy.decide(0, &failure.error, &failure.observed, schedule.next(), Duration::from_millis(300))
            },
            criterion::BatchSize::SmallInput,
        )
    });
}

/// Each iteration: one retry after a 503, at 1/50 of real time (a 2-3 s backoff sleeps 40-60 ms).
/// The error is |gap the journal saw − delay the engine announced|, in real milliseconds.
fn planned_vs_observed(c: &mut Criterion) {
    const SCALE: f64 = 0.02;
    let rt = runtime();
    let server = rt.block_on(server());
    let errors = Errors::default();
    let mut group = c.benchmark_group("backoff");
    group.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
    group.bench_with_input(BenchmarkId::new("planned_vs_observed_gap", "scale_0.02"), &SCALE, |b, &scale| {
        b.to_async(&rt).iter_custom(|iterations| {
            let (server, errors) = (&server, &errors);
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    let (base_url, run) = scripted(
                        server,
                        "[[attempts]]\nstatus = 503\n[[attempts]]\nstream = { text = \"ok\" }\n",
                        TimeScale::of(scale),
                    );
                    let events = Arc::new(MemoryEvents::default());
                    let sink: Arc<dyn EventSink> = events.clone();
                    let engine =
                        RetryEngine::new(RetryPolicy::default(), Arc::new(ScaledClock::new(scale)), sink.clone());
                    let provider = HttpProvider::new(&base_url, "k", Api::Responses);
                    let request = ModelRequest::prompt("m", "x");
                    let _ = stream_call(&engine, &provider, &request, OutputMode::Visible, &|_| {}, &sink).await;
                    let journal = run.journal();
                    let planned = events.of_type("provider.retry")[0]["delay_ms"].as_f64().unwrap_or(0.0) * scale;
                    let observed = journal[1].received_at_ms - journal[0].finished_at_ms.unwrap_or(0.0);
                    let error = (observed - planned).abs();
                    errors.push(error);
                    total += Duration::from_secs_f64(error / 1000.0);
                }
                total
            }
        })
    });
    group.finish();
    errors.report("backoff/planned_vs_observed_gap (real ms)");
}
