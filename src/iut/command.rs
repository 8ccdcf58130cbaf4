//! An outside implementation, started through `sh -c` with the contract's environment.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;

/// Run `command`; returns (stderr, exit code, timed out). The process is killed at the timeout.
pub async fn run(
    command: &str,
    env: &[(&'static str, String)],
    timeout: Duration,
) -> std::io::Result<(String, Option<i32>, bool)> {
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let mut stderr_pipe = child.stderr.take();
    let reading = tokio::spawn(async move {
        let mut text = String::new();
        if let Some(pipe) = stderr_pipe.as_mut() {
            let _ = pipe.read_to_string(&mut text).await;
        }
        text
    });
    let (exit_code, timed_out) = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(status) => (status?.code(), false),
        Err(_) => {
            let _ = child.kill().await;
            (None, true)
        }
    };
    let stderr = reading.await.unwrap_or_default();
    Ok((stderr, exit_code, timed_out))
}
