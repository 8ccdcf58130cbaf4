//! Server CPU per request: each server in a process of its own, its CPU time (every thread's,
//! from `/proc/<pid>/task/*/schedstat`, in ns) read before and after a batch of requests, so
//! the figure is the server's own work — the client's CPU is not in it. criterion's
//! `iter_custom` reports that CPU time per request; the round trip stays in `server_throughput`.
//!
//! Servers: squall (`squall serve`, the release binary) streaming 50 Responses events, plain and
//! with a scripted fault that keeps the connection (a truncation after 49 events); wiremock-rs
//! serving the same bytes as a fixed body, chunked as squall's (this bench binary re-run as
//! `--serve-wiremock`; see `same_bytes`).
//! Journals on in both. One connection, then 16 at once.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use criterion::Criterion;
use futures_util::future::join_all;

use super::common::{drain, runtime};
use super::same_bytes::{assert_same_bytes, fifty_event_text, wiremock_same_bytes, WARM_UP_REQUESTS};

/// The argument that turns this bench binary into a wiremock-rs server.
pub(crate) const SERVE_WIREMOCK: &str = "--serve-wiremock";

/// CPU time (ns) every thread of process `pid` has used so far.
fn process_cpu_ns(pid: u32) -> u64 {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("the server's /proc/<pid>/task");
    tasks
        .filter_map(Result::ok)
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|line| line.split_whitespace().next().and_then(|ns| ns.parse::<u64>().ok()))
        .sum()
}

/// A server process and the URL to load.
pub(super) struct ServerProcess {
    pub(super) child: Child,
    pub(super) url: String,
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The first stdout line of `command`, which must be the server's address.
fn spawn(mut command: Command) -> (Child, String) {
    let mut child =
        command.stdout(Stdio::piped()).stdin(Stdio::piped()).stderr(Stdio::null()).spawn().expect("server starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("its address");
    (child, line.trim().to_owned())
}

/// `squall serve` on a free loopback port; `url` is its origin.
pub(super) fn spawn_squall() -> ServerProcess {
    spawn_squall_with(&[])
}

/// `squall serve` on a free loopback port with more arguments; `url` is its origin.
pub(super) fn spawn_squall_with(args: &[&str]) -> ServerProcess {
    spawn_squall_of(Path::new(env!("CARGO_BIN_EXE_squall")), args)
}

/// [`spawn_squall_with`] of the `squall` binary at `binary`.
fn spawn_squall_of(binary: &Path, args: &[&str]) -> ServerProcess {
    let (child, line) = spawn({
        let mut command = Command::new(binary);
        command.args(["serve", "--addr", "127.0.0.1:0"]).args(args);
        command
    });
    ServerProcess { child, url: line.trim_start_matches("squall listening on ").to_owned() }
}

pub(super) fn squall_server(rt: &tokio::runtime::Runtime, fault: Option<&str>) -> ServerProcess {
    scripted_squall(rt, spawn_squall(), fault)
}

/// The plain stream of [`squall_server`], `squall serve` given `args` too.
pub(super) fn squall_server_with(rt: &tokio::runtime::Runtime, args: &[&str]) -> ServerProcess {
    scripted_squall(rt, spawn_squall_with(args), None)
}

/// The plain stream of [`squall_server`] served by the `squall` binary at `binary`.
pub(super) fn squall_server_of(rt: &tokio::runtime::Runtime, binary: &Path) -> ServerProcess {
    scripted_squall(rt, spawn_squall_of(binary, &[]), None)
}

/// `server` with a run of the 50-event stream (and `fault`), `url` its Responses endpoint.
fn scripted_squall(rt: &tokio::runtime::Runtime, mut server: ServerProcess, fault: Option<&str>) -> ServerProcess {
    let origin = server.url.clone();
    let fault = fault.map(|f| format!(", \"fault\": {f}")).unwrap_or_default();
    let scenario = format!(
        r#"{{"scenario": {{"name": "cpu", "attempts": [{{"stream": {{"text": "{}"}}{fault}}}]}}}}"#,
        fifty_event_text()
    );
    let run: serde_json::Value = rt.block_on(async {
        let reply = reqwest::Client::new().post(format!("{origin}/__squall/runs")).body(scenario).send().await;
        reply.expect("the run is created").json().await.expect("a run")
    });
    server.url = format!("{}/responses", run["base_url"].as_str().expect("base_url"));
    server
}

pub(super) fn wiremock_server() -> ServerProcess {
    let (mut child, uri) = spawn({
        let mut command = Command::new(std::env::current_exe().expect("this bench binary"));
        command.arg(SERVE_WIREMOCK);
        command
    });
    let _ = child.stdin.as_mut().map(|s| s.flush());
    ServerProcess { child, url: format!("{uri}/v1/responses") }
}

/// Serve squall's 50-event body with wiremock-rs until stdin closes (run by `main`).
pub(crate) fn serve_wiremock() {
    let rt = runtime();
    rt.block_on(async {
        let mock = wiremock_same_bytes().await;
        println!("{}", mock.uri());
        let _ = std::io::stdout().flush();
        // Until the bench closes our stdin.
        let _ = tokio::task::spawn_blocking(|| std::io::stdin().lines().count()).await;
    });
}

/// `iters` requests over `connections` clients; returns the server's CPU time for them.
pub(super) async fn server_cpu(server: &ServerProcess, iters: u64, connections: u64) -> Duration {
    server_cpu_at(server.child.id(), &server.url, iters, connections).await
}

/// [`server_cpu`] over HTTP/2 (h2c with prior knowledge): each client one connection.
pub(super) async fn server_cpu_http2(server: &ServerProcess, iters: u64, connections: u64) -> Duration {
    let http2 = || reqwest::Client::builder().http2_prior_knowledge().build().expect("an HTTP/2 client");
    server_cpu_with(server.child.id(), &server.url, iters, (connections, http2)).await
}

/// [`server_cpu`] of process `pid`, loaded at `url`.
pub(super) async fn server_cpu_at(pid: u32, url: &str, iters: u64, connections: u64) -> Duration {
    server_cpu_with(pid, url, iters, (connections, reqwest::Client::new)).await
}

/// [`server_cpu_at`] with `connections` clients each made by `client`.
async fn server_cpu_with(
    pid: u32,
    url: &str,
    iters: u64,
    (connections, client): (u64, impl Fn() -> reqwest::Client),
) -> Duration {
    let clients: Vec<reqwest::Client> = (0..connections).map(|_| client()).collect();
    let before = process_cpu_ns(pid);
    let per_client = iters.div_ceil(connections);
    join_all(clients.iter().map(|client| async move {
        for _ in 0..per_client {
            drain(client, url).await;
        }
    }))
    .await;
    let used = process_cpu_ns(pid) - before;
    // Scale to exactly `iters` requests (the last client may have made a few more).
    Duration::from_nanos(used * iters / (per_client * connections))
}

/// Warm each server up with [`WARM_UP_REQUESTS`] (4 connections), then check that squall and
/// wiremock-rs serve the same bytes.
pub(super) fn warm_up_and_compare(rt: &tokio::runtime::Runtime, squall: &[&ServerProcess], wiremock: &ServerProcess) {
    for server in squall.iter().chain([&wiremock]) {
        rt.block_on(server_cpu(server, WARM_UP_REQUESTS, 4));
    }
    rt.block_on(assert_same_bytes(&squall[0].url, &wiremock.url));
}

pub(crate) fn benches(c: &mut Criterion) {
    let rt = runtime();
    let servers = [
        ("squall_plain", squall_server(&rt, None)),
        ("squall_truncate_after_49", squall_server(&rt, Some(r#"{"kind": "truncate", "after_events": 49}"#))),
        ("wiremock_same_bytes", wiremock_server()),
    ];
    warm_up_and_compare(&rt, &[&servers[0].1, &servers[1].1], &servers[2].1);
    let mut group = c.benchmark_group("server_cpu");
    group.sample_size(20).measurement_time(Duration::from_secs(5));
    for connections in [1, 16] {
        for (name, server) in &servers {
            group.bench_function(format!("{name}/{connections}_conn"), |b| {
                b.to_async(&rt).iter_custom(|iters| server_cpu(server, iters, connections))
            });
        }
    }
    group.finish();
}
