//! Where the feature files come from: a directory, `./features` when it exists, or the
//! features compiled into the binary (written to a temporary directory for cucumber).

use std::path::{Path, PathBuf};

use crate::SuiteError;

include!(concat!(env!("OUT_DIR"), "/embedded_features.rs"));

/// The features compiled into the binary from `features/`, as (file name, contents).
pub fn embedded_features() -> &'static [(&'static str, &'static str)] {
    EMBEDDED_FEATURES
}

/// A features directory that lives as long as the run needs it.
#[derive(Debug)]
pub enum FeaturesDir {
    /// A directory of one's own.
    Path(PathBuf),
    /// The features compiled into squall, written out to a temporary directory.
    Embedded(tempfile::TempDir),
}

impl FeaturesDir {
    /// Where the `.feature` files are.
    pub fn path(&self) -> &Path {
        match self {
            FeaturesDir::Path(path) => path,
            FeaturesDir::Embedded(dir) => dir.path(),
        }
    }

    /// How to name it in messages.
    pub fn describe(&self) -> String {
        match self {
            FeaturesDir::Path(path) => path.display().to_string(),
            FeaturesDir::Embedded(_) => "the features built into squall".to_owned(),
        }
    }
}

/// The features to run: `explicit` when given (it must be a directory), else `./features`
/// when it exists, else the ones compiled in.
pub fn features_dir(explicit: Option<&Path>) -> Result<FeaturesDir, SuiteError> {
    match explicit {
        Some(dir) if dir.is_dir() => Ok(FeaturesDir::Path(dir.to_owned())),
        Some(dir) => Err(SuiteError::Usage(format!("--features {}: not a directory", dir.display()))),
        None if Path::new("features").is_dir() => Ok(FeaturesDir::Path(PathBuf::from("features"))),
        None => {
            let dir = tempfile::Builder::new()
                .prefix("squall-features-")
                .tempdir()
                .map_err(SuiteError::io("cannot create a temporary directory"))?;
            for (name, text) in embedded_features() {
                std::fs::write(dir.path().join(name), text)
                    .map_err(SuiteError::io(format!("cannot write the embedded feature {name}")))?;
            }
            Ok(FeaturesDir::Embedded(dir))
        }
    }
}
