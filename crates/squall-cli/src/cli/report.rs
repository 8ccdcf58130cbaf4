//! `squall report merge`: one report, in all four formats, from the reports of a sharded run's
//! shards (`squall run --shard K/N`); exit code as `squall run`'s for the merged verdict.
//! `squall report matrix`: several clients' reports side by side. `squall report render`: every
//! format of one report written again from its data (a kept `report.json.gz`, or a report.json).

use std::path::PathBuf;
use std::process::ExitCode;

use squall_suite::report::matrix::render;
use squall_suite::report::merge::{merge, read_reports, unique_cases, waive};
use squall_suite::report::read::read_report;
use squall_suite::report::{write_atomically, write_report};
use squall_suite::RunVerdict;

use super::{signoff, stdout};

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
        /// A waivers file (TOML, docs/reports.md) applied to the merged report.
        #[arg(long, value_name = "FILE")]
        waivers: Option<PathBuf>,
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
    /// An in-toto Statement (test-result predicate) of a report: its files and the artifacts
    /// you name, by SHA-256; signed into a DSSE envelope with `--key`.
    Attest {
        /// The report's directory (or its report.json).
        report: PathBuf,
        /// An artifact the verdicts are about (a wheel, an image's digest file); repeatable.
        #[arg(long = "subject", value_name = "FILE")]
        subjects: Vec<PathBuf>,
        /// An Ed25519 private key (PKCS#8 PEM: `squall report keygen`, or `openssl genpkey
        /// -algorithm ed25519`) to sign with.
        #[arg(long, value_name = "KEY")]
        key: Option<PathBuf>,
        /// Where the attestation goes (default: attestation.intoto.json, or attestation.dsse.json
        /// when signed, in the report's directory).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Check an attestation: every subject's digest, and the signature of a signed one; exit 1
    /// naming what does not match.
    Verify {
        /// The attestation file.
        attestation: PathBuf,
        /// The signer's Ed25519 public key (SPKI PEM), for a signed attestation.
        #[arg(long, value_name = "KEY")]
        public_key: Option<PathBuf>,
    },
    /// A new Ed25519 key pair for signing attestations: KEY and KEY.pub.
    Keygen {
        /// The private key's file (never overwritten); the public key goes beside it as .pub.
        #[arg(long)]
        out: PathBuf,
    },
    /// What changed between two reports: regressions, fixes, cases that appeared or went, checks
    /// whose observed values moved, provenance that differs. Markdown on stdout; exit 1 on a
    /// regression.
    Diff {
        /// The earlier report (directory, report.json or report.json.gz).
        old: PathBuf,
        /// The later one.
        new: PathBuf,
        /// Also write the diff as JSON here.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Also write the Markdown here.
        #[arg(long, value_name = "FILE")]
        markdown: Option<PathBuf>,
    },
}

pub(crate) fn report(command: ReportCommand) -> anyhow::Result<ExitCode> {
    match command {
        ReportCommand::Attest { report, subjects, key, out } => {
            signoff::attest(&report, &subjects, key.as_deref(), out)
        }
        ReportCommand::Verify { attestation, public_key } => signoff::verify(&attestation, public_key.as_deref()),
        ReportCommand::Keygen { out } => signoff::keygen(&out),
        ReportCommand::Diff { old, new, json, markdown } => {
            signoff::report_diff(&old, &new, json.as_deref(), markdown.as_deref())
        }
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
        ReportCommand::Merge { reports, out, waivers } => {
            let merged = merge(read_reports(&reports)?)?;
            let merged = match waivers {
                Some(path) => {
                    let known: Vec<String> = unique_cases(&merged).iter().map(|c| c.id.clone()).collect();
                    let waivers = squall_suite::waivers::read(&path, &known)?;
                    waive(merged, &waivers, &squall_suite::waivers::today())
                }
                None => merged,
            };
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
