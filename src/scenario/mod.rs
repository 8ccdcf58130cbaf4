//! Scenarios: the scripted behaviour of a run (model, loading, validation, catalogue).

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
pub mod model;
pub mod validate;

pub use catalogue::Catalogue;
pub use error::{FieldPath, ScenarioError};
pub use model::*;
pub mod builder;
pub(crate) mod routing;
