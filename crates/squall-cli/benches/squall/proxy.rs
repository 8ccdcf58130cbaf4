//! What the proxy adds (`squall serve --upstream`): two `squall serve` processes, an upstream
//! streaming 50 Responses events and a proxy forwarding to it. criterion's `proxy` group times a
//! request's round trip straight to the upstream and through the proxy (one connection);
//! `-- --proxy` prints, from one run, the p50 of each and what the proxy adds, and the proxy
//! process's own CPU per request (every thread's, as in `server_cpu`) forwarding the upstream's
//! stream against serving the same 50 events itself, with the ratio; with nginx installed, also
//! nginx's CPU forwarding the same stream, side by side with squall's, untouched and counting
//! output deltas for a fault, in alternating rounds.

use std::time::{Duration, Instant};

use criterion::Criterion;

use super::common::{drain, ms, runtime};
use super::same_bytes::{fifty_event_text, WARM_UP_REQUESTS};
use super::server_cpu::{server_cpu, server_cpu_at, spawn_squall_with, squall_server, ServerProcess};

/// Round trips timed for the p50s, alternating direct and proxied.
const LATENCY_SAMPLES: usize = 2_000;

/// Requests per CPU round, and rounds (the median is reported).
const CPU_REQUESTS: u64 = 2_000;
const CPU_ROUNDS: usize = 3;

/// Requests per round and rounds of the side-by-side with nginx: enough for a steady median.
const NGINX_REQUESTS: u64 = 10_000;
const NGINX_ROUNDS: usize = 5;

/// A run created on `server` from `scenario` (the admin API's body), and its `/responses` URL.
fn run_on(rt: &tokio::runtime::Runtime, server: &ServerProcess, scenario: &str) -> String {
    let run: serde_json::Value = rt.block_on(async {
        let reply =
            reqwest::Client::new().post(format!("{}/__squall/runs", server.url)).body(scenario.to_owned()).send().await;
        reply.expect("the run is created").json().await.expect("a run")
    });
    format!("{}/responses", run["base_url"].as_str().expect("base_url"))
}

/// The p50 of `samples` round trips, in ms.
fn p50(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// An upstream, a proxy forwarding to it, and the proxy's two runs.
struct Setup {
    upstream: ServerProcess,
    proxy: ServerProcess,
    /// The proxy's run that forwards everything: its `/responses`.
    forwarded: String,
    /// The proxy's run that serves the upstream's 50 events itself.
    itself: String,
    /// The proxy's run that forwards everything with a fault pending at an output delta the
    /// stream never reaches (a `truncate`, which then ends it cleanly after its last byte):
    /// every event is read to count its deltas.
    counted: String,
}

impl Setup {
    fn new(rt: &tokio::runtime::Runtime) -> Setup {
        let upstream = squall_server(rt, None);
        let base = upstream.url.trim_end_matches("/responses").to_owned();
        let proxy = spawn_squall_with(&["--upstream", &base]);
        let forwarded = run_on(rt, &proxy, r#"{"scenario": {"name": "through", "after": "ok"}}"#);
        let scenario = format!(
            r#"{{"scenario": {{"name": "itself", "attempts": [{{"stream": {{"text": "{}"}}}}]}}}}"#,
            fifty_event_text()
        );
        let itself = run_on(rt, &proxy, &scenario);
        let counted = run_on(
            rt,
            &proxy,
            r#"{"scenario": {"name": "counted", "attempts": [{"fault": {"kind": "truncate", "after_deltas": 1000}}], "after": "repeat_last"}}"#,
        );
        let setup = Setup { upstream, proxy, forwarded, itself, counted };
        rt.block_on(server_cpu(&setup.upstream, WARM_UP_REQUESTS, 4));
        for url in [&setup.forwarded, &setup.itself] {
            rt.block_on(server_cpu_at(setup.proxy.child.id(), url, WARM_UP_REQUESTS, 4));
        }
        let client = reqwest::Client::new();
        let same =
            rt.block_on(async { (drain(&client, &setup.upstream.url).await, drain(&client, &setup.forwarded).await) });
        assert_eq!(same.0, same.1, "the proxy passes the upstream's bytes");
        setup
    }
}

/// criterion's `proxy` group: a round trip straight to the upstream and through the proxy (the
/// servers start the first time one of them runs, not when a filter leaves them out).
pub(crate) fn benches(c: &mut Criterion) {
    let rt = runtime();
    let setup = std::sync::OnceLock::new();
    let client = reqwest::Client::new();
    let mut group = c.benchmark_group("proxy");
    group.sample_size(20).measurement_time(Duration::from_secs(5));
    for through in [false, true] {
        let name = if through { "through_proxy" } else { "direct_from_upstream" };
        group.bench_function(name, |b| {
            let setup: &Setup = setup.get_or_init(|| Setup::new(&rt));
            let url = if through { &setup.forwarded } else { &setup.upstream.url };
            b.to_async(&rt).iter(|| drain(&client, url));
        });
    }
    group.finish();
}

/// The argument that prints the proxy's figures: `cargo bench --bench squall -- --proxy`.
pub(crate) const PROXY_FIGURES: &str = "--proxy";

/// In one run: the round trips' p50 straight to the upstream and through the proxy, and the
/// proxy's own CPU per request forwarding against serving the same stream itself.
pub(crate) fn figures() {
    let rt = runtime();
    let setup = Setup::new(&rt);
    let client = reqwest::Client::new();
    let (mut direct, mut proxied) = (Vec::new(), Vec::new());
    rt.block_on(async {
        for _ in 0..LATENCY_SAMPLES {
            for (url, samples) in [(&setup.upstream.url, &mut direct), (&setup.forwarded, &mut proxied)] {
                let started = Instant::now();
                drain(&client, url).await;
                samples.push(ms(started.elapsed()));
            }
        }
    });
    let (direct, proxied) = (p50(direct), p50(proxied));
    println!(
        "proxy: round trip p50 {direct:.3} ms straight to the upstream, {proxied:.3} ms through the proxy: +{:.3} ms",
        proxied - direct
    );
    let pid = setup.proxy.child.id();
    let per_request = |url: &str| {
        let rounds = (0..CPU_ROUNDS)
            .map(|_| rt.block_on(server_cpu_at(pid, url, CPU_REQUESTS, 1)).as_secs_f64() * 1e6 / CPU_REQUESTS as f64);
        median(rounds.collect())
    };
    let (forwarding, serving) = (per_request(&setup.forwarded), per_request(&setup.itself));
    println!(
        "proxy: its own CPU per request {forwarding:.1} µs forwarding the upstream's 50 events, {serving:.1} µs serving them itself: {:.2}× (median of {CPU_ROUNDS} rounds of {CPU_REQUESTS})",
        forwarding / serving
    );
    against_nginx(&rt, &setup);
}

/// squall's proxy and nginx forwarding the same upstream stream, in alternating rounds of
/// [`NGINX_REQUESTS`] on one connection: each process's own CPU per request (squall's every
/// thread, nginx's one process), untouched and with deltas counted, and the medians' ratios.
fn against_nginx(rt: &tokio::runtime::Runtime, setup: &Setup) {
    let upstream = setup.upstream.url.trim_start_matches("http://");
    let (host, path) = upstream.split_once('/').expect("an upstream URL with a path");
    let Some(nginx) = super::nginx::start(host) else {
        println!("proxy: nginx is not installed (scripts/proxy-vs-nginx.sh installs it): no side-by-side");
        return;
    };
    let through_nginx = format!("{}/{path}", nginx.origin);
    let client = reqwest::Client::new();
    let same = rt.block_on(async { (drain(&client, &setup.upstream.url).await, drain(&client, &through_nginx).await) });
    assert_eq!(same.0, same.1, "nginx passes the upstream's bytes");
    rt.block_on(server_cpu_at(nginx.child.id(), &through_nginx, WARM_UP_REQUESTS, 4));
    rt.block_on(server_cpu_at(setup.proxy.child.id(), &setup.counted, WARM_UP_REQUESTS, 4));
    let cpu = |pid: u32, url: &str| {
        rt.block_on(server_cpu_at(pid, url, NGINX_REQUESTS, 1)).as_secs_f64() * 1e6 / NGINX_REQUESTS as f64
    };
    let (mut nginx_us, mut untouched, mut counted) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..NGINX_ROUNDS {
        nginx_us.push(cpu(nginx.child.id(), &through_nginx));
        untouched.push(cpu(setup.proxy.child.id(), &setup.forwarded));
        counted.push(cpu(setup.proxy.child.id(), &setup.counted));
    }
    let show = |v: &[f64]| v.iter().map(|x| format!("{x:.1}")).collect::<Vec<_>>().join(", ");
    println!("proxy vs nginx, CPU per forwarded request, µs ({NGINX_ROUNDS} alternating rounds of {NGINX_REQUESTS}, 1 connection):");
    println!("  nginx             {}", show(&nginx_us));
    println!("  squall untouched  {}", show(&untouched));
    println!("  squall counting   {}", show(&counted));
    let (n, u, c) = (median(nginx_us), median(untouched), median(counted));
    println!(
        "  medians: nginx {n:.1}, squall untouched {u:.1} ({:.2}× nginx), squall counting deltas {c:.1} ({:.2}× nginx)",
        u / n,
        c / n
    );
}
