//! Whole suites that use less than a core: they mostly wait, at a time scale they hold, on
//! stalled streams, or on one case at a time. Their test group (`.config/nextest.toml`) runs
//! them one at a time, beside `one_at_a_time`, whose cores they leave to it.

mod ci_recipe; // the sample CI workflow judges something in every job (SDKs)
mod committed_reports; // the reference's and the matrix clients' kept reports agree with fresh runs (SDKs)
mod conformance_suite; // checks above the declared level are n/a; cucumber's JSON is written
mod drawn_waits; // draws at once in the spare slots; a linear full-jitter backoff fails beyond 30 runs
mod mutation_matrix; // each bug of the independent implementation fails exactly its requirements
pub(crate) mod service; // through the service, squall run's verdicts on every case
