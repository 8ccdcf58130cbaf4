//! HTTP/2 beside HTTP/1.1 on the same port (h2c, prior knowledge): every API streams over it
//! to curl, and each fault is seen frame by frame by the `h2` crate's own client — a reset as
//! RST_STREAM with the scenario's code after exactly the scripted events, an eof as an early
//! END_STREAM — while the other streams of the connection go on; a `goaway`'s frames are read
//! raw (`kit::h2_wire`), since a client hides the last-stream-id it names.

use std::io::Write;

use bytes::Bytes;
use squall::embedded::{MockProvider, ScriptedRun};
use squall::journal::{EndKind, JournalEntry, Protocol};
use squall::scenario::load::from_toml_str;
use squall::scenario::FaultKind;
use tokio::net::TcpStream;

use squall_testkit::calls::{every_api_call, responses_request, run_of};
use squall_testkit::h2_wire::{frames_until_closed, opened, post_json, Frame, DATA, END_STREAM, HEADERS};
use squall_testkit::harness::{parse_sse, read_body};

/// What one HTTP/2 stream carried: its status, body bytes, and the reset that ended it, if any.
struct StreamRead {
    status: u16,
    body: Vec<u8>,
    reset: Option<h2::Reason>,
}

impl StreamRead {
    fn event_names(&self) -> Vec<String> {
        parse_sse(&String::from_utf8_lossy(&self.body)).into_iter().filter_map(|(name, _)| name).collect()
    }
}

/// One HTTP/2 connection with prior knowledge, driven in the background.
async fn h2_connection(origin: &str) -> h2::client::SendRequest<Bytes> {
    let address = origin.strip_prefix("http://").expect("an http origin");
    let tcp = TcpStream::connect(address).await.expect("connects");
    let (client, connection) = h2::client::handshake(tcp).await.expect("HTTP/2 handshake with prior knowledge");
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}

/// POST `body` to `url` as one stream of `client`'s connection: its response head, or the
/// stream's reset before one.
async fn open_stream(
    client: &h2::client::SendRequest<Bytes>,
    url: &str,
    body: serde_json::Value,
) -> Result<http::Response<h2::RecvStream>, h2::Error> {
    let mut client = client.clone().ready().await.expect("the connection takes a stream");
    let request = http::Request::post(url).header("content-type", "application/json").body(()).expect("a request");
    let (response, mut send) = client.send_request(request, false).expect("stream opened");
    send.send_data(Bytes::from(body.to_string()), true).expect("request body sent");
    response.await
}

/// POST `body` to `url` as one stream of `client`'s connection and read it to its end.
async fn post_stream(client: &h2::client::SendRequest<Bytes>, url: &str, body: serde_json::Value) -> StreamRead {
    let response = open_stream(client, url, body).await.expect("response head");
    let status = response.status().as_u16();
    let mut stream = response.into_body();
    let (mut body, mut reset) = (Vec::new(), None);
    while let Some(chunk) = stream.data().await {
        match chunk {
            Ok(bytes) => {
                let _ = stream.flow_control().release_capacity(bytes.len());
                body.extend_from_slice(&bytes);
            }
            Err(e) => {
                reset = Some(e.reason().unwrap_or_else(|| panic!("a stream error without a reason: {e}")));
                break;
            }
        }
    }
    StreamRead { status, body, reset }
}

/// Every API squall serves streams over h2c to curl, and the journal says it came over HTTP/2.
#[tokio::test]
async fn curl_with_prior_knowledge_streams_every_api() {
    let provider = MockProvider::start().await;
    let run = run_of(&provider, "name = \"t\"\n[[attempts]]\nstream = { text = \"over two\" }\n");
    let calls = every_api_call(&run);
    for (api, url, body, ending) in &calls {
        // tokio's: the server serves on this test's own thread.
        let out = tokio::process::Command::new("curl")
            .args([
                "-sS",
                "--http2-prior-knowledge",
                "-N",
                "-w",
                "\n%{http_version} %{response_code}",
                "-X",
                "POST",
                url,
            ])
            .args(["-H", "content-type: application/json", "-d", &body.to_string()])
            .output()
            .await
            .expect("curl runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{api}: curl failed: {}", String::from_utf8_lossy(&out.stderr));
        assert!(text.ends_with("\n2 200"), "{api}: not an HTTP/2 200: {text}");
        assert!(text.contains(ending), "{api}: the stream is incomplete: {text}");
    }
    let journal = run.journal();
    assert_eq!(journal.len(), calls.len());
    for entry in &journal {
        assert_eq!(entry.protocol, Protocol::Http2, "{entry:?}");
        assert_eq!(
            (entry.end, entry.end_frame.as_deref()),
            (Some(EndKind::Completed), Some("END_STREAM")),
            "{entry:?}"
        );
    }
}

/// A `reset` ends the stream with RST_STREAM carrying the scenario's code, after exactly the
/// scripted events (`h2` drops a reset stream's frames still queued: squall waits for them to
/// leave); the connection stays open and serves the retry.
#[tokio::test]
async fn a_reset_is_rst_stream_with_the_scripted_code_after_exactly_the_scripted_events() {
    let provider = MockProvider::start().await;
    for (code, expected) in [("", h2::Reason::INTERNAL_ERROR), (", h2_code = \"cancel\"", h2::Reason::CANCEL)] {
        let toml = format!(
            "name = \"t\"\n[[attempts]]\nstream = {{ text = \"The quick brown fox\", chunks = 6 }}\nfault = {{ kind = \"reset\", after_events = 3{code} }}\n[[attempts]]\n"
        );
        let run = run_of(&provider, &toml);
        let client = h2_connection(provider.server().origin()).await;
        let url = format!("{}/responses", run.base_url());
        let broken = post_stream(&client, &url, responses_request()).await;
        assert_eq!((broken.status, broken.reset), (200, Some(expected)));
        assert_eq!(broken.event_names(), ["response.created", "response.in_progress", "response.output_item.added"]);
        let retry = post_stream(&client, &url, responses_request()).await;
        assert_eq!(retry.reset, None, "the retry on the same connection completes");
        assert_eq!(retry.event_names().last().map(String::as_str), Some("response.completed"));
        let journal = run.journal();
        let frame = format!("RST_STREAM {expected:?}");
        assert_eq!(
            (journal[0].end, journal[0].events_sent, journal[0].end_frame.as_deref()),
            (Some(EndKind::Reset), 3, Some(frame.as_str()))
        );
        assert_eq!(journal[1].end, Some(EndKind::Completed));
    }
}

/// An `eof` is END_STREAM before the reply is complete: a clean end of the stream without the
/// terminal event, which the client must notice by itself.
#[tokio::test]
async fn an_eof_is_an_early_end_stream() {
    let provider = MockProvider::start().await;
    let run = run_of(
        &provider,
        "name = \"t\"\n[[attempts]]\nstream = { text = \"a b c\" }\nfault = { kind = \"eof\", after_events = 5 }\n",
    );
    let client = h2_connection(provider.server().origin()).await;
    let read = post_stream(&client, &format!("{}/responses", run.base_url()), responses_request()).await;
    assert_eq!(read.reset, None, "END_STREAM, not RST_STREAM");
    assert_eq!(read.event_names().len(), 5);
    let journal = run.journal();
    assert_eq!((journal[0].end, journal[0].end_frame.as_deref()), (Some(EndKind::Eof), Some("END_STREAM")));
}

/// One connection carries streams of two runs: the reset of one leaves the other streaming.
#[tokio::test]
async fn a_reset_stream_leaves_the_other_streams_of_its_connection() {
    let provider = MockProvider::start().await;
    let breaking = run_of(
        &provider,
        "name = \"b\"\n[[attempts]]\nstream = { text = \"a b c\" }\nfault = { kind = \"reset\", after_events = 2 }\n",
    );
    let slow = run_of(
        &provider,
        "name = \"s\"\n[[attempts]]\nstream = { text = \"one two three four\", event_delay_ms = 20 }\n",
    );
    let client = h2_connection(provider.server().origin()).await;
    let (slow_url, breaking_url) =
        (format!("{}/responses", slow.base_url()), format!("{}/responses", breaking.base_url()));
    let (slow_read, broken) = tokio::join!(
        post_stream(&client, &slow_url, responses_request()),
        post_stream(&client, &breaking_url, responses_request())
    );
    assert_eq!(broken.reset, Some(h2::Reason::INTERNAL_ERROR));
    assert_eq!(slow_read.reset, None);
    assert_eq!(slow_read.event_names().last().map(String::as_str), Some("response.completed"));
    assert_eq!(provider.server().open_connections(), 1, "one connection carried both");
}

/// A code the RFC does not name, or a code on a fault that sends no RST_STREAM, is refused
/// with the field named.
#[tokio::test]
async fn an_h2_code_is_named_when_it_is_unknown_or_not_a_reset() {
    for (fault, says) in [
        ("{ kind = \"reset\", h2_code = \"teapot\" }", "unknown variant `teapot`"),
        ("{ kind = \"eof\", h2_code = \"cancel\" }", "only applies to `reset`, `refuse` and `goaway`"),
    ] {
        let toml = format!("name = \"t\"\n[[attempts]]\nstream = {{ text = \"x\" }}\nfault = {fault}\n");
        let error = from_toml_str("t.toml", &toml).expect_err("refused").to_string();
        assert!(error.contains("fault.h2_code") && error.contains(says), "{error}");
    }
}

/// A `refuse` resets the stream before any HEADERS, with REFUSED_STREAM unless the scenario
/// names another code; the retry on the same connection is answered.
#[tokio::test]
async fn a_refusal_is_rst_stream_before_the_response_head() {
    let provider = MockProvider::start().await;
    for (code, expected) in [("", h2::Reason::REFUSED_STREAM), (", h2_code = \"cancel\"", h2::Reason::CANCEL)] {
        let toml = format!("name = \"t\"\n[[attempts]]\nfault = {{ kind = \"refuse\"{code} }}\n[[attempts]]\n");
        let run = run_of(&provider, &toml);
        let client = h2_connection(provider.server().origin()).await;
        let url = format!("{}/responses", run.base_url());
        let refused = open_stream(&client, &url, responses_request()).await.expect_err("no response head");
        assert_eq!(refused.reason(), Some(expected), "{refused}");
        let retry = post_stream(&client, &url, responses_request()).await;
        assert_eq!(retry.event_names().last().map(String::as_str), Some("response.completed"));
        let journal = run.journal();
        let frame = format!("RST_STREAM {expected:?}");
        assert_eq!(
            (journal[0].fault, journal[0].end, journal[0].status, journal[0].end_frame.as_deref()),
            (Some(FaultKind::Refuse), Some(EndKind::Refused), None, Some(frame.as_str()))
        );
        assert_eq!(journal[0].bytes_sent, 0);
    }
}

/// Over HTTP/1.1 a refusal closes the connection with no byte of a reply: a FIN, not a reset.
#[tokio::test]
async fn over_http1_a_refusal_closes_the_connection_before_any_byte() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let provider = MockProvider::start().await;
    let run = run_of(&provider, "name = \"r\"\n[[attempts]]\nfault = { kind = \"refuse\" }\n");
    let body = responses_request().to_string();
    let path =
        run.base_url().split_once("/runs/").map(|(_, rest)| format!("/runs/{rest}/responses")).expect("a run URL");
    let request = format!(
        "POST {path} HTTP/1.1\r\nhost: squall\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut socket = TcpStream::connect(provider.server().local_addr()).await.expect("connects");
    socket.write_all(request.as_bytes()).await.expect("request sent");
    let mut reply = Vec::new();
    let read = tokio::time::timeout(std::time::Duration::from_secs(10), socket.read_to_end(&mut reply)).await;
    assert_eq!(read.expect("closed in time").expect("a FIN, not a reset"), 0, "{}", String::from_utf8_lossy(&reply));
    let journal = run.journal();
    assert_eq!(
        (journal[0].end, journal[0].status, journal[0].end_frame.as_deref()),
        (Some(EndKind::Refused), None, None)
    );
}

/// A refusal fires before a reply: a position or a scripted reply is refused with its field.
#[tokio::test]
async fn a_refusal_with_a_position_or_a_reply_is_named() {
    for (attempt, field) in [
        ("fault = { kind = \"refuse\", after_events = 2 }", "attempts[0].fault.after_events"),
        ("status = 503\nfault = { kind = \"refuse\" }", "attempts[0].status"),
        ("stream = { text = \"x\" }\nfault = { kind = \"refuse\" }", "attempts[0].stream"),
    ] {
        let toml = format!("name = \"t\"\n[[attempts]]\n{attempt}\n");
        let error = from_toml_str("t.toml", &toml).expect_err("refused").to_string();
        assert!(error.contains(field) && error.contains("`refuse` fires before any byte of a reply"), "{error}");
    }
}

/// A client that gives up on a stalled stream resets it (RST_STREAM CANCEL): the entry ends
/// `stalled`, as a hang-up during a stall does over HTTP/1.1, and the connection serves on.
#[tokio::test]
async fn a_stream_the_client_resets_during_a_stall_is_journaled_stalled() {
    let provider = MockProvider::start().await;
    let run = run_of(
        &provider,
        "name = \"t\"\n[[attempts]]\nstream = { text = \"a b c\" }\nfault = { kind = \"stall\", after_events = 2 }\n[[attempts]]\n",
    );
    let url = format!("{}/responses", run.base_url());
    let client = h2_connection(provider.server().origin()).await;
    let mut ready = client.clone().ready().await.expect("the connection takes a stream");
    let request = http::Request::post(&url).header("content-type", "application/json").body(()).expect("a request");
    let (response, mut send) = ready.send_request(request, false).expect("stream opened");
    send.send_data(Bytes::from(responses_request().to_string()), true).expect("request body sent");
    let mut body = response.await.expect("response head").into_body();
    let first = body.data().await.expect("a first chunk").expect("data");
    assert!(String::from_utf8_lossy(&first).contains("response.created"));
    send.send_reset(h2::Reason::CANCEL);
    let mut end = None;
    for _ in 0..200 {
        end = run.journal()[0].end;
        if end.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert_eq!(end, Some(EndKind::Stalled));
    let retry = post_stream(&client, &url, responses_request()).await;
    assert_eq!(retry.event_names().last().map(String::as_str), Some("response.completed"));
}

/// The frames a raw HTTP/2 client sees for two requests on one connection — stream 1 to a
/// plain run, then stream 3 to `run` — until the server closes it; and `run`'s journal entry.
fn two_streams_then_the_end(provider: &MockProvider, run: &ScriptedRun) -> Vec<Frame> {
    let addr = provider.server().local_addr();
    let plain = run_of(provider, "name = \"plain\"\n[[attempts]]\nstream = { text = \"first\" }\n");
    let path = |run: &ScriptedRun| {
        format!(
            "/runs/{}/v1/responses",
            run.base_url().split("/runs/").nth(1).expect("a run URL").trim_end_matches("/v1")
        )
    };
    let body = responses_request().to_string();
    let (first, second) = (path(&plain), path(run));
    let mut socket = opened(addr);
    socket.write_all(&post_json(1, &first, &body)).expect("first request");
    // The second once the first is answered: it is then the last stream the client opened.
    std::thread::sleep(std::time::Duration::from_millis(200));
    socket.write_all(&post_json(3, &second, &body)).expect("second request");
    frames_until_closed(&mut socket, std::time::Duration::from_secs(10))
}

/// The frames of [`two_streams_then_the_end`] with `fault` on the second stream's run, and its
/// journal entry.
async fn second_stream_seen(fault: &str) -> (Vec<Frame>, JournalEntry) {
    let provider = MockProvider::start().await;
    let run =
        run_of(&provider, &format!("name = \"g\"\n[[attempts]]\nstream = {{ text = \"a b c\" }}\nfault = {fault}\n"));
    let frames = tokio::task::block_in_place(|| two_streams_then_the_end(&provider, &run));
    // The server finishes the entry as it drops the connection, just after the client saw it go.
    for _ in 0..200 {
        if run.journal()[0].end.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    (frames, run.journal().remove(0))
}

fn stream_ended(frames: &[Frame], stream: u32) -> bool {
    frames.iter().any(|f| f.stream == stream && matches!(f.kind, DATA | HEADERS) && f.flags & END_STREAM != 0)
}

fn body_of(frames: &[Frame], stream: u32) -> String {
    let bytes: Vec<u8> =
        frames.iter().filter(|f| f.stream == stream && f.kind == DATA).flat_map(|f| f.payload.clone()).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A graceful `goaway`: the reply ends whole, the GOAWAY names the last stream the client
/// opened (3, after the first GOAWAY's 2^31-1 and a PING, as RFC 9113 §6.8 advises), and the
/// connection closes once its streams are done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graceful_goaway_names_the_last_stream_and_lets_the_reply_end() {
    let (frames, entry) = second_stream_seen("{ kind = \"goaway\", after_events = 2 }").await;
    let goaways: Vec<(u32, u32)> = frames.iter().filter_map(Frame::goaway).collect();
    assert_eq!(goaways, [(0x7fff_ffff, 0), (3, 0)], "{frames:?}");
    assert!(stream_ended(&frames, 3) && body_of(&frames, 3).contains("response.completed"), "{frames:?}");
    assert_eq!(
        (entry.fault, entry.end, entry.end_frame.as_deref()),
        (Some(FaultKind::Goaway), Some(EndKind::Completed), Some("END_STREAM"))
    );
}

/// A `goaway` with a code: GOAWAY naming the last stream (3) with that code right after the
/// scripted events, then the connection closed; the reply never ends its stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_goaway_with_a_code_cuts_the_connection_after_exactly_the_scripted_events() {
    let (frames, entry) =
        second_stream_seen("{ kind = \"goaway\", after_events = 2, h2_code = \"internal_error\" }").await;
    let goaways: Vec<(u32, u32)> = frames.iter().filter_map(Frame::goaway).collect();
    assert_eq!(goaways, [(3, 2)], "{frames:?}");
    assert!(!stream_ended(&frames, 3), "{frames:?}");
    assert_eq!(parse_sse(&body_of(&frames, 3)).len(), 2);
    assert_eq!(
        (entry.fault, entry.end, entry.events_sent, entry.end_frame.as_deref()),
        (Some(FaultKind::Goaway), Some(EndKind::GoAway), 2, Some("GOAWAY INTERNAL_ERROR"))
    );
}

/// A `close`: the connection closed with no GOAWAY right after the scripted events, every
/// stream of it cut; the journal names no frame but the FIN.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_close_cuts_the_connection_with_no_goaway_after_exactly_the_scripted_events() {
    let (frames, entry) = second_stream_seen("{ kind = \"close\", after_events = 2 }").await;
    assert!(frames.iter().all(|f| f.goaway().is_none()), "{frames:?}");
    assert!(!stream_ended(&frames, 3), "{frames:?}");
    assert_eq!(parse_sse(&body_of(&frames, 3)).len(), 2);
    assert_eq!(
        (entry.fault, entry.end, entry.events_sent, entry.end_frame.as_deref()),
        (Some(FaultKind::Close), Some(EndKind::Closed), 2, Some("FIN"))
    );
}

/// Over HTTP/1.1 a graceful `goaway` lets the reply end whole, then closes the keep-alive
/// connection; one with a code is a FIN mid-body.
#[tokio::test]
async fn over_http1_a_goaway_closes_the_connection_after_or_during_the_reply() {
    let provider = MockProvider::start().await;
    let graceful = run_of(
        &provider,
        "name = \"g\"\n[[attempts]]\nstream = { text = \"a b c\" }\nfault = { kind = \"goaway\", after_events = 2 }\n",
    );
    let client = reqwest::Client::new();
    let post =
        |run: &ScriptedRun| client.post(format!("{}/responses", run.base_url())).json(&responses_request()).send();
    let whole = read_body(post(&graceful).await.expect("a response")).await;
    assert!(whole.error.is_none() && whole.event_names().last().is_some_and(|n| n == "response.completed"));
    let mut closed = false;
    for _ in 0..100 {
        closed = provider.server().open_connections() == 0;
        if closed {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(closed, "the keep-alive connection stayed open");
    let cut = run_of(&provider, "name = \"c\"\n[[attempts]]\nstream = { text = \"a b c\" }\nfault = { kind = \"goaway\", after_events = 2, h2_code = \"cancel\" }\n");
    let read = read_body(post(&cut).await.expect("a response")).await;
    assert!(read.error.is_some() && read.events().len() == 2, "{}", read.error_chain());
    assert_eq!(cut.journal()[0].end, Some(EndKind::GoAway));
    // A `close` is the same FIN mid-body.
    let closed = run_of(
        &provider,
        "name = \"x\"\n[[attempts]]\nstream = { text = \"a b c\" }\nfault = { kind = \"close\", after_events = 2 }\n",
    );
    let read = read_body(post(&closed).await.expect("a response")).await;
    assert!(read.error.is_some() && read.events().len() == 2, "{}", read.error_chain());
    assert_eq!(closed.journal()[0].end, Some(EndKind::Closed));
}
