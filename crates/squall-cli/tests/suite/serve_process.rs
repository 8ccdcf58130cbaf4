//! The `squall serve` process under a hostile client: each open stream costs one descriptor and
//! a hang-up is still seen, reading a journal of large bodies does not multiply memory, and
//! SIGTERM lets a reply in progress finish (docs/hardening.md).

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{json, Value};
use squall_testkit::calls::raw_request;
use squall_testkit::harness::{eventually, require};
use squall_testkit::server::create_run;

use crate::kit::command::{serve, Served};

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
    require(held <= STREAMS + 4, &format!("{STREAMS} open streams hold {held} descriptors (one each)"));
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
