//! A hostile client cannot hurt squall, and the journal never disagrees with the wire: silent
//! and trickling connections are closed, an oversized body behind `Expect: 100-continue` is
//! refused at once, a hang-up is noticed whatever the client sent after its request, expensive
//! admin work does not hold up timed streams, reading a journal does not multiply memory, a
//! deleted run's replies are waited for, and SIGTERM stops the server gracefully. Each test
//! fails without its fix (docs/hardening.md).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::num::NonZeroUsize;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use squall::embedded::MockProvider;
use squall::journal::EndKind;
use squall::scenario::{Attempt, Scenario};
use squall::server::Serving;

use crate::kit::command::{serve, Served};
use crate::kit::harness::{json_reply, require};
use crate::kit::server::create_run;
use crate::kit::server::server_with;

/// Wait (up to `limit`) for `done`, checking every 20 ms.
async fn eventually(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    done()
}

/// A raw request for a run's Responses endpoint, with `extra` bytes after it.
fn raw_request(base_url: &str, addr: SocketAddr, extra: &[u8]) -> TcpStream {
    let path = base_url.split_once("/runs/").map(|(_, rest)| format!("/runs/{rest}/responses")).expect("a run URL");
    let body = r#"{"model":"m","input":"x","stream":true}"#;
    let mut socket = TcpStream::connect(addr).expect("connects");
    let head = format!(
        "POST {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    socket.write_all(head.as_bytes()).expect("writes");
    socket.write_all(extra).expect("writes");
    socket
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_and_trickling_connections_are_closed_and_others_are_served_meanwhile() {
    let provider = server_with(|c| c.header_timeout = Duration::from_secs(1)).await;
    let addr = provider.server().local_addr();
    let run = provider.run(Scenario::named("calm").attempt(Attempt::text("fine")));
    let silent: Vec<TcpStream> = (0..20).map(|_| TcpStream::connect(addr).expect("connects")).collect();
    let trickling = tokio::task::spawn_blocking(move || {
        let mut sockets: Vec<TcpStream> = (0..20).map(|_| TcpStream::connect(addr).expect("connects")).collect();
        // A header byte every 100 ms: the head never completes within the timeout.
        for _ in 0..30 {
            for socket in &mut sockets {
                let _ = socket.write_all(b"X");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        sockets
    });
    let started = Instant::now();
    let reply = reqwest::Client::new()
        .post(format!("{}/responses", run.base_url()))
        .json(&json!({"model": "m", "input": "x"}))
        .send()
        .await
        .expect("sent");
    require(reply.status().as_u16() == 200, "a well-behaved client is served");
    require(started.elapsed() < Duration::from_millis(500), &format!("served in {:?}", started.elapsed()));
    let closed = eventually(Duration::from_secs(5), || provider.server().open_connections() == 0).await;
    let open = provider.server().open_connections();
    drop(trickling.await.expect("joined"));
    drop(silent);
    require(closed, &format!("{open} connections still open 5 s after a 1 s header timeout"));
}

/// The header timeout counts from a connection's opening or the end of its last reply, never
/// during one: a reply three times as long as the timeout is sent whole, and the connection
/// idle after it is closed a timeout later, not at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_longer_than_the_header_timeout_is_sent_whole_and_the_idle_connection_closes_a_timeout_after_it() {
    let provider = server_with(|c| c.header_timeout = Duration::from_secs(1)).await;
    let addr = provider.server().local_addr();
    let paced = Attempt::text("one two three four five six").with_event_delay_ms(250);
    let run = provider.run(Scenario::named("paced").attempt(paced));
    let base_url = run.base_url().to_owned();
    let (reply, lasted, closed_after) = tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let mut socket = raw_request(&base_url, addr, b"");
        socket.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        let mut reply = Vec::new();
        let mut buffer = vec![0; 65536];
        // To the chunked body's last chunk: the reply has ended, the connection is kept alive.
        while !reply.ends_with(b"0\r\n\r\n") {
            match socket.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => reply.extend_from_slice(&buffer[..n]),
            }
        }
        let (lasted, ended) = (started.elapsed(), Instant::now());
        let closed = matches!(socket.read(&mut buffer), Ok(0));
        (String::from_utf8_lossy(&reply).into_owned(), lasted, closed.then(|| ended.elapsed()))
    })
    .await
    .expect("joined");
    require(reply.contains("response.completed") && reply.ends_with("0\r\n\r\n"), &format!("a whole reply: {reply:?}"));
    require(lasted > Duration::from_secs(2), &format!("the reply lasted {lasted:?}"));
    let closed_after = closed_after.unwrap_or_else(|| panic!("the idle connection was not closed within 10 s"));
    require(
        closed_after >= Duration::from_millis(900) && closed_after < Duration::from_secs(3),
        &format!("closed {closed_after:?} after the reply ended, with a 1 s header timeout"),
    );
}

#[tokio::test]
async fn an_oversized_body_behind_expect_continue_is_refused_at_once() {
    let provider = server_with(|c| c.body_limit = 1024).await;
    let addr = provider.server().local_addr();
    let run = provider.run(Scenario::named("small"));
    let path = run.base_url().split_once("/runs/").map(|(_, r)| format!("/runs/{r}/responses")).expect("a run URL");
    for target in [path.as_str(), "/__squall/runs"] {
        let answer = tokio::task::spawn_blocking({
            let target = target.to_owned();
            move || {
                let mut socket = TcpStream::connect(addr).expect("connects");
                socket.set_read_timeout(Some(Duration::from_secs(3))).expect("timeout");
                let head = format!(
                    "POST {target} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1073741824\r\nexpect: 100-continue\r\n\r\n"
                );
                socket.write_all(head.as_bytes()).expect("writes");
                let mut reply = vec![0; 4096];
                let n = socket.read(&mut reply).unwrap_or(0);
                String::from_utf8_lossy(&reply[..n]).into_owned()
            }
        })
        .await
        .expect("joined");
        require(answer.starts_with("HTTP/1.1 413"), &format!("{target}: {answer:?}"));
    }
}

#[tokio::test]
async fn statuses_and_framing_headers_http_cannot_honour_are_refused_at_load() {
    let provider = MockProvider::start().await;
    let client = reqwest::Client::new();
    let create = format!("{}/__squall/runs", provider.server().origin());
    for (attempt, field) in [
        (json!({"status": 101}), "scenario.attempts[0].status"),
        (json!({"status": 204}), "scenario.attempts[0].status"),
        (json!({"status": 429, "headers": {"content-length": "5"}}), "scenario.attempts[0].headers"),
        (json!({"headers": {"Transfer-Encoding": "chunked"}}), "scenario.attempts[0].headers"),
    ] {
        let body = json!({"scenario": {"name": "bad", "attempts": [attempt]}});
        let reply = client.post(&create).json(&body).send().await.expect("sent");
        let status = reply.status().as_u16();
        let answer: Value = reply.json().await.expect("json");
        require(status == 400, &format!("{attempt}: {status} {answer}"));
        let param = answer["error"]["param"].as_str().unwrap_or("");
        require(param.starts_with(field), &format!("{attempt}: param {param:?}, want {field}"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hang_up_after_extra_bytes_is_noticed_during_a_delay_and_an_endless_stall() {
    let provider = MockProvider::start().await;
    let addr = provider.server().local_addr();
    let delayed = provider.run(Scenario::named("slow").attempt(Attempt::text("late").with_delay_ms(600_000)));
    let stalled = provider.run(Scenario::named("stall").attempt(Attempt::text("a b c d").stall_after_events(2, None)));
    // A client that leaves during a stall is `stalled` (docs/server.md), during a delay `client_closed`.
    let pipelined = &b"GET /runs/x/v1/models HTTP/1.1\r\nhost: x\r\n\r\n"[..];
    for (run, extra, end) in [(&delayed, &b"\r\n"[..], EndKind::ClientClosed), (&stalled, pipelined, EndKind::Stalled)]
    {
        let socket = raw_request(run.base_url(), addr, extra);
        tokio::time::sleep(Duration::from_millis(300)).await;
        drop(socket);
        let ended = eventually(Duration::from_secs(3), || run.endings() == [Some(end)]).await;
        require(ended, &format!("{}: endings {:?}", run.id(), run.endings()));
    }
    let closed = eventually(Duration::from_secs(3), || provider.server().open_connections() == 0).await;
    require(closed, &format!("{} connections left open", provider.server().open_connections()));
}

#[tokio::test]
async fn a_client_that_leaves_in_the_middle_of_its_body_is_client_closed() {
    let provider = MockProvider::start().await;
    let addr = provider.server().local_addr();
    let run = provider.run(Scenario::named("half"));
    let path = run.base_url().split_once("/runs/").map(|(_, r)| format!("/runs/{r}/responses")).expect("a run URL");
    let mut socket = TcpStream::connect(addr).expect("connects");
    let head = format!(
        "POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{{\"model\":"
    );
    socket.write_all(head.as_bytes()).expect("writes");
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(socket);
    let ends = || run.journal().iter().map(|e| (e.end, e.status)).collect::<Vec<_>>();
    let ended = eventually(Duration::from_secs(3), || ends() == [(Some(EndKind::ClientClosed), None)]).await;
    require(ended, &format!("(end, status) {:?}", ends()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_scenario_being_created_does_not_hold_up_a_timed_stream() {
    // One serving thread: the timed stream and the admin request share it.
    let provider = server_with(|c| c.serving = Serving::OwnThreads(NonZeroUsize::MIN)).await;
    // Ten events 50 ms apart: the stream's pace is the precision being protected.
    let timed =
        provider.run(Scenario::named("paced").attempt(Attempt::text("a b c d e f g h").with_event_delay_ms(50)));
    // 15,000 small attempts (50 MB rendered, within the 64 MiB limit): every one is rendered in each API to check its size.
    let attempts: Vec<Value> = (0..1000).map(|_| json!({"stream": {"text": "x"}})).collect();
    let tracks: Vec<Value> = (0..15)
        .map(|t| json!({"name": format!("t{t}"), "match": {"body_contains": format!("track-{t}")}, "attempts": attempts}))
        .collect();
    let large = json!({"scenario": {"name": "large", "tracks": tracks}}).to_string();
    let origin = provider.server().origin().to_owned();
    let creating = tokio::spawn(async move {
        let client = reqwest::Client::new();
        let started = Instant::now();
        let reply = client
            .post(format!("{origin}/__squall/runs"))
            .body(large)
            .header("content-type", "application/json")
            .send()
            .await
            .expect("sent");
        let status = reply.status().as_u16();
        assert_eq!(status, 201, "{}", reply.text().await.unwrap_or_default());
        started.elapsed()
    });
    let started = Instant::now();
    let reply = reqwest::Client::new()
        .post(format!("{}/responses", timed.base_url()))
        .json(&json!({"model": "m", "input": "x", "stream": true}))
        .send()
        .await
        .expect("sent");
    let mut gaps = Vec::new();
    let mut last = started;
    let mut stream = reply.bytes_stream();
    use futures_util::StreamExt as _;
    while let Some(chunk) = stream.next().await {
        chunk.expect("a chunk");
        gaps.push(last.elapsed().as_secs_f64() * 1000.0);
        last = Instant::now();
    }
    let creating_took = creating.await.expect("joined");
    let worst = gaps.iter().skip(1).copied().fold(0.0, f64::max);
    // Blocked, the stream would wait for the whole check (seconds in a debug build); served
    // beside it, its gaps stay near 50 ms. A quarter of the check's time tells them apart on a
    // busy machine too, where both grow.
    let bound = (creating_took.as_secs_f64() * 1000.0 / 4.0).max(75.0);
    require(
        worst < bound,
        &format!("a 50 ms event gap took {worst:.1} ms (bound {bound:.0} ms) while a large run was created in {creating_took:?}; gaps {gaps:.1?}"),
    );
}

/// Each open stream costs the server one descriptor, its socket: the hang-up watch uses the
/// socket's own registration (a duplicate descriptor only while hyper leaves bytes unread; the
/// second half of this test pipelines requests behind a stalled reply, and its client's hang-up
/// is still noticed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_stream_holds_one_descriptor_and_its_hang_up_is_still_seen() {
    const STREAMS: i64 = 100;
    let served = serve(&[]);
    let run = served
        .create_run(json!({"name": "held", "attempts": [
        {"stream": {"text": "held open"}, "fault": {"kind": "stall", "after_events": 1}}]}))
        .await;
    let base = run["base_url"].as_str().expect("a base URL").to_owned();
    let addr: SocketAddr = served.origin.trim_start_matches("http://").parse().expect("an address");
    let descriptors = || std::fs::read_dir(format!("/proc/{}/fd", served.child.id())).expect("/proc fd").count() as i64;
    // The admin request's connection closes meanwhile: count from a settled server.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = descriptors();
    let mut streams = Vec::new();
    for _ in 0..STREAMS {
        let mut socket = raw_request(&base, addr, b"");
        let mut seen = Vec::new();
        let mut buffer = [0u8; 4096];
        while !seen.windows(5).any(|w| w == b"data:") {
            let n = std::io::Read::read(&mut socket, &mut buffer).expect("reads");
            require(n > 0, "the stream ended before its first event");
            seen.extend_from_slice(&buffer[..n]);
        }
        streams.push(socket);
    }
    let held = descriptors() - before;
    require(held <= STREAMS + 4, &format!("{STREAMS} open streams hold {held} descriptors (two each before issue 46)"));
    // Requests pipelined behind a stalled reply, which hyper stops reading once it holds one:
    // the bytes it leaves unread would hide the client's hang-up from the socket's registration.
    let mut pipelined = raw_request(&base, addr, b"");
    let mut first = [0u8; 4096];
    let _ = std::io::Read::read(&mut pipelined, &mut first).expect("reads");
    for _ in 0..2 {
        std::io::Write::write_all(&mut pipelined, b"GET /runs/x/v1/models HTTP/1.1\r\nhost: x\r\n\r\n")
            .expect("writes");
        tokio::time::sleep(GRACE_AND_MORE).await;
    }
    let watching = descriptors() - before;
    require(watching <= STREAMS + 3, &format!("{watching} descriptors: at most one more, while bytes wait unread"));
    drop(pipelined);
    // Its reply ends `stalled` (the client left during an endless stall); the held ones go on.
    let journal = format!("{}/__squall/runs/{}/journal", served.origin, run["id"].as_str().expect("an id"));
    let mut ends = Vec::new();
    for _ in 0..150 {
        let entries: Value = reqwest::get(&journal).await.expect("journal").json().await.expect("json");
        ends = entries["requests"]
            .as_array()
            .expect("entries")
            .iter()
            .filter(|e| !e["end"].is_null())
            .map(|e| e["end"].clone())
            .collect();
        if !ends.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    require(ends == [json!("stalled")], &format!("ends after the pipelining client left: {ends:?}"));
    drop(streams);
    let released = eventually(Duration::from_secs(3), || descriptors() <= before).await;
    require(released, &format!("{} descriptors left after every client left", descriptors() - before));
}

/// Longer than the hang-up watch's grace for bytes hyper has not read (100 ms).
const GRACE_AND_MORE: Duration = Duration::from_millis(400);

impl Served {
    /// A run of the inline `scenario`, as the admin API describes it.
    async fn create_run(&self, scenario: Value) -> Value {
        create_run(&self.origin, &json!({"scenario": scenario})).await.1
    }
}

/// The process's peak resident memory so far, in KiB.
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM");
    line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).expect("a number")
}

#[tokio::test]
async fn reading_a_journal_of_large_bodies_costs_about_what_it_stores() {
    let mut served = serve(&[]);
    let client = reqwest::Client::new();
    let created = served.create_run(json!({"name": "big", "attempts": [{"status": 400}, {"status": 400}]})).await;
    let base = created["base_url"].as_str().expect("base_url").to_owned();
    // 8 MiB of small numbers: a JSON tree of it is some thirty times larger.
    let body = format!("{{\"model\":\"m\",\"input\":[{}1]}}", "1,".repeat(4 << 20));
    for _ in 0..2 {
        let reply = client
            .post(format!("{base}/responses"))
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await
            .expect("sent");
        assert_eq!(reply.status().as_u16(), 400);
    }
    let pid = served.child.id();
    let before = peak_kib(pid);
    let journal = client
        .get(format!("{}/__squall/runs/{}/journal", served.origin, created["id"].as_str().unwrap_or("")))
        .send()
        .await
        .expect("sent")
        .bytes()
        .await
        .expect("read");
    let grew_mib = (peak_kib(pid) - before) as f64 / 1024.0;
    let _ = served.child.kill();
    let _ = served.child.wait();
    let parsed: Value = serde_json::from_slice(&journal).expect("the journal is JSON");
    require(
        parsed["requests"][1]["body"]["input"].as_array().map(Vec::len) == Some((4 << 20) + 1),
        "the bodies are in the journal",
    );
    // The two bodies are 16 MiB: reading them may hold another copy of each, not a tree.
    require(grew_mib < 32.0, &format!("reading the journal raised peak memory by {grew_mib:.0} MiB"));
}

#[tokio::test]
async fn sigterm_lets_a_reply_in_progress_finish_and_exits_0() {
    let mut served = serve(&[]);
    let client = reqwest::Client::new();
    let paced = json!({"name": "paced", "attempts": [{"stream": {"text": "a b c d e f g h", "event_delay_ms": 100}}]});
    let base = served.create_run(paced).await["base_url"].as_str().expect("base_url").to_owned();
    let reply = client
        .post(format!("{base}/responses"))
        .json(&json!({"model": "m", "input": "x", "stream": true}))
        .send()
        .await
        .expect("sent");
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(served.child.id() as i32).expect("a pid"),
        rustix::process::Signal::TERM,
    )
    .expect("signalled");
    let text = reply.text().await.expect("the whole stream");
    let status = served.child.wait().expect("exits");
    require(text.contains("response.completed"), &format!("the stream was cut: {text}"));
    require(status.code() == Some(0), &format!("exit {status:?}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_deleted_mid_reply_waits_for_it_or_says_it_is_in_flight() {
    let provider = MockProvider::start().await;
    let client = reqwest::Client::new();
    let paced = provider.run(Scenario::named("paced").attempt(Attempt::text("a b c d").with_event_delay_ms(100)));
    let stalled = provider.run(Scenario::named("stall").attempt(Attempt::text("a b c d").stall_after_events(2, None)));
    for (run, ended, in_flight) in [(&paced, json!("completed"), 0), (&stalled, Value::Null, 1)] {
        let url = format!("{}/responses", run.base_url());
        let streaming = tokio::spawn({
            let client = client.clone();
            async move {
                client
                    .post(url)
                    .json(&json!({"model": "m", "input": "x", "stream": true}))
                    .send()
                    .await
                    .map(|r| r.bytes_stream())
            }
        });
        tokio::time::sleep(Duration::from_millis(150)).await;
        let deleted: Value =
            json_reply(client.delete(format!("{}/__squall/runs/{}", provider.server().origin(), run.id()))).await;
        require(
            deleted["requests"][0]["end"] == ended && deleted["in_flight"] == in_flight,
            &format!("{}: {deleted}", run.id()),
        );
        streaming.abort();
    }
}
