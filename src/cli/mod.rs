//! The `squall` command line (the binary's own modules, not the library's API): `serve`, `run`
//! ([`run`]), `reference-iut` and `scenarios`. Exit codes: 0 success, 1 checks failed, 2 usage
//! or harness error.

pub mod run;
pub mod stdout;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context as _};
use clap::{Parser, Subcommand};

use squall::journal::DEFAULT_JOURNAL_MAX;
use squall::scenario::load::from_file;
use squall::scenario::Catalogue;
use squall::server::{Server, ServerConfig, Serving, DEFAULT_BODY_LIMIT, DEFAULT_MAX_RUNS};

#[derive(Debug, Parser)]
#[command(
    name = "squall",
    version,
    about = "Fault-injecting OpenAI-compatible server and PRD-0006 retry conformance suite"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the scripted OpenAI-compatible API and the admin API.
    Serve {
        /// Address to listen on; port 0 picks a free port.
        #[arg(long, default_value = "127.0.0.1:8787")]
        addr: SocketAddr,
        /// Scenario catalogue directory (default: ./scenarios if present, else the embedded catalogue).
        #[arg(long)]
        scenarios: Option<PathBuf>,
        /// Largest accepted request body, in bytes.
        #[arg(long, default_value_t = DEFAULT_BODY_LIMIT, value_parser = at_least_one)]
        body_limit: usize,
        /// Allow listening on a non-loopback address (squall has no authentication on its
        /// model endpoints; it prints a warning).
        #[arg(long)]
        allow_remote: bool,
        /// Require `Authorization: Bearer <TOKEN>` on the admin API (also SQUALL_ADMIN_TOKEN).
        #[arg(long, env = "SQUALL_ADMIN_TOKEN")]
        admin_token: Option<String>,
        /// Live runs kept in memory; creating one more expires the oldest.
        #[arg(long, default_value_t = DEFAULT_MAX_RUNS, value_parser = at_least_one)]
        max_runs: usize,
        /// Requests each run's journal keeps; past it the oldest are dropped and counted
        /// (`dropped` in the journal), so a long soak cannot exhaust memory.
        #[arg(long, default_value_t = DEFAULT_JOURNAL_MAX, value_parser = at_least_one)]
        journal_max: usize,
        /// Threads serving connections, each a single-threaded runtime (default: one per core).
        #[arg(long, value_parser = at_least_one)]
        threads: Option<usize>,
    },
    /// Run the conformance suite against an implementation and write acceptance reports.
    Run(run::RunArgs),
    /// Run the reference implementation as an IUT adapter: reads the IUT contract's
    /// environment (OPENAI_BASE_URL, SQUALL_TASK, SQUALL_OUT, ...) and writes result.json and
    /// events.jsonl. Use it as `--iut "squall reference-iut"` to test the contract path.
    #[cfg(feature = "reference")]
    #[command(name = "reference-iut")]
    ReferenceIut,
    /// Work with scenario files.
    Scenarios {
        #[command(subcommand)]
        command: ScenariosCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum ScenariosCommand {
    /// Validate scenario files without serving them.
    Check {
        /// Files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// List the catalogue.
    List {
        #[arg(long)]
        scenarios: Option<PathBuf>,
    },
}

pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve { addr, scenarios, body_limit, allow_remote, admin_token, max_runs, journal_max, threads } => {
            if !addr.ip().is_loopback() && !allow_remote {
                bail!("--addr {addr} is not a loopback address: squall's endpoints are unauthenticated test doubles; add --allow-remote if you mean it");
            }
            if !addr.ip().is_loopback() {
                eprintln!(
                    "squall: WARNING: listening on {addr}, reachable from other machines; consider --admin-token"
                );
            }
            let catalogue = Catalogue::from_dir_or_embedded(scenarios.as_deref())?;
            let serving = threads
                .and_then(std::num::NonZeroUsize::new)
                .map_or_else(Serving::one_thread_per_core, Serving::OwnThreads);
            serve(ServerConfig { addr, catalogue, body_limit, admin_token, max_runs, journal_max, serving }).await
        }
        Command::Run(args) => run::run(args).await,
        #[cfg(feature = "reference")]
        Command::ReferenceIut => {
            let env = squall_reference::iut::CaseEnv::from_env().map_err(anyhow::Error::msg)?;
            squall_reference::iut::run_case(&env).await.map_err(anyhow::Error::msg)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Scenarios { command: ScenariosCommand::Check { files } } => check(&files),
        Command::Scenarios { command: ScenariosCommand::List { scenarios } } => {
            for scenario in Catalogue::from_dir_or_embedded(scenarios.as_deref())?.iter() {
                stdout::line(format_args!("{:40} {}", scenario.name, scenario.requirements.join(",")))?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

async fn serve(config: ServerConfig) -> anyhow::Result<ExitCode> {
    let addr = config.addr;
    let server = Server::start(config).await.with_context(|| format!("cannot listen on {addr}"))?;
    // The address line is for whoever started the server; serving goes on if nobody reads it.
    let _ = stdout::line(format_args!("squall listening on http://{}", server.local_addr()));
    eprintln!(
        "squall: {} scenarios; create a run with POST {}/__squall/runs, or point an SDK at {}/scenarios/<name>/v1",
        server.scenario_count(),
        server.origin(),
        server.origin()
    );
    tokio::signal::ctrl_c().await.context("cannot wait for Ctrl-C")?;
    Ok(ExitCode::SUCCESS)
}

fn check(files: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let mut failed = false;
    for file in files {
        match from_file(file) {
            Ok(scenario) => stdout::line(format_args!("ok    {} ({})", file.display(), scenario.name))?,
            Err(e) => {
                stdout::line(format_args!("error {e}"))?;
                failed = true;
            }
        }
    }
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// A count flag: a whole number of at least 1.
pub fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("`{text}` is out of range: a whole number from 1 to {}", usize::MAX)),
    }
}
