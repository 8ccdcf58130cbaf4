//! The scenario catalogue compiled into the binary, by its public name (the catalogue itself
//! lives in [`super::catalogue`]; the compiled-in features are the suite's).

use super::catalogue::Catalogue;
use super::error::ScenarioError;

/// The embedded catalogue: [`Catalogue::embedded`].
pub fn embedded_catalogue() -> Result<Catalogue, ScenarioError> {
    Catalogue::embedded()
}
