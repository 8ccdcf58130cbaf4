//! The run-wide conditions' decision for one model request, as the server asks it before a
//! track answers: the outage windows (one full, one ramping), the quota's two token buckets, and
//! chaos's draw — each request at a new place (herd client, attempt) and a later moment. Then the
//! same with the quota's rate-limit headers rendered, as every reply under a quota carries them.
//! `cargo bench --bench squall -- run_conditions`: these are the server's own functions, public
//! but hidden from the docs for this.

use std::hint::black_box;
use std::time::{Duration, SystemTime};

use criterion::Criterion;
use squall::journal::Api;
use squall::scenario::conditions::{chaos_taking, outage_taking, Place};
use squall::scenario::{Attempt, Chaos, Outage, Quota};
use squall::server::quota::{Admission, QuotaBuckets};

/// What one request meets: two outages, a quota and chaos, as a storm scenario would have them.
struct Conditions {
    outages: Vec<Outage>,
    quota: QuotaBuckets,
    chaos: Chaos,
}

fn conditions() -> Conditions {
    let outages = vec![
        Outage::between(40_000, 80_000, Attempt::status(503)),
        Outage::between(120_000, 180_000, Attempt::status(529)).ramp(1.0, 0.0, 7),
    ];
    let quota = Quota { requests_per_minute: Some(600), tokens_per_minute: Some(1_000_000) };
    let mix = [("429", 1), ("503", 1), ("reset", 1), ("eof", 1), ("truncate", 1), ("stall", 1)];
    let chaos = Chaos { seed: Some(42), rate: 0.3, mix: mix.iter().map(|(k, w)| ((*k).to_owned(), *w)).collect() };
    Conditions { outages, quota: QuotaBuckets::new(&quota), chaos }
}

/// Request `n`'s decision: whether an outage takes it, what the quota says, what chaos draws.
fn decide(conditions: &Conditions, n: u64) -> (bool, Admission, bool) {
    let place = Place::new("default", (n % 7) as u32).of_client(Some((n % 50) as u32));
    let policy_ms = (n % 200_000) as f64;
    let outage = outage_taking(&conditions.outages, policy_ms, place).is_some();
    let admission = conditions.quota.admit(policy_ms, 120);
    let chaos = chaos_taking(&conditions.chaos, 42, place).is_some();
    (outage, admission, chaos)
}

pub(crate) fn benches(c: &mut Criterion) {
    let conditions = conditions();
    let mut group = c.benchmark_group("run_conditions");
    group.measurement_time(Duration::from_secs(3));
    let mut n = 0u64;
    group.bench_function("decision", |b| {
        b.iter(|| {
            n += 1;
            black_box(decide(&conditions, black_box(n)))
        })
    });
    group.bench_function("decision_and_rate_limit_headers", |b| {
        b.iter(|| {
            n += 1;
            let (outage, admission, chaos) = decide(&conditions, black_box(n));
            black_box((outage, admission.headers(Api::Responses, SystemTime::now()), chaos))
        })
    });
    group.finish();
}
