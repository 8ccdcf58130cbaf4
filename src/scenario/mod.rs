//! Scenarios: the scripted behaviour of a run (model, loading, validation, catalogue).

pub mod catalogue;
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
pub mod embedded;
pub(crate) mod routing;
