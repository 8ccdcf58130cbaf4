//! The command line's integration tests in one binary (one link step keeps CI fast): `suite/`
//! holds a module per topic, `mostly_waiting/` the suite-wide tests that mostly wait (named to
//! start first), `kit/` what they share.

mod kit;
mod mostly_waiting;
mod suite;
