//! `squall record`: squall in front of an upstream, recording what it answers into a scenario
//! file whose attempts replay it — ready for faults to be added. The client is pointed at the
//! run's base URL (the first line on stdout); recording ends after `--requests` model requests,
//! or at Ctrl-C or SIGTERM, and the file is written whole or not at all.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context as _};
use squall::embedded::{MockProvider, ScriptedRun};
use squall::scenario::{AfterScript, Catalogue, Scenario};
use squall::server::ServerConfig;

use super::stdout;

#[derive(Debug, clap::Args)]
pub(crate) struct RecordArgs {
    /// The provider or gateway to record: a base URL (e.g. https://api.openai.com/v1 or
    /// http://gateway:4000/v1).
    #[arg(long, value_parser = super::upstream_url)]
    upstream: String,
    #[command(flatten)]
    upstream_access: super::UpstreamAccess,
    /// The scenario file to write, `NAME.toml` (its stem names the scenario).
    #[arg(long)]
    out: PathBuf,
    /// Address to listen on; port 0 picks a free one.
    #[arg(long, default_value = "127.0.0.1:8787", value_parser = super::listen_addr)]
    addr: SocketAddr,
    /// Stop after this many model requests were answered (default: at Ctrl-C or SIGTERM).
    #[arg(long, value_parser = super::at_least_one)]
    requests: Option<usize>,
}

pub(crate) async fn record(args: RecordArgs) -> anyhow::Result<ExitCode> {
    let name = scenario_name(&args.out)?;
    // Checked before anything is forwarded: a paid conversation is never lost to a bad path.
    check_writable(&args.out)?;
    let upstream = args.upstream_access.upstream(&args.upstream)?;
    let mut config = ServerConfig::loopback(Catalogue::default());
    (config.addr, config.upstream) = (args.addr, Some(upstream));
    if !config.addr.ip().is_loopback() {
        bail!("--addr {}: squall records on a loopback address only", config.addr);
    }
    let provider = MockProvider::start_with(config).await;
    let mut script = Scenario::named(&name);
    script.after = AfterScript::Ok;
    let run = provider.try_run(script)?;
    stdout::line(format_args!("squall recording at {}", run.base_url()))?;
    eprintln!(
        "squall: point the client at {} (Anthropic: {}; Gemini: {}); {}",
        run.base_url(),
        run.anthropic_base_url(),
        run.gemini_base_url(),
        args.requests.map_or_else(
            || "Ctrl-C ends the recording".to_owned(),
            |n| format!("the recording ends after {n} model requests")
        )
    );
    wait_for(&run, args.requests).await?;
    let Some(mut scenario) = run.recording() else {
        bail!("nothing was recorded: no model request reached {} through squall", args.upstream);
    };
    scenario.name = name;
    scenario.description =
        format!("Recorded from {} by squall record: one attempt per reply, in order.", args.upstream);
    squall_suite::report::write_atomically(&args.out, &scenario_toml(&scenario)?)
        .with_context(|| format!("--out {}: cannot write the recording", args.out.display()))?;
    stdout::line(format_args!("wrote {} attempts to {}", scenario.attempts.len(), args.out.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// The scenario's name: the file's stem, which a catalogue requires.
fn scenario_name(out: &Path) -> anyhow::Result<String> {
    let stem = out.file_stem().and_then(|s| s.to_str()).filter(|_| out.extension().is_some_and(|e| e == "toml"));
    let Some(stem) = stem else { bail!("--out {}: a scenario file is NAME.toml", out.display()) };
    squall::scenario::validate::check_name(stem).map_err(|e| anyhow::anyhow!("--out {}: {e}", out.display()))?;
    Ok(stem.to_owned())
}

/// Until `requests` model requests were answered, or a signal.
async fn wait_for(run: &ScriptedRun, requests: Option<usize>) -> anyhow::Result<()> {
    let mut terminate =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).context("cannot wait for SIGTERM")?;
    let enough = async {
        loop {
            let answered = run.journal().iter().filter(|e| e.api.is_some() && e.end.is_some()).count();
            if requests.is_some_and(|n| answered >= n) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::select! {
        interrupted = tokio::signal::ctrl_c() => interrupted.context("cannot wait for Ctrl-C")?,
        _ = terminate.recv() => {}
        () = enough => {}
    }
    Ok(())
}

/// The scenario as a file a person edits: without the empty tables and lists of what it leaves out.
fn scenario_toml(scenario: &Scenario) -> anyhow::Result<String> {
    fn prune(value: &mut toml::Value) {
        match value {
            toml::Value::Table(table) => {
                table.iter_mut().for_each(|(_, v)| prune(v));
                table.retain(|_, v| {
                    !matches!(v, toml::Value::Table(t) if t.is_empty())
                        && !matches!(v, toml::Value::Array(a) if a.is_empty())
                });
            }
            toml::Value::Array(items) => items.iter_mut().for_each(prune),
            _ => {}
        }
    }
    let mut value = toml::Value::try_from(scenario).context("cannot write the scenario as TOML")?;
    prune(&mut value);
    toml::to_string(&value).context("cannot write the scenario as TOML")
}

/// That the recording can be written to `out`: its directory exists and takes a file, and `out`
/// is not a directory. The error names the path as the user gave it.
fn check_writable(out: &Path) -> anyhow::Result<()> {
    let dir = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !dir.is_dir() {
        bail!("--out {}: the directory {} does not exist", out.display(), dir.display());
    }
    if out.is_dir() {
        bail!("--out {}: a directory, not a scenario file", out.display());
    }
    let probe = dir.join(format!(".squall-record-{}.probe", std::process::id()));
    std::fs::write(&probe, b"")
        .map_err(|e| anyhow::anyhow!("--out {}: cannot write in {}: {e}", out.display(), dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}
