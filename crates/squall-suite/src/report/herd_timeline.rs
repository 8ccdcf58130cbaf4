//! A herd's timeline, as inline SVG: one row per client, each model request a mark from its
//! arrival to its end coloured by how it ended, over the run's policy time, with the span in
//! which run-wide conditions (an outage, chaos, the quota) answered instead of the script shaded.
//! A storm shows as columns of marks in lockstep; spread retries as scattered ones.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::escape;
use super::timeline::{axis, color};
use squall::clock::TimeScale;
use squall::journal::{EndKind, JournalEntry};

const WIDTH: f64 = 760.0;
const LABEL: f64 = 70.0;
const ROW: f64 = 12.0;
const TOP: f64 = 22.0;
const FONT: f64 = 11.0;

/// The SVG for a herd case's journal at `time_scale`.
pub(super) fn svg(journal: &[JournalEntry], time_scale: TimeScale) -> String {
    let calls: Vec<&JournalEntry> = journal.iter().filter(|e| e.attempt.is_some()).collect();
    let mut rows: BTreeMap<Option<u32>, Vec<&JournalEntry>> = BTreeMap::new();
    for call in &calls {
        rows.entry(call.client).or_default().push(call);
    }
    let seconds = |ms: f64| time_scale.policy_ms(ms) / 1000.0;
    let span = calls.iter().map(|e| seconds(e.finished_at_ms.unwrap_or(e.received_at_ms))).fold(0.001, f64::max);
    let plot = WIDTH - LABEL - 20.0;
    let x = |t: f64| LABEL + t / span * plot;
    let height = TOP + ROW * rows.len() as f64 + 30.0;
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg class=\"timeline\" data-kind=\"herd\" width=\"{WIDTH}\" height=\"{height}\" xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\" font-size=\"{FONT}\">"
    );
    let busiest = rows.values().map(Vec::len).max().unwrap_or(0);
    let _ = write!(
        out,
        "<text x=\"4\" y=\"12\" fill=\"#333\">{} clients · {} model requests · at most {busiest} from one client · policy seconds since the run began</text>",
        rows.len(),
        calls.len()
    );
    let conditioned: Vec<f64> =
        calls.iter().filter(|e| e.condition.is_some()).map(|e| seconds(e.received_at_ms)).collect();
    if let (Some(from), Some(until)) =
        (conditioned.iter().copied().reduce(f64::min), conditioned.iter().copied().reduce(f64::max))
    {
        let band_height = ROW * rows.len() as f64;
        let _ = write!(
            out,
            "<rect x=\"{:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{band_height:.1}\" fill=\"#ffcdd2\" opacity=\"0.6\"><title>{} requests answered by a run-wide condition (outage, chaos, quota), {from:.2}–{until:.2} s</title></rect>",
            x(from),
            (x(until) - x(from)).max(2.0),
            conditioned.len()
        );
    }
    for (i, (client, requests)) in rows.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        let name = client.map_or_else(|| "run".to_owned(), |k| format!("client {k}"));
        let _ = write!(out, "<text x=\"4\" y=\"{:.1}\" fill=\"#333\">{}</text>", y + 9.0, escape(&name));
        for request in requests {
            let start = seconds(request.received_at_ms);
            let end = request.finished_at_ms.map_or(start, seconds);
            let ended = request.end.map_or("in progress", EndKind::as_str);
            let _ = write!(
                out,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"9\" fill=\"{}\"><title>{} attempt {} at {start:.2} s: {} · {ended}</title></rect>",
                x(start),
                y + 1.0,
                (x(end) - x(start)).max(2.0),
                color(ended),
                escape(&name),
                request.attempt.unwrap_or(0) + 1,
                request.status.map_or_else(|| "no status".to_owned(), |s| s.to_string())
            );
        }
    }
    axis(&mut out, TOP + ROW * rows.len() as f64 + 4.0, (LABEL, plot), span);
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::svg;
    use squall::clock::TimeScale;
    use squall::journal::JournalEntry;

    fn request(client: u32, attempt: u32, at_ms: f64, condition: Option<&str>) -> JournalEntry {
        serde_json::from_value(serde_json::json!({
            "index": 0, "client": client, "track": "default", "attempt": attempt, "method": "POST",
            "path": "/responses", "headers": {}, "body": null, "stream": true,
            "received_at_ms": at_ms, "finished_at_ms": at_ms + 1.0, "status": 503, "fault": null,
            "end": "error_status", "events_sent": 0, "bytes_sent": 10, "terminal_sent": false,
            "condition": condition,
        }))
        .expect("an entry")
    }

    #[test]
    fn a_herd_has_a_row_per_client_a_mark_per_request_and_the_outage_shaded() {
        let journal = vec![
            request(0, 0, 0.0, Some("outage[0]")),
            request(1, 0, 1.0, Some("outage[0]")),
            request(0, 1, 15.0, Some("outage[0]")),
            request(1, 1, 18.0, None),
        ];
        let svg = svg(&journal, TimeScale::of(0.01));
        assert!(svg.contains(">client 0<") && svg.contains(">client 1<"), "{svg}");
        assert!(svg.contains("2 clients · 4 model requests · at most 2 from one client"), "{svg}");
        assert!(svg.contains("3 requests answered by a run-wide condition"), "{svg}");
        assert!(svg.contains("client 1 attempt 2 at 1.80 s: 503"), "{svg}");
        assert_eq!(svg.matches("height=\"9\"").count(), 4, "one mark per request");
    }
}
