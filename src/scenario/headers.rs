//! Scripted header values, including the `@now+Ns` template for HTTP-date `retry-after`.

use std::time::{Duration, SystemTime};

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
