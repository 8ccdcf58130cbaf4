//! The squall server: hyper HTTP/1.1 and HTTP/2 (h2c, told apart by the connection preface) on
//! real TCP sockets that squall can kill mid-reply.
//!
//! - `/__squall/...` — the admin API (`admin`), and the judge as a service's cases and verdicts
//!   (`admin::judge_api`, carried to the suite's judge as [`CaseJudge`]'s types)
//! - `/runs/{id}/v1/...` — a run's model endpoints (`model`: each reply played, run-wide
//!   conditions, quotas; `GET /responses` upgraded to a WebSocket: `model::websocket`); a herd's
//!   client `k` uses `/runs/{id}/clients/{k}/v1/...` (`model::base_path`)
//! - `/scenarios/{name}/v1/...` — a shared run per catalogue scenario, for quick manual use
//!
//! Below HTTP, `connection`: sockets squall can kill, TLS, deadlines, HTTP/2's frames and limits.
//! In front of a real provider, `upstream`: forwarding, faults placed in its stream, recording.
//!
//! Start one in-process with [`Server::start`]; `squall serve` does the same from the CLI.

mod admin;
mod connection;
mod http_util;
mod metrics_endpoint;
mod model;
mod public_url;
pub(crate) mod runs;
mod upstream;

// Public for the fuzz targets and the benches, hidden: what outside code scripts against is the
// admin API (docs/server.md), not its parser, nor the quota's arithmetic.
#[doc(hidden)]
pub use admin::create_run;
#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub use connection::tls;
#[doc(hidden)]
pub use model::quota;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode, Version};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

pub use self::admin::case_judge::{
    CaseJudge, CaseRunRequest, CasesQuery, Judge, JudgedRun, PostedEvents, PostedOutcome, PreparedRun, Refusal, RunUrls,
};
use self::connection::conn_io::{KillSwitch, KillableStream};
use self::connection::hang_up::HangUp;
use self::connection::head_deadline::{HeadWatch, Marked};
pub use self::connection::serving_threads::Serving;
use self::connection::serving_threads::ServingThreads;
use self::http_util::{openai_error, ResponseBody};
pub use self::model::base_path::responses_websocket_url;
use self::model::base_path::{split_base, MAX_CLIENTS};
pub use self::public_url::{BadPublicUrl, PublicUrl};
use self::runs::{Run, Runs};
pub use self::upstream::{BadUpstream, Upstream, DEFAULT_UPSTREAM_READ_TIMEOUT};
use crate::clock::{Clock, TimeScale};
use crate::scenario::validate::validate;
use crate::scenario::{Catalogue, Scenario, ScenarioError};

/// Default request body limit (16 MiB): larger than any real model request in the suite.
pub const DEFAULT_BODY_LIMIT: usize = 16 * 1024 * 1024;

/// Default cap on live runs: creating one more expires the oldest.
pub const DEFAULT_MAX_RUNS: usize = 10_000;

/// Default time a connection has to send a complete request head, counted from its opening or
/// from the end of its last reply: a connection silent, trickling, or idle in a client's
/// keep-alive pool for longer is closed.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(60);

/// How to start a server.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerConfig {
    /// Where to listen; port 0 picks a free one.
    pub addr: SocketAddr,
    /// The scenarios runs can be created from by name.
    pub catalogue: Catalogue,
    /// Largest accepted request body, in bytes (413 beyond).
    pub body_limit: usize,
    /// When set, the admin API requires `Authorization: Bearer <token>`.
    pub admin_token: Option<String>,
    /// Live runs kept; the oldest is expired when one more is created.
    pub max_runs: usize,
    /// Entries each run's journal keeps; past it the oldest are dropped and counted.
    pub journal_max: usize,
    /// Where connections are served.
    pub serving: Serving,
    /// How long a connection may take to send a request head ([`DEFAULT_HEADER_TIMEOUT`]), and a
    /// Responses WebSocket may stay silent with no response in flight.
    pub header_timeout: Duration,
    /// What judges cases for the judge as a service (`/__squall/cases`, `/__squall/runs/{id}/verdict`);
    /// `None`: those endpoints answer 404.
    pub judge: Option<Judge>,
    /// Where every run's model requests are forwarded when their attempt scripts no reply of
    /// its own (docs/proxy.md); `None`: squall answers every request itself.
    pub upstream: Option<Upstream>,
    /// The origin every URL squall hands out starts with, when clients reach the server at
    /// another address than `addr` (a port mapping, a proxy); `None`: `addr`'s.
    pub public_url: Option<PublicUrl>,
    /// Every URL handed out in reply to a request starts with the origin that request named
    /// (its `Host`, or HTTP/2's `:authority`) instead: right behind any port mapping without
    /// knowing its port. A request naming no well-formed origin gets `public_url`'s or `addr`'s.
    pub public_url_from_host: bool,
    /// Keep the counts `GET /metrics` reports (docs/server.md, "Metrics"; the `metrics` feature
    /// serves them). Default `true`; `false` leaves every request uncounted.
    pub metrics: bool,
    /// What journals, delays and stalls are timed by: real time, or a [`crate::clock::VirtualClock`]
    /// shared with in-process clients (served on the caller's runtime, which the clock drives).
    pub clock: Clock,
    /// Serve over TLS (HTTP/2 and HTTP/1.1 by ALPN) with this certificate; `None`: plain
    /// HTTP/1.1 and h2c.
    #[cfg(feature = "tls")]
    pub tls: Option<connection::tls::ServerTls>,
}

impl ServerConfig {
    /// Loopback on a free port, with the given catalogue.
    pub fn loopback(catalogue: Catalogue) -> Self {
        ServerConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            catalogue,
            body_limit: DEFAULT_BODY_LIMIT,
            admin_token: None,
            max_runs: DEFAULT_MAX_RUNS,
            journal_max: crate::journal::DEFAULT_JOURNAL_MAX,
            serving: Serving::CallerRuntime,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            judge: None,
            upstream: None,
            public_url: None,
            public_url_from_host: false,
            metrics: true,
            clock: Clock::Real,
            #[cfg(feature = "tls")]
            tls: None,
        }
    }
}

/// What every connection of a server shares.
#[derive(Debug)]
pub(crate) struct State {
    pub catalogue: Catalogue,
    pub runs: Runs,
    pub body_limit: usize,
    pub admin_token: Option<String>,
    /// `http://HOST:PORT` (`https://` over TLS), as clients should use it.
    pub origin: String,
    /// See [`ServerConfig::public_url_from_host`].
    origin_from_host: bool,
    /// See [`ServerConfig::tls`].
    #[cfg(feature = "tls")]
    tls: Option<connection::tls::ServerTls>,
    /// Connections being served right now.
    pub connections: std::sync::atomic::AtomicUsize,
    /// See [`ServerConfig::header_timeout`]; read here by the TLS handshake and the WebSocket
    /// (plain connections are swept by `heads`).
    #[cfg(any(feature = "tls", feature = "websocket"))]
    pub header_timeout: Duration,
    /// The open connections' waits for a request head, swept against `header_timeout`.
    heads: Arc<HeadWatch>,
    /// Set when the server stops: connections finish the reply in progress and close.
    pub stopping: tokio::sync::watch::Sender<bool>,
    /// See [`ServerConfig::judge`].
    pub judge: Option<Judge>,
    /// See [`ServerConfig::upstream`].
    pub upstream: Option<Upstream>,
}

impl State {
    /// The origin URLs handed out in reply to `request` start with.
    pub(crate) fn origin_for<B>(&self, request: &Request<B>) -> String {
        public_url::origin_for(&self.origin, self.origin_from_host, request)
    }

    /// The OpenAI base URL of a run.
    pub(crate) fn base_url(&self, run_id: &str) -> String {
        model::base_path::base_url(&self.origin, run_id, None)
    }
}

/// A running server. Dropping it stops accepting connections.
#[derive(Debug)]
pub struct Server {
    state: Arc<State>,
    local_addr: SocketAddr,
    accept_loop: JoinHandle<()>,
    /// Closes the connections that send no request head in time (`head_deadline`).
    head_sweep: JoinHandle<()>,
    /// Kept here as well as by the accept loop, so that stopping to accept does not stop the
    /// threads serving the connections already open.
    _threads: Option<Arc<ServingThreads>>,
}

impl Server {
    /// Bind and start accepting connections in the background.
    pub async fn start(config: ServerConfig) -> io::Result<Server> {
        if config.clock.is_virtual() && config.serving != Serving::CallerRuntime {
            let message = "a server on a virtual clock serves on the runtime the clock drives (Serving::CallerRuntime)";
            return Err(io::Error::new(io::ErrorKind::InvalidInput, message));
        }
        let listener = TcpListener::bind(config.addr).await?;
        let local_addr = listener.local_addr()?;
        let host = if local_addr.ip().is_unspecified() {
            SocketAddr::from(([127, 0, 0, 1], local_addr.port()))
        } else {
            local_addr
        };
        let origin = match &config.public_url {
            Some(public) => public.to_string(),
            None => format!("{}://{host}", scheme(&config)),
        };
        let state = Arc::new(State {
            catalogue: config.catalogue,
            runs: Runs::with_limits(config.max_runs, config.journal_max, config.clock)
                .counted_in(config.metrics.then(Arc::default)),
            body_limit: config.body_limit,
            admin_token: config.admin_token,
            origin,
            origin_from_host: config.public_url_from_host,
            #[cfg(feature = "tls")]
            tls: config.tls,
            connections: std::sync::atomic::AtomicUsize::new(0),
            #[cfg(any(feature = "tls", feature = "websocket"))]
            header_timeout: config.header_timeout,
            heads: Arc::new(HeadWatch::new(config.header_timeout)),
            stopping: tokio::sync::watch::Sender::new(false),
            judge: config.judge,
            upstream: config.upstream,
        });
        let threads = match config.serving {
            Serving::CallerRuntime => None,
            Serving::OwnThreads(count) => Some(Arc::new(ServingThreads::start(count)?)),
        };
        let accept_loop = tokio::spawn(accept(listener, state.clone(), threads.clone()));
        let head_sweep = tokio::spawn(state.heads.clone().sweep());
        Ok(Server { state, local_addr, accept_loop, head_sweep, _threads: threads })
    }

    /// The address the server listens on (the real port when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The clock its runs are timed by.
    pub fn clock(&self) -> &Clock {
        self.state.runs.clock()
    }

    /// `http://HOST:PORT`, or `https://HOST:PORT` over TLS: the public URL when one was given.
    pub fn origin(&self) -> &str {
        &self.state.origin
    }

    /// The PEM of the test CA that issued the server's generated certificate, which clients
    /// must trust to reach it (`None` without TLS, or with a certificate given).
    #[cfg(feature = "tls")]
    pub fn ca_pem(&self) -> Option<&str> {
        self.state.tls.as_ref().and_then(connection::tls::ServerTls::ca_pem)
    }

    /// Remove run `id` (the admin API's `DELETE /__squall/runs/{id}`): its base URL answers 404
    /// from now on. `false` when there is no such run.
    pub fn remove_run(&self, id: &str) -> bool {
        self.state.runs.remove(id).is_some()
    }

    /// Scenarios in the server's catalogue.
    pub fn scenario_count(&self) -> usize {
        self.state.catalogue.len()
    }

    /// Create a run in-process (the admin API's `POST /__squall/runs` without HTTP). The
    /// scenario is checked exactly as the admin API checks it, however it was made, so no run
    /// exists that the server cannot serve (a [`TimeScale`] is valid by construction).
    pub(crate) fn create_run(&self, scenario: Scenario, time_scale: TimeScale) -> Result<Arc<Run>, ScenarioError> {
        validate(&scenario).map_err(|e| e.in_source("scenario built in code"))?;
        self.state.runs.create(Arc::new(scenario), time_scale)
    }

    pub(crate) fn base_url(&self, run: &Run) -> String {
        self.state.base_url(&run.id)
    }

    /// Connections being served right now.
    pub fn open_connections(&self) -> usize {
        self.state.connections.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Stop gracefully: accept no more connections, let each one finish the reply in progress
    /// and close, and wait for them up to `grace`. Returns the connections still open then
    /// (replies that had not ended: a stall without end, say), which the caller cuts by exiting.
    pub async fn stop(&self, grace: Duration) -> usize {
        self.accept_loop.abort();
        self.state.stopping.send_replace(true);
        let deadline = tokio::time::Instant::now() + grace;
        while self.open_connections() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.open_connections()
    }
}

/// Counts a connection for as long as it is served.
struct ConnectionCount(Arc<State>);

impl ConnectionCount {
    fn new(state: Arc<State>) -> Self {
        state.connections.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        ConnectionCount(state)
    }
}

impl Drop for ConnectionCount {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.accept_loop.abort();
        self.head_sweep.abort();
    }
}

/// The scheme a server's URLs use.
fn scheme(config: &ServerConfig) -> &'static str {
    #[cfg(feature = "tls")]
    if config.tls.is_some() {
        return "https";
    }
    let _ = config;
    "http"
}

/// The connection's bytes: plain, or TLS once its handshake is done (`None`: it failed, or
/// took longer than a request head may).
async fn wire(state: &State, stream: &Arc<TcpStream>) -> Option<connection::wire_io::Wire> {
    let tcp = connection::wire_io::SharedTcp(stream.clone());
    #[cfg(feature = "tls")]
    if let Some(tls) = &state.tls {
        let handshake = tokio::time::timeout(state.header_timeout, tls.acceptor().accept(tcp)).await;
        return handshake.ok()?.ok().map(|tls| connection::wire_io::Wire::Tls(Box::new(tls)));
    }
    let _ = state;
    Some(connection::wire_io::Wire::Plain(tcp))
}

/// Accept connections until the server stops or is dropped.
async fn accept(listener: TcpListener, state: Arc<State>, threads: Option<Arc<ServingThreads>>) {
    let mut errors = connection::accept_errors::AcceptErrors::default();
    loop {
        match listener.accept().await {
            Ok((stream, _peer)) => {
                let state = state.clone();
                match &threads {
                    Some(threads) => threads.serve(stream, move |stream| serve_connection(stream, state)),
                    None => drop(tokio::spawn(serve_connection(stream, state))),
                }
            }
            Err(e) => {
                // Out of descriptors or a transient accept error: keep serving the others.
                let open = state.connections.load(std::sync::atomic::Ordering::Relaxed);
                if let Some(line) = errors.line(&e, open, std::time::Instant::now()) {
                    eprintln!("{line}");
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
        }
    }
}

async fn serve_connection(stream: TcpStream, state: Arc<State>) {
    let _counted = ConnectionCount::new(state.clone());
    // Events must leave as soon as they are written, or fault timing would drift.
    let _ = stream.set_nodelay(true);
    let stream = Arc::new(stream);
    let Some(wire) = wire(&state, &stream).await else { return };
    let reads = Arc::new(tokio::sync::Notify::new());
    let hang_up = HangUp::new(stream.clone(), reads.clone());
    let mut stopping = state.stopping.subscribe();
    let switch = Arc::new(KillSwitch::new(state.runs.clock().clone()));
    let io = TokioIo::new(KillableStream::new(wire, stream, switch.clone(), reads));
    let close_asked = switch.clone();
    let heads = state.heads.watch();
    let service = service_fn({
        let heads = heads.clone();
        move |request: Request<Incoming>| {
            let (state, switch, reply_end) = (state.clone(), switch.clone(), heads.head_came());
            if request.version() == Version::HTTP_2 {
                switch.carry_streams();
            }
            async move {
                let response = route(&state, switch, request).await;
                connection::stream_reset::refusal(response.map(|body| Marked::new(body, reply_end)))
            }
        }
    });
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // The header timeout is `heads`' (hyper's own makes a timer for every request).
    builder.http1().keep_alive(true).header_read_timeout(None);
    connection::h2_limits::apply(&mut builder.http2());
    // With upgrades: `GET /responses` may become a WebSocket (`websocket`).
    let connection = builder.serve_connection_with_upgrades(io, service);
    tokio::pin!(connection);
    let client_gone = hang_up.happened();
    tokio::pin!(client_gone);
    let head_timed_out = heads.timed_out();
    tokio::pin!(head_timed_out);
    let mut closing = false;
    // Errors here are the faults squall injects and clients hanging up: nothing to report. A
    // hang-up hyper has not read ends the connection here: dropping it drops the reply in
    // progress, which journals `client_closed`.
    loop {
        tokio::select! {
            // hyper first: it reads a request's bytes before the watch looks, so the watch
            // finds them read and starts no grace timer (in a random order, half of all
            // requests armed one, and arming a timer wakes the thread's reactor: a syscall).
            biased;
            _ = connection.as_mut() => return,
            () = client_gone.as_mut() => return,
            () = head_timed_out.as_mut() => return,
            Ok(_) = stopping.wait_for(|stop| *stop), if !*stopping.borrow() => {
                connection.as_mut().graceful_shutdown();
            }
            // A graceful `goaway`: over HTTP/2 a GOAWAY with the last stream the client opened,
            // over HTTP/1.1 no keep-alive after the reply; the replies in progress go on.
            () = close_asked.closing(), if !closing => {
                closing = true;
                connection.as_mut().graceful_shutdown();
            }
        }
    }
}

/// A request under a run's base URL: a WebSocket opening (`websocket`), or a model request.
async fn model_request(
    state: &State,
    switch: Arc<KillSwitch>,
    run: Arc<Run>,
    base: model::base_path::BasePath<'_>,
    request: Request<Incoming>,
) -> Response<ResponseBody> {
    if asks_websocket(&request, base.rest) {
        #[cfg(feature = "websocket")]
        return model::websocket::open(switch, run, base.client, (request, state.header_timeout)).await;
        #[cfg(not(feature = "websocket"))]
        return http_util::openai_error(
            StatusCode::NOT_IMPLEMENTED,
            "This squall was built without its `websocket` feature, which serves the Responses API over WebSocket",
            "websocket_not_built",
            None,
        );
    }
    model::handle(state, switch, run, base, request).await
}

/// Whether `request` asks to open a WebSocket on `/responses`.
fn asks_websocket(request: &Request<Incoming>, path: &str) -> bool {
    let upgrade = request.headers().get(hyper::header::UPGRADE).and_then(|v| v.to_str().ok());
    request.method() == hyper::Method::GET
        && path == "/responses"
        && upgrade.is_some_and(|u| u.eq_ignore_ascii_case("websocket"))
}

async fn route(state: &State, switch: Arc<KillSwitch>, request: Request<Incoming>) -> Response<ResponseBody> {
    let path = request.uri().path().to_owned();
    if let Some(rest) = path.strip_prefix("/__squall/") {
        let (endpoint, method) = (admin::endpoint(rest), request.method().clone());
        let response = match admin::refuse_without_token(state, &request) {
            Some(refusal) => refusal,
            None => admin::handle(state, rest, request).await,
        };
        if let Some(metrics) = state.runs.metrics() {
            metrics.record(crate::metrics::Event::Admin { endpoint, method: &method, status: response.status() });
        }
        return response;
    }
    if path == "/metrics" {
        return metrics_endpoint::serve(state, &request);
    }
    if let Some(base) = split_base(&path, "/runs/") {
        return match state.runs.get(base.id) {
            Some(run) => model_request(state, switch, run, base, request).await,
            None => admin::unknown_run(base.id),
        };
    }
    if let Some(base) = split_base(&path, "/scenarios/") {
        return match state.catalogue.get(base.id) {
            Some(scenario) => match admin::shared_scenario_run(state, scenario) {
                Ok(run) => model_request(state, switch, run, base, request).await,
                // The catalogue was validated when it loaded; a scenario it holds always serves.
                Err(e) => openai_error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string(), "bad_scenario", None),
            },
            None => admin::unknown_scenario(base.id),
        };
    }
    openai_error(
        StatusCode::NOT_FOUND,
        &format!(
            "Unknown path {path}: use a run's base URL (/runs/{{id}}/v1), a herd client's (/runs/{{id}}/clients/{{k}}/v1, k < {MAX_CLIENTS}) or the admin API (/__squall/)"
        ),
        "not_found",
        None,
    )
}
