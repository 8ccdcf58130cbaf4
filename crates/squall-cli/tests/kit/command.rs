//! The `squall` binary of this build.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use super::suites::root;

/// Its path, for a command line of one's own (`'…/squall' reference-iut`).
pub(crate) fn squall_bin() -> &'static str {
    env!("CARGO_BIN_EXE_squall")
}

/// A command that runs it.
pub(crate) fn squall() -> Command {
    Command::new(squall_bin())
}

/// `squall run ARGS --report-dir DIR` from the repository's root.
pub(crate) fn squall_run(args: &[&str], dir: &Path) -> Output {
    squall().arg("run").args(args).arg("--report-dir").arg(dir).current_dir(root()).output().expect("squall runs")
}

/// A finished command's output, stdout then stderr, as text.
pub(crate) fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// `squall serve` as a process, with the address its first line gave.
pub(crate) struct Served {
    pub child: Child,
    /// `http://HOST:PORT`, or `https://` over TLS.
    pub origin: String,
}

/// The server goes with the test, passed or failed.
impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `squall serve --addr 127.0.0.1:0 ARGS`, once it has printed its address.
pub(crate) fn serve(args: &[&str]) -> Served {
    serve_at("127.0.0.1:0", args)
}

/// `squall serve --addr ADDR ARGS`, once it has printed its address; its stderr stays piped for
/// the test to read.
pub(crate) fn serve_at(addr: &str, args: &[&str]) -> Served {
    let mut child = squall()
        .args(["serve", "--addr", addr])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut first).expect("line");
    let origin = first.trim().strip_prefix("squall listening on ").expect("the listening line").to_owned();
    Served { child, origin }
}
