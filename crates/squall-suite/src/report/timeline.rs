//! The attempt timeline of a case, as inline SVG: one bar per model request from arrival to
//! end, the fault marked where it fired, and each gap labelled with the wait observed (the
//! client's calibrated reaction taken out, and named) and the wait expected (the Retry-After
//! squall sent, or the delay the implementation planned). Times are policy seconds (the case's
//! time scale undone).

use std::fmt::Write as _;

use super::escape;
use squall::clock::TimeScale;
use squall::journal::{EndKind, JournalEntry};

const WIDTH: f64 = 760.0;
const LABEL: f64 = 120.0;
const ROW: f64 = 40.0;
const TOP: f64 = 14.0;
/// Font size of every label, in px.
const FONT: f64 = 11.0;
/// Where a wait's dashed line runs, below its row's top (bars are 14 px high).
const GAP_LINE: f64 = 21.0;
/// How far below the line the wait's label has its baseline: a font size and 3 px of air.
const GAP_LABEL_BELOW: f64 = FONT + 3.0;

/// A request as the timeline needs it, in policy seconds from the first request.
struct Bar {
    label: String,
    start: f64,
    end: f64,
    end_kind: String,
    /// The attempt ended without its terminal success event: a retry may follow.
    failed: bool,
    fault: Option<String>,
    tooltip: String,
    asked: Option<String>,
}

fn bars(journal: &[JournalEntry], time_scale: TimeScale) -> Vec<Bar> {
    let calls: Vec<&JournalEntry> = journal.iter().filter(|e| e.attempt.is_some()).collect();
    let origin = calls.first().map_or(0.0, |e| e.received_at_ms);
    let seconds = |ms: f64| time_scale.policy_ms(ms - origin) / 1000.0;
    calls
        .iter()
        .map(|e| {
            let start = seconds(e.received_at_ms);
            let end = e.finished_at_ms.map_or(start, seconds);
            let headers = &e.response_headers;
            let asked = match (headers.get("retry-after-ms"), headers.get("retry-after")) {
                (Some(ms), _) => Some(format!(
                    "asked {} s (retry-after-ms)",
                    ms.parse::<f64>().map_or(ms.to_owned(), |v| format!("{:.2}", v / 1000.0))
                )),
                (None, Some(value)) if value.parse::<f64>().is_ok() => Some(format!("asked {value} s (retry-after)")),
                (None, Some(date)) => Some(format!("asked until {date}")),
                _ => None,
            };
            let end_kind = e.end.map_or("in progress", EndKind::as_str);
            Bar {
                label: format!("{} #{}", e.track.as_deref().unwrap_or("default"), e.attempt.unwrap_or(0) + 1),
                start,
                end,
                end_kind: end_kind.to_owned(),
                failed: !e.terminal_sent,
                fault: e.fault.map(|f| f.as_str().to_owned()),
                tooltip: format!(
                    "{} {} → {} · {end_kind} · {} events, {} bytes",
                    e.method,
                    e.path,
                    e.status.map_or_else(|| "null".to_owned(), |s| s.to_string()),
                    e.events_sent,
                    e.bytes_sent
                ),
                asked,
            }
        })
        .collect()
}

pub(super) fn color(end: &str) -> &'static str {
    match end {
        "completed" => "#2e7d32",
        "error_status" => "#ef6c00",
        "eof" | "reset" => "#c62828",
        "stalled" => "#6a1b9a",
        "truncated" | "garbage" => "#f9a825",
        _ => "#757575",
    }
}

/// Reactions this short are not named on the wait labels.
const NAMED_REACTION_MS: f64 = 1.0;

/// The SVG for one case; `planned` are the implementation's announced delays (seconds),
/// `reaction_ms` the real time the client takes of its own per retry, taken out of each wait.
pub(super) fn svg(journal: &[JournalEntry], planned: &[f64], time_scale: TimeScale, reaction_ms: f64) -> String {
    let bars = bars(journal, time_scale);
    if bars.is_empty() {
        return "<svg class=\"timeline\" width=\"760\" height=\"30\" xmlns=\"http://www.w3.org/2000/svg\"><text x=\"4\" y=\"19\" font-size=\"12\" fill=\"#757575\">no model requests reached the server</text></svg>".to_owned();
    }
    let span = bars.iter().map(|b| b.end).fold(0.0_f64, f64::max).max(0.001);
    let plot = WIDTH - LABEL - 110.0;
    let x = |t: f64| LABEL + t / span * plot;
    let height = TOP + ROW * bars.len() as f64 + 28.0;
    let mut out = String::new();
    let _ = write!(out, "<svg class=\"timeline\" width=\"{WIDTH}\" height=\"{height}\" xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\" font-size=\"{FONT}\">");
    // The n-th failed attempt is followed by the n-th announced retry delay.
    let mut retries = 0;
    for (i, bar) in bars.iter().enumerate() {
        let y = TOP + ROW * i as f64;
        let width = (x(bar.end) - x(bar.start)).max(2.0);
        let _ = write!(out, "<text x=\"4\" y=\"{:.1}\" fill=\"#333\">{}</text>", y + 11.0, escape(&bar.label));
        let _ = write!(
            out,
            "<rect x=\"{:.1}\" y=\"{y:.1}\" width=\"{width:.1}\" height=\"14\" rx=\"2\" fill=\"{}\"><title>{}</title></rect>",
            x(bar.start),
            color(&bar.end_kind),
            escape(&bar.tooltip)
        );
        let mark = match &bar.fault {
            Some(fault) => format!("✕ {fault}"),
            None => bar.end_kind.clone(),
        };
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{}\">{}</text>",
            x(bar.end) + 4.0,
            y + 11.0,
            color(&bar.end_kind),
            escape(&mark)
        );
        if let Some(next) = bars.get(i + 1) {
            let waited = next.start - bar.end - time_scale.policy_ms(reaction_ms) / 1000.0;
            let expected = if bar.failed {
                retries += 1;
                bar.asked.clone().or_else(|| planned.get(retries - 1).map(|p| format!("planned {p:.2} s")))
            } else {
                None
            };
            let mut label = match expected {
                Some(expected) => format!("waited {waited:.2} s · {expected}"),
                None => format!("waited {waited:.2} s"),
            };
            if reaction_ms >= NAMED_REACTION_MS {
                label.push_str(&format!(" · client reaction {reaction_ms:.0} ms real"));
            }
            // The dashed line halfway between this bar and the next; its label under it, clear of
            // the line (the text's top is a font size above its baseline) and of the next row.
            let gap_y = y + GAP_LINE;
            let _ = write!(
                out,
                "<line x1=\"{:.1}\" y1=\"{gap_y:.1}\" x2=\"{:.1}\" y2=\"{gap_y:.1}\" stroke=\"#999\" stroke-dasharray=\"3,2\"/><text x=\"{:.1}\" y=\"{:.1}\" fill=\"#555\">{}</text>",
                x(bar.end),
                x(next.start),
                x(bar.end) + 2.0,
                gap_y + GAP_LABEL_BELOW,
                escape(&label)
            );
        }
    }
    axis(&mut out, TOP + ROW * bars.len() as f64 + 4.0, (LABEL, plot), span);
    out.push_str("</svg>");
    out
}

/// A time axis at height `y` from `left` over `width` px, for `span` seconds, with five ticks.
pub(super) fn axis(out: &mut String, y: f64, (left, width): (f64, f64), span: f64) {
    let _ = write!(out, "<line x1=\"{left}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#333\"/>", left + width);
    for tick in 0..=4 {
        let t = span * f64::from(tick) / 4.0;
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#333\" text-anchor=\"middle\">{t:.1} s</text>",
            left + t / span * width,
            y + 14.0
        );
    }
}

#[cfg(test)]
mod tests {
    use super::svg;
    use serde_json::{json, Value};
    use squall::clock::TimeScale;
    use squall::journal::JournalEntry;

    /// A journal entry with `fields` over the defaults of a request that is still in progress.
    fn entry(fields: Value) -> JournalEntry {
        let mut value = json!({"index": 0, "track": "default", "attempt": 0, "method": "POST", "path": "/responses",
            "headers": {}, "body": null, "stream": true, "received_at_ms": 0.0, "finished_at_ms": null, "status": null,
            "fault": null, "end": null, "events_sent": 0, "bytes_sent": 0, "terminal_sent": false});
        for (key, field) in fields.as_object().expect("an object") {
            value[key] = field.clone();
        }
        serde_json::from_value(value).expect("a journal entry")
    }

    #[test]
    fn a_retry_after_gap_is_labelled_with_observed_and_asked_waits() {
        let journal = vec![
            entry(
                json!({"track": "default", "attempt": 0, "received_at_ms": 0.0, "finished_at_ms": 1.0, "end": "error_status", "status": 429, "fault": null, "response_headers": {"retry-after": "2"}}),
            ),
            entry(
                json!({"track": "default", "attempt": 1, "received_at_ms": 21.0, "finished_at_ms": 25.0, "end": "completed", "terminal_sent": true, "status": 200, "fault": null, "response_headers": {}}),
            ),
        ];
        let out = svg(&journal, &[], TimeScale::of(0.01), 0.0);
        assert!(out.contains("waited 2.00 s · asked 2 s (retry-after)"), "{out}");
        // A client that spends 118 ms of its own before the retry: the wait is still 2 s.
        let slow = |entry: &JournalEntry| {
            let mut shifted = entry.clone();
            shifted.received_at_ms += 118.0;
            shifted.finished_at_ms = shifted.finished_at_ms.map(|ms| ms + 118.0);
            shifted
        };
        let out = svg(&[journal[0].clone(), slow(&journal[1])], &[], TimeScale::of(0.01), 118.0);
        assert!(out.contains("waited 2.00 s · asked 2 s (retry-after) · client reaction 118 ms real"), "{out}");
        assert_eq!(out.matches("<rect").count(), 2);
    }

    #[test]
    fn planned_delays_label_only_the_gaps_after_failed_attempts() {
        let call = |attempt: u64, at: f64, end: &str, terminal: bool| {
            entry(
                json!({"track": "sub", "attempt": attempt, "received_at_ms": at, "finished_at_ms": at + 1.0, "end": end, "terminal_sent": terminal, "status": 200, "fault": null}),
            )
        };
        // A tool-call turn (completed), then a reset retried after a planned 2 s.
        let journal =
            vec![call(0, 0.0, "completed", true), call(1, 2.0, "reset", false), call(2, 23.0, "completed", true)];
        let out = svg(&journal, &[2.0], TimeScale::of(0.01), 0.0);
        assert!(out.contains("waited 0.10 s</text>"), "the tool gap has no expectation: {out}");
        assert!(out.contains("waited 2.00 s · planned 2.00 s"), "{out}");
    }

    /// Every number in `attribute="…"` of the elements that start with `tag` and contain `with`.
    fn positions(svg: &str, tag: &str, with: &str, attribute: &str) -> Vec<f64> {
        svg.split('<')
            .filter(|element| element.starts_with(tag) && element.contains(with))
            .filter_map(|element| element.split(&format!(" {attribute}=\"")).nth(1)?.split('"').next()?.parse().ok())
            .collect()
    }

    #[test]
    fn a_waits_label_sits_under_its_dashed_line_and_above_the_next_row() {
        let call = |attempt: u64, at: f64| {
            entry(
                json!({"attempt": attempt, "received_at_ms": at, "finished_at_ms": at + 1.0, "end": "error_status", "status": 503}),
            )
        };
        let out = svg(&[call(0, 0.0), call(1, 10.0), call(2, 30.0)], &[], TimeScale::of(0.01), 0.0);
        let lines = positions(&out, "line", "stroke-dasharray", "y1");
        let labels = positions(&out, "text", "waited", "y");
        let rows = positions(&out, "rect", "", "y");
        assert_eq!((lines.len(), labels.len(), rows.len()), (2, 2, 3), "{out}");
        for (i, (line, label)) in lines.iter().zip(&labels).enumerate() {
            // A label's glyphs rise at most a font size above its baseline and fall 3 px below it.
            assert!(label - super::FONT > *line, "label {i} at {label} crosses its line at {line}");
            assert!(label + 3.0 < rows[i + 1], "label {i} at {label} runs into the next row at {}", rows[i + 1]);
            assert!(*line > rows[i] + 14.0, "line {i} at {line} crosses its own bar");
        }
    }

    #[test]
    fn faults_are_marked_where_they_fired() {
        let journal = vec![entry(
            json!({"track": "sub", "attempt": 0, "received_at_ms": 0.0, "finished_at_ms": 3.0, "end": "reset", "fault": "reset", "status": 200}),
        )];
        assert!(svg(&journal, &[], TimeScale::REAL, 0.0).contains("✕ reset"));
    }
}
