//! The catalogue and the features compiled into the binary (see `build.rs`).

use super::catalogue::Catalogue;
use super::error::ScenarioError;
use super::load::from_toml_str;

include!(concat!(env!("OUT_DIR"), "/embedded_catalogue.rs"));

/// The features compiled into the binary, as (file name, contents).
pub fn embedded_features() -> &'static [(&'static str, &'static str)] {
    EMBEDDED_FEATURES
}

/// The embedded catalogue. The files were validated by the test suite when the binary was
/// built, so an error here means the build skipped its tests; it still names the file.
pub fn embedded_catalogue() -> Result<Catalogue, ScenarioError> {
    let mut catalogue = Catalogue::default();
    for (file, text) in EMBEDDED {
        catalogue.insert(from_toml_str(&format!("scenarios/{file} (embedded)"), text)?);
    }
    Ok(catalogue)
}
