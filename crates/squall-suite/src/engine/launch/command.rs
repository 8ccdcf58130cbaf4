//! An outside implementation's process, started with the contract's environment (through
//! `sh -c`, on the clock `super::clock` chose).
//!
//! It runs in its own process group. When it finishes, and when it is killed — at the case
//! timeout, or once its case is decided without it (`stop_early`) — the whole group is killed,
//! so nothing it started outlives its case; its stderr is read for a short grace period
//! afterwards and then abandoned, so a descendant that escaped the group and still holds the pipe
//! cannot hold the suite up. Only the tail of stderr is kept.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;

use super::ProcessEnd;

/// The most stderr kept, from the end.
pub(super) const STDERR_TAIL_BYTES: usize = 64 * 1024;

/// How long stderr is still read after the process ended.
const PIPE_GRACE: Duration = Duration::from_millis(300);

/// Run `argv` until it exits, `timeout` passes or `stop_early` resolves, then kill its process
/// group. Killed either way, it ended `timed_out`.
pub(super) async fn run(
    argv: &[String],
    env: &[(&'static str, String)],
    timeout: Duration,
    stop_early: impl std::future::Future<Output = ()>,
) -> std::io::Result<ProcessEnd> {
    let Some((program, args)) = argv.split_first() else {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "no program to start"));
    };
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()?;
    // Until it is reaped, killed however this ends (even with this future dropped mid-run).
    let group = child.id().map(Group);
    let tail = Arc::new(Mutex::new(Tail::default()));
    let mut reader = tokio::spawn(read_into(child.stderr.take(), tail.clone()));
    let (exit_code, timed_out) = tokio::select! {
        status = child.wait() => (status?.code(), false),
        () = tokio::time::sleep(timeout) => (None, true),
        () = stop_early => (None, true),
    };
    match (timed_out, group) {
        (true, group) => {
            drop(group);
            let _ = child.wait().await;
        }
        (false, Some(group)) => group.after_its_leader_was_reaped(),
        (false, None) => {}
    }
    if tokio::time::timeout(PIPE_GRACE, &mut reader).await.is_err() {
        reader.abort();
    }
    let stderr = tail.lock().unwrap_or_else(std::sync::PoisonError::into_inner).text();
    Ok(ProcessEnd { stderr, exit_code, timed_out })
}

/// A process group whose leader squall has not reaped: dropped, every process in it is killed.
struct Group(u32);

impl Group {
    /// Kill what is left of the group once its leader was reaped.
    fn after_its_leader_was_reaped(self) {
        kill_group(self.0);
        std::mem::forget(self);
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        kill_group(self.0);
    }
}

/// SIGKILL every process in the group (none left is fine).
pub(super) fn kill_group(group: u32) {
    let pid = i32::try_from(group).ok().and_then(rustix::process::Pid::from_raw);
    if let Some(pid) = pid {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

async fn read_into(pipe: Option<tokio::process::ChildStderr>, tail: Arc<Mutex<Tail>>) {
    let Some(mut pipe) = pipe else { return };
    let mut buffer = vec![0u8; 8192];
    while let Ok(n) = pipe.read(&mut buffer).await {
        if n == 0 {
            break;
        }
        tail.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(&buffer[..n]);
    }
}

/// The last [`STDERR_TAIL_BYTES`] of a stream, and how much came before them.
#[derive(Debug, Default)]
struct Tail {
    bytes: Vec<u8>,
    dropped: usize,
}

impl Tail {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend_from_slice(chunk);
        if self.bytes.len() > 2 * STDERR_TAIL_BYTES {
            let excess = self.bytes.len() - STDERR_TAIL_BYTES;
            self.bytes.drain(..excess);
            self.dropped += excess;
        }
    }

    fn text(&self) -> String {
        let keep = self.bytes.len().min(STDERR_TAIL_BYTES);
        let start = self.bytes.len() - keep;
        let text = String::from_utf8_lossy(&self.bytes[start..]);
        match self.dropped + start {
            0 => text.into_owned(),
            earlier => format!("[… {earlier} earlier bytes of stderr left out]\n{text}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_bytes_and_says_how_many_went() {
        let mut tail = Tail::default();
        for _ in 0..5 {
            tail.push(&[b'a'; STDERR_TAIL_BYTES]);
        }
        tail.push(b"the end");
        let text = tail.text();
        assert!(text.ends_with("the end"), "{}", &text[text.len() - 20..]);
        assert!(text.starts_with(&format!("[… {} earlier bytes", 4 * STDERR_TAIL_BYTES + 7)), "{}", &text[..60]);
        assert!(text.len() < STDERR_TAIL_BYTES + 100);
    }
}
