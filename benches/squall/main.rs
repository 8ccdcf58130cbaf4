//! squall's benches (criterion, one binary): `cargo bench --bench squall [-- FILTER]`.
//!
//! - `backoff` — the cost of schedules and decisions; planned vs observed retry gaps
//! - `time_to_degrade` — each fault profile × policy: simulated time at production values vs
//!   the analytic bound, and wall time at a scaled clock
//! - `server_throughput` — squall vs wiremock-rs serving the same SSE body; fault overhead
//! - `fault_precision` — how close stalls, event delays and header delays land to target
//!
//! Figures and how they were obtained: `BENCHMARKS.md`.

mod backoff;
mod common;
mod degrade;
mod precision;
mod throughput;

use criterion::Criterion;

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    backoff::benches(&mut criterion);
    degrade::benches(&mut criterion);
    throughput::benches(&mut criterion);
    precision::benches(&mut criterion);
    criterion.final_summary();
}
