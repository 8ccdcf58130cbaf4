//! A herd judged: the suite (calibration included) running `features/HERD-storms.feature`'s
//! outage case — an outage for the whole run, every client giving up after 7 attempts — with 50
//! in-process reference clients at the default time scale, as `squall run --herd 50` would.

use std::path::Path;
use std::time::{Duration, Instant};

use criterion::Criterion;
use squall::scenario::Catalogue;
use squall_suite::iut::Iut;
use squall_suite::{run_suite, SuiteConfig, Verdict};

use super::common::runtime;

/// Clients in the herd.
const HERD: u32 = 50;

/// The scenario of the herd features judged here, by its title.
const OUTAGE_CASE: &str = "Scenario: Through an outage longer than any retry budget";

/// A features directory holding only the outage case (its tags, steps and the feature's tag).
fn outage_feature() -> tempfile::TempDir {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let text = std::fs::read_to_string(root.join("features/HERD-storms.feature")).expect("the herd features");
    let lines: Vec<&str> = text.lines().collect();
    let title = lines.iter().position(|l| l.trim_start().starts_with(OUTAGE_CASE)).expect("the outage case");
    let end = lines[title..].iter().position(|l| l.trim().is_empty()).map_or(lines.len(), |n| title + n);
    let case = lines[title - 1..end].join("\n");
    let dir = tempfile::tempdir().expect("a features directory");
    std::fs::write(
        dir.path().join("herd-outage.feature"),
        format!("@herd\nFeature: a herd through an outage\n\n{case}\n"),
    )
    .expect("the feature");
    dir
}

pub(crate) fn benches(c: &mut Criterion) {
    let rt = runtime();
    let features = outage_feature();
    let catalogue = Catalogue::load_dir(&Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("scenarios"))
        .expect("catalogue");
    let mut config = SuiteConfig::new(Iut::Reference { mutant: None }, features.path().to_owned(), catalogue);
    config.herd = HERD;
    let mut group = c.benchmark_group("herd");
    group.sample_size(10).warm_up_time(Duration::from_millis(100)).measurement_time(Duration::from_secs(30));
    group.bench_function(format!("{HERD}_reference_clients_through_an_outage_judged"), |b| {
        b.to_async(&rt).iter_custom(|iterations| {
            let config = &config;
            async move {
                let started = Instant::now();
                for _ in 0..iterations {
                    let outcome = run_suite(config).await.expect("the suite runs");
                    assert_eq!(outcome.cases.len(), 1, "the outage case alone");
                    assert_eq!(outcome.cases[0].verdict, Verdict::Pass, "{:?}", outcome.cases[0].checks);
                }
                started.elapsed()
            }
        })
    });
    group.finish();
}
