//! Suite settings from the environment, for `cargo test --test conformance`.

use std::path::Path;

use crate::iut::Iut;
use crate::scenario::Catalogue;

use super::requirements::ProfileSelection;
use super::runner::SuiteConfig;
use super::verdict::Level;

/// `SQUALL_IUT` (a command, or unset / `reference` for the in-process reference),
/// `SQUALL_REFERENCE_MUTANT`, `SQUALL_LEVEL`, `SQUALL_PROFILE` (profiles to judge, comma
/// separated, or `all`; the IUT still receives its own agent profile in its `SQUALL_PROFILE`),
/// `SQUALL_TIME_SCALE`, `SQUALL_MAX_TIME_SCALE`, `SQUALL_TAGS`, `SQUALL_CUCUMBER_JSON`,
/// `SQUALL_CONSOLE=1`. The error names the variable at fault.
pub fn config_from_env(root: &Path) -> Result<SuiteConfig, String> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let iut = match var("SQUALL_IUT").as_deref() {
        None | Some("reference") => Iut::Reference { mutant: var("SQUALL_REFERENCE_MUTANT") },
        Some(command) => Iut::Command(command.to_owned()),
    };
    let catalogue = Catalogue::load_dir(&root.join("scenarios")).map_err(|e| e.to_string())?;
    let mut config = SuiteConfig::new(iut, root.join("features"), catalogue);
    if let Some(level) = var("SQUALL_LEVEL") {
        config.level =
            Level::parse(&level).ok_or_else(|| format!("SQUALL_LEVEL={level}: expected wire, events or tasks"))?;
    }
    let scale = |name: &str| -> Result<Option<f64>, String> {
        var(name)
            .map(|text| {
                text.parse()
                    .ok()
                    .filter(|s: &f64| *s > 0.0 && *s <= 1.0)
                    .ok_or_else(|| format!("{name}={text}: expected a number in (0, 1]"))
            })
            .transpose()
    };
    if let Some(time_scale) = scale("SQUALL_TIME_SCALE")? {
        config.time_scale = time_scale;
    }
    if let Some(max) = scale("SQUALL_MAX_TIME_SCALE")? {
        config.max_time_scale = max;
    }
    if let Some(profiles) = var("SQUALL_PROFILE") {
        config.profiles =
            ProfileSelection::parse(&[&profiles]).map_err(|e| format!("SQUALL_PROFILE={profiles}: {e}"))?;
    }
    config.tags = var("SQUALL_TAGS");
    config.cucumber_json = var("SQUALL_CUCUMBER_JSON").map(Into::into);
    config.console = var("SQUALL_CONSOLE").is_some();
    Ok(config)
}
