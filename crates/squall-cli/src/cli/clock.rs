//! `squall clock -- COMMAND`: a command and everything it starts on squall's clock (docs/clock.md).
//! A test runner started so judges the clients it runs in its own process as shipped: the
//! integrations change the tree's rate for each case and back.

use std::process::ExitCode;

use anyhow::Context as _;
use squall_suite::clock::{frame_from_now, preload, preload_first, FRAME_VARIABLE};

#[derive(Debug, clap::Args)]
pub(crate) struct ClockArgs {
    /// How many times faster than real time the tree's clock runs at first (1: real time until
    /// an integration changes it).
    #[arg(long, default_value_t = 1.0, value_parser = rate)]
    rate: f64,
    /// The command and its arguments.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true, value_name = "COMMAND")]
    command: Vec<String>,
}

fn rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate > 0.0 && rate <= 10_000.0 => Ok(rate),
        _ => Err(format!("`{text}`: a rate is a number above 0, at most 10000")),
    }
}

/// Run the command on a frame of its own, removed when it ends; its exit status is ours (128 +
/// the signal that ended it).
pub(crate) async fn clock(args: ClockArgs) -> anyhow::Result<ExitCode> {
    let preload = preload().map_err(anyhow::Error::msg)?;
    let dir =
        tempfile::Builder::new().prefix("squall-clock-").tempdir().context("cannot make the frame's directory")?;
    let frame = dir.path().join("frame");
    frame_from_now(args.rate).create(&frame)?;
    let (program, rest) = args.command.split_first().context("no command")?;
    let mut child = tokio::process::Command::new(program)
        .args(rest)
        .env("LD_PRELOAD", preload_first(&preload))
        .env(FRAME_VARIABLE, &frame)
        .env("SQUALL_CLOCK", "accelerated")
        .spawn()
        .with_context(|| format!("cannot start {program}"))?;
    let status = forward_signals_until_exit(&mut child).await?;
    drop(dir);
    use std::os::unix::process::ExitStatusExt as _;
    let code = status.code().or_else(|| status.signal().map(|signal| 128 + signal)).unwrap_or(1);
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// Wait for `child`; a terminal's Ctrl-C reaches it on its own (it is in our process group), so
/// we outlive it and clean up; a SIGTERM or SIGHUP sent to us is passed on.
async fn forward_signals_until_exit(child: &mut tokio::process::Child) -> anyhow::Result<std::process::ExitStatus> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hang_up = signal(SignalKind::hangup())?;
    let pid = child.id().and_then(|id| i32::try_from(id).ok());
    loop {
        let passed = tokio::select! {
            status = child.wait() => return Ok(status?),
            _ = interrupt.recv() => None,
            _ = terminate.recv() => Some(rustix::process::Signal::TERM),
            _ = hang_up.recv() => Some(rustix::process::Signal::HUP),
        };
        if let (Some(signal), Some(pid)) = (passed, pid.and_then(rustix::process::Pid::from_raw)) {
            let _ = rustix::process::kill_process(pid, signal);
        }
    }
}
