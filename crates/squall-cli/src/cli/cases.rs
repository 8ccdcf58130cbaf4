//! `squall cases`: the cases the judge as a service can judge, as JSON (`--format json`, the
//! schema in docs/service.md) or a line each for people.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use squall::scenario::Catalogue;
use squall_suite::cases::export::{describe, CaseQuery};
use squall_suite::requirements::ProfileSelection;
use squall_suite::settings::DEFAULT_TIME_SCALE;
use squall_suite::Level;

use super::stdout;

/// The options of `squall cases`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct CasesArgs {
    /// `json` (the schema in docs/service.md) or `text` (a line per case).
    #[arg(long, default_value = "text", value_parser = ["json", "text"])]
    pub format: String,
    /// The profiles whose cases to list (as `squall run --profile`).
    #[arg(long = "profile", value_name = "PROFILE")]
    pub profiles: Vec<String>,
    /// The client's level: wire or events (cases needing more are left out).
    #[arg(long, default_value = "events")]
    pub level: String,
    /// Only the cases matching a tag expression, e.g. `@wire and not @should`.
    #[arg(long)]
    pub tags: Option<String>,
    /// The features directory (default: ./features if present, else the built-in features).
    #[arg(long)]
    pub features: Option<PathBuf>,
    /// The scenario catalogue (default: ./scenarios if present, else the built-in one).
    #[arg(long)]
    pub scenarios: Option<PathBuf>,
}

pub(crate) fn cases(args: CasesArgs) -> anyhow::Result<ExitCode> {
    let level =
        Level::parse(&args.level).ok_or_else(|| anyhow::anyhow!("--level {}: expected wire or events", args.level))?;
    let profiles = ProfileSelection::parse(&args.profiles).map_err(|e| anyhow::anyhow!("--profile: {e}"))?;
    let catalogue = Catalogue::from_dir_or_embedded(args.scenarios.as_deref())?;
    let plans = squall_suite::cases::from_dir_or_embedded(args.features.as_deref())?;
    let query = CaseQuery { profiles, level, tags: args.tags.clone(), time_scale: DEFAULT_TIME_SCALE };
    let list = describe(&plans, &query, &catalogue).map_err(|e| anyhow::anyhow!("--{e}"))?;
    if args.format == "json" {
        stdout::line(serde_json::to_string_pretty(&list).context("cannot serialize the cases")?)?;
    } else {
        for case in &list.cases {
            let herd = if case.herd { " (herd)" } else { "" };
            stdout::line(format_args!("{:90} {}{herd}", case.id, case.requirements.join(",")))?;
        }
        eprintln!(
            "{} cases at level {}; --format json for their scenarios and checks",
            list.cases.len(),
            level.as_str()
        );
    }
    Ok(ExitCode::SUCCESS)
}
