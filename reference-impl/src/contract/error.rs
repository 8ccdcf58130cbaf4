//! Why the reference could not run a case: the harness's fault — a contract variable missing or
//! malformed, a file it could not read or write — never a verdict on the implementation (a
//! failing run still writes its result). The adapter binary exits 2 on one.

use std::path::PathBuf;

/// A case the reference could not run.
#[derive(Debug, thiserror::Error)]
pub enum CaseError {
    /// A variable of the IUT contract (`docs/iut-contract.md`) is missing or malformed.
    #[error("{name}{}: {expected}", value.as_ref().map(|v| format!("={v}")).unwrap_or_default())]
    Variable {
        /// The variable.
        name: &'static str,
        /// Its value, when it is set.
        value: Option<String>,
        /// What it should be.
        expected: String,
    },
    /// A file the case reads or writes.
    #[error("cannot {action} {}: {source}", path.display())]
    File {
        /// create, read, write or copy.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A mutant's distortion of the case's outputs, or its bad end.
    #[error(transparent)]
    Mutant(#[from] crate::mutants::Distortion),
}

impl CaseError {
    /// `name` is not set.
    pub(crate) fn unset(name: &'static str) -> CaseError {
        CaseError::Variable { name, value: None, expected: "is not set".to_owned() }
    }

    /// `name=value` is not what it should be (`expected` says what it should be).
    pub fn bad(name: &'static str, value: &str, expected: impl Into<String>) -> CaseError {
        CaseError::Variable { name, value: Some(value.to_owned()), expected: expected.into() }
    }

    /// A file operation that failed on `path`.
    pub(crate) fn file(action: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> CaseError {
        let path = path.into();
        move |source| CaseError::File { action, path, source }
    }
}
