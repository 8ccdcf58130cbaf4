//! `squall report merge`: one report, in all four formats, from the reports of a sharded run's
//! shards (`squall run --shard K/N`); exit code as `squall run`'s for the merged verdict.

use std::path::PathBuf;
use std::process::ExitCode;

use squall::report::merge::{merge, read_reports};
use squall::report::write_report;
use squall::suite::RunVerdict;

use super::stdout;

/// `squall report …`.
#[derive(Debug, clap::Subcommand)]
pub enum ReportCommand {
    /// Join the reports of a sharded run into one (every case once, requirements judged again).
    Merge {
        /// The shards' report directories (or their report.json files).
        #[arg(required = true)]
        reports: Vec<PathBuf>,
        /// Where the merged reports go.
        #[arg(long, default_value = "target/squall/merged")]
        out: PathBuf,
    },
}

pub fn report(command: ReportCommand) -> anyhow::Result<ExitCode> {
    match command {
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
