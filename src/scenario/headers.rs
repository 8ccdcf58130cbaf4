//! Scripted header values, including the `@now+Ns` template for HTTP-date `retry-after`.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use http::{HeaderMap, HeaderName, HeaderValue};

use super::limits::MAX_HEADER_DATE_S;

/// A header value as scripted: literal text, or an HTTP-date relative to the reply.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum HeaderTemplate {
    Literal(String),
    /// `@now+Ns`: the HTTP-date `N` seconds after the reply is sent (rounded up to a whole second).
    HttpDateFromNow(f64),
}

const PREFIX: &str = "@now+";

/// Parse a scripted header value; the error says how to write the template.
pub(crate) fn parse_header_template(value: &str) -> Result<HeaderTemplate, String> {
    if let Some(rest) = value.strip_prefix(PREFIX) {
        let seconds = rest.strip_suffix('s').and_then(|n| n.parse::<f64>().ok());
        return match seconds {
            Some(s) if (0.0..=MAX_HEADER_DATE_S).contains(&s) => Ok(HeaderTemplate::HttpDateFromNow(s)),
            Some(s) if s.is_finite() => {
                Err(format!("`{value}`: {s} s is out of range: 0 to {MAX_HEADER_DATE_S} s (a year) after the reply"))
            }
            _ => Err(format!(
                "`{value}` is not a valid template: write `@now+2s` for an HTTP-date 2 seconds after the reply"
            )),
        };
    }
    if http::HeaderValue::from_str(value).is_err() {
        return Err(format!("`{value}` is not a valid header value"));
    }
    Ok(HeaderTemplate::Literal(value.to_owned()))
}

/// An attempt's scripted headers, parsed once when its run is created: names and values are
/// checked then, so a request only renders the `@now+Ns` dates.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScriptedHeaders(Vec<(HeaderName, ScriptedValue)>);

#[derive(Debug, Clone)]
enum ScriptedValue {
    Fixed(HeaderValue),
    HttpDateFromNow(HeaderTemplate),
}

impl ScriptedHeaders {
    /// Parse `headers`; the error names the header and says what is wrong with it.
    pub(crate) fn parse(headers: &BTreeMap<String, String>) -> Result<Self, (String, String)> {
        let mut parsed = Vec::with_capacity(headers.len());
        for (name, value) in headers {
            let fault = |message: String| (name.clone(), message);
            let header = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| fault(format!("`{name}` is not a valid header name")))?;
            let value = match parse_header_template(value).map_err(fault)? {
                HeaderTemplate::Literal(text) => ScriptedValue::Fixed(
                    HeaderValue::from_str(&text)
                        .map_err(|_| (name.clone(), format!("`{text}` is not a valid header value")))?,
                ),
                date => ScriptedValue::HttpDateFromNow(date),
            };
            parsed.push((header, value));
        }
        Ok(ScriptedHeaders(parsed))
    }

    /// Set every scripted header on `out`, dates rendered for a reply sent at `now`.
    pub(crate) fn insert_into(&self, out: &mut HeaderMap, now: SystemTime) {
        for (name, value) in &self.0 {
            let value = match value {
                ScriptedValue::Fixed(value) => value.clone(),
                // An HTTP-date is ASCII letters, digits, spaces, commas and colons.
                ScriptedValue::HttpDateFromNow(date) => {
                    HeaderValue::from_str(&date.render(now)).expect("an HTTP-date is a valid header value")
                }
            };
            out.insert(name.clone(), value);
        }
    }
}

impl HeaderTemplate {
    /// The value to send now.
    pub(crate) fn render(&self, now: SystemTime) -> String {
        match self {
            HeaderTemplate::Literal(text) => text.clone(),
            HeaderTemplate::HttpDateFromNow(seconds) => {
                // HTTP-dates have whole seconds; round up so the client never waits less than asked.
                // Parsing bounded the seconds; a date past the clock's range stays at `now`.
                let ahead = Duration::try_from_secs_f64(*seconds).unwrap_or_default();
                let target = now.checked_add(ahead).unwrap_or(now);
                let since_epoch = target.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
                let whole = since_epoch.as_secs() + u64::from(since_epoch.subsec_nanos() > 0);
                httpdate::fmt_http_date(SystemTime::UNIX_EPOCH + Duration::from_secs(whole))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripted_headers_are_parsed_once_and_a_bad_one_is_named() {
        let headers: BTreeMap<String, String> = [
            ("retry-after".to_owned(), "@now+2s".to_owned()),
            ("x-ratelimit-remaining-requests".to_owned(), "0".to_owned()),
        ]
        .into_iter()
        .collect();
        let mut out = HeaderMap::new();
        ScriptedHeaders::parse(&headers).expect("valid").insert_into(&mut out, SystemTime::UNIX_EPOCH);
        assert_eq!(out["retry-after"], "Thu, 01 Jan 1970 00:00:02 GMT");
        assert_eq!(out["x-ratelimit-remaining-requests"], "0");
        let bad: BTreeMap<String, String> = [("x-a".to_owned(), "@now+soon".to_owned())].into_iter().collect();
        let (name, message) = ScriptedHeaders::parse(&bad).expect_err("not a template");
        assert!(name == "x-a" && message.contains("@now+2s"), "{name}: {message}");
    }

    #[test]
    fn http_date_template_is_at_least_the_asked_delay() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_millis(1_000_500);
        let rendered = HeaderTemplate::HttpDateFromNow(2.0).render(now);
        let parsed = httpdate::parse_http_date(&rendered).expect("http date");
        let delay = parsed.duration_since(now).expect("in the future");
        assert!(delay >= Duration::from_secs(2) && delay < Duration::from_secs(3), "{delay:?}");
    }

    #[test]
    fn a_date_too_far_ahead_is_refused_with_its_range() {
        let error = parse_header_template("@now+1e300s").expect_err("out of range");
        assert!(error.contains("out of range: 0 to"), "{error}");
        // Even an unchecked template renders without panicking.
        let _ = HeaderTemplate::HttpDateFromNow(f64::MAX).render(SystemTime::now());
    }

    #[test]
    fn bad_templates_explain_the_form() {
        let error = parse_header_template("@now+soon").expect_err("must fail");
        assert!(error.contains("@now+2s"), "{error}");
    }
}
