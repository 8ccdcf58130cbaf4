//! A scripted reply rendered once, with slots for what changes from request to request — ids,
//! the model, the time, token counts — so that serving it costs filling the slots, not
//! rendering 50 JSON events again.
//!
//! The template is made by rendering the reply with a context of sentinels (private-use
//! characters for strings, 19-digit numbers for numbers) and cutting the bytes at each
//! sentinel. It is checked before use: filled with a test context it must equal a direct
//! rendering with that context, byte for byte; a script whose own text happened to contain a
//! sentinel fails that check and is rendered per request instead.

use std::time::Duration;

use bytes::Bytes;

use super::last_fill::{Filled, LastFill};
use super::plan::{plan_body, plan_stream, Body, ReplyPlan, Span};
use super::reply::{render, Rendered, Reply};
use super::ReplyContext;
use crate::api::Api;
use crate::clock::TimeScale;
use crate::scenario_model::Attempt;

/// The id seed sentinel: ids are `resp_<seed>`, `msg_<seed>`, ...
const SEED: &str = "\u{E000}s\u{E000}";
/// The model sentinel.
const MODEL: &str = "\u{E000}m\u{E000}";
/// The `created_at` sentinel.
const CREATED: u64 = 6_600_000_000_000_000_000;
/// The input-token sentinel; totals render as this plus the output tokens.
const INPUT: u64 = 7_700_000_000_000_000_000;
/// Output tokens beyond this are not taken for a total (they never come near it).
const MAX_OUTPUT: u64 = 1_000_000_000_000;

/// One piece of a templated body.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(Bytes),
    Seed,
    Model,
    CreatedAt,
    /// The input tokens plus this many.
    InputTokensPlus(u64),
}

/// How much of a template is fixed text, and how many slots of each kind it has.
#[derive(Debug, Clone, Copy, Default)]
struct Sizes {
    text: usize,
    seeds: usize,
    models: usize,
    numbers: usize,
}

impl Sizes {
    fn of(pieces: &[Vec<Piece>]) -> Self {
        pieces.iter().flatten().fold(Sizes::default(), |mut sizes, piece| {
            match piece {
                Piece::Text(text) => sizes.text += text.len(),
                Piece::Seed => sizes.seeds += 1,
                Piece::Model => sizes.models += 1,
                Piece::CreatedAt | Piece::InputTokensPlus(_) => sizes.numbers += 1,
            }
            sizes
        })
    }

    /// The filled body's length, at most (a number takes at most 20 digits, a time as Ollama
    /// writes it 30 characters).
    fn filled(&self, seed: usize, model: usize) -> usize {
        self.text + self.seeds * seed + self.models * model + self.numbers * 30
    }
}

/// A rendered reply with slots: what a request needs filled in to be served.
#[derive(Debug)]
pub(crate) struct ReplyTemplate {
    rendered: Rendered,
    /// The pieces of the body, span by span.
    pieces: Vec<Vec<Piece>>,
    /// Bytes of text and slots of each kind in `pieces`, to size a filled body at once.
    sizes: Sizes,
    fault: Option<crate::scenario_model::Fault>,
    event_delay: Duration,
    /// The scaled `delay_ms` before the headers.
    header_delay: Duration,
    time_scale: TimeScale,
    /// `created_at` as an RFC 3339 time (Ollama) rather than Unix seconds.
    times_as_text: bool,
    /// The body filled last, to fill the next request's from.
    last: LastFill,
}

impl ReplyTemplate {
    /// The template of `script`'s reply to `api`, streamed or not (and with a usage chunk or
    /// not), or `None` when the script's content collides with a sentinel.
    pub(crate) fn new(
        script: &Attempt,
        api: Api,
        wants_stream: bool,
        include_usage: bool,
        time_scale: TimeScale,
    ) -> Option<Self> {
        let sentinels = ReplyContext {
            id_seed: SEED.to_owned(),
            model: MODEL.to_owned(),
            created_at: CREATED,
            input_tokens: INPUT,
            include_usage,
        };
        let rendered = render(script, api, wants_stream, &sentinels);
        if matches!(rendered.body.framing, super::Framing::AwsEventStream(_)) {
            // Each message states its length and CRC: filling a slot would break both.
            return None;
        }
        let mut offset = 0;
        let pieces = rendered
            .body
            .spans
            .iter()
            .map(|span| {
                let pieces = cut(&rendered.body.bytes.slice(offset..offset + span.len));
                offset += span.len;
                pieces
            })
            .collect::<Vec<_>>();
        let template = ReplyTemplate {
            rendered,
            sizes: Sizes::of(&pieces),
            pieces,
            fault: script.fault.clone(),
            event_delay: super::plan::scaled_ms(script.event_delay_ms(), time_scale),
            header_delay: super::plan::scaled_ms(script.delay_ms.unwrap_or(0), time_scale),
            time_scale,
            times_as_text: api.streams_json_lines(),
            last: LastFill::default(),
        };
        let probe = ReplyContext {
            id_seed: "r0-probe_7".to_owned(),
            model: "m\"o\\del".to_owned(),
            created_at: 1_234_567_890,
            input_tokens: 321,
            include_usage,
        };
        (template.fill(&probe).bytes == render(script, api, wants_stream, &probe).body.bytes).then_some(template)
    }

    /// The body for one request: the last one with its id seed written over when only that
    /// differs, else filled piece by piece (and kept as the last).
    fn fill(&self, ctx: &ReplyContext) -> Body {
        let framing = self.rendered.body.framing;
        if let Some((bytes, spans)) = self.last.refill(ctx) {
            return Body { bytes, spans, framing };
        }
        let model = json_string_content(&ctx.model);
        let created_at = match self.times_as_text {
            true => super::ollama::created_at(ctx.created_at),
            false => ctx.created_at.to_string(),
        };
        let mut buffer = Vec::with_capacity(self.sizes.filled(ctx.id_seed.len(), model.len()));
        let mut spans = Vec::with_capacity(self.pieces.len());
        let mut seeds = Vec::with_capacity(self.sizes.seeds);
        for (pieces, span) in self.pieces.iter().zip(&self.rendered.body.spans) {
            let before = buffer.len();
            for piece in pieces {
                match piece {
                    Piece::Text(text) => buffer.extend_from_slice(text),
                    Piece::Seed => {
                        seeds.push(buffer.len());
                        buffer.extend_from_slice(ctx.id_seed.as_bytes())
                    }
                    Piece::Model => buffer.extend_from_slice(model.as_bytes()),
                    Piece::CreatedAt => buffer.extend_from_slice(created_at.as_bytes()),
                    Piece::InputTokensPlus(more) => {
                        buffer.extend_from_slice(ctx.input_tokens.saturating_add(*more).to_string().as_bytes())
                    }
                }
            }
            spans.push(Span { len: buffer.len() - before, ..*span });
        }
        let bytes = Bytes::from(buffer);
        self.last.keep(Filled::new(ctx, bytes.clone(), spans.clone(), seeds));
        Body { bytes, spans, framing }
    }

    /// The reply to one request.
    pub(crate) fn reply(&self, ctx: &ReplyContext) -> Reply {
        let body = self.fill(ctx);
        let fault = self.fault.as_ref();
        let plan = if self.rendered.stream {
            plan_stream(&body, fault, self.event_delay, self.time_scale)
        } else {
            plan_body(body.bytes, self.rendered.end, fault, self.time_scale)
        };
        let plan = ReplyPlan { header_delay: self.header_delay, ..plan };
        Reply {
            status: self.rendered.status,
            content_type: self.rendered.content_type,
            plan,
            spans: body.spans,
            headers: self.rendered.headers.clone(),
        }
    }
}

/// `text` as it reads between the quotes of a JSON string: itself, unless it has a character
/// JSON escapes.
fn json_string_content(text: &str) -> std::borrow::Cow<'_, str> {
    if text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        return text.into();
    }
    let quoted = serde_json::Value::from(text).to_string();
    quoted.get(1..quoted.len().saturating_sub(1)).unwrap_or_default().to_owned().into()
}

/// Cut rendered bytes at every sentinel.
fn cut(bytes: &Bytes) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let (mut from, mut at) = (0, 0);
    while at < bytes.len() {
        let found = sentinel_at(&bytes[at..]);
        match found {
            Some((piece, len)) => {
                if at > from {
                    pieces.push(Piece::Text(bytes.slice(from..at)));
                }
                pieces.push(piece);
                at += len;
                from = at;
            }
            None => at += 1,
        }
    }
    if bytes.len() > from {
        pieces.push(Piece::Text(bytes.slice(from..)));
    }
    pieces
}

/// The sentinel starting at the beginning of `rest`, and its length.
fn sentinel_at(rest: &[u8]) -> Option<(Piece, usize)> {
    for (text, piece) in [(SEED, Piece::Seed), (MODEL, Piece::Model)] {
        if rest.starts_with(text.as_bytes()) {
            return Some((piece, text.len()));
        }
    }
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits != 19 {
        return None;
    }
    let number: u64 = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    match number {
        CREATED => Some((Piece::CreatedAt, digits)),
        n if (INPUT..INPUT + MAX_OUTPUT).contains(&n) => Some((Piece::InputTokensPlus(n - INPUT), digits)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario_model::{Fault, FaultKind, FaultPoint, FunctionCallSpec, StreamSpec};

    fn attempts() -> Vec<Attempt> {
        let call = FunctionCallSpec { name: "Task".into(), arguments: r#"{"a": 1}"#.into(), call_id: None };
        vec![
            Attempt::default(),
            Attempt {
                stream: Some(StreamSpec { text: Some("one two three".into()), ..StreamSpec::default() }),
                ..Attempt::default()
            },
            Attempt {
                stream: Some(StreamSpec {
                    reasoning: Some("think".into()),
                    function_call: Some(call),
                    ..StreamSpec::default()
                }),
                fault: Some(Fault::at(FaultKind::Reset, FaultPoint::Events(5))),
                ..Attempt::default()
            },
            Attempt { status: Some(503), delay_ms: Some(2000), ..Attempt::default() },
        ]
    }

    #[test]
    fn a_filled_template_is_byte_for_byte_a_direct_rendering() {
        let ctx = ReplyContext {
            id_seed: "r9-x_12".into(),
            model: "gpt-\u{e9}".into(),
            created_at: 1_700_000_000,
            input_tokens: 42,
            include_usage: true,
        };
        for attempt in attempts() {
            for api in Api::ALL {
                for stream in [true, false] {
                    let template = ReplyTemplate::new(&attempt, api, stream, true, TimeScale::of(0.01));
                    if template.is_none() && matches!(api, Api::Bedrock | Api::BedrockInvoke) && stream {
                        // A message's length and CRC change with its slots: rendered per request.
                        assert!(!attempt.is_status_reply(), "{attempt:?}");
                        continue;
                    }
                    let template = template.expect("a template");
                    let direct = super::super::reply::build_reply(&attempt, api, stream, &ctx, TimeScale::of(0.01));
                    let from_template = template.reply(&ctx).plan;
                    assert_eq!(from_template.steps, direct.plan.steps, "{api:?} stream {stream}: {attempt:?}");
                    // The header delay is a step of the plan, scaled like every other wait.
                    let delay = std::time::Duration::from_millis(attempt.delay_ms.unwrap_or(0) / 100);
                    assert_eq!((from_template.header_delay, direct.plan.header_delay), (delay, delay));
                    // Sized at once: filling never grows the buffer.
                    let filled = template.fill(&ctx).bytes.len();
                    assert!(filled <= template.sizes.filled(ctx.id_seed.len(), ctx.model.len()), "{filled} bytes");
                }
            }
        }
    }

    /// One template serving request after request, each filled from the last where only its
    /// id seed differs: every body is still the direct rendering of its own context.
    #[test]
    fn bodies_filled_from_the_last_are_each_their_own_requests() {
        let ctx = |seed: &str, model: &str, created_at: u64, input_tokens: u64| ReplyContext {
            id_seed: seed.into(),
            model: model.into(),
            created_at,
            input_tokens,
            include_usage: true,
        };
        let requests = [
            ctx("r1-x_10", "m", 1_700_000_000, 42),
            ctx("r1-x_11", "m", 1_700_000_000, 42),
            ctx("r1-x_12", "m", 1_700_000_000, 42),
            ctx("r1-x_100", "m", 1_700_000_000, 42),
            ctx("r1-x_101", "gpt-\u{e9}", 1_700_000_000, 42),
            ctx("r1-x_102", "gpt-\u{e9}", 1_700_000_001, 42),
            ctx("r1-x_103", "gpt-\u{e9}", 1_700_000_001, 43),
            ctx("r1-x_104", "gpt-\u{e9}", 1_700_000_001, 43),
        ];
        for attempt in attempts() {
            for api in Api::ALL {
                let Some(template) = ReplyTemplate::new(&attempt, api, true, true, TimeScale::of(0.01)) else {
                    continue;
                };
                for request in &requests {
                    let direct = render(&attempt, api, true, request).body;
                    let filled = template.fill(request);
                    assert!(filled.bytes == direct.bytes, "{api:?} {request:?}: {attempt:?}");
                    assert_eq!(filled.spans, direct.spans, "{api:?} {request:?}");
                }
            }
        }
    }

    #[test]
    fn a_script_that_contains_a_sentinel_is_rendered_per_request() {
        let text = format!("look: {SEED} and 6600000000000000000");
        let attempt =
            Attempt { stream: Some(StreamSpec { text: Some(text), ..StreamSpec::default() }), ..Attempt::default() };
        assert!(ReplyTemplate::new(&attempt, Api::Responses, true, false, TimeScale::REAL).is_none());
    }
}
