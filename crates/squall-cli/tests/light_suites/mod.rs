//! Whole suites that use little CPU: they mostly wait, at a time scale they hold or at real
//! time. Their test group (`.config/nextest.toml`) runs them one at a time, beside
//! `one_at_a_time`, whose cores they leave alone.

mod ci_recipe; // the sample CI workflow judges something in every job (SDKs)
mod conformance_suite; // checks above the declared level are n/a; cucumber's JSON is written
mod drawn_waits; // draws at once in the spare slots; a linear full-jitter backoff fails beyond 30 runs
mod mutation_matrix; // each bug of the independent implementation fails exactly its requirements
