//! The ranges a scenario's numbers must lie in, checked where a scenario is read (file, inline
//! JSON or builder) so that nothing the server later computes from them can overflow. Each
//! limit is far beyond any real test; `docs/hardening.md` lists them.

use super::error::{FieldPath, ScenarioError};

/// The longest scripted wait — `delay_ms`, `event_delay_ms`, a stall's `ms` — at real time: a week.
pub const MAX_DELAY_MS: u64 = 7 * 24 * 3600 * 1000;

/// The furthest an `@now+Ns` HTTP-date may point: a year.
pub const MAX_HEADER_DATE_S: f64 = 365.0 * 24.0 * 3600.0;

/// The most attempts one list — a scenario's `attempts`, or a track's — may hold.
pub const MAX_ATTEMPTS: usize = 1_000;

/// The most tracks a scenario may have.
pub const MAX_TRACKS: usize = 100;

/// The most outages a scenario may have.
pub const MAX_OUTAGES: usize = 100;

/// The most pieces a stream's text may be cut into (`chunks`): as many as output deltas.
pub const MAX_CHUNKS: u32 = 50_000;

/// The most output deltas one attempt's reply may stream: more than a recording can keep (4 MiB
/// of a reply, at 64 bytes or more per delta event in every API), so that whatever `squall
/// record` keeps replays.
pub const MAX_DELTAS: usize = 50_000;

/// The largest body one attempt's reply may render to, in any API: 8 MiB.
pub const MAX_REPLY_BYTES: usize = 8 << 20;

/// The largest all of a scenario's replies together may render to: 64 MiB.
pub const MAX_SCENARIO_REPLY_BYTES: usize = 64 << 20;

/// A count (attempts, tracks, chunks) against its limit.
pub fn check_count(count: usize, max: usize, what: &str, field: &FieldPath) -> Result<(), ScenarioError> {
    if count > max {
        return Err(ScenarioError::new(field.clone(), format!("{count} {what} is more than the {max} allowed")));
    }
    Ok(())
}

/// A scripted wait in milliseconds.
pub fn check_delay_ms(ms: u64, field: &FieldPath) -> Result<(), ScenarioError> {
    if ms > MAX_DELAY_MS {
        return Err(ScenarioError::new(
            field.clone(),
            format!("{ms} ms is out of range: 0 to {MAX_DELAY_MS} ms (a week)"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_and_counts_have_a_range() {
        let field = FieldPath::root().key("delay_ms");
        assert!(check_delay_ms(MAX_DELAY_MS, &field).is_ok());
        let error = check_delay_ms(u64::MAX, &field).expect_err("too long");
        assert!(error.to_string().contains("out of range: 0 to 604800000 ms"), "{error}");
        let error =
            check_count(1_001, MAX_ATTEMPTS, "attempts", &FieldPath::root().key("attempts")).expect_err("too many");
        assert_eq!(
            (error.field.to_string(), error.message.as_str()),
            ("attempts".to_owned(), "1001 attempts is more than the 1000 allowed")
        );
        assert!(check_count(1_000, MAX_ATTEMPTS, "attempts", &FieldPath::root()).is_ok());
    }
}
