//! Server throughput: squall generating and serving a 50-event Responses stream versus
//! wiremock-rs serving the same bytes as a fixed body (chunked, as squall's), with the same
//! client in the same run;
//! and what a fault costs compared with a plain stream.

use std::time::Duration;

use criterion::{Criterion, Throughput};
use squall::clock::TimeScale;
use squall::journal::Api;
use squall::scenario::StreamSpec;
use squall::wire::ReplyContext;

use super::common::{drain, runtime, scripted, server};
use super::same_bytes::{fifty_event_body, fifty_event_text, wiremock_same_bytes};

pub(crate) fn benches(c: &mut Criterion) {
    let rt = runtime();
    let text = fifty_event_text();
    let spec = StreamSpec { text: Some(text.clone()), ..StreamSpec::default() };
    let body = fifty_event_body();

    let squall = rt.block_on(server());
    let (plain_url, _plain) =
        scripted(&squall, &format!("[[attempts]]\nstream = {{ text = \"{text}\" }}\n"), TimeScale::REAL);
    let (truncated_url, _truncated) = scripted(
        &squall,
        &format!(
            "[[attempts]]\nstream = {{ text = \"{text}\" }}\nfault = {{ kind = \"truncate\", after_events = 49 }}\n"
        ),
        TimeScale::REAL,
    );
    let (reset_url, _reset) = scripted(
        &squall,
        &format!("[[attempts]]\nstream = {{ text = \"{text}\" }}\nfault = {{ kind = \"reset\", after_events = 49 }}\n"),
        TimeScale::REAL,
    );
    let wiremock = rt.block_on(wiremock_same_bytes());
    let wiremock_url = format!("{}/v1/responses", wiremock.uri());
    let client = reqwest::Client::new();

    let mut group = c.benchmark_group("server_throughput");
    // Where squall's time per request goes: generating the 50 events it serves.
    group.bench_function("generate_50_events_only", |b| {
        b.iter(|| Api::Responses.stream_events(&spec, &ReplyContext::placeholder()).len())
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
