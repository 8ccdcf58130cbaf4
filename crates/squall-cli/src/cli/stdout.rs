//! Standard output for the command line, when the reader may go away
//! (`squall scenarios list | head -1`): writes return the error instead of panicking, and a
//! broken pipe ends the command quietly with exit 0.

use std::fmt::Display;
use std::io::Write;

/// Write `text` and a newline to standard output.
pub(crate) fn line(text: impl Display) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()
}

/// Whether `error` is standard output's reader having gone away.
pub(crate) fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .any(|cause| cause.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe))
}
