//! The one integration-test binary (one link step keeps CI fast): `suite/` holds a module per
//! topic, `kit/` what they share.

mod kit;
mod suite;
