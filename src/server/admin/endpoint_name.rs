//! An admin request's endpoint named by the shape of its path, for the metrics: a run's or a
//! case's id never becomes a label (there would be one series per run).

use crate::metrics::AdminEndpoint;

/// The endpoint `rest` (the path after `/__squall/`) names.
pub(in crate::server) fn endpoint(rest: &str) -> AdminEndpoint {
    let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    let (name, judge) = match segments.as_slice() {
        ["health"] => ("health", false),
        ["scenarios"] => ("scenarios", false),
        ["scenarios", _] => ("scenario", false),
        ["runs"] => ("runs", false),
        ["runs", _] => ("run", false),
        ["runs", _, "journal"] => ("journal", false),
        ["runs", _, "recording"] => ("recording", false),
        ["runs", _, "verdict"] => ("verdict", true),
        ["cases"] => ("cases", true),
        ["cases", case @ .., "runs"] if !case.is_empty() => ("case_runs", true),
        _ => ("unknown", false),
    };
    AdminEndpoint { name, judge }
}

#[cfg(test)]
mod tests {
    use super::endpoint;

    #[test]
    fn ids_never_become_names() {
        let named = |rest: &str| (endpoint(rest).name, endpoint(rest).judge);
        assert_eq!(named("runs/r1-abc/journal"), ("journal", false));
        assert_eq!(named("runs/r7-x"), ("run", false));
        assert_eq!(named("cases/req-0006-001/status-503-is-retried/runs"), ("case_runs", true));
        assert_eq!(named("runs/r1/verdict"), ("verdict", true));
        assert_eq!(named("runs/r1/unknown/deeper"), ("unknown", false));
    }
}
