//! aimock side by side (run by hand through `crates/squall-cli/benches/aimock.sh`, never in CI): aimock, squall
//! and wiremock-rs each in a process of their own, loaded with the same requests for the same
//! text, each server's own CPU per request measured as in `server_cpu`. Prints medians of
//! three rounds and the ratios to squall, measured in this one run.
//!
//! aimock chunks text by characters, not words: the 283 characters squall streams as 42 word
//! deltas go out as 41 deltas of 7 characters (`--chunk-size 7`), 49 events against 50.

use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::common::runtime;
use super::same_bytes::{fifty_event_text, WARM_UP_REQUESTS};
use super::server_cpu::{server_cpu, squall_server, warm_up_and_compare, wiremock_server, ServerProcess};

/// The argument that runs this comparison: `--aimock-side-by-side <aimock's dist/cli.js>`.
pub(crate) const AIMOCK_SIDE_BY_SIDE: &str = "--aimock-side-by-side";

/// Requests per round, by connection count.
const ROUNDS: [(u64, u64); 2] = [(1, 3_000), (16, 6_000)];

fn free_port() -> u16 {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("a free port");
    listener.local_addr().expect("its address").port()
}

/// aimock serving the text to any `/v1/responses` request, its journal on (the default).
fn aimock_server(cli_js: &str) -> ServerProcess {
    let dir = std::env::temp_dir().join(format!("squall-aimock-fixtures-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a fixture directory");
    let fixture = serde_json::json!({"fixtures": [{"match": {}, "response": {"content": fifty_event_text()}}]});
    std::fs::write(dir.join("fifty.json"), fixture.to_string()).expect("the fixture is written");
    let port = free_port();
    let child = Command::new("node")
        .arg(cli_js)
        .args(["--port", &port.to_string(), "--chunk-size", "7", "--log-level", "silent", "--fixtures"])
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("node runs aimock");
    let started = Instant::now();
    while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(20), "aimock did not listen on port {port} within 20 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    ServerProcess { child, url: format!("http://127.0.0.1:{port}/v1/responses") }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Print the side-by-side table for aimock at `cli_js`.
pub(crate) fn side_by_side(cli_js: &str) {
    let rt = runtime();
    let servers =
        [("squall", squall_server(&rt, None)), ("wiremock-rs", wiremock_server()), ("aimock", aimock_server(cli_js))];
    // Every journal equally warm; squall and wiremock-rs checked to serve the same bytes.
    warm_up_and_compare(&rt, &[&servers[0].1], &servers[1].1);
    rt.block_on(server_cpu(&servers[2].1, WARM_UP_REQUESTS, 4));
    println!("server CPU per request (µs, median of 3 rounds) and requests/s (client included)");
    println!("{:<12} {:>10} {:>10} {:>12}", "server", "1 conn", "16 conn", "req/s 16");
    let mut rows = Vec::new();
    for (name, server) in &servers {
        let mut row = Vec::new();
        let mut rates = Vec::new();
        for (connections, requests) in ROUNDS {
            let mut cpu = Vec::new();
            for _ in 0..3 {
                let started = Instant::now();
                cpu.push(rt.block_on(server_cpu(server, requests, connections)).as_secs_f64() * 1e6 / requests as f64);
                rates.push((connections, requests as f64 / started.elapsed().as_secs_f64()));
            }
            row.push(median(cpu));
        }
        let rate = median(rates.iter().filter(|(c, _)| *c == 16).map(|(_, r)| *r).collect());
        println!("{name:<12} {:>10.1} {:>10.1} {:>12.0}", row[0], row[1], rate);
        rows.push(row);
    }
    println!(
        "ratios to squall's CPU per request: wiremock-rs {:.2}× / {:.2}×, aimock {:.2}× / {:.2}× (1 / 16 connections)",
        rows[1][0] / rows[0][0],
        rows[1][1] / rows[0][1],
        rows[2][0] / rows[0][0],
        rows[2][1] / rows[0][1]
    );
}
