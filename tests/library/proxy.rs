//! squall in front of an upstream (`ServerConfig::upstream`, `squall serve --upstream`), tested
//! without the internet: a small local server plays the upstream with fixed bytes, and squall
//! itself plays a real one. What passes through is byte for byte; a fault fires at the right
//! output delta of the real stream; scripted statuses answer without forwarding; the upstream's
//! errors reach the client as they were; keys never reach the journal.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use squall::embedded::MockProvider;
use squall::journal::EndKind;
use squall::scenario::load::from_toml_str;
use squall::scenario::Catalogue;
use squall::server::{ServerConfig, Upstream};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

use squall_testkit::harness::{parse_sse, read_body};

/// A Responses API stream of three text deltas, as an upstream sends it.
pub(super) const STREAM: &str = concat!(
    "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_up\"}}\n\n",
    "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"one\"}\n\n",
    "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\" two\"}\n\n",
    "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\" three\"}\n\n",
    "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_up\"}}\n\n",
);

const CLIENT_KEY: &str = "sk-client-secret-4f9a";

/// An upstream that answers every request with `status`, `headers` and `body`, and keeps each
/// request it got (head and body, as text).
struct FakeUpstream {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<String>>>,
}

impl FakeUpstream {
    async fn start(status: &str, content_type: &str, extra_headers: &str, body: &str) -> FakeUpstream {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let reply = format!(
            "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n{extra_headers}\r\n{body}",
            body.len()
        );
        let seen = requests.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let (reply, seen) = (reply.clone(), seen.clone());
                tokio::spawn(async move {
                    let request = read_request(&mut socket).await;
                    seen.lock().expect("lock").push(request);
                    let _ = socket.write_all(reply.as_bytes()).await;
                    let _ = socket.shutdown().await;
                });
            }
        });
        FakeUpstream { addr, requests }
    }

    fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("lock").clone()
    }
}

/// One request's head and its `content-length` body.
pub(super) async fn read_request(socket: &mut tokio::net::TcpStream) -> String {
    let mut bytes = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_owned()))
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(0);
            if body.len() >= length {
                return text;
            }
        }
        match socket.read(&mut buffer).await {
            Ok(0) | Err(_) => return String::from_utf8_lossy(&bytes).into_owned(),
            Ok(n) => bytes.extend_from_slice(&buffer[..n]),
        }
    }
}

/// A squall server forwarding to `upstream` (with a key of its own, if given), and one run.
async fn proxy(upstream: &str, key: Option<&str>, toml: &str) -> (MockProvider, squall::embedded::ScriptedRun) {
    let upstream = Upstream::parse(upstream, key.map(str::to_owned)).expect("a valid upstream");
    let mut config = ServerConfig::loopback(Catalogue::default());
    config.upstream = Some(upstream);
    let provider = MockProvider::start_with(config).await;
    let run = provider.run(from_toml_str("proxy", &format!("name = \"proxy\"\n{toml}")).expect("valid"));
    (provider, run)
}

pub(super) async fn stream_request(base_url: &str) -> reqwest::Response {
    let body = json!({"model": "gpt-test", "input": "hello", "stream": true});
    let url = format!("{base_url}/responses");
    reqwest::Client::new().post(url).bearer_auth(CLIENT_KEY).json(&body).send().await.expect("sent")
}

#[tokio::test]
async fn with_nothing_scripted_the_upstreams_reply_passes_byte_for_byte() {
    let upstream = FakeUpstream::start("200 OK", "text/event-stream", "x-upstream-id: u-1\r\n", STREAM).await;
    let (_provider, run) = proxy(&upstream.url(), None, "[[attempts]]\n").await;
    let response = stream_request(run.base_url()).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-upstream-id"], "u-1", "the upstream's headers pass");
    assert_eq!(read_body(response).await.text(), STREAM, "byte for byte");

    let forwarded = upstream.requests();
    assert_eq!(forwarded.len(), 1);
    assert!(forwarded[0].starts_with("POST /v1/responses HTTP/1.1"), "{}", forwarded[0]);
    assert!(forwarded[0].contains(&format!("Bearer {CLIENT_KEY}")), "the client's key goes to the upstream");
    assert!(forwarded[0].contains("\"input\":\"hello\""), "the body as sent");

    let journal = run.journal();
    let entry = &journal[0];
    let call = entry.upstream.as_ref().expect("the upstream's part is journaled");
    assert_eq!((call.status, entry.status, entry.end), (Some(200), Some(200), Some(EndKind::Completed)));
    assert_eq!((entry.events_sent, entry.terminal_sent), (5, true));
    assert!(call.headers_after_ms.is_some_and(|ms| ms >= 0.0));
    let written = serde_json::to_string(&journal).expect("json");
    assert!(!written.contains(CLIENT_KEY), "no key in the journal: {written}");
    assert_eq!(entry.headers["authorization"], "Bearer [redacted]");
}

#[tokio::test]
async fn a_fault_fires_after_the_second_output_delta_of_the_real_stream() {
    let upstream = FakeUpstream::start("200 OK", "text/event-stream", "", STREAM).await;
    let (_provider, run) =
        proxy(&upstream.url(), None, "[[attempts]]\nfault = { kind = \"reset\", after_deltas = 2 }\n").await;
    let body = read_body(stream_request(run.base_url()).await).await;
    let through_two = STREAM.find(" three").map(|i| STREAM[..i].rfind("event:").expect("an event")).expect("three");
    assert_eq!(body.text(), STREAM[..through_two], "everything up to the second delta, then the reset");
    assert_eq!(body.io_error_kind(), Some(std::io::ErrorKind::ConnectionReset), "{}", body.error_chain());
    let entry = &run.journal()[0];
    assert_eq!((entry.end, entry.events_sent, entry.terminal_sent), (Some(EndKind::Reset), 3, false));
}

#[tokio::test]
async fn a_truncation_after_one_delta_ends_cleanly_before_the_terminal_event() {
    let upstream = FakeUpstream::start("200 OK", "text/event-stream", "", STREAM).await;
    let (_provider, run) =
        proxy(&upstream.url(), None, "[[attempts]]\nfault = { kind = \"truncate\", after_deltas = 1 }\n").await;
    let body = read_body(stream_request(run.base_url()).await).await;
    let names: Vec<String> = body.event_names();
    assert_eq!(names, ["response.created", "response.output_text.delta"], "{}", body.text());
    assert!(body.error.is_none(), "a clean end: {}", body.error_chain());
    assert_eq!(run.journal()[0].end, Some(EndKind::Truncated));
}

#[tokio::test]
async fn a_scripted_status_answers_without_forwarding_and_the_next_attempt_forwards() {
    let upstream = FakeUpstream::start("200 OK", "text/event-stream", "", STREAM).await;
    let toml = "[[attempts]]\nstatus = 429\nheaders = { retry-after = \"3\" }\n[[attempts]]\n";
    let (_provider, run) = proxy(&upstream.url(), None, toml).await;
    let refused = stream_request(run.base_url()).await;
    assert_eq!((refused.status().as_u16(), refused.headers()["retry-after"].to_str().ok()), (429, Some("3")));
    assert!(upstream.requests().is_empty(), "the 429 was squall's own");
    assert_eq!(read_body(stream_request(run.base_url()).await).await.text(), STREAM);
    assert_eq!(upstream.requests().len(), 1);
    let journal = run.journal();
    assert!(journal[0].upstream.is_none() && journal[1].upstream.is_some());
}

#[tokio::test]
async fn the_upstreams_own_error_reaches_the_client_as_it_was() {
    let error = r#"{"error":{"message":"Upstream says slow down","type":"requests","code":"rate_limit_exceeded"}}"#;
    let upstream = FakeUpstream::start("429 Too Many Requests", "application/json", "retry-after: 7\r\n", error).await;
    let (_provider, run) = proxy(&upstream.url(), None, "[[attempts]]\n").await;
    let response = stream_request(run.base_url()).await;
    assert_eq!((response.status().as_u16(), response.headers()["retry-after"].to_str().ok()), (429, Some("7")));
    assert_eq!(response.text().await.expect("a body"), error);
    let entry = &run.journal()[0];
    assert_eq!((entry.status, entry.upstream.as_ref().and_then(|u| u.status)), (Some(429), Some(429)));
}

#[tokio::test]
async fn a_key_of_squalls_own_replaces_the_clients_and_neither_is_journaled() {
    let upstream = FakeUpstream::start("200 OK", "text/event-stream", "", STREAM).await;
    let own = "sk-squall-upstream-77c1";
    let (_provider, run) = proxy(&upstream.url(), Some(own), "[[attempts]]\n").await;
    let _ = read_body(stream_request(run.base_url()).await).await;
    let forwarded = upstream.requests().concat();
    assert!(forwarded.contains(&format!("Bearer {own}")) && !forwarded.contains(CLIENT_KEY), "{forwarded}");
    let written = serde_json::to_string(&run.journal()).expect("json");
    assert!(!written.contains(own) && !written.contains(CLIENT_KEY), "{written}");
}

#[tokio::test]
async fn an_unreachable_upstream_is_a_502_naming_it() {
    let closed = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/v1", closed.local_addr().expect("addr"));
    drop(closed);
    let (_provider, run) = proxy(&url, None, "[[attempts]]\n").await;
    let response = stream_request(run.base_url()).await;
    assert_eq!(response.status(), 502);
    let body: Value = response.json().await.expect("json");
    let message = body["error"]["message"].as_str().expect("a message");
    assert!(message.contains(&url), "{message}");
    let call = run.journal()[0].upstream.clone().expect("journaled");
    assert!(call.status.is_none() && call.error.is_some(), "{call:?}");
}

/// squall as the real upstream: its Responses stream, Anthropic's Messages stream and a fault
/// at the first output delta of each, through the proxy.
#[tokio::test]
async fn squall_in_front_of_squall_keeps_every_apis_stream_and_cuts_it_at_the_delta() {
    let real = MockProvider::start().await;
    let toml = "name = \"real\"\n[[attempts]]\nstream = { text = \"Hello brave world\" }\n";
    let real_run = real.run(from_toml_str("real", toml).expect("valid"));
    let (_provider, run) =
        proxy(real_run.base_url(), None, "[[attempts]]\n[[attempts]]\nfault = { kind = \"eof\", after_deltas = 1 }\n")
            .await;
    let whole = read_body(stream_request(run.base_url()).await).await;
    let text: String = parse_sse(&whole.text())
        .iter()
        .filter_map(|(_, data)| serde_json::from_str::<Value>(data).ok())
        .filter(|e| e["type"] == "response.output_text.delta")
        .filter_map(|e| e["delta"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(text, "Hello brave world");
    let cut = read_body(stream_request(run.base_url()).await).await;
    assert_eq!(cut.event_names().iter().filter(|n| n.ends_with(".delta")).count(), 1, "{}", cut.text());
    assert!(cut.error.is_some(), "the eof breaks the body: {}", cut.text());
    assert_eq!(run.journal()[1].end, Some(EndKind::Eof));
    assert_eq!(real_run.journal().len(), 2, "both requests reached the real squall");
}

/// The streams that are not SSE are read by their own framing: an Ollama upstream's JSON lines
/// and a Bedrock upstream's event-stream messages are cut right after the second output delta.
#[tokio::test]
async fn a_delta_fault_lands_between_an_upstreams_json_lines_and_its_event_stream_messages() {
    let real = MockProvider::start().await;
    let toml = "name = \"real\"\n[[attempts]]\nstream = { text = \"a b c d\" }\n";
    let real_run = real.run(from_toml_str("real", toml).expect("valid"));
    let (_provider, run) =
        proxy(real_run.base_url(), None, "[[attempts]]\nfault = { kind = \"reset\", after_deltas = 2 }\n").await;
    let root = run.anthropic_base_url().to_owned();
    let client = reqwest::Client::new();
    let ollama = client.post(format!("{root}/api/chat")).json(&json!({"model": "m", "messages": []}));
    let lines = read_body(ollama.send().await.expect("sent")).await;
    let deltas: Vec<String> = lines.text().lines().map(|l| l.to_owned()).collect();
    assert_eq!(deltas.len(), 2, "two whole lines, then the reset: {}", lines.text());
    assert!(deltas[1].contains("\" b\"") && lines.text().ends_with('\n'), "{}", lines.text());
    assert_eq!(lines.io_error_kind(), Some(std::io::ErrorKind::ConnectionReset), "{}", lines.error_chain());

    let bedrock = client.post(format!("{root}/model/m/converse-stream")).json(&json!({"messages": []}));
    let messages = read_body(bedrock.send().await.expect("sent")).await;
    let names = event_types(&messages.bytes);
    assert_eq!(names, ["messageStart", "contentBlockDelta", "contentBlockDelta"]);
    let journal = run.journal();
    let ends: Vec<_> = journal.iter().map(|e| (e.api, e.end, e.events_sent)).collect();
    use squall::journal::Api;
    assert_eq!(ends, [(Some(Api::OllamaChat), Some(EndKind::Reset), 2), (Some(Api::Bedrock), Some(EndKind::Reset), 3)]);
}

/// The `:event-type` of each whole event-stream message in `bytes` (the first header, as squall
/// writes it: name length, name, type 7, value length, value); every message must be whole.
fn event_types(mut bytes: &[u8]) -> Vec<String> {
    let mut names = Vec::new();
    while !bytes.is_empty() {
        let word = |at: usize| u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]) as usize;
        let total = word(0);
        assert!(bytes.len() >= total, "only whole messages: {} bytes left of {total}", bytes.len());
        let header = &bytes[12..];
        let value_at = 1 + usize::from(header[0]) + 3;
        let value_len = usize::from(u16::from_be_bytes([header[value_at - 2], header[value_at - 1]]));
        names.push(String::from_utf8_lossy(&header[value_at..value_at + value_len]).into_owned());
        bytes = &bytes[total..];
    }
    names
}
