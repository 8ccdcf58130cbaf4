//! `squall report merge`: one report, in all four formats, from the reports of a sharded run's
//! shards (`squall run --shard K/N`); exit code as `squall run`'s for the merged verdict.
//! `squall report matrix`: several clients' reports side by side. `squall report render`: every
//! format of one report written again from its data (a kept `report.json.gz`, or a report.json).

use std::path::PathBuf;
use std::process::ExitCode;

use squall_suite::report::matrix::render;
use squall_suite::report::merge::{merge, read_reports};
use squall_suite::report::read::read_report;
use squall_suite::report::{write_atomically, write_report};
use squall_suite::RunVerdict;

use super::stdout;

/// `squall report …`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum ReportCommand {
    /// Join the reports of a sharded run into one (every case once, requirements judged again).
    Merge {
        /// The shards' report directories (or their report.json files).
        #[arg(required = true)]
        reports: Vec<PathBuf>,
        /// Where the merged reports go.
        #[arg(long, default_value = "target/squall/merged")]
        out: PathBuf,
    },
    /// Write every format of a report again (report.json, acceptance.md, junit.xml, index.html)
    /// from its data: a report directory (a run's, or a kept one's `report.json.gz`) or file.
    Render {
        /// The report's directory, or its report.json or report.json.gz.
        report: PathBuf,
        /// Where the formats go.
        #[arg(long, default_value = "target/squall/rendered")]
        out: PathBuf,
    },
    /// The resilience matrix of several clients' reports: each requirement's and each fault
    /// kind's verdict per client, in Markdown.
    Matrix {
        /// The clients' report directories (or their report.json files), in column order.
        #[arg(required = true)]
        reports: Vec<PathBuf>,
        /// The Markdown file to write.
        #[arg(long, default_value = "target/squall/MATRIX.md")]
        out: PathBuf,
    },
}

pub(crate) fn report(command: ReportCommand) -> anyhow::Result<ExitCode> {
    match command {
        ReportCommand::Matrix { reports, out } => {
            let made_by = format!(
                "squall report matrix {} --out {}",
                reports.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" "),
                out.display()
            );
            let text = render(&read_reports(&reports)?, &made_by);
            if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)?;
            }
            write_atomically(&out, &text).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", out.display()))?;
            stdout::line(format_args!("matrix of {} clients: {}", reports.len(), out.display()))?;
            Ok(ExitCode::SUCCESS)
        }
        ReportCommand::Render { report, out } => {
            let (file, report) = read_report(&report).map_err(anyhow::Error::msg)?;
            let written = write_report(&out, &report)?;
            stdout::line(format_args!(
                "rendered {}: {}",
                file.display(),
                written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
            ))?;
            Ok(ExitCode::SUCCESS)
        }
        ReportCommand::Merge { reports, out } => {
            let merged = merge(read_reports(&reports)?)?;
            let written = write_report(&out, &merged)?;
            stdout::line(format_args!(
                "merged {} reports: {} ({} cases: {})",
                reports.len(),
                merged.verdict.as_str(),
                merged.case_summary.total(),
                merged.case_summary.describe()
            ))?;
            stdout::line(format_args!(
                "reports: {}",
                written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
            ))?;
            match merged.verdict {
                RunVerdict::Passed => Ok(ExitCode::SUCCESS),
                RunVerdict::Failed => Ok(ExitCode::from(1)),
                RunVerdict::Empty => {
                    anyhow::bail!("the merged reports judged nothing: every case is n/a, or there is none")
                }
            }
        }
    }
}
