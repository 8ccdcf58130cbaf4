//! Why a suite run, a soak or a report could not be done: the one error type at the crate's
//! edge (the command line wraps it; a library user matches on it). Each names the file, the
//! setting or the resource at fault.

use crate::cases::CasesError;
use crate::timing::CannotStart;

/// Why a suite run, a soak or a report could not be done.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SuiteError {
    /// What was asked for cannot be done: a features directory that is not one, a tag
    /// expression that does not parse, a soak of no runs; the message names the setting.
    #[error("{0}")]
    Usage(String),
    /// The features do not read as cases.
    #[error(transparent)]
    Cases(#[from] CasesError),
    /// The implementation did nothing in any calibration run.
    #[error(transparent)]
    CannotStart(#[from] CannotStart),
    /// A file or directory that cannot be read, created or written, or a resource the machine
    /// refused (a runtime, a thread, the server's socket): `what` names it.
    #[error("{what}: {error}")]
    Io {
        /// What could not be done, naming the file or resource.
        what: String,
        /// Why.
        error: std::io::Error,
    },
    /// The suite's own machinery failed (a thread that ended without an outcome).
    #[error("{0}")]
    Harness(String),
}

impl SuiteError {
    /// An I/O failure at `what`, for `map_err`.
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> SuiteError {
        let what = what.into();
        move |error| SuiteError::Io { what, error }
    }
}
