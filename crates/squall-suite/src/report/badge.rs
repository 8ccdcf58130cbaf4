//! A report's badge: `badge.svg` (a flat badge to put in a README) and `badge.json` (a shields.io
//! endpoint: `https://img.shields.io/endpoint?url=<where badge.json is served>`), both showing
//! the judged profiles and their verdict.

use serde_json::json;

use super::escape;
use super::Report;
use crate::Verdict;

/// What the badge says: (label, message, colour).
fn content(report: &Report) -> (String, &'static str, &'static str) {
    let profiles: Vec<&str> = report.profiles.judged.iter().map(|p| p.id.as_str()).collect();
    let verdict = Verdict::worst(report.profiles.judged.iter().map(|p| p.verdict));
    let (message, colour) = match verdict {
        Verdict::Pass => ("pass", "#4c1"),
        Verdict::Warn => ("pass with warnings", "#97ca00"),
        Verdict::Waived => ("pass with waivers", "#dfb317"),
        Verdict::Fail => ("fail", "#e05d44"),
        Verdict::Error => ("error", "#fe7d37"),
        Verdict::Inconclusive => ("inconclusive", "#9f9f9f"),
        Verdict::NotApplicable => ("not judged", "#9f9f9f"),
    };
    (format!("squall {}", if profiles.is_empty() { "—".to_owned() } else { profiles.join(", ") }), message, colour)
}

/// The shields.io endpoint JSON.
pub(super) fn endpoint(report: &Report) -> String {
    let (label, message, colour) = content(report);
    let badge =
        json!({"schemaVersion": 1, "label": label, "message": message, "color": colour.trim_start_matches('#')});
    format!("{badge:#}\n")
}

/// Width in pixels of `text` in 11 px Verdana, near enough for a badge.
fn width(text: &str) -> usize {
    text.chars().count() * 7 + 10
}

/// The SVG badge.
pub(super) fn svg(report: &Report) -> String {
    let (label, message, colour) = content(report);
    let (left, right) = (width(&label), width(message));
    let total = left + right;
    let (label, message) = (escape(&label), escape(message));
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{total}\" height=\"20\" role=\"img\" aria-label=\"{label}: {message}\">\
         <title>{label}: {message}</title>\
         <rect width=\"{left}\" height=\"20\" fill=\"#555\"/><rect x=\"{left}\" width=\"{right}\" height=\"20\" fill=\"{colour}\"/>\
         <g fill=\"#fff\" text-anchor=\"middle\" font-family=\"Verdana,DejaVu Sans,sans-serif\" font-size=\"11\">\
         <text x=\"{}\" y=\"14\">{label}</text><text x=\"{}\" y=\"14\">{message}</text></g></svg>\n",
        left / 2,
        left + right / 2
    )
}
