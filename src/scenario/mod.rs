//! Scenarios: the scripted behaviour of a run (model, loading, validation, catalogue).
//!
//! The model's types live in their own module, `crate::scenario_model` (published here), which
//! depends on nothing else of squall's: the wire renders attempts from the
//! model alone, while loading and validating a scenario measure its faults against the wire's
//! streams — so scenario depends on the wire and the wire only on the model, never back.

mod catalogue;
// Public for the benches' timing of the decisions, hidden: what outside code scripts against is
// the scenario format, not the functions that apply it.
#[doc(hidden)]
pub mod conditions;
mod error;
pub(crate) mod headers;
pub mod limits;
pub mod load;
mod rendered_size;
pub mod validate;

/// The scenario model: what a scripted run tells the server to do, attempt by attempt (the
/// public scenario format, `docs/scenarios.md`).
pub use crate::scenario_model::*;
pub use catalogue::Catalogue;
pub use error::{FieldPath, PathSegment, ScenarioError};
pub mod builder;
pub(crate) mod routing;
