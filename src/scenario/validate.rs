//! Semantic checks on a parsed scenario: things serde cannot see, each reported with the
//! field path and the bad value.

use super::error::{FieldPath, ScenarioError};
use super::headers::parse_header_template;
use super::limits::{check_count, check_delay_ms, MAX_ATTEMPTS, MAX_CHUNKS, MAX_OUTAGES, MAX_TRACKS};
pub use super::rendered_size::output_deltas;
use super::rendered_size::RenderedSize;
use crate::api::Api;
use crate::scenario_model::ChaosOutcome;
use crate::scenario_model::{Attempt, Chaos, FaultKind, FaultPoint, Quota, Scenario, Track};
use crate::wire::ReplyContext;

/// Check a scenario; the error names the first field at fault.
pub fn validate(scenario: &Scenario) -> Result<(), ScenarioError> {
    let root = FieldPath::root();
    check_name(&scenario.name).map_err(|e| ScenarioError::new(root.key("name"), e.to_string()))?;
    check_count(scenario.attempts.len(), MAX_ATTEMPTS, "attempts", &root.key("attempts"))?;
    check_count(scenario.tracks.len(), MAX_TRACKS, "tracks", &root.key("tracks"))?;
    let mut rendered = RenderedSize::default();
    for (i, attempt) in scenario.attempts.iter().enumerate() {
        check_attempt(attempt, &root.key("attempts").index(i))?;
        rendered.add(attempt, &root.key("attempts").index(i))?;
    }
    check_tracks(scenario, &mut rendered)?;
    check_outages(scenario, &mut rendered)?;
    if let Some(chaos) = &scenario.chaos {
        check_chaos(chaos)?;
    }
    if let Some(quota) = &scenario.quota {
        check_quota(quota)?;
    }
    Ok(())
}

/// A quota limits something, with limits of at least 1.
fn check_quota(quota: &Quota) -> Result<(), ScenarioError> {
    let path = FieldPath::root().key("quota");
    let limits = [(quota.requests_per_minute, "requests_per_minute"), (quota.tokens_per_minute, "tokens_per_minute")];
    if limits.iter().all(|(limit, _)| limit.is_none()) {
        return Err(ScenarioError::new(path, "set `requests_per_minute`, `tokens_per_minute` or both"));
    }
    for (limit, name) in limits {
        if limit == Some(0) {
            return Err(ScenarioError::new(path.key(name), "0 would refuse every request: at least 1"));
        }
    }
    Ok(())
}

/// Chaos: a rate that is a share, a mix of outcomes chaos knows with some weight.
fn check_chaos(chaos: &Chaos) -> Result<(), ScenarioError> {
    let path = FieldPath::root().key("chaos");
    if !(0.0..=1.0).contains(&chaos.rate) {
        return Err(ScenarioError::new(
            path.key("rate"),
            format!("{} is not a share: a number from 0 to 1", chaos.rate),
        ));
    }
    for name in chaos.mix.keys() {
        if ChaosOutcome::parse(name).is_none() {
            let known: Vec<&str> = ChaosOutcome::ALL.iter().map(|(n, _)| *n).collect();
            let message = format!("`{name}` is not an outcome chaos knows: {}", known.join(", "));
            return Err(ScenarioError::new(path.key("mix").key(name), message));
        }
    }
    if !chaos.mix.is_empty() && chaos.mix.values().all(|w| *w == 0) {
        return Err(ScenarioError::new(path.key("mix"), "every weight is 0: give some outcome a weight"));
    }
    Ok(())
}

/// Each outage: a window that closes after it opens, within a week of run time; rates in 0-1;
/// a reply like any attempt's.
fn check_outages(scenario: &Scenario, rendered: &mut RenderedSize) -> Result<(), ScenarioError> {
    let root = FieldPath::root().key("outage");
    check_count(scenario.outage.len(), MAX_OUTAGES, "outages", &root)?;
    for (i, outage) in scenario.outage.iter().enumerate() {
        let path = root.index(i);
        check_delay_ms(outage.until_ms, &path.key("until_ms"))?;
        if outage.until_ms <= outage.from_ms {
            let message = format!(
                "the window must close after it opens: until_ms {} ≤ from_ms {}",
                outage.until_ms, outage.from_ms
            );
            return Err(ScenarioError::new(path.key("until_ms"), message));
        }
        for (rate, name) in [(outage.rate, "rate"), (outage.rate_until, "rate_until")] {
            if let Some(rate) = rate.filter(|r| !(0.0..=1.0).contains(r)) {
                return Err(ScenarioError::new(path.key(name), format!("{rate} is not a share: a number from 0 to 1")));
            }
        }
        check_attempt(&outage.reply, &path.key("reply"))?;
        rendered.add(&outage.reply, &path.key("reply"))?;
    }
    Ok(())
}

/// A name that cannot travel in URLs and file names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadName {
    /// The name is empty.
    #[error("must not be empty")]
    Empty,
    /// The name has a character, a `..` or a length that URLs and file names cannot take.
    #[error("`{0}` is not a valid name: use letters, digits, `-`, `_` and `.` (no `..`, not starting with `.`), at most 128 characters")]
    Unsafe(String),
}

/// Names and ids travel in URLs and file names: keep them to a safe alphabet.
pub fn check_name(name: &str) -> Result<(), BadName> {
    let safe = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.is_empty() {
        return Err(BadName::Empty);
    }
    if name.len() > 128 || !name.chars().all(safe) || name.contains("..") || name.starts_with('.') {
        return Err(BadName::Unsafe(name.to_owned()));
    }
    Ok(())
}

fn check_tracks(scenario: &Scenario, rendered: &mut RenderedSize) -> Result<(), ScenarioError> {
    let root = FieldPath::root();
    let mut seen = std::collections::BTreeSet::new();
    for (i, track) in scenario.tracks.iter().enumerate() {
        let path = root.key("tracks").index(i);
        check_name(&track.name).map_err(|e| ScenarioError::new(path.key("name"), e.to_string()))?;
        if !seen.insert(track.name.as_str()) {
            return Err(ScenarioError::new(path.key("name"), format!("track `{}` is defined twice", track.name)));
        }
        check_match(track, &path)?;
        let catches_all = track.matcher.is_none();
        let later_tracks = i + 1 < scenario.tracks.len();
        if catches_all && (later_tracks || !scenario.attempts.is_empty()) {
            return Err(ScenarioError::new(
                path.key("match"),
                format!("track `{}` has no `match`, so it claims every request and the tracks or attempts after it could never run; give it a `match` or move it last", track.name),
            ));
        }
        check_count(track.attempts.len(), MAX_ATTEMPTS, "attempts", &path.key("attempts"))?;
        for (j, attempt) in track.attempts.iter().enumerate() {
            check_attempt(attempt, &path.key("attempts").index(j))?;
            rendered.add(attempt, &path.key("attempts").index(j))?;
        }
    }
    Ok(())
}

fn check_match(track: &Track, path: &FieldPath) -> Result<(), ScenarioError> {
    let Some(matcher) = &track.matcher else { return Ok(()) };
    let set = [matcher.tool.is_some(), matcher.body_contains.is_some(), matcher.header.is_some()];
    if set.iter().filter(|s| **s).count() != 1 {
        return Err(ScenarioError::new(path.key("match"), "set exactly one of `tool`, `body_contains`, `header`"));
    }
    Ok(())
}

fn check_attempt(attempt: &Attempt, path: &FieldPath) -> Result<(), ScenarioError> {
    let waits = [
        (attempt.delay_ms, path.key("delay_ms")),
        (attempt.event_delay_ms, path.key("event_delay_ms")),
        (attempt.stream.as_ref().and_then(|s| s.event_delay_ms), path.key("stream").key("event_delay_ms")),
        (attempt.fault.as_ref().and_then(|f| f.ms), path.key("fault").key("ms")),
    ];
    for (ms, field) in waits {
        if let Some(ms) = ms {
            check_delay_ms(ms, &field)?;
        }
    }
    check_status(attempt.status_code()).map_err(|m| ScenarioError::new(path.key("status"), m))?;
    let status = attempt.status_code();
    if attempt.is_status_reply() && attempt.stream.is_some() {
        return Err(ScenarioError::new(
            path.key("stream"),
            format!("an attempt with status {status} is an error reply and cannot also carry a `stream`"),
        ));
    }
    if !attempt.is_status_reply() {
        for (field, set) in [("error", attempt.error.is_some()), ("body", attempt.body.is_some())] {
            if set {
                return Err(ScenarioError::new(
                    path.key(field),
                    format!("`{field}` needs an error `status` (for example 429 or 503)"),
                ));
            }
        }
    }
    for (name, value) in &attempt.headers {
        let header_path = path.key("headers").key(name);
        if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(ScenarioError::new(header_path, format!("`{name}` is not a valid header name")));
        }
        if FRAMING_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
            return Err(ScenarioError::new(
                header_path,
                format!("`{name}` frames the HTTP message, and squall sets it from the reply it really sends: a scripted one would make the bytes on the wire disagree with it and with the journal. Cut a reply with a fault (`truncate`, `eof`, `reset`) instead"),
            ));
        }
        parse_header_template(value).map_err(|m| ScenarioError::new(header_path, m))?;
    }
    if let Some(stream) = &attempt.stream {
        if stream.chunks == Some(0) {
            return Err(ScenarioError::new(path.key("stream").key("chunks"), "0 chunks: use at least 1"));
        }
        if let Some(chunks) = stream.chunks {
            check_count(chunks as usize, MAX_CHUNKS as usize, "chunks", &path.key("stream").key("chunks"))?;
        }
        if let Some(fail) = &stream.fail {
            if fail.code.trim().is_empty() {
                return Err(ScenarioError::new(path.key("stream").key("fail").key("code"), "must not be empty"));
            }
        }
    }
    if let Some(fault) = &attempt.fault {
        let fault_path = path.key("fault");
        let offsets = fault.offsets_set();
        if let [first, second, ..] = offsets[..] {
            return Err(ScenarioError::new(
                fault_path.key(second),
                format!(
                    "set one of `after_events`, `after_deltas` or `after_bytes`, not both `{first}` and `{second}`"
                ),
            ));
        }
        if fault.ms.is_some() && fault.kind != FaultKind::Stall {
            return Err(ScenarioError::new(
                fault_path.key("ms"),
                format!("`ms` only applies to `stall`, not `{}`", fault.kind.as_str()),
            ));
        }
        if let Some(code) = fault.close_code {
            check_close_code(fault.kind, code, &fault_path.key("close_code"))?;
        }
        if fault.h2_code.is_some() && !matches!(fault.kind, FaultKind::Reset | FaultKind::Goaway | FaultKind::Refuse) {
            return Err(ScenarioError::new(
                fault_path.key("h2_code"),
                format!(
                    "`h2_code` only applies to `reset`, `refuse` and `goaway` (HTTP/2's RST_STREAM and GOAWAY), not `{}`",
                    fault.kind.as_str()
                ),
            ));
        }
        if fault.kind == FaultKind::Refuse {
            return check_refusal(attempt, path);
        }
        check_fault_offset(attempt, &fault_path, fault.point())?;
    }
    Ok(())
}

/// A `refuse` sends no byte of a reply: it fires before one, so it takes no position and the
/// attempt scripts no reply for it to cut.
fn check_refusal(attempt: &Attempt, path: &FieldPath) -> Result<(), ScenarioError> {
    let why = "`refuse` fires before any byte of a reply";
    if let Some(offset) = attempt.fault.as_ref().and_then(|f| f.offsets_set().first().copied()) {
        return Err(ScenarioError::new(path.key("fault").key(offset), format!("{why}: it takes no `{offset}`")));
    }
    let scripted = [
        ("status", attempt.status.is_some()),
        ("stream", attempt.stream.is_some()),
        ("body", attempt.body.is_some()),
        ("event_delay_ms", attempt.event_delay_ms.is_some()),
    ];
    match scripted.into_iter().find(|(_, set)| *set) {
        Some((field, _)) => Err(ScenarioError::new(
            path.key(field),
            format!("{why}: the attempt has no reply, drop `{field}` (`delay_ms` still delays the refusal)"),
        )),
        None => Ok(()),
    }
}

/// A `close_code` belongs to a `truncate` and must be a code a server may send in a close
/// frame (RFC 6455 §7.4: 1000–1003, 1007–1014, or 3000–4999 for applications; 1005, 1006 and
/// 1015 only ever describe a closure that had no frame).
fn check_close_code(kind: FaultKind, code: u16, path: &FieldPath) -> Result<(), ScenarioError> {
    if kind != FaultKind::Truncate {
        return Err(ScenarioError::new(
            path.clone(),
            format!("`close_code` only applies to `truncate` (a WebSocket close frame), not `{}`", kind.as_str()),
        ));
    }
    let sendable = matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999);
    if !sendable {
        return Err(ScenarioError::new(
            path.clone(),
            format!("{code} cannot be sent in a close frame: use 1000-1003, 1007-1014 or 3000-4999 (1006, a closure without a frame, is the `eof` and `reset` faults)"),
        ));
    }
    Ok(())
}

/// Headers that define how an HTTP message is framed or how its connection goes on.
const FRAMING_HEADERS: [&str; 8] =
    ["content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer", "proxy-connection"];

/// A status squall can send as a reply with a body: 1xx are interim responses that HTTP cannot
/// send as the reply, and 204, 205 and 304 carry no body, while every squall reply has one.
fn check_status(status: u16) -> Result<(), String> {
    match status {
        100..=199 => {
            Err(format!("{status} is an interim (1xx) response, which HTTP cannot send as a reply: use 200-599"))
        }
        204 | 205 | 304 => {
            Err(format!("{status} carries no body in HTTP, and every squall reply has one: use another status"))
        }
        200..=599 => Ok(()),
        _ => Err(format!("{status} is not an HTTP status (200-599)")),
    }
}

/// A fault must be able to fire: an offset past the end of the reply in every API would
/// silently never fire. Offsets count the stream of whichever API a request speaks, so each
/// API's stream is measured and the error names each one's length. An offset inside one API's
/// stream but past another's is kept (a scenario written for one API stays valid): in the
/// shorter stream it fires after the last byte.
fn check_fault_offset(attempt: &Attempt, path: &FieldPath, point: FaultPoint) -> Result<(), ScenarioError> {
    // Without a scripted `stream` the reply is the default one — or, on a server with an
    // upstream, the upstream's real stream (docs/proxy.md), whose length nobody knows yet: an
    // offset past the default reply's end fires after its last byte.
    if attempt.is_status_reply() || attempt.stream.is_none() {
        return Ok(());
    }
    let ctx = ReplyContext::placeholder();
    let content = attempt.content();
    let (field, unit, offset) = match point {
        FaultPoint::Events(n) => ("after_events", "events", n as usize),
        FaultPoint::Deltas(n) => ("after_deltas", "output deltas", n as usize),
        FaultPoint::Bytes(n) => ("after_bytes", "body bytes", n as usize),
    };
    let lengths = Api::ALL.map(|api| {
        let events = api.stream_events(&content, &ctx);
        let length = match point {
            FaultPoint::Events(_) => events.len(),
            FaultPoint::Deltas(_) => events.iter().filter(|e| e.output).count(),
            FaultPoint::Bytes(_) => events.iter().map(|e| e.to_bytes().len()).sum(),
        };
        (api, length)
    });
    if lengths.iter().any(|(_, length)| offset <= *length) {
        return Ok(());
    }
    let each: Vec<String> =
        lengths.iter().map(|(api, length)| format!("the {} stream has {length} {unit}", api.title())).collect();
    let message = format!("{offset} is beyond the end of the reply in every API: {}", each.join("; "));
    Err(ScenarioError::new(path.key(field), message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::limits::MAX_DELTAS;
    use crate::scenario::{load, Fault, StreamSpec};

    fn attempt_with_fault(kind: FaultKind, after_events: u32) -> Attempt {
        Attempt {
            stream: Some(StreamSpec { text: Some("a b c".into()), ..StreamSpec::default() }),
            fault: Some(Fault::at(kind, FaultPoint::Events(after_events))),
            ..Attempt::default()
        }
    }

    #[test]
    fn delta_offset_beyond_the_output_names_each_apis_count() {
        let mut attempt = attempt_with_fault(FaultKind::Eof, 0);
        attempt.fault = Some(Fault::at(FaultKind::Eof, FaultPoint::Deltas(4)));
        let error = check_attempt(&attempt, &FieldPath::root()).expect_err("3 words are 3 deltas");
        assert_eq!(error.field.to_string(), "fault.after_deltas");
        assert!(error.message.contains("has 3 output deltas"), "{}", error.message);
        attempt.fault = Some(Fault::at(FaultKind::Eof, FaultPoint::Deltas(3)));
        assert!(check_attempt(&attempt, &FieldPath::root()).is_ok());
    }

    #[test]
    fn two_offsets_are_rejected_naming_both() {
        let mut attempt = attempt_with_fault(FaultKind::Eof, 1);
        attempt.fault.as_mut().expect("fault").after_deltas = Some(0);
        let error = check_attempt(&attempt, &FieldPath::root()).expect_err("two offsets");
        assert_eq!(error.field.to_string(), "fault.after_deltas");
        assert!(error.message.contains("`after_events` and `after_deltas`"), "{}", error.message);
    }

    #[test]
    fn fault_offset_beyond_the_stream_is_rejected() {
        let error =
            check_attempt(&attempt_with_fault(FaultKind::Reset, 99), &FieldPath::root()).expect_err("must fail");
        assert_eq!(error.field.to_string(), "fault.after_events");
        assert!(error.message.contains("99"), "{}", error.message);
    }

    #[test]
    fn error_names_file_line_and_field() {
        let text = "name = \"x\"\n[[attempts]]\nstatus = 429\nstream = { text = \"hi\" }\n";
        let error = load::from_toml_str("scenarios/x.toml", text).expect_err("must fail");
        assert_eq!(error.field.to_string(), "attempts[0].stream");
        assert_eq!(error.location.map(|l| l.0), Some(4));
        assert!(error.to_string().starts_with("scenarios/x.toml:4:"), "{error}");
    }

    #[test]
    fn unknown_fault_kind_names_the_field() {
        let text = "name = \"x\"\n[[attempts]]\nfault = { kind = \"rst\" }\n";
        let error = load::from_toml_str("x.toml", text).expect_err("must fail");
        assert_eq!(error.field.to_string(), "attempts[0].fault.kind");
        assert!(error.message.contains("rst"), "{}", error.message);
        assert_eq!(error.location.map(|l| l.0), Some(3));
    }

    #[test]
    fn unreachable_tracks_are_rejected() {
        let text =
            "name = \"x\"\n[[tracks]]\nname = \"all\"\n[[tracks]]\nname = \"never\"\nmatch = { tool = \"Task\" }\n";
        let error = load::from_toml_str("x.toml", text).expect_err("must fail");
        assert_eq!(error.field.to_string(), "tracks[0].match");
    }

    #[test]
    fn statuses_http_cannot_send_with_a_body_are_rejected() {
        for (status, says) in [
            (100, "interim"),
            (103, "interim"),
            (101, "interim"),
            (204, "no body"),
            (304, "no body"),
            (600, "not an HTTP status"),
        ] {
            let attempt = Attempt { status: Some(status), ..Attempt::default() };
            let error = check_attempt(&attempt, &FieldPath::root()).expect_err("refused");
            assert_eq!(error.field.to_string(), "status");
            assert!(error.message.contains(says), "{status}: {}", error.message);
        }
        assert!(check_attempt(&Attempt { status: Some(429), ..Attempt::default() }, &FieldPath::root()).is_ok());
    }

    #[test]
    fn framing_headers_are_rejected_in_any_case() {
        for name in ["content-length", "Transfer-Encoding", "connection", "upgrade"] {
            let attempt = Attempt {
                status: Some(429),
                headers: [(name.to_owned(), "5".to_owned())].into_iter().collect(),
                ..Attempt::default()
            };
            let error = check_attempt(&attempt, &FieldPath::root()).expect_err("refused");
            assert!(error.field.to_string().starts_with("headers"), "{}", error.field);
            assert!(error.message.contains("frames the HTTP message"), "{}", error.message);
        }
    }

    #[test]
    fn counts_and_rendered_sizes_are_bounded() {
        let text = format!("name = \"x\"\n[[attempts]]\nstream = {{ text = \"a b\", chunks = {} }}\n", MAX_CHUNKS + 1);
        let error = load::from_toml_str("x.toml", &text).expect_err("too many chunks");
        assert_eq!(error.field.to_string(), "attempts[0].stream.chunks");
        let attempts = "[[attempts]]\nstatus = 503\n".repeat(1_001);
        let error = load::from_toml_str("x.toml", &format!("name = \"x\"\n{attempts}")).expect_err("too many attempts");
        assert_eq!(error.field.to_string(), "attempts");
        let words = "word ".repeat(MAX_DELTAS + 1);
        let text = format!("name = \"x\"\n[[attempts]]\nstream = {{ text = \"{words}\" }}\n");
        let error = load::from_toml_str("x.toml", &text).expect_err("too many deltas");
        assert!(error.message.contains(&format!("{} output deltas", MAX_DELTAS + 1)), "{}", error.message);
        let big = "x".repeat(9 << 20);
        let text = format!("name = \"x\"\n[[attempts]]\nstream = {{ text = \"{big}\", chunks = 1 }}\n");
        let error = load::from_toml_str("x.toml", &text).expect_err("too large a reply");
        assert!(error.message.contains("more than the 8388608 allowed"), "{}", error.message);
    }

    #[test]
    fn unsafe_names_are_rejected() {
        for name in ["", "../etc", "a/b", ".hidden", "a b"] {
            assert!(check_name(name).is_err(), "{name:?} accepted");
        }
        assert!(check_name("reset-after-3_events.v2").is_ok());
    }
}
