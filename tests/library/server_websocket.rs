//! The Responses API over WebSocket (`GET {run}/v1/responses` upgraded), over real TCP: several
//! responses on one socket, a status at the upgrade, an `error` event on a later turn that
//! leaves the socket open, a reset without a close frame and a close frame with a scripted code
//! after output deltas, and the journal's entry per response with its socket.

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{json, Value};
use squall::journal::{Api, EndKind};
use squall::scenario::FaultKind;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error, Message};
use tokio_tungstenite::WebSocketStream;

use squall_testkit::harness::{json_reply, Harness};

type Socket = WebSocketStream<TcpStream>;

/// Open the run's Responses WebSocket: the socket, or the HTTP status the upgrade got.
async fn connect(h: &Harness) -> Result<Socket, http::Response<Option<Vec<u8>>>> {
    connect_to(h.run.responses_websocket_url()).await
}

async fn connect_to(url: String) -> Result<Socket, http::Response<Option<Vec<u8>>>> {
    let host = url.trim_start_matches("ws://").split('/').next().expect("a host").to_owned();
    let tcp = TcpStream::connect(host).await.expect("the server listens");
    let mut request = url.into_client_request().expect("a WebSocket request");
    request.headers_mut().insert("authorization", "Bearer sk-test".parse().expect("a header value"));
    match tokio_tungstenite::client_async(request, tcp).await {
        Ok((socket, _)) => Ok(socket),
        Err(Error::Http(response)) => Err(*response),
        Err(e) => panic!("the handshake failed: {e}"),
    }
}

async fn create(socket: &mut Socket) {
    let event = json!({"type": "response.create", "model": "gpt-test", "input": "hello"});
    socket.send(Message::text(event.to_string())).await.expect("sent");
}

/// What one response sent: its events, up to the terminal or error event, or how it ended.
#[derive(Debug)]
struct Received {
    events: Vec<Value>,
    /// The close frame's code, when the server closed with one.
    close_code: Option<CloseCode>,
    /// The transport error that ended the socket without a close frame.
    broken: Option<String>,
}

impl Received {
    fn types(&self) -> Vec<&str> {
        self.events.iter().filter_map(|e| e["type"].as_str()).collect()
    }

    fn text(&self) -> String {
        self.events
            .iter()
            .filter(|e| e["type"] == "response.output_text.delta")
            .filter_map(|e| e["delta"].as_str())
            .collect()
    }
}

async fn receive(socket: &mut Socket) -> Received {
    let mut received = Received { events: Vec::new(), close_code: None, broken: None };
    loop {
        match socket.next().await {
            Some(Ok(Message::Text(text))) => {
                let event: Value = serde_json::from_str(&text).expect("every frame is a JSON event");
                let last = matches!(event["type"].as_str(), Some("response.completed" | "response.failed" | "error"));
                received.events.push(event);
                if last {
                    return received;
                }
            }
            Some(Ok(Message::Close(frame))) => {
                received.close_code = frame.map(|f| f.code);
                return received;
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => {
                received.broken = Some(e.to_string());
                return received;
            }
            None => return received,
        }
    }
}

#[tokio::test]
async fn several_responses_share_one_socket_and_each_is_journaled_with_it() {
    let h = Harness::new("name = \"t\"\n[[attempts]]\nstream = { text = \"Hello brave world\" }\n[[attempts]]\nstream = { text = \"Second turn\" }\n").await;
    let mut socket = connect(&h).await.expect("the upgrade succeeds");
    create(&mut socket).await;
    let first = receive(&mut socket).await;
    assert_eq!(first.types().first(), Some(&"response.created"));
    assert_eq!(first.types().last(), Some(&"response.completed"));
    assert_eq!(first.text(), "Hello brave world");
    create(&mut socket).await;
    assert_eq!(receive(&mut socket).await.text(), "Second turn");

    let journal = h.settled_journal().await;
    assert_eq!(journal.len(), 2, "an entry per response, none for the upgrade: {journal:?}");
    for (n, entry) in journal.iter().enumerate() {
        assert_eq!((entry.method.as_str(), entry.path.as_str()), ("WS", "/responses"));
        assert_eq!((entry.api, entry.socket, entry.attempt), (Some(Api::Responses), Some(1), Some(n as u32)));
        assert_eq!((entry.end, entry.terminal_sent, entry.stream), (Some(EndKind::Completed), true, true));
        assert_eq!(entry.body["input"], "hello", "the event's fields are the body");
        assert!(entry.body.get("type").is_none());
        assert_eq!(entry.headers["authorization"], "Bearer [redacted]", "the upgrade's headers, the key redacted");
    }
}

#[tokio::test]
async fn a_status_at_the_upgrade_refuses_the_socket_and_the_next_one_opens() {
    let toml = "name = \"t\"\n[[attempts]]\nstatus = 429\nheaders = { retry-after = \"2\" }\n[[attempts]]\nstream = { text = \"ok\" }\n";
    let h = Harness::new(toml).await;
    let refused = connect(&h).await.expect_err("the upgrade is refused");
    assert_eq!(refused.status(), 429);
    assert_eq!(refused.headers()["retry-after"], "2");
    let mut socket = connect(&h).await.expect("the second upgrade succeeds");
    create(&mut socket).await;
    assert_eq!(receive(&mut socket).await.text(), "ok");
    let journal = h.settled_journal().await;
    assert_eq!(journal.len(), 2);
    assert_eq!((journal[0].method.as_str(), journal[0].status, journal[0].attempt), ("GET", Some(429), Some(0)));
    assert_eq!((journal[1].method.as_str(), journal[1].attempt, journal[1].socket), ("WS", Some(1), Some(1)));
}

#[tokio::test]
async fn a_status_on_a_later_turn_is_an_error_event_and_the_socket_stays_open() {
    let toml = "name = \"t\"\n[[attempts]]\nstream = { text = \"first\" }\n[[attempts]]\nstatus = 503\nheaders = { retry-after = \"1\" }\n[[attempts]]\nstream = { text = \"third\" }\n";
    let h = Harness::new(toml).await;
    let mut socket = connect(&h).await.expect("opens");
    create(&mut socket).await;
    assert_eq!(receive(&mut socket).await.text(), "first");
    create(&mut socket).await;
    let error = receive(&mut socket).await;
    assert_eq!(error.types(), vec!["error"]);
    let event = &error.events[0];
    assert_eq!(event["status"], 503);
    assert_eq!(event["error"]["headers"]["retry-after"], "1", "{event}");
    assert!(event["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{event}");
    create(&mut socket).await;
    assert_eq!(receive(&mut socket).await.text(), "third", "the socket outlives the error");
    let journal = h.settled_journal().await;
    assert_eq!((journal[1].status, journal[1].end), (Some(503), Some(EndKind::ErrorStatus)));
    assert_eq!(journal[1].response_headers["retry-after"], "1");
}

#[tokio::test]
async fn a_reset_after_two_deltas_ends_the_socket_without_a_close_frame() {
    let toml = "name = \"t\"\n[[attempts]]\nstream = { text = \"one two three four\" }\nfault = { kind = \"reset\", after_deltas = 2 }\n";
    let h = Harness::new(toml).await;
    let mut socket = connect(&h).await.expect("opens");
    create(&mut socket).await;
    let received = receive(&mut socket).await;
    assert_eq!(received.text(), "one two", "two deltas, then the reset");
    assert!(received.close_code.is_none(), "no close frame: {received:?}");
    assert!(received.broken.is_some(), "the transport broke: {received:?}");
    let entry = &h.settled_journal().await[0];
    assert_eq!((entry.fault, entry.end, entry.terminal_sent), (Some(FaultKind::Reset), Some(EndKind::Reset), false));
}

#[tokio::test]
async fn a_truncation_closes_with_the_scripted_code_before_the_terminal_event() {
    let toml = "name = \"t\"\n[[attempts]]\nstream = { text = \"one two three\" }\nfault = { kind = \"truncate\", after_deltas = 1, close_code = 1011 }\n";
    let h = Harness::new(toml).await;
    let mut socket = connect(&h).await.expect("opens");
    create(&mut socket).await;
    let received = receive(&mut socket).await;
    assert_eq!(received.text(), "one");
    assert_eq!(received.close_code, Some(CloseCode::Error), "1011: {received:?}");
    assert!(!received.types().contains(&"response.completed"));
    let entry = &h.settled_journal().await[0];
    assert_eq!((entry.end, entry.fault), (Some(EndKind::Truncated), Some(FaultKind::Truncate)));
}

/// A graceful `goaway`: the reply ends whole, then the socket closes with 1001 (going away).
#[tokio::test]
async fn a_graceful_goaway_closes_with_going_away_after_the_reply() {
    let toml = "name = \"t\"\n[[attempts]]\nstream = { text = \"one two three\" }\nfault = { kind = \"goaway\", after_deltas = 1 }\n";
    let h = Harness::new(toml).await;
    let mut socket = connect(&h).await.expect("opens");
    create(&mut socket).await;
    let received = receive(&mut socket).await;
    assert_eq!(received.text(), "one two three");
    assert!(received.types().contains(&"response.completed"), "{received:?}");
    let after = receive(&mut socket).await;
    assert_eq!((after.events.len(), after.close_code), (0, Some(CloseCode::Away)), "1001: {after:?}");
    let entry = &h.settled_journal().await[0];
    assert_eq!((entry.end, entry.fault), (Some(EndKind::Completed), Some(FaultKind::Goaway)));
}

#[tokio::test]
async fn a_close_code_is_named_when_it_cannot_be_sent_or_does_not_close() {
    for (fault, says) in [
        ("{ kind = \"truncate\", close_code = 1006 }", "1006 cannot be sent"),
        ("{ kind = \"reset\", close_code = 1001 }", "only applies to `truncate`"),
    ] {
        let toml = format!("name = \"t\"\n[[attempts]]\nstream = {{ text = \"x\" }}\nfault = {fault}\n");
        let error = squall::scenario::load::from_toml_str("t.toml", &toml).expect_err("refused").to_string();
        assert!(error.contains("fault.close_code") && error.contains(says), "{error}");
    }
}

#[tokio::test]
async fn the_admin_api_names_each_runs_websocket_url() {
    let h = Harness::new("name = \"t\"\n[[attempts]]\n").await;
    let origin = h.base_url.split("/runs/").next().expect("origin");
    let scenario = json!({"scenario": {"name": "a", "attempts": [{"stream": {"text": "over the socket"}}]}});
    let created: Value = json_reply(h.client.post(format!("{origin}/__squall/runs")).json(&scenario)).await;
    let url = created["responses_websocket_url"].as_str().expect("responses_websocket_url").to_owned();
    let base = created["base_url"].as_str().expect("base_url");
    assert_eq!(url, format!("{}/responses", base.replacen("http://", "ws://", 1)));
    let mut socket = connect_to(url).await.expect("opens");
    create(&mut socket).await;
    assert_eq!(receive(&mut socket).await.text(), "over the socket");
}

#[tokio::test]
async fn a_stall_is_silence_until_the_client_gives_up_and_a_timed_one_goes_on() {
    let toml = "name = \"t\"\n[[attempts]]\nstream = { text = \"a b c\" }\nfault = { kind = \"stall\", after_deltas = 1 }\n[[attempts]]\nstream = { text = \"a b c\" }\nfault = { kind = \"stall\", after_deltas = 1, ms = 100 }\n";
    let h = Harness::new(toml).await;
    let mut socket = connect(&h).await.expect("opens");
    create(&mut socket).await;
    let silent = tokio::time::timeout(std::time::Duration::from_millis(300), receive(&mut socket)).await;
    assert!(silent.is_err(), "no terminal event during a stall: {silent:?}");
    drop(socket);
    let mut socket = connect(&h).await.expect("opens again");
    create(&mut socket).await;
    let started = std::time::Instant::now();
    let resumed = receive(&mut socket).await;
    assert_eq!(resumed.text(), "a b c", "the rest after the silence");
    assert!(started.elapsed() >= std::time::Duration::from_millis(100), "{:?}", started.elapsed());
    let journal = h.settled_journal().await;
    assert_eq!((journal[0].fault, journal[0].end), (Some(FaultKind::Stall), Some(EndKind::Stalled)));
    assert_eq!(
        (journal[1].fault, journal[1].end, journal[1].socket),
        (Some(FaultKind::Stall), Some(EndKind::Completed), Some(2))
    );
}

/// The close code the server's next frame carries, reading past anything else (5 s at most).
async fn close_code(socket: &mut Socket) -> Option<CloseCode> {
    let read = async {
        while let Some(Ok(message)) = socket.next().await {
            if let Message::Close(frame) = message {
                return frame.map(|f| f.code);
            }
        }
        None
    };
    tokio::time::timeout(std::time::Duration::from_secs(5), read).await.expect("the server closed within 5 s")
}

/// A frame the protocol refuses is answered with its close code (RFC 6455 §7.4.1): a text frame
/// that is not UTF-8 with 1007, not dropped without a frame (1006 at the client).
#[tokio::test]
async fn a_text_frame_that_is_not_utf8_is_closed_with_1007() {
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
    use tokio_tungstenite::tungstenite::protocol::frame::Frame;
    let h = Harness::new("name = \"t\"\n[[attempts]]\nstream = { text = \"hi\" }\n").await;
    let mut socket = connect(&h).await.expect("upgraded");
    let frame = Frame::message(vec![0xff, 0xfe, 0xfd], OpCode::Data(Data::Text), true);
    socket.send(Message::Frame(frame)).await.expect("sent");
    assert_eq!(close_code(&mut socket).await, Some(CloseCode::Invalid));
}

/// A socket with no response in flight is closed once idle for the server's header timeout
/// (`--header-timeout`), with 1001 (going away).
#[tokio::test]
async fn an_idle_socket_is_closed_after_the_header_timeout() {
    use squall::scenario::{Attempt, Scenario};
    let provider =
        squall_testkit::server::server_with(|c| c.header_timeout = std::time::Duration::from_millis(300)).await;
    let run = provider.run(Scenario::named("idle").attempt(Attempt::text("hi")));
    let mut socket = connect_to(run.responses_websocket_url()).await.expect("upgraded");
    let started = std::time::Instant::now();
    assert_eq!(close_code(&mut socket).await, Some(CloseCode::Away));
    assert!(started.elapsed() >= std::time::Duration::from_millis(250), "closed after {:?}", started.elapsed());
}
