//! Server throughput: squall generating and serving a 50-event Responses stream versus
//! wiremock-rs serving the same bytes as a fixed body, with the same client in the same run;
//! and what a fault costs compared with a plain stream.

use std::time::Duration;

use bytes::Bytes;
use criterion::{Criterion, Throughput};
use squall::scenario::StreamSpec;
use squall::wire::{responses, ReplyContext};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::common::{drain, runtime, scripted, server};

/// A text that the Responses API streams as exactly 50 events.
pub(super) fn fifty_event_text() -> String {
    // 8 framing events + 42 deltas, one per word.
    (0..42).map(|i| format!("word{i}")).collect::<Vec<_>>().join(" ")
}

/// The bytes squall streams for [`fifty_event_text`], as one fixed body.
pub(super) fn fifty_event_body() -> Bytes {
    let spec = StreamSpec { text: Some(fifty_event_text()), ..StreamSpec::default() };
    let events = responses::stream_events(&spec, &ReplyContext::placeholder());
    assert_eq!(events.len(), 50);
    events.iter().flat_map(|e| e.to_bytes().to_vec()).collect::<Vec<u8>>().into()
}

pub fn benches(c: &mut Criterion) {
    let rt = runtime();
    let text = fifty_event_text();
    let spec = StreamSpec { text: Some(text.clone()), ..StreamSpec::default() };
    let body = fifty_event_body();

    let squall = rt.block_on(server());
    let (plain_url, _plain) = scripted(&squall, &format!("[[attempts]]\nstream = {{ text = \"{text}\" }}\n"), 1.0);
    let (truncated_url, _truncated) = scripted(
        &squall,
        &format!(
            "[[attempts]]\nstream = {{ text = \"{text}\" }}\nfault = {{ kind = \"truncate\", after_events = 49 }}\n"
        ),
        1.0,
    );
    let (reset_url, _reset) = scripted(
        &squall,
        &format!("[[attempts]]\nstream = {{ text = \"{text}\" }}\nfault = {{ kind = \"reset\", after_events = 49 }}\n"),
        1.0,
    );
    let wiremock = rt.block_on(async {
        let mock = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/responses"))
            .respond_with(ResponseTemplate::new(200).set_body_raw(body.to_vec(), "text/event-stream"))
            .mount(&mock)
            .await;
        mock
    });
    let wiremock_url = format!("{}/v1/responses", wiremock.uri());
    let client = reqwest::Client::new();

    let mut group = c.benchmark_group("server_throughput");
    // Where squall's time per request goes: generating the 50 events it serves.
    group.bench_function("generate_50_events_only", |b| {
        b.iter(|| responses::stream_events(&spec, &ReplyContext::placeholder()).len())
    });
    group.throughput(Throughput::Bytes(body.len() as u64)).sample_size(30).measurement_time(Duration::from_secs(4));
    for (name, url) in [
        ("squall_50_event_sse", format!("{plain_url}/responses")),
        ("wiremock_same_bytes_fixed_body", wiremock_url),
        ("squall_truncate_fault_after_49_events", format!("{truncated_url}/responses")),
        ("squall_reset_fault_after_49_events", format!("{reset_url}/responses")),
    ] {
        group.bench_function(name, |b| b.to_async(&rt).iter(|| drain(&client, &url)));
    }
    group.finish();
}
