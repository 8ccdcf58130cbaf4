//! Scale: `squall serve` (a process of its own) holding 10,000 streams open at once with chaos
//! and a quota active on their run; the server's memory per open stream, from its VmRSS before
//! and after they open; and, while they are held, how close a stall and scheduled event delays
//! on further streams land to their targets (criterion's time per iteration is that error, as
//! in `fault_precision`; p50/p99 are printed).

use std::cell::OnceCell;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion};
use futures_util::stream::{self, StreamExt as _};
use squall::scenario::load::from_toml_str;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::runtime::Runtime;

use super::common::{runtime, Errors};
use super::precision::{timed_request, STREAM_DELAYS};
use super::server_cpu::{spawn_squall, ServerProcess};

/// Streams held open at once, where the server's descriptor limit allows: each costs it one,
/// its socket (the hang-up watch uses the socket's own registration, docs/hardening.md), so
/// 10,000 fit within the usual `nofile` limit of 20,000.
pub(crate) const HELD: usize = 10_000;

/// Descriptors the server keeps for itself (listener, runtimes, standard streams).
const SERVER_OWN_DESCRIPTORS: usize = 64;

/// Connections opened side by side while the held streams are being opened.
const OPENING_AT_ONCE: usize = 200;

/// The held streams' run: every answer stalls ten minutes after its first event; chaos takes 30 %
/// of the requests and stalls them at a drawn point (so that they stay open too); a quota far
/// above the load admits every request, asking its buckets each time.
const HELD_RUN: &str = r#"{"time_scale": 1, "scenario": {"name": "held",
  "attempts": [{"stream": {"text": "held open by squall"}, "fault": {"kind": "stall", "after_events": 1, "ms": 600000}}],
  "chaos": {"seed": 7, "rate": 0.3, "mix": {"stall": 1}},
  "quota": {"requests_per_minute": 1000000, "tokens_per_minute": 1000000000}}}"#;

/// The server's soft limit on open descriptors.
fn nofile_limit(pid: u32) -> usize {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).expect("the server's /proc/<pid>/limits");
    let line = limits.lines().find(|l| l.starts_with("Max open files")).expect("Max open files");
    line.split_whitespace().nth(3).and_then(|soft| soft.parse().ok()).unwrap_or(usize::MAX)
}

/// The server's resident memory, KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the server's /proc/<pid>/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .expect("VmRSS")
}

/// A streamed request on a raw connection, read until its first event has arrived: the stream
/// is open and the connection held by the caller.
async fn open_stream(addr: &str, path: &str) -> TcpStream {
    let body = r#"{"model": "m", "input": "x", "stream": true}"#;
    let mut stream = TcpStream::connect(addr).await.expect("connects");
    let head = format!(
        "POST {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.expect("request sent");
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    while !seen.windows(5).any(|w| w == b"data:") {
        let n = stream.read(&mut buffer).await.expect("reads");
        assert!(n > 0, "the stream ended before its first event: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buffer[..n]);
    }
    stream
}

/// Create a run from `request` (admin API JSON); its base URL.
async fn create_run(origin: &str, request: &str) -> String {
    let reply = reqwest::Client::new().post(format!("{origin}/__squall/runs")).body(request.to_owned()).send().await;
    let run: serde_json::Value = reply.expect("the run is created").json().await.expect("a run");
    run["base_url"].as_str().unwrap_or_else(|| panic!("no base_url in {run}")).to_owned()
}

/// The server holding [`HELD`] streams, and the streams.
struct Held {
    server: ServerProcess,
    streams: Vec<TcpStream>,
}

/// Start `squall serve`, open [`HELD`] streams on it and report its memory per open stream.
fn hold(rt: &Runtime) -> Held {
    let server = spawn_squall();
    let origin = server.url.clone();
    let addr = origin.trim_start_matches("http://").to_owned();
    let pid = server.child.id();
    let held_base = rt.block_on(create_run(&origin, HELD_RUN));
    let held_path = format!("{}/responses", held_base.trim_start_matches(&origin));
    let open_many = |count: usize| {
        rt.block_on(
            stream::iter(0..count)
                .map(|_| open_stream(&addr, &held_path))
                .buffer_unordered(OPENING_AT_ONCE)
                .collect::<Vec<_>>(),
        )
    };
    // Warm up: held streams opened and dropped, so that the baseline has the server's buffers
    // and threads, not just its start.
    drop(open_many(OPENING_AT_ONCE));
    std::thread::sleep(Duration::from_millis(500));
    let before = rss_kib(pid);
    let started = Instant::now();
    let count = HELD.min(nofile_limit(pid).saturating_sub(SERVER_OWN_DESCRIPTORS + OPENING_AT_ONCE));
    if count < HELD {
        println!("scale: the server's nofile limit ({}) holds {count} streams, not {HELD}", nofile_limit(pid));
    }
    let streams = open_many(count);
    let opened_in = started.elapsed();
    std::thread::sleep(Duration::from_millis(500));
    let after = rss_kib(pid);
    let per_stream = after.saturating_sub(before) as f64 / streams.len() as f64;
    println!(
        "scale: {} streams held (opened in {:.1} s); server VmRSS {before} KiB before, {after} KiB with them open: {per_stream:.1} KiB per open stream",
        streams.len(),
        opened_in.as_secs_f64()
    );
    Held { server, streams }
}

pub(crate) fn benches(c: &mut Criterion) {
    let rt = runtime();
    // Opened the first time a bench of this group runs (not when a filter leaves them out).
    let held: OnceCell<Held> = OnceCell::new();
    let client = reqwest::Client::new();
    let mut group = c.benchmark_group("scale");
    group.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(4));
    for (name, toml, target_ms, observe) in STREAM_DELAYS {
        let errors = Errors::default();
        let id = BenchmarkId::new(format!("{name}_beside_held_streams"), format!("target_{target_ms}ms"));
        group.bench_with_input(id, &target_ms, |b, &target| {
            let held = held.get_or_init(|| hold(&rt));
            let scenario = from_toml_str("delays", &format!("name = \"delays\"\n{toml}")).expect("a delay scenario");
            let request = serde_json::json!({ "scenario": scenario }).to_string();
            let url = format!("{}/responses", rt.block_on(create_run(&held.server.url, &request)));
            b.to_async(&rt).iter_custom(|iterations| {
                let (client, errors, url) = (&client, &errors, &url);
                async move {
                    let mut total = Duration::ZERO;
                    for _ in 0..iterations {
                        let (headers, arrivals) = timed_request(client, url).await;
                        let error = (observe(headers, &arrivals) - target).abs();
                        errors.push(error);
                        total += Duration::from_secs_f64(error / 1000.0);
                    }
                    total
                }
            })
        });
        errors.report(&format!("scale/{name} beside the held streams"));
    }
    group.finish();
    if let Some(held) = held.get() {
        println!("scale: {} streams still held at the end", held.streams.len());
    }
}
