//! Paired rounds (run by hand: `cargo bench --bench squall -- --paired`): squall and wiremock-rs,
//! each in a process of its own, measured alternately — squall, wiremock-rs, squall, … — so a
//! drift of the machine (frequency, a neighbour's load) lands on both sides of each pair. Each
//! round's figure is the server's own CPU per request, as in `server_cpu`; the verdict is the
//! median of the per-round ratios, with its spread, instead of two medians taken minutes apart.

use super::common::runtime;
use super::server_cpu::{server_cpu, squall_server, warm_up_and_compare, wiremock_server, ServerProcess};

/// The argument that runs the paired comparison.
pub(crate) const PAIRED: &str = "--paired";

/// Pairs per connection count, and requests per side of a pair.
const PAIRS: usize = 21;
const REQUESTS: [(u64, u64); 2] = [(1, 2_000), (16, 4_000)];

fn per_request_us(rt: &tokio::runtime::Runtime, server: &ServerProcess, connections: u64, requests: u64) -> f64 {
    rt.block_on(server_cpu(server, requests, connections)).as_secs_f64() * 1e6 / requests as f64
}

/// The value at quantile `q` (0..=1) of `values`, nearest rank.
fn quantile(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// Print, per connection count, both servers' median CPU per request and the per-round ratio
/// squall / wiremock-rs: median and interquartile range, and how many rounds squall won.
pub(crate) fn paired() {
    let rt = runtime();
    let (squall, wiremock) = (squall_server(&rt, None), wiremock_server());
    warm_up_and_compare(&rt, &[&squall], &wiremock);
    println!("server CPU per request, {PAIRS} paired rounds (squall, then wiremock-rs, alternately)");
    println!("{:>5} {:>12} {:>14} {:>22} {:>12}", "conn", "squall µs", "wiremock µs", "ratio median [IQR]", "squall ≤");
    for (connections, requests) in REQUESTS {
        let (mut ours, mut theirs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..PAIRS {
            let a = per_request_us(&rt, &squall, connections, requests);
            let b = per_request_us(&rt, &wiremock, connections, requests);
            ours.push(a);
            theirs.push(b);
            ratios.push(a / b);
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
