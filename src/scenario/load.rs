//! Reading scenarios from TOML files and inline JSON, with located errors.

use std::path::Path;

use serde::de::DeserializeOwned;

use super::error::{line_column, FieldPath, PathSegment, ScenarioError};
use super::validate::validate;
use crate::scenario_model::Scenario;

/// Parse and validate a TOML scenario; `source_name` is used in error messages.
pub fn from_toml_str(source_name: &str, text: &str) -> Result<Scenario, ScenarioError> {
    named_toml(source_name, text, None)
}

/// As [`from_toml_str`]; a scenario without `name` gets `default_name` (a file's stem).
fn named_toml(source_name: &str, text: &str, default_name: Option<&str>) -> Result<Scenario, ScenarioError> {
    let mut scenario: Scenario = parse_toml(text).map_err(|e| e.named(source_name))?;
    if let Some(default) = default_name.filter(|_| scenario.name.is_empty()) {
        default.clone_into(&mut scenario.name);
    }
    validate(&scenario).map_err(|mut e| {
        e.location = locate_in_toml(text, &e.field);
        e.named(source_name)
    })?;
    Ok(scenario)
}

/// Parse and validate an inline JSON scenario (admin API).
pub fn from_json_value(value: serde_json::Value) -> Result<Scenario, ScenarioError> {
    let scenario: Scenario = serde_path_to_error::deserialize(value).map_err(|e| {
        let field = FieldPath::from_serde(e.path());
        ScenarioError::new(field, e.into_inner().to_string()).named("inline scenario")
    })?;
    validate(&scenario).map_err(|e| e.named("inline scenario"))?;
    Ok(scenario)
}

/// Read, parse and validate one scenario file. Its `name` is the file's stem when it gives
/// none; one it gives must be the stem (a catalogue finds scenarios by file name).
pub fn from_file(path: &Path) -> Result<Scenario, ScenarioError> {
    let source = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| ScenarioError::new(FieldPath::root(), format!("cannot read the file: {e}")).named(&source))?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    from_file_text(&source, &stem, &text)
}

/// A scenario file's `text`, whose file stem is `stem` (see [`from_file`]); `source` names it in
/// errors.
pub(crate) fn from_file_text(source: &str, stem: &str, text: &str) -> Result<Scenario, ScenarioError> {
    let scenario = named_toml(source, text, Some(stem))?;
    if scenario.name != stem {
        let mut error = ScenarioError::new(
            FieldPath::root().key("name"),
            format!(
                "`{}` is not the file's name, `{stem}.toml`: leave `name` out, or rename one of them",
                scenario.name
            ),
        );
        error.location = locate_in_toml(text, &error.field);
        return Err(error.named(source));
    }
    Ok(scenario)
}

fn parse_toml<T: DeserializeOwned>(text: &str) -> Result<T, ScenarioError> {
    let deserializer = toml::Deserializer::new(text);
    serde_path_to_error::deserialize(deserializer).map_err(|e| {
        let field = FieldPath::from_serde(e.path());
        let inner = e.into_inner();
        let mut error = ScenarioError::new(field, inner.message().trim().to_owned());
        error.location = inner.span().map(|span| line_column(text, span.start));
        error
    })
}

impl ScenarioError {
    fn named(self, source_name: &str) -> Self {
        self.in_source(source_name)
    }
}

/// Find where a field path sits in TOML text, for errors found after parsing.
/// Returns the position of the deepest part of the path that exists in the text.
fn locate_in_toml(text: &str, field: &FieldPath) -> Option<(usize, usize)> {
    let document = toml_edit::ImDocument::parse(text).ok()?;
    // The walk clones each step so one owned cursor type covers tables, arrays and values;
    // it only runs on the error path of a small file.
    let mut item = document.as_item().clone();
    let mut best = None;
    for segment in &field.0 {
        let next = match (segment, &item) {
            (PathSegment::Key(key), toml_edit::Item::Table(table)) => table.get(key).cloned(),
            (PathSegment::Key(key), toml_edit::Item::Value(toml_edit::Value::InlineTable(t))) => {
                t.get(key).cloned().map(toml_edit::Item::Value)
            }
            (PathSegment::Index(i), toml_edit::Item::ArrayOfTables(tables)) => {
                tables.get(*i).cloned().map(toml_edit::Item::Table)
            }
            (PathSegment::Index(i), toml_edit::Item::Value(toml_edit::Value::Array(array))) => {
                array.get(*i).cloned().map(toml_edit::Item::Value)
            }
            _ => None,
        };
        let Some(next) = next else { break };
        if let Some(span) = next.span() {
            best = Some(span.start);
        }
        item = next;
    }
    best.map(|offset| line_column(text, offset))
}
