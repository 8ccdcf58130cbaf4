//! Acceptance reports for a suite run, written to one directory:
//!
//! - `report.json` — the public schema (`docs/reports.md`): the [`schema::Report`] type ([`schema`]),
//!   built once from the suite's outcome and serialised
//! - `acceptance.md` — for PRD sign-off (`markdown`)
//! - `junit.xml` — one testsuite per requirement (`junit`)
//! - `index.html` — one self-contained page with SVG attempt timelines (`html`, `timeline`)
//! - `badge.svg`, `badge.json` — the profiles' verdict as a badge and a shields.io endpoint (`badge`)
//!
//! The acceptance report traces each seed clause to its cases (`traceability`) and records the
//! run's provenance (`provenance_md`). A report is attested and verified ([`attest`], signed in
//! [`dsse`] envelopes), and two reports compared ([`diff`]).
//!
//! Every format renders the same [`schema::Report`]; each file is written atomically, so a reader never
//! sees half a report. A sharded run's reports join into one ([`merge`]); several clients' reports
//! make the resilience matrix ([`matrix`]); a report is read back, kept compressed or not, by
//! [`read`].

pub mod attest;
mod badge;
pub mod diff;
pub mod dsse;
mod herd_timeline;
mod html;
mod junit;
pub(crate) mod markdown;
pub mod matrix;
pub mod merge;
mod provenance_md;
pub mod read;
pub mod schema;
mod timeline;
mod traceability;

use self::schema::Report;

use std::path::{Path, PathBuf};

use crate::{Level, SuiteError, SuiteOutcome};
use squall::clock::TimeScale;

/// Who was tested, how, and when.
#[derive(Debug, Clone)]
pub struct ReportMeta {
    /// A short name for the implementation (`reference`, `python-openai`).
    pub name: String,
    /// The command that ran it, or `reference (in-process)`.
    pub command: String,
    /// The `--iut` value, so that the run can be repeated (`reference`, `reference:<mutant>`,
    /// or the command).
    pub run_as: String,
    /// The IUT contract level it was judged at.
    pub level: Level,
    /// The run's time scale (cases may run slower; each carries its own).
    pub time_scale: TimeScale,
    /// The most a case's time scale could be raised to for its timing checks.
    pub max_time_scale: TimeScale,
    /// Real time each case had before the implementation was killed.
    pub case_timeout: std::time::Duration,
    /// Cases run side by side.
    pub concurrency: usize,
}

/// The files [`write_all`] writes.
pub const FILES: [&str; 6] = ["report.json", "acceptance.md", "junit.xml", "index.html", "badge.svg", "badge.json"];

/// Write every report file into `dir`; returns their paths.
pub fn write_all(dir: &Path, meta: &ReportMeta, outcome: &SuiteOutcome) -> Result<Vec<PathBuf>, SuiteError> {
    write_report(dir, &Report::new(meta, outcome))
}

/// Write `report` in every format into `dir`; returns their paths.
pub fn write_report(dir: &Path, report: &Report) -> Result<Vec<PathBuf>, SuiteError> {
    std::fs::create_dir_all(dir)
        .map_err(SuiteError::io(format!("cannot create the report directory {}", dir.display())))?;
    let contents = [
        serde_json::to_string_pretty(report)
            .map_err(|e| SuiteError::Harness(format!("cannot serialize report.json: {e}")))?,
        markdown::render(report),
        junit::render(report),
        html::render(report),
        badge::svg(report),
        badge::endpoint(report),
    ];
    let mut written = Vec::new();
    for (file, text) in FILES.iter().zip(contents) {
        let path = dir.join(file);
        write_atomically(&path, &text).map_err(SuiteError::io(format!("cannot write {}", path.display())))?;
        written.push(path);
    }
    Ok(written)
}

/// Write `text` to `path` through a temporary file beside it (unique per write), fsync and a
/// rename: a reader sees the old file or the new one, never half of one. The file gets the
/// mode any new file gets (0666 less the umask: 0644 under umask 022), so CI artifact hosts
/// and web servers can read it as another user.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut temp =
        tempfile::Builder::new().prefix(".squall-report-").permissions(readable_by_all()).tempfile_in(dir)?;
    temp.write_all(text.as_bytes())?;
    temp.as_file().sync_all()?;
    temp.persist(path).map(drop).map_err(|e| e.error)
}

/// 0666 before the umask, as `open(2)` creates files (tempfile's default is 0600).
fn readable_by_all() -> std::fs::Permissions {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::Permissions::from_mode(0o666)
}

/// Text for one cell of a Markdown table: `|` escaped, lines joined.
pub(crate) fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// Escape text for XML and HTML (control characters other than newline and tab dropped).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn markup_special_characters_are_escaped() {
        assert_eq!(escape("a<b>&\"c'\u{1}"), "a&lt;b&gt;&amp;&quot;c&#39;");
    }
}
