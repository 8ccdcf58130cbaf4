//! Paired rounds (run by hand): two sides measured in turn — A then B, B then A, … — so a drift
//! of the machine (frequency, a neighbour's load) lands on both sides of each pair, and neither
//! side always goes first. Each round's figure is the server's own CPU per request, as in
//! `server_cpu`; the verdict is the median of the per-round ratios, with its spread, instead of
//! two medians taken minutes apart.
//!
//! - `cargo bench --bench squall -- --paired`: squall and wiremock-rs, each in a process of its own;
//! - `cargo bench --bench squall -- --paired-http2`: one squall process, loaded over HTTP/1.1 and
//!   over HTTP/2 (h2c, one connection per client as over HTTP/1.1);
//! - `cargo bench --bench squall -- --paired-build PATH`: this build's `squall serve` and the one
//!   at PATH (another commit's, built apart): what a change costs or saves.

use super::common::runtime;
use super::server_cpu::{
    server_cpu, server_cpu_http2, squall_server, squall_server_of, squall_server_with, warm_up_and_compare,
    wiremock_server, ServerProcess,
};

/// The argument that runs the paired comparison with wiremock-rs.
pub(crate) const PAIRED: &str = "--paired";

/// The argument that runs the paired comparison of HTTP/2 with HTTP/1.1.
pub(crate) const PAIRED_HTTP2: &str = "--paired-http2";

/// The argument that runs the paired comparison of squall with its metrics and without.
pub(crate) const PAIRED_METRICS: &str = "--paired-metrics";

/// The argument that runs the paired comparison of this build with another (its path follows).
pub(crate) const PAIRED_BUILD: &str = "--paired-build";

/// Pairs per connection count, and requests per side of a pair.
const PAIRS: usize = 21;
const REQUESTS: [(u64, u64); 2] = [(1, 2_000), (16, 4_000)];

fn per_request_us(rt: &tokio::runtime::Runtime, server: &ServerProcess, connections: u64, requests: u64) -> f64 {
    rt.block_on(server_cpu(server, requests, connections)).as_secs_f64() * 1e6 / requests as f64
}

fn per_request_us_http2(rt: &tokio::runtime::Runtime, server: &ServerProcess, connections: u64, requests: u64) -> f64 {
    rt.block_on(server_cpu_http2(server, requests, connections)).as_secs_f64() * 1e6 / requests as f64
}

/// The value at quantile `q` (0..=1) of `values`, nearest rank.
fn quantile(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// squall against wiremock-rs on the same bytes.
pub(crate) fn paired() {
    let rt = runtime();
    let (squall, wiremock) = (squall_server(&rt, None), wiremock_server());
    warm_up_and_compare(&rt, &[&squall], &wiremock);
    println!("server CPU per request, {PAIRS} paired rounds (squall and wiremock-rs, taking turns to go first)");
    compare(
        ("squall", &|c, r| per_request_us(&rt, &squall, c, r)),
        ("wiremock", &|c, r| per_request_us(&rt, &wiremock, c, r)),
    );
}

/// One squall process over HTTP/2 against the same over HTTP/1.1.
pub(crate) fn paired_http2() {
    let rt = runtime();
    let squall = squall_server(&rt, None);
    per_request_us(&rt, &squall, 4, 10_000);
    per_request_us_http2(&rt, &squall, 4, 10_000);
    println!("squall's CPU per request, {PAIRS} paired rounds (HTTP/2 and HTTP/1.1, taking turns to go first)");
    compare(
        ("HTTP/2", &|c, r| per_request_us_http2(&rt, &squall, c, r)),
        ("HTTP/1.1", &|c, r| per_request_us(&rt, &squall, c, r)),
    );
}

/// squall counting its metrics against the same build started with `--no-metrics`.
pub(crate) fn paired_metrics() {
    let rt = runtime();
    let (counting, not) = (squall_server(&rt, None), squall_server_with(&rt, &["--no-metrics"]));
    for server in [&counting, &not] {
        per_request_us(&rt, server, 4, 10_000);
    }
    println!("server CPU per request, {PAIRS} paired rounds (metrics on and off, taking turns to go first)");
    compare(
        ("metrics", &|c, r| per_request_us(&rt, &counting, c, r)),
        ("none", &|c, r| per_request_us(&rt, &not, c, r)),
    );
}

/// This build's squall against the `squall` binary at `other`.
pub(crate) fn paired_build(other: &str) {
    let rt = runtime();
    let (this, that) = (squall_server(&rt, None), squall_server_of(&rt, std::path::Path::new(other)));
    for server in [&this, &that] {
        per_request_us(&rt, server, 4, 10_000);
    }
    println!("server CPU per request, {PAIRS} paired rounds (this build and {other}, taking turns to go first)");
    compare(("this", &|c, r| per_request_us(&rt, &this, c, r)), ("other", &|c, r| per_request_us(&rt, &that, c, r)));
}

/// One side of a pair: its name, and its server's CPU per request in µs for a round of
/// (connections, requests).
type Side<'a> = (&'a str, &'a dyn Fn(u64, u64) -> f64);

/// Print, per connection count, both sides' median CPU per request and the per-round ratio
/// A / B: median and interquartile range, and how many rounds A cost no more. The sides take
/// turns going first.
fn compare((a_name, a): Side<'_>, (b_name, b): Side<'_>) {
    let (a_head, b_head) = (format!("{a_name} µs"), format!("{b_name} µs"));
    println!("{:>5} {a_head:>12} {b_head:>14} {:>22} {:>12}", "conn", "ratio median [IQR]", "A ≤ B");
    for (connections, requests) in REQUESTS {
        let (mut ours, mut theirs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for pair in 0..PAIRS {
            // Each side goes first in every other pair: the first of a pair pays about 3 % at
            // one connection whatever it serves (an A/A run, BENCHMARKS.md), so neither carries it.
            let (a_us, b_us) = if pair % 2 == 0 {
                let a_us = a(connections, requests);
                (a_us, b(connections, requests))
            } else {
                let b_us = b(connections, requests);
                (a(connections, requests), b_us)
            };
            ours.push(a_us);
            theirs.push(b_us);
            ratios.push(a_us / b_us);
        }
        let wins = ratios.iter().filter(|r| **r <= 1.0).count();
        println!(
            "{connections:>5} {:>12.1} {:>14.1} {:>9.3} [{:.3}–{:.3}] {:>9}/{PAIRS}",
            quantile(&ours, 0.5),
            quantile(&theirs, 0.5),
            quantile(&ratios, 0.5),
            quantile(&ratios, 0.25),
            quantile(&ratios, 0.75),
            wins
        );
    }
}
