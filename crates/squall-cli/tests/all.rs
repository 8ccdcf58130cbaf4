//! The command line's integration tests in one binary (one link step keeps CI fast). The
//! top-level modules are the test groups `.config/nextest.toml` declares:
//! `suite/` holds a module per topic, its tests run side by side; `one_at_a_time/` the tests
//! that need the machine's cores (whole suites, load, precise timing), one at a time;
//! `light_suites/` whole suites that use little CPU, one at a time beside those;
//! `mostly_waiting/` the tests that mostly wait on a hang or on real time, several at once;
//! `kit/` what they share.

mod kit;
mod light_suites;
mod mostly_waiting;
mod one_at_a_time;
mod suite;
