//! The `squall` command line (the binary's own modules, not the library's API): `serve`, `run`
//! ([`run`]), `init` ([`init`]), `soak` ([`soak`]), `cases` ([`cases`]), `clock` ([`clock`]), `report merge` ([`report`]),
//! `health` ([`health`]),
//! `reference-iut` and `scenarios`. Exit codes: 0 success, 1 checks failed, 2 usage
//! or harness error.

pub(crate) mod cases;
pub(crate) mod clock;
pub(crate) mod health;
pub(crate) mod init;
pub(crate) mod record;
pub(crate) mod report;
pub(crate) mod run;
mod serve_tls;
pub(crate) mod signoff;
pub(crate) mod soak;
mod starters;
pub(crate) mod stdout;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context as _};
use clap::{Parser, Subcommand};

use squall::journal::DEFAULT_JOURNAL_MAX;
use squall::scenario::load::from_file;
use squall::scenario::Catalogue;
use squall::server::{
    PublicUrl, Server, ServerConfig, Serving, Upstream, DEFAULT_BODY_LIMIT, DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_RUNS,
};
use squall_suite::service::CaseService;

#[derive(Debug, Parser)]
#[command(
    name = "squall",
    version,
    about = "Fault-injecting OpenAI-, Anthropic- and Gemini-compatible server and PRD-0006 retry conformance suite"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve the scripted OpenAI, Anthropic and Gemini APIs and the admin API.
    Serve {
        /// Address to listen on — an IP or a host name (`localhost:8787`), and a port; port 0
        /// picks a free port.
        #[arg(long, default_value = "127.0.0.1:8787", value_parser = listen_addr)]
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
        /// The origin clients reach squall at, when it is not `--addr` (a container's port
        /// mapping, a proxy): every URL squall hands out starts with it, e.g.
        /// http://localhost:32768 (also SQUALL_PUBLIC_URL).
        #[arg(long, env = "SQUALL_PUBLIC_URL")]
        public_url: Option<PublicUrl>,
        /// Write every URL handed out in reply to a request with the origin that request named
        /// (its Host): right behind a port mapping whose port squall cannot know, as a
        /// container's (also SQUALL_PUBLIC_URL_FROM_HOST=true; the image's default).
        #[arg(long, env = "SQUALL_PUBLIC_URL_FROM_HOST")]
        public_url_from_host: bool,
        /// Require `Authorization: Bearer <TOKEN>` on the admin API (also SQUALL_ADMIN_TOKEN).
        #[arg(long, env = "SQUALL_ADMIN_TOKEN", hide_env_values = true)]
        admin_token: Option<String>,
        /// Keep no counts and answer `GET /metrics` with 404 (metrics are on by default).
        #[arg(long)]
        no_metrics: bool,
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
        /// Seconds a connection has to send a complete request head, from its opening or the
        /// end of its last reply; a silent, trickling or idle connection is closed after it (an
        /// idle Responses WebSocket too).
        #[arg(long, default_value_t = DEFAULT_HEADER_TIMEOUT.as_secs(), value_parser = seconds_at_least_one)]
        header_timeout: u64,
        /// The features whose cases the judge as a service offers at /__squall/cases (default:
        /// ./features if present, else the built-in features).
        #[arg(long)]
        features: Option<PathBuf>,
        /// Forward every run's model requests to this provider or gateway (a base URL, e.g.
        /// https://api.openai.com/v1 or http://gateway:4000/v1) and apply the scenario to its real
        /// replies: scripted statuses and streams answer instead, faults fire in the real stream
        /// (docs/proxy.md).
        #[arg(long, value_parser = upstream_url)]
        upstream: Option<String>,
        #[command(flatten)]
        upstream_access: UpstreamAccess,
        #[command(flatten)]
        tls: serve_tls::TlsArgs,
    },
    /// Run the conformance suite against an implementation and write acceptance reports.
    Run(run::RunArgs),
    /// Ask a running squall whether it serves: exit 0 when it does, 1 when not (a container's
    /// health check: no shell or curl needed).
    Health(health::HealthArgs),
    /// Write an adapter for a real client (the official SDKs, the Vercel AI SDK, LangChain, …)
    /// into this project and print the command that judges it; never overwrites a file.
    Init(init::InitArgs),
    /// List the cases the judge as a service judges: `--format json` gives each one's scenario,
    /// client settings and checks (docs/service.md).
    Cases(cases::CasesArgs),
    /// Work with acceptance reports: `merge` joins a sharded run's reports into one.
    Report {
        #[command(subcommand)]
        command: report::ReportCommand,
    },
    /// Record a real provider's replies into a scenario that replays them: squall forwards
    /// every model request to the upstream and writes NAME.toml when done (docs/proxy.md).
    Record(record::RecordArgs),
    /// Run an implementation many times under a chaos scenario and judge the distribution:
    /// no false success, provider errors only, the predicted success rate; soak.json and soak.md.
    Soak(soak::SoakArgs),
    /// Run the reference implementation as an IUT adapter: reads the IUT contract's
    /// environment (OPENAI_BASE_URL, SQUALL_TASK, SQUALL_OUT, ...) and writes result.json and
    /// events.jsonl. Use it as `--iut "squall reference-iut"` to test the contract path.
    #[cfg(feature = "reference")]
    #[command(name = "reference-iut")]
    ReferenceIut,
    /// Run a command, and everything it starts, on squall's clock: a test runner whose
    /// integration (pytest-squall, squall-judge) speeds it up for each case (docs/clock.md).
    Clock(clock::ClockArgs),
    /// Work with scenario files.
    Scenarios {
        #[command(subcommand)]
        command: ScenariosCommand,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum ScenariosCommand {
    /// Validate scenario files without serving them.
    Check {
        /// Files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// List the catalogue: each scenario's name, requirement ids and description.
    List {
        #[arg(long)]
        scenarios: Option<PathBuf>,
    },
}

pub(crate) async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve {
            addr,
            scenarios,
            body_limit,
            allow_remote,
            public_url,
            public_url_from_host,
            admin_token,
            no_metrics,
            max_runs,
            journal_max,
            threads,
            header_timeout,
            features,
            upstream,
            upstream_access,
            tls,
        } => {
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
            let header_timeout = Duration::from_secs(header_timeout);
            let judge = CaseService::from_features(features.as_deref(), catalogue.clone())?;
            let upstream = upstream.map(|url| upstream_access.upstream(&url)).transpose()?;
            let mut config = ServerConfig::loopback(catalogue);
            (config.addr, config.body_limit, config.admin_token, config.max_runs) =
                (addr, body_limit, admin_token, max_runs);
            (config.journal_max, config.serving, config.header_timeout) = (journal_max, serving, header_timeout);
            (config.judge, config.upstream, config.public_url) =
                (Some(squall::server::Judge::new(judge)), upstream, public_url);
            (config.metrics, config.public_url_from_host) = (!no_metrics, public_url_from_host);
            config.tls = tls.server_tls()?;
            serve(config, &tls).await
        }
        Command::Run(args) => run::run(args).await,
        Command::Health(args) => health::health(args).await,
        Command::Soak(args) => soak::soak(args).await,
        Command::Record(args) => record::record(args).await,
        Command::Cases(args) => cases::cases(args),
        Command::Clock(args) => clock::clock(args).await,
        Command::Init(args) => init::init(args),
        Command::Report { command } => report::report(command),
        #[cfg(feature = "reference")]
        Command::ReferenceIut => {
            let env = squall_reference::contract::CaseEnv::from_env().map_err(anyhow::Error::msg)?;
            squall_reference::contract::run_case(&env).await.map_err(anyhow::Error::msg)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Scenarios { command: ScenariosCommand::Check { files } } => check(&files),
        Command::Scenarios { command: ScenariosCommand::List { scenarios } } => {
            // A line per scenario — its name and requirement ids — and its description under it.
            for scenario in Catalogue::from_dir_or_embedded(scenarios.as_deref())?.iter() {
                stdout::line(format_args!("{:40} {}", scenario.name, scenario.requirements.join(",")))?;
                if !scenario.description.is_empty() {
                    stdout::line(format_args!("    {}", scenario.description))?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

async fn serve(config: ServerConfig, tls_args: &serve_tls::TlsArgs) -> anyhow::Result<ExitCode> {
    let addr = config.addr;
    let tls = config.tls.clone();
    let server = Server::start(config).await.with_context(|| format!("cannot listen on {addr}"))?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    // Before the address line: whoever waits for it may trust the CA at once.
    if let Some(ca) = tls.map(|tls| tls_args.write_ca(&tls, server.local_addr().port())).transpose()?.flatten() {
        eprintln!("squall: TLS with a generated test CA; trust {} (SSL_CERT_FILE, REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS, AWS_CA_BUNDLE)", ca.display());
    }
    // The address line is for whoever started the server; serving goes on if nobody reads it.
    let _ = stdout::line(format_args!("squall listening on {scheme}://{}", server.local_addr()));
    eprintln!(
        "squall: {} scenarios; create a run with POST {}/__squall/runs, or point an SDK at {}/scenarios/<name>/v1; the judge's cases: GET {}/__squall/cases",
        server.scenario_count(),
        server.origin(),
        server.origin(),
        server.origin()
    );
    let mut terminate =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).context("cannot wait for SIGTERM")?;
    tokio::select! {
        interrupted = tokio::signal::ctrl_c() => interrupted.context("cannot wait for Ctrl-C")?,
        _ = terminate.recv() => {}
    }
    eprintln!("squall: stopping: no new connections; replies in progress get {} s to end", SHUTDOWN_GRACE.as_secs());
    let cut = server.stop(SHUTDOWN_GRACE).await;
    if cut > 0 {
        eprintln!("squall: {cut} connections still open after {} s are cut", SHUTDOWN_GRACE.as_secs());
    }
    Ok(ExitCode::SUCCESS)
}

/// How long replies in progress may go on once `squall serve` is asked to stop (SIGTERM or
/// Ctrl-C): long enough for a scripted stream to end, short enough for a CI system's own
/// grace period (commonly 10 s or more) before it kills.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// A whole number of seconds, at least 1.
fn seconds_at_least_one(text: &str) -> Result<u64, String> {
    at_least_one(text).map(|n| n as u64)
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
/// `--addr`: an IP address and port, or a host name and port (`localhost:8788`) resolved to its
/// first IPv4 address (else its first address).
fn listen_addr(text: &str) -> Result<SocketAddr, String> {
    use std::net::ToSocketAddrs as _;
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    let resolved: Vec<SocketAddr> = text
        .to_socket_addrs()
        .map_err(|e| format!("`{text}` is neither an address and port nor a host name and port that resolves: {e}"))?
        .collect();
    resolved
        .iter()
        .find(|a| a.is_ipv4())
        .or(resolved.first())
        .copied()
        .ok_or_else(|| format!("`{text}` resolves to no address"))
}

/// How squall reaches an upstream besides its URL: `squall serve` and `squall record` alike.
#[derive(Debug, clap::Args)]
pub(crate) struct UpstreamAccess {
    /// The key to send the upstream instead of the client's (also SQUALL_UPSTREAM_KEY).
    #[arg(long, env = "SQUALL_UPSTREAM_KEY", hide_env_values = true)]
    upstream_key: Option<String>,
    /// A PEM file of CA certificates to trust for an https upstream besides Mozilla's roots (a
    /// gateway signed by a team's own CA; also SQUALL_UPSTREAM_CA).
    #[arg(long, env = "SQUALL_UPSTREAM_CA")]
    upstream_ca: Option<PathBuf>,
    /// Seconds the upstream may take to send its response head, and may go silent mid-body:
    /// past them the client gets a 504, or its reply breaks (nginx's proxy_read_timeout).
    #[arg(long, default_value_t = squall::server::DEFAULT_UPSTREAM_READ_TIMEOUT.as_secs_f64(), value_parser = upstream_timeout)]
    upstream_timeout: f64,
}

impl UpstreamAccess {
    /// The upstream at `url`, with this key and CA.
    pub(crate) fn upstream(self, url: &str) -> Result<Upstream, squall::server::BadUpstream> {
        let upstream = Upstream::parse(url, self.upstream_key)?
            .reading_within(std::time::Duration::from_secs_f64(self.upstream_timeout));
        match &self.upstream_ca {
            Some(ca_file) => upstream.trusting(ca_file),
            None => Ok(upstream),
        }
    }
}

/// `--upstream-timeout`: a number of seconds, more than 0 and at most a day.
fn upstream_timeout(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && seconds <= 86_400.0 => Ok(seconds),
        _ => Err(format!("{text}: a number of seconds, more than 0 and at most 86400")),
    }
}

/// `--upstream`: a base URL squall can forward to (checked now, so a typo fails at start).
fn upstream_url(text: &str) -> Result<String, String> {
    Upstream::parse(text, None).map(|_| text.to_owned()).map_err(|e| e.to_string())
}

/// A clap value parser: a whole number, 1 or more (clap shows the message as given).
pub(crate) fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("`{text}` is out of range: a whole number from 1 to {}", usize::MAX)),
    }
}

#[cfg(test)]
mod tests {
    use super::listen_addr;

    #[test]
    fn a_listen_address_may_name_its_host() {
        assert_eq!(listen_addr("127.0.0.1:8787").map(|a| a.to_string()).as_deref(), Ok("127.0.0.1:8787"));
        let local = listen_addr("localhost:8788").expect("localhost resolves");
        assert!(local.ip().is_loopback() && local.port() == 8788, "{local}");
        let error = listen_addr("localhost").expect_err("no port");
        assert!(error.starts_with("`localhost` is neither an address and port"), "{error}");
    }
}
