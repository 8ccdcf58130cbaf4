//! Scenarios: the scripted behaviour of a run (model, loading, validation, catalogue).
//!
//! The model's types live in their own module, `crate::scenario_model` (published here as
//! [`model`]), which depends on nothing else of squall's: the wire renders attempts from the
//! model alone, while loading and validating a scenario measure its faults against the wire's
//! streams — so scenario depends on the wire and the wire only on the model, never back.

pub mod catalogue;
// Public only with the `internals` feature, for the benches' decision timing: what outside code
// scripts against is the scenario format, not the functions that apply it.
#[cfg(feature = "internals")]
pub mod conditions;
#[cfg(not(feature = "internals"))]
#[allow(unreachable_pub)]
pub(crate) mod conditions;
pub mod error;
pub(crate) mod headers;
pub mod limits;
pub mod load;
/// The scenario model: what a scripted run tells the server to do, attempt by attempt (the
/// public scenario format, `docs/scenarios.md`).
pub mod model {
    pub use crate::scenario_model::*;
}
pub mod validate;

pub use catalogue::Catalogue;
pub use error::{FieldPath, ScenarioError};
pub use model::*;
pub mod builder;
pub(crate) mod routing;
