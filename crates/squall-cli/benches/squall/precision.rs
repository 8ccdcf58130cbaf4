//! Fault precision: how close a scripted stall, event delay and header delay land to their
//! targets, as a client measures them. Each iteration's |observed − target| is recorded;
//! criterion's time per iteration is that error, and p50/p99 are printed after each bench.

use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion};
use futures_util::StreamExt;

use super::common::{ms, runtime, scripted, send_streamed, server, Errors};
use squall::clock::TimeScale;

/// Arrival times of body chunks, relative to the request being sent; and the headers' arrival.
pub(super) async fn timed_request(client: &reqwest::Client, url: &str) -> (Duration, Vec<Duration>) {
    let started = Instant::now();
    let response = send_streamed(client, url).await;
    let headers_at = started.elapsed();
    let mut body = response.bytes_stream();
    let mut arrivals = Vec::new();
    while let Some(Ok(_)) = body.next().await {
        arrivals.push(started.elapsed());
    }
    (headers_at, arrivals)
}

/// What the client measured (headers arrival, chunk arrivals) → the quantity to compare, ms.
pub(super) type Observe = fn(Duration, &[Duration]) -> f64;

/// The delays a stream schedules: a stall and event delays (name, scenario attempts, target ms,
/// what to compare). `scale` measures them again beside 10,000 held streams.
pub(super) const STREAM_DELAYS: [(&str, &str, f64, Observe); 2] = [
    // The longest gap between chunks is the stall.
    (
        "stall_20ms_after_3_events",
        "[[attempts]]\nstream = { text = \"a b c d\" }\nfault = { kind = \"stall\", after_events = 3, ms = 20 }\n",
        20.0,
        |_, arrivals| arrivals.windows(2).map(|w| ms(w[1] - w[0])).fold(0.0, f64::max),
    ),
    // 9 gaps of 5 ms between the 10 events of a 2-word reply.
    (
        "event_delay_5ms_x9",
        "[[attempts]]\nevent_delay_ms = 5\nstream = { text = \"a b\" }\n",
        45.0,
        |headers, arrivals| arrivals.last().map_or(0.0, |last| ms(*last - headers)),
    ),
];

pub(crate) fn benches(c: &mut Criterion) {
    let rt = runtime();
    let server = rt.block_on(server());
    let client = reqwest::Client::new();
    let mut group = c.benchmark_group("fault_precision");
    group.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(4));
    // The same request without any delay: what a client waits anyway (request, parsing, reply).
    let baseline = rt.block_on(async {
        let (base_url, _run) = scripted(&server, "[[attempts]]\n", TimeScale::REAL);
        let mut samples = Vec::new();
        for _ in 0..50 {
            samples.push(ms(timed_request(&client, &format!("{base_url}/responses")).await.0));
        }
        samples.sort_by(f64::total_cmp);
        samples[samples.len() / 2]
    });
    println!("fault_precision: a request without delay takes {baseline:.3} ms to its headers (median of 50); header delays are judged net of it");
    let header_delay: (&str, &str, f64, Observe) =
        ("header_delay_30ms", "[[attempts]]\ndelay_ms = 30\n", 30.0, |headers, _| ms(headers));
    for (name, toml, target_ms, observe) in STREAM_DELAYS.into_iter().chain([header_delay]) {
        let errors = Errors::default();
        group.bench_with_input(BenchmarkId::new(name, format!("target_{target_ms}ms")), &target_ms, |b, &target| {
            b.to_async(&rt).iter_custom(|iterations| {
                let (server, client, errors, baseline) = (&server, &client, &errors, baseline);
                async move {
                    let mut total = Duration::ZERO;
                    for _ in 0..iterations {
                        let (base_url, _run) = scripted(server, toml, TimeScale::REAL);
                        let (headers, arrivals) = timed_request(client, &format!("{base_url}/responses")).await;
                        let overhead = if name.starts_with("header_delay") { baseline } else { 0.0 };
                        let error = (observe(headers, &arrivals) - overhead - target).abs();
                        errors.push(error);
                        total += Duration::from_secs_f64(error / 1000.0);
                    }
                    total
                }
            })
        });
        errors.report(&format!("fault_precision/{name}"));
    }
    group.finish();
}
