//! squall's benches (criterion, one binary): `cargo bench --bench squall [-- FILTER]`.
//!
//! - `backoff` — the cost of schedules and decisions; planned vs observed retry gaps
//! - `time_to_degrade` — each fault profile × policy: simulated time at production values vs
//!   the analytic bound, and wall time at a scaled clock
//! - `server_throughput` — squall vs wiremock-rs serving the same SSE body; fault overhead
//! - `fault_precision` — how close stalls, event delays and header delays land to target
//! - `server_cpu` — the server process's own CPU per request, squall vs wiremock-rs
//! - `proxy` — what `squall serve --upstream` adds: round trip and the proxy's own CPU
//! - `scale` — 10,000 streams held open with chaos and a quota: memory per stream, delays
//! - `herd` — 50 reference clients through an outage, judged
//! - `run_conditions` — the outage/quota/chaos decision
//! - by hand: `-- --paired` (squall and wiremock-rs in alternating rounds, ratio per pair),
//!   `-- --paired-http2` (squall over HTTP/2 and over HTTP/1.1, the same way), `-- --paired-build
//!   PATH` (this build against another commit's squall), `-- --paired-metrics` (with and without
//!   `/metrics`' counting) and
//!   `crates/squall-cli/benches/aimock.sh` (aimock side by side)
//!
//! Figures and how they were obtained: `BENCHMARKS.md`.

mod aimock;
mod backoff;
mod common;
mod conditions;
mod degrade;
mod herd;
mod nginx;
mod paired;
mod precision;
mod proxy;
mod same_bytes;
mod scale;
mod server_cpu;
mod throughput;

use criterion::Criterion;

fn main() {
    // The wiremock-rs server of `server_cpu` runs in a process of its own: this binary.
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some(server_cpu::SERVE_WIREMOCK) => return server_cpu::serve_wiremock(),
        // By hand, through crates/squall-cli/benches/aimock.sh.
        // By hand: squall and wiremock-rs measured alternately, ratios per pair.
        Some(paired::PAIRED) => return paired::paired(),
        // By hand: squall over HTTP/2 and over HTTP/1.1, alternately.
        Some(paired::PAIRED_HTTP2) => return paired::paired_http2(),
        // By hand: squall with its metrics and without, alternately.
        Some(paired::PAIRED_METRICS) => return paired::paired_metrics(),
        // By hand: this build's squall and another build's, alternately.
        Some(paired::PAIRED_BUILD) => {
            return paired::paired_build(args.get(2).expect("the path of the other build's squall binary"));
        }
        // By hand: the proxy's added round trip and CPU, from one run.
        Some(proxy::PROXY_FIGURES) => return proxy::figures(),
        Some(aimock::AIMOCK_SIDE_BY_SIDE) => {
            return aimock::side_by_side(args.get(2).expect("the path of aimock's dist/cli.js"));
        }
        _ => {}
    }
    let mut criterion = Criterion::default().configure_from_args();
    backoff::benches(&mut criterion);
    degrade::benches(&mut criterion);
    throughput::benches(&mut criterion);
    precision::benches(&mut criterion);
    server_cpu::benches(&mut criterion);
    proxy::benches(&mut criterion);
    scale::benches(&mut criterion);
    herd::benches(&mut criterion);
    conditions::benches(&mut criterion);
    criterion.final_summary();
}
