//! `GET /metrics` on `squall serve`: after a scripted run, the faults it injected and the
//! statuses it sent are counted, with no run's id in any label; guarded by the admin token.
//! And `squall health`, the image's health check, as a container runtime reads its exit code.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use squall_testkit::calls::responses_request;
use squall_testkit::harness::require;

use crate::kit::command::{serve, squall};

const TOKEN: &str = "metrics-test-token";

/// The families docs/server.md lists, by their exposed names; the judge's requests appear with
/// the first (suite::service checks them).
const FAMILIES: [&str; 10] = [
    "squall_requests_total",
    "squall_replies_ended_total",
    "squall_faults_injected_total",
    "squall_bytes_streamed_total",
    "squall_streams_open",
    "squall_connections_open",
    "squall_runs",
    "squall_journal_entries_dropped_total",
    "squall_admin_requests_total",
    "squall_verdicts_total",
];

/// A sample's value: `name{labels} value`, or 0 when the series is not there.
fn sample(text: &str, series: &str) -> f64 {
    text.lines().find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok()).unwrap_or(0.0)
}

async fn scrape(client: &reqwest::Client, origin: &str, accept: Option<&str>) -> (String, String) {
    let mut request = client.get(format!("{origin}/metrics")).bearer_auth(TOKEN);
    if let Some(accept) = accept {
        request = request.header("accept", accept);
    }
    let response = request.send().await.expect("/metrics answers");
    require(response.status() == 200, &format!("/metrics answers {}", response.status()));
    let content_type = response.headers()["content-type"].to_str().unwrap_or_default().to_owned();
    (content_type, response.text().await.expect("the text"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripted_runs_faults_and_statuses_are_counted_with_no_run_label() {
    let served = serve(&["--admin-token", TOKEN]);
    let client = reqwest::Client::new();
    let origin = &served.origin;
    let refused = client.get(format!("{origin}/metrics")).send().await.expect("answered");
    require(refused.status() == 401, &format!("without the token /metrics answers {}", refused.status()));

    let attempts = json!([
        {"stream": {"text": "one two three four"}, "fault": {"kind": "eof", "after_deltas": 2}},
        {"status": 429, "headers": {"retry-after": "0"}},
        {"stream": {"text": "one two three four"}, "fault": {"kind": "reset", "after_deltas": 1}},
        {"stream": {"text": "done at last"}},
    ]);
    let scenario = json!({"scenario": {"name": "counted", "attempts": attempts}});
    let created = client.post(format!("{origin}/__squall/runs")).bearer_auth(TOKEN).json(&scenario).send().await;
    let run: Value = created.expect("created").json().await.expect("the run");
    let base = run["base_url"].as_str().expect("a base URL");
    for _ in 0..4 {
        // The faults break the body: what counts is what the server journals.
        if let Ok(reply) = client.post(format!("{base}/responses")).json(&responses_request()).send().await {
            let _ = reply.bytes().await;
        }
    }

    // A reset is journaled when the server has cut the socket, just after the client saw it.
    let deadline = Instant::now() + Duration::from_secs(5);
    let (content_type, text) = loop {
        let (content_type, text) = scrape(&client, origin, None).await;
        let ended = sample(&text, "squall_replies_ended_total{end=\"completed\"}");
        if (ended >= 1.0 && sample(&text, "squall_streams_open") == 0.0) || Instant::now() > deadline {
            break (content_type, text);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    require(content_type.starts_with("text/plain; version=0.0.4"), &format!("Prometheus text: {content_type}"));
    for family in FAMILIES {
        require(text.contains(&format!("# TYPE {family} ")), &format!("{family} is listed:\n{text}"));
    }
    let expected = [
        ("squall_faults_injected_total{kind=\"eof\"}", 1.0),
        ("squall_faults_injected_total{kind=\"reset\"}", 1.0),
        ("squall_faults_injected_total{kind=\"stall\"}", 0.0),
        ("squall_requests_total{api=\"responses\",protocol=\"http/1.1\",status=\"429\"}", 1.0),
        ("squall_requests_total{api=\"responses\",protocol=\"http/1.1\",status=\"200\"}", 3.0),
        ("squall_replies_ended_total{end=\"eof\"}", 1.0),
        ("squall_replies_ended_total{end=\"reset\"}", 1.0),
        ("squall_replies_ended_total{end=\"error_status\"}", 1.0),
        ("squall_replies_ended_total{end=\"completed\"}", 1.0),
        ("squall_admin_requests_total{endpoint=\"runs\",method=\"POST\",status=\"201\"}", 1.0),
        ("squall_streams_open", 0.0),
        ("squall_runs", 1.0),
    ];
    for (series, value) in expected {
        require(sample(&text, series) == value, &format!("{series} is {value}:\n{text}"));
    }
    require(sample(&text, "squall_bytes_streamed_total") > 0.0, &format!("bytes streamed are counted:\n{text}"));
    let id = run["id"].as_str().expect("an id");
    require(!text.contains(id), &format!("no label names the run {id}:\n{text}"));

    let (content_type, text) = scrape(&client, origin, Some("application/openmetrics-text;version=1.0.0")).await;
    require(
        content_type.starts_with("application/openmetrics-text"),
        &format!("OpenMetrics when asked: {content_type}"),
    );
    require(text.ends_with("# EOF\n"), &format!("OpenMetrics ends with # EOF:\n{text}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn squall_health_exits_0_on_a_serving_squall_and_1_otherwise() {
    let served = serve(&["--admin-token", TOKEN, "--no-metrics"]);
    let health = |url: &str, token: Option<&str>| {
        let mut command = squall();
        command.args(["health", "--url", url, "--timeout", "2"]).env_remove("SQUALL_ADMIN_TOKEN");
        if let Some(token) = token {
            command.env("SQUALL_ADMIN_TOKEN", token);
        }
        command.output().expect("squall health runs")
    };
    let healthy = health(&served.origin, Some(TOKEN));
    let said = String::from_utf8_lossy(&healthy.stdout);
    require(healthy.status.code() == Some(0) && said.contains(": ok"), &format!("healthy: {healthy:?}"));
    let refused = health(&served.origin, None);
    let why = String::from_utf8_lossy(&refused.stderr);
    require(refused.status.code() == Some(1) && why.contains("401"), &format!("without the token: {refused:?}"));
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a port").local_addr().expect("its address");
    let nobody = health(&format!("http://{closed}"), None);
    require(nobody.status.code() == Some(1), &format!("nothing listening: {nobody:?}"));

    let off = reqwest::Client::new().get(format!("{}/metrics", served.origin)).bearer_auth(TOKEN).send().await;
    let status = off.expect("answered").status();
    require(status == 404, &format!("--no-metrics: /metrics answers {status}"));
}
