//! A hostile HTTP/2 client, written frame by frame, cannot hurt squall: the rapid-reset attack
//! (CVE-2023-44487), a CONTINUATION flood and an HPACK bomb are each cut off with GOAWAY
//! ENHANCE_YOUR_CALM, PING and SETTINGS floods leave memory bounded, a stream past the
//! advertised limit is refused alone, and another connection is served meanwhile
//! (docs/hardening.md, `src/server/connection/h2_limits.rs`).

use std::io::Write;
use std::time::Duration;

use bytes::Bytes;
use serde_json::json;
use squall::embedded::MockProvider;
use squall::scenario::{Attempt, Scenario};

use squall_testkit::h2_wire::{
    frame, frames_until_closed, get_root, goaway_code, literal, opened, post_head, setting, write_until_closed,
    CONTINUATION, END_HEADERS, END_STREAM, ENHANCE_YOUR_CALM, HEADERS, PING, REFUSED_STREAM, RST_STREAM, SETTINGS,
};

/// A calm client on a connection of its own is served while the hostile one is cut off.
async fn a_calm_client_is_served(provider: &MockProvider) {
    let run = provider.run(Scenario::named("calm").attempt(Attempt::text("fine")));
    let address = provider.server().origin().strip_prefix("http://").expect("http").to_owned();
    let tcp = tokio::net::TcpStream::connect(address).await.expect("connects");
    let (client, connection) = h2::client::handshake(tcp).await.expect("handshake");
    tokio::spawn(connection);
    let mut client = client.ready().await.expect("ready");
    let url = format!("{}/responses", run.base_url());
    let request = http::Request::post(url).body(()).expect("request");
    let (response, mut body) = client.send_request(request, false).expect("stream");
    body.send_data(Bytes::from(json!({"model": "m", "input": "x"}).to_string()), true).expect("body");
    let response = tokio::time::timeout(Duration::from_secs(10), response).await.expect("in time").expect("a response");
    assert_eq!(response.status(), 200);
}

/// A hostile connection that writes `bytes` (until squall closes it) is cut off with GOAWAY
/// ENHANCE_YOUR_CALM (0xb), while a calm client on a connection of its own is served.
async fn is_cut_off_with_enhance_your_calm(bytes: Vec<u8>) {
    let _quiet = squall_testkit::quiet_turn().await;
    let provider = MockProvider::start().await;
    let addr = provider.server().local_addr();
    let hostile = tokio::task::spawn_blocking(move || {
        let mut socket = opened(addr);
        write_until_closed(&mut socket, &bytes);
        goaway_code(&mut socket)
    });
    a_calm_client_is_served(&provider).await;
    assert_eq!(hostile.await.expect("joined"), Some(ENHANCE_YOUR_CALM));
}

/// 2,000 streams opened and reset at once: past 20 reset before squall took them, the
/// connection is closed with GOAWAY ENHANCE_YOUR_CALM.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rapid_reset_is_cut_off_with_enhance_your_calm() {
    let mut burst = Vec::new();
    for stream in (1..4000u32).step_by(2) {
        burst.extend(frame(HEADERS, END_HEADERS | END_STREAM, stream, &get_root()));
        burst.extend(frame(RST_STREAM, 0, stream, &8u32.to_be_bytes()));
    }
    is_cut_off_with_enhance_your_calm(burst).await;
}

/// HEADERS then CONTINUATION frames that never end the header block: cut off with GOAWAY
/// ENHANCE_YOUR_CALM once the block passes what a request head may be, long before the client
/// stops sending.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continuation_flood_is_cut_off() {
    let mut flood = frame(HEADERS, 0, 1, &get_root());
    let piece = literal("x-flood", &"f".repeat(100));
    for _ in 0..20_000 {
        flood.extend(frame(CONTINUATION, 0, 1, &piece));
    }
    is_cut_off_with_enhance_your_calm(flood).await;
}

/// One 4 KiB header put in the dynamic table, then referenced by one byte each: decoded, the
/// head passes 16 KiB after four references; squall closes the connection with GOAWAY
/// ENHANCE_YOUR_CALM ("header_list_way_too_large") without decoding the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_hpack_bomb_is_refused() {
    let mut block = get_root();
    // Literal with incremental indexing, new name (0x40); a 4,000-byte value (its length as an
    // HPACK integer with a 7-bit prefix: 127, then 3,873 in 7-bit groups).
    block.extend([0x40, 5]);
    block.extend_from_slice(b"x-big");
    block.extend([0x7f, 0xa1, 0x1e]);
    block.extend(std::iter::repeat_n(b'b', 4000));
    // Then the same entry, index 62 (the dynamic table's first), 3,000 times.
    block.extend(std::iter::repeat_n(0x80 | 62, 3000));
    is_cut_off_with_enhance_your_calm(frame(HEADERS, END_HEADERS | END_STREAM, 1, &block)).await;
}

/// Frames that each ask for an answer, written without reading one: `h2` answers one at a time
/// and stops reading while its answer waits, so the flood stalls in the sockets' buffers instead
/// of squall's memory, and others are served meanwhile. Of 64 MiB, no more than the loopback
/// buffers hold (a few MiB each way) is taken before the client's writes block.
async fn a_flood_is_held_back(one: Vec<u8>) {
    const FLOOD: usize = 64 << 20;
    let provider = MockProvider::start().await;
    let addr = provider.server().local_addr();
    let hostile = tokio::task::spawn_blocking(move || {
        let mut socket = opened(addr);
        socket.set_write_timeout(Some(Duration::from_secs(2))).expect("a write timeout");
        let piece: Vec<u8> = one.iter().copied().cycle().take(one.len() * 4096).collect();
        let mut written = 0;
        while written < FLOOD {
            match socket.write(&piece) {
                Ok(n) => written += n,
                Err(_) => break,
            }
        }
        (socket, written)
    });
    a_calm_client_is_served(&provider).await;
    let (_socket, written) = hostile.await.expect("joined");
    assert!(written < FLOOD / 2, "squall took {} MiB of frames it could not answer", written >> 20);
}

/// A PING flood: each PING asks for an ACK.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ping_flood_is_held_back_not_buffered() {
    let _quiet = squall_testkit::quiet_turn().await;
    a_flood_is_held_back(frame(PING, 0, 0, &[7; 8])).await;
}

/// A SETTINGS flood: each SETTINGS (here the default header table size, again and again) asks
/// for an ACK, and `h2` acknowledges one before it reads the next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_settings_flood_is_held_back_not_buffered() {
    let _quiet = squall_testkit::quiet_turn().await;
    const HEADER_TABLE_SIZE: u16 = 0x1;
    a_flood_is_held_back(frame(SETTINGS, 0, 0, &setting(HEADER_TABLE_SIZE, 4096))).await;
}

/// One stream more than the 200 squall advertises (SETTINGS_MAX_CONCURRENT_STREAMS), each held
/// open by a request head whose body never comes: the 201st is refused with RST_STREAM
/// REFUSED_STREAM (a refusal a client may retry) and nothing else is, the connection is not
/// closed for it, and another connection is served meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_past_the_advertised_limit_is_refused() {
    let _quiet = squall_testkit::quiet_turn().await;
    const ADVERTISED: u32 = 200;
    let provider = MockProvider::start().await;
    let run = provider.run(Scenario::named("held").attempt(Attempt::text("fine")));
    let origin = provider.server().origin().to_owned();
    let path = format!("{}/responses", run.base_url().strip_prefix(&origin).expect("a run under the origin"));
    let addr = provider.server().local_addr();
    let hostile = tokio::task::spawn_blocking(move || {
        let mut socket = opened(addr);
        let heads: Vec<u8> = (0..=ADVERTISED).flat_map(|n| post_head(2 * n + 1, &path)).collect();
        socket.write_all(&heads).expect("the heads");
        frames_until_closed(&mut socket, Duration::from_secs(2))
    });
    a_calm_client_is_served(&provider).await;
    let frames = hostile.await.expect("joined");
    let resets: Vec<(u32, u32)> = frames
        .iter()
        .filter(|f| f.kind == RST_STREAM)
        .map(|f| (f.stream, u32::from_be_bytes(f.payload[..4].try_into().expect("a code"))))
        .collect();
    assert_eq!(resets, [(2 * ADVERTISED + 1, REFUSED_STREAM)], "the resets squall sent");
    assert!(frames.iter().all(|f| f.goaway().is_none()), "the connection was closed: {frames:?}");
}
