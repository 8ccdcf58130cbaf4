//! The command line's integration tests in one binary (one link step keeps CI fast): `suite/`
//! holds a module per topic, `kit/` what they share.

mod kit;
mod suite;
