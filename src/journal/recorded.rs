//! What a request brought and what squall answered, kept as the bytes they were: the journal
//! turns them into maps and JSON when it is read, not on the serving path. A busy server then
//! neither builds nor later frees a map and a JSON tree per request; reading the journal pays
//! for it instead, once per read.

use std::borrow::Cow;
use std::collections::BTreeMap;

use bytes::Bytes;
use serde_json::Value;

/// Headers in one buffer: `name\0value\0` per header, names lower-case (HTTP allows neither
/// NUL in a name nor in a value, so the separator cannot occur inside one). Values are kept as
/// the bytes that arrived and read as text, lossily, only when the journal is read.
/// Credentials are never kept: the value of each of [`CREDENTIAL_HEADERS`] is recorded as
/// `[redacted]` (`Bearer [redacted]` for a bearer token), so a journal, a report or a recording
/// made through squall in front of a real provider holds no key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordedHeaders(Box<[u8]>);

/// The headers that carry a client's credentials (a SigV4 signature is an `authorization`; an
/// AWS session token, `x-amz-security-token`).
pub const CREDENTIAL_HEADERS: [&str; 6] =
    ["authorization", "proxy-authorization", "x-api-key", "x-goog-api-key", "api-key", "x-amz-security-token"];

/// What a credential header's value is recorded as.
fn redacted(value: &[u8]) -> &'static [u8] {
    if value.len() >= 7 && value[..7].eq_ignore_ascii_case(b"bearer ") {
        b"Bearer [redacted]"
    } else {
        b"[redacted]"
    }
}

impl RecordedHeaders {
    /// Record `headers`, credentials redacted.
    pub fn from_http(headers: &http::HeaderMap) -> Self {
        let size = headers.iter().map(|(name, value)| name.as_str().len() + value.len() + 2).sum();
        let mut bytes = Vec::with_capacity(size);
        for (name, value) in headers {
            bytes.extend_from_slice(name.as_str().as_bytes());
            bytes.push(0);
            let value = value.as_bytes();
            let value = if CREDENTIAL_HEADERS.contains(&name.as_str()) { redacted(value) } else { value };
            bytes.extend_from_slice(value);
            bytes.push(0);
        }
        RecordedHeaders(bytes.into_boxed_slice())
    }

    /// Name and value pairs, in arrival order; values that are not UTF-8 read with
    /// replacement characters.
    pub fn iter(&self) -> impl Iterator<Item = (Cow<'_, str>, Cow<'_, str>)> + '_ {
        let mut parts = self.0.split(|b| *b == 0).map(String::from_utf8_lossy);
        std::iter::from_fn(move || Some((parts.next().filter(|n| !n.is_empty())?, parts.next()?)))
    }

    /// The headers by name; of a repeated header, the last value.
    pub fn to_map(&self) -> BTreeMap<String, String> {
        self.iter().map(|(name, value)| (name.into_owned(), value.into_owned())).collect()
    }
}

/// A request body as JSON when it is JSON, as text when it is not, null when empty.
pub(super) fn body_as_json(body: &[u8]) -> Value {
    match journaled(body) {
        Journaled::Empty => Value::Null,
        Journaled::Json(json) => serde_json::from_str(json.get()).unwrap_or(Value::Null),
        Journaled::Text(_) => Value::String(String::from_utf8_lossy(body).into_owned()),
    }
}

/// How a request body is journaled.
pub(super) enum Journaled<'a> {
    /// No body: `null`.
    Empty,
    /// The JSON it is, as it arrived.
    Json(&'a serde_json::value::RawValue),
    /// Its text, for this reason (the entry's `body_note`).
    Text(&'static str),
}

/// How deep JSON may nest and still be journaled as JSON: serde_json's own limit, below
/// Python's `json` (about 1,000) and JavaScript's — so every journal reader parses the journal.
pub(super) const MAX_BODY_DEPTH: usize = 128;

/// How `body` is journaled: as the JSON it is, or as text when it is not JSON or nests deeper
/// than [`MAX_BODY_DEPTH`] (one scan and one parse).
pub(super) fn journaled(body: &[u8]) -> Journaled<'_> {
    if body.is_empty() {
        return Journaled::Empty;
    }
    if nesting_depth(body) > MAX_BODY_DEPTH {
        return Journaled::Text("nested deeper than 128 levels, which common JSON parsers refuse: kept as text");
    }
    match serde_json::from_slice(body) {
        Ok(json) => Journaled::Json(json),
        Err(_) => Journaled::Text("not JSON: kept as text"),
    }
}

/// Why `body` is journaled as text, if it is.
pub(super) fn body_note(body: &[u8]) -> Option<&'static str> {
    match journaled(body) {
        Journaled::Text(note) => Some(note),
        _ => None,
    }
}

/// The deepest nesting of arrays and objects in JSON text (strings skipped), read in one pass
/// without recursion, whatever the text.
fn nesting_depth(text: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &byte in text {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// A request's recorded parts and the response headers sent.
#[derive(Debug, Clone, Default)]
pub(super) struct Recorded {
    pub(super) headers: RecordedHeaders,
    pub(super) body: Bytes,
    pub(super) response_headers: RecordedHeaders,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_come_back_as_they_went_in() {
        let mut headers = http::HeaderMap::new();
        headers.insert("content-type", "application/json".parse().expect("a header value"));
        headers.append("x-retry", "1".parse().expect("a header value"));
        headers.append("x-retry", "2".parse().expect("a header value"));
        headers.insert("x-odd", http::HeaderValue::from_bytes(b"caf\xe9").expect("obs-text is allowed"));
        let recorded = RecordedHeaders::from_http(&headers);
        let pairs: Vec<(String, String)> = recorded.iter().map(|(n, v)| (n.into_owned(), v.into_owned())).collect();
        let expected =
            [("content-type", "application/json"), ("x-retry", "1"), ("x-retry", "2"), ("x-odd", "caf\u{FFFD}")];
        assert_eq!(pairs, expected.map(|(n, v)| (n.to_owned(), v.to_owned())));
        assert_eq!(recorded.to_map()["x-retry"], "2");
        assert_eq!(RecordedHeaders::from_http(&http::HeaderMap::new()).iter().count(), 0);
    }

    #[test]
    fn a_body_is_json_text_or_null() {
        assert_eq!(body_as_json(br#"{"a": 1}"#), serde_json::json!({"a": 1}));
        assert_eq!(body_as_json(b"not json"), Value::String("not json".into()));
        assert_eq!(body_as_json(b""), Value::Null);
    }
}
