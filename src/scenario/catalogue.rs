//! The scenario catalogue: every `*.toml` in a directory, by name — or the ones compiled into
//! the binary from `scenarios/` (see `build.rs`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::error::{FieldPath, ScenarioError};
use super::load;
use crate::scenario_model::Scenario;

include!(concat!(env!("OUT_DIR"), "/embedded_scenarios.rs"));

/// Named scenarios loaded from a directory.
#[derive(Debug, Clone, Default)]
pub struct Catalogue {
    scenarios: BTreeMap<String, Arc<Scenario>>,
}

impl Catalogue {
    /// The catalogue a command uses: `dir` when given (it must be a directory), else
    /// `./scenarios` when it exists, else the one compiled into the binary. The error names
    /// the directory or the file at fault.
    pub fn from_dir_or_embedded(dir: Option<&Path>) -> Result<Self, ScenarioError> {
        let not_a_directory = |dir: &Path| {
            ScenarioError::new(FieldPath::root(), "not a directory")
                .in_source(&format!("--scenarios {}", dir.display()))
        };
        let default_dir = Path::new("scenarios");
        match dir {
            Some(dir) if !dir.is_dir() => Err(not_a_directory(dir)),
            Some(dir) => Catalogue::load_dir(dir),
            None if default_dir.is_dir() => Catalogue::load_dir(default_dir),
            None => Catalogue::embedded(),
        }
    }

    /// The catalogue compiled into the binary. The files were validated by the test suite when
    /// the binary was built, so an error here means the build skipped its tests; it still names
    /// the file.
    pub fn embedded() -> Result<Self, ScenarioError> {
        let mut catalogue = Catalogue::default();
        for (file, text) in EMBEDDED_SCENARIOS {
            let stem = file.strip_suffix(".toml").unwrap_or(file);
            catalogue.insert(load::from_file_text(&format!("scenarios/{file} (embedded)"), stem, text)?);
        }
        Ok(catalogue)
    }

    /// Load every `*.toml` file in `dir`; each scenario is named by its file's stem.
    /// The first bad file stops loading with an error naming it.
    pub fn load_dir(dir: &Path) -> Result<Self, ScenarioError> {
        let entries = std::fs::read_dir(dir).map_err(|e| {
            let mut error = ScenarioError::new(FieldPath::root(), format!("cannot read the scenario directory: {e}"));
            error.source_name = dir.display().to_string();
            error
        })?;
        let mut paths: Vec<_> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
            .collect();
        paths.sort();
        let mut catalogue = Catalogue::default();
        for path in paths {
            catalogue.insert(load::from_file(&path)?);
        }
        Ok(catalogue)
    }

    /// Add (or replace) a scenario under its name.
    pub fn insert(&mut self, scenario: Scenario) {
        self.scenarios.insert(scenario.name.clone(), Arc::new(scenario));
    }

    /// The scenario with this name.
    pub fn get(&self, name: &str) -> Option<Arc<Scenario>> {
        self.scenarios.get(name).cloned()
    }

    /// Every scenario, by name.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Scenario>> {
        self.scenarios.values()
    }

    /// How many scenarios there are.
    pub fn len(&self) -> usize {
        self.scenarios.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.scenarios.is_empty()
    }
}
