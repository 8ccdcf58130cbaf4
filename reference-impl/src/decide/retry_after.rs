//! Reading how long a provider asked the client to wait: `retry-after-ms`, then `retry-after`
//! in seconds, then `retry-after` as an HTTP-date, then a Google error's `RetryInfo`
//! (`"retryDelay": "1.5s"`), then "try again in 1.5s" in a message.

use std::time::{Duration, SystemTime};

/// Where a retry-after hint came from (reported in decision records).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryAfterSource {
    /// A `retry-after-ms` header.
    HeaderMs,
    /// A `retry-after` header in seconds.
    HeaderSeconds,
    /// A `retry-after` header with an HTTP date.
    HeaderHttpDate,
    /// A `google.rpc.RetryInfo` detail of a Google error body (the Gemini API).
    RetryInfo,
    /// A wait named in the error message ("try again in 2s").
    Message,
}

impl RetryAfterSource {
    /// The source as decision records name it.
    pub fn as_str(self) -> &'static str {
        match self {
            RetryAfterSource::HeaderMs => "retry-after-ms",
            RetryAfterSource::HeaderSeconds => "retry-after",
            RetryAfterSource::HeaderHttpDate => "retry-after-date",
            RetryAfterSource::RetryInfo => "retry-info",
            RetryAfterSource::Message => "message",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
/// A wait the provider asked for.
pub struct RetryAfter {
    /// How long.
    pub delay: Duration,
    /// Where the hint came from.
    pub source: RetryAfterSource,
}

/// The first usable hint in the order `retry-after-ms`, `retry-after` seconds, HTTP-date.
pub fn retry_after_from_headers(header: &dyn Fn(&str) -> Option<String>, now: SystemTime) -> Option<RetryAfter> {
    if let Some(ms) =
        header("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok()).filter(|ms| ms.is_finite() && *ms >= 0.0)
    {
        return Some(RetryAfter { delay: seconds(ms / 1000.0), source: RetryAfterSource::HeaderMs });
    }
    let value = header("retry-after")?;
    if let Some(seconds) = value.trim().parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0) {
        return Some(RetryAfter { delay: self::seconds(seconds), source: RetryAfterSource::HeaderSeconds });
    }
    let date = httpdate::parse_http_date(value.trim()).ok()?;
    let delay = date.duration_since(now).unwrap_or(Duration::ZERO);
    Some(RetryAfter { delay, source: RetryAfterSource::HeaderHttpDate })
}

/// The `retryDelay` of a `google.rpc.RetryInfo` among a Google error's `details`: a protobuf
/// duration in JSON, seconds with a fraction and an `s` (`"2s"`, `"0.500s"`).
pub fn retry_after_from_retry_info(details: &serde_json::Value) -> Option<RetryAfter> {
    let info = details.as_array()?.iter().find(|d| {
        d.get("@type").and_then(serde_json::Value::as_str) == Some("type.googleapis.com/google.rpc.RetryInfo")
    })?;
    let text = info.get("retryDelay")?.as_str()?.trim().strip_suffix('s')?;
    let delay = text.parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0)?;
    Some(RetryAfter { delay: seconds(delay), source: RetryAfterSource::RetryInfo })
}

/// "Please try again in 1.5s" / "in 20ms" / "in 2m3s" in an error message.
pub fn retry_after_from_message(message: &str) -> Option<RetryAfter> {
    let lower = message.to_ascii_lowercase();
    let at = lower.find("try again in ")? + "try again in ".len();
    let rest = &lower[at..];
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'm' || c == 's' || c == 'h'))
        .unwrap_or(rest.len());
    let delay = parse_go_duration(rest[..end].trim_end_matches('.'))?;
    Some(RetryAfter { delay, source: RetryAfterSource::Message })
}

/// `1.5s`, `20ms`, `2m3s`, `1h` — the forms OpenAI's messages use.
fn parse_go_duration(text: &str) -> Option<Duration> {
    let mut total = 0.0;
    let mut rest = text;
    let mut parsed_any = false;
    while !rest.is_empty() {
        let number_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        let number: f64 = rest[..number_end].parse().ok()?;
        rest = &rest[number_end..];
        let (unit, seconds) = if rest.starts_with("ms") {
            ("ms", 0.001)
        } else if rest.starts_with('s') {
            ("s", 1.0)
        } else if rest.starts_with('m') {
            ("m", 60.0)
        } else if rest.starts_with('h') {
            ("h", 3600.0)
        } else {
            return None;
        };
        total += number * seconds;
        rest = &rest[unit.len()..];
        parsed_any = true;
    }
    parsed_any.then(|| seconds(total))
}

/// A non-negative number of seconds as a `Duration`; one too large for it (an absurd hint) is
/// the longest `Duration`, which the retry policy's ceiling then refuses to sleep.
fn seconds(value: f64) -> Duration {
    Duration::try_from_secs_f64(value).unwrap_or(if value > 0.0 { Duration::MAX } else { Duration::ZERO })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absurd_hints_are_the_longest_wait_not_a_panic() {
        let header = |value: &'static str| move |name: &str| (name == "retry-after").then(|| value.to_owned());
        for absurd in ["1e300", "18446744073709551616", "99999999999999999999999"] {
            let hint = retry_after_from_headers(&header(absurd), SystemTime::now()).expect("a hint");
            assert_eq!(hint.delay, Duration::MAX, "{absurd}");
        }
        assert_eq!(retry_after_from_message("try again in 1e300s").map(|h| h.delay), None);
        assert_eq!(
            retry_after_from_message("try again in 99999999999999999999999h").map(|h| h.delay),
            Some(Duration::MAX)
        );
    }

    fn headers(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
    }

    #[test]
    fn a_google_retry_info_is_read_and_other_details_are_not() {
        let details = serde_json::json!([
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "retryDelay": "9s"},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1.500s"},
        ]);
        let hint = retry_after_from_retry_info(&details).map(|h| (h.delay, h.source));
        assert_eq!(hint, Some((Duration::from_millis(1500), RetryAfterSource::RetryInfo)));
        assert_eq!(retry_after_from_retry_info(&serde_json::json!([{"retryDelay": "2s"}])), None);
    }

    #[test]
    fn ms_wins_over_seconds() {
        let hint =
            retry_after_from_headers(&headers(&[("retry-after-ms", "1500"), ("retry-after", "2")]), SystemTime::now());
        assert_eq!(hint.map(|h| (h.delay, h.source)), Some((Duration::from_millis(1500), RetryAfterSource::HeaderMs)));
    }

    #[test]
    fn seconds_and_http_dates_are_read() {
        let seconds = retry_after_from_headers(&headers(&[("retry-after", "2")]), SystemTime::now()).expect("hint");
        assert_eq!(seconds.delay, Duration::from_secs(2));
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let date = httpdate::fmt_http_date(now + Duration::from_secs(3));
        let owned = move |name: &str| (name == "retry-after").then(|| date.clone());
        let hint = retry_after_from_headers(&owned, now).expect("hint");
        assert_eq!((hint.delay, hint.source), (Duration::from_secs(3), RetryAfterSource::HeaderHttpDate));
    }

    #[test]
    fn messages_give_go_style_durations() {
        let delay = |m: &str| retry_after_from_message(m).map(|h| h.delay);
        assert_eq!(delay("Please try again in 1.5s."), Some(Duration::from_millis(1500)));
        assert_eq!(delay("Please try again in 20ms"), Some(Duration::from_millis(20)));
        assert_eq!(delay("try again in 1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(delay("no hint here"), None);
    }
}
