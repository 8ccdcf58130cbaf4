//! The `squall` binary of this build.

use std::path::Path;
use std::process::{Command, Output};

use super::suites::{root, take_turn_blocking};

/// Its path, for a command line of one's own (`'…/squall' reference-iut`).
pub(crate) fn squall_bin() -> &'static str {
    env!("CARGO_BIN_EXE_squall")
}

/// A command that runs it.
pub(crate) fn squall() -> Command {
    Command::new(squall_bin())
}

/// `squall run ARGS --report-dir DIR` from the repository's root, taking its turn on the machine
/// as every whole suite run does.
pub(crate) fn squall_run(args: &[&str], dir: &Path) -> Output {
    let _one = take_turn_blocking();
    squall().arg("run").args(args).arg("--report-dir").arg(dir).current_dir(root()).output().expect("squall runs")
}
