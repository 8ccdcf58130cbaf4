//! The body of `POST /__squall/runs`, read without HTTP (so it can be fuzzed): a JSON object
//! with `scenario` — a catalogue name or an inline scenario — and optionally `time_scale`.

use std::sync::Arc;

use serde_json::Value;

use crate::clock::TimeScale;
use crate::scenario::load::from_json_value;
use crate::scenario::{Catalogue, Scenario};

/// Why a create-run body was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreateRunError {
    /// A 400, naming the field at fault (`param`) when there is one.
    BadRequest {
        /// The field at fault (`scenario.attempts[0].status`, `time_scale`), when there is one.
        param: Option<String>,
        /// What is wrong, with the bad value.
        message: String,
    },
    /// A 404: no catalogue scenario has this name.
    UnknownScenario(String),
}

fn bad(param: Option<&str>, message: impl Into<String>) -> CreateRunError {
    CreateRunError::BadRequest { param: param.map(str::to_owned), message: message.into() }
}

/// The scenario and time scale a create-run body asks for.
pub fn parse_create_run(body: &[u8], catalogue: &Catalogue) -> Result<(Arc<Scenario>, TimeScale), CreateRunError> {
    let body: Value =
        serde_json::from_slice(body).map_err(|e| bad(None, format!("The body is not valid JSON: {e}")))?;
    let Some(fields) = body.as_object() else {
        return Err(bad(None, "The body must be a JSON object: {\"scenario\": \"<name>\" | {…}, \"time_scale\": 1.0}"));
    };
    if let Some(unknown) = fields.keys().find(|k| !["scenario", "time_scale"].contains(&k.as_str())) {
        return Err(bad(
            Some(unknown),
            format!("Unknown field `{unknown}`; expected `scenario` and optionally `time_scale`"),
        ));
    }
    let time_scale = match fields.get("time_scale") {
        None | Some(Value::Null) => TimeScale::REAL,
        Some(value) => match value.as_f64() {
            Some(scale) => TimeScale::new(scale).map_err(|range| bad(Some("time_scale"), range.to_string()))?,
            None => {
                let message = format!("`time_scale` {value} is not a number: give {}", TimeScale::RANGE);
                return Err(bad(Some("time_scale"), message));
            }
        },
    };
    let scenario = match fields.get("scenario") {
        Some(Value::String(name)) => {
            catalogue.get(name).ok_or_else(|| CreateRunError::UnknownScenario(name.clone()))?
        }
        Some(inline @ Value::Object(_)) => {
            let scenario = from_json_value(inline.clone())
                .map_err(|e| bad(Some(&format!("scenario.{}", e.field)), e.to_string()))?;
            Arc::new(scenario)
        }
        Some(other) => {
            return Err(bad(
                Some("scenario"),
                format!("`scenario` must be a catalogue name or an inline scenario object, got {other}"),
            ))
        }
        None => return Err(bad(Some("scenario"), "Missing `scenario`: a catalogue name or an inline scenario object")),
    };
    Ok((scenario, time_scale))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_refused_with_the_field_at_fault() {
        let catalogue = Catalogue::default();
        let refused = |body: &str| parse_create_run(body.as_bytes(), &catalogue).expect_err(body);
        assert!(matches!(refused("[]"), CreateRunError::BadRequest { param: None, .. }));
        assert_eq!(refused(r#"{"scenario": "nope"}"#), CreateRunError::UnknownScenario("nope".into()));
        let CreateRunError::BadRequest { param, message } =
            refused(r#"{"scenario": {"name": "x"}, "time_scale": 1e300}"#)
        else {
            panic!("a 400")
        };
        assert_eq!(param.as_deref(), Some("time_scale"));
        assert_eq!(message, "time scale 1e300 is not a number in (0, 100]");
        // Each refusal names the value sent.
        for (sent, says) in [
            ("0", "time scale 0 is not a number in (0, 100]"),
            ("-1", "time scale -1 is not a number in (0, 100]"),
            ("1000", "time scale 1000 is not a number in (0, 100]"),
            ("\"fast\"", "`time_scale` \"fast\" is not a number"),
        ] {
            let body = format!(r#"{{"scenario": {{"name": "x"}}, "time_scale": {sent}}}"#);
            let CreateRunError::BadRequest { message, .. } = refused(&body) else { panic!("a 400") };
            assert!(message.contains(says), "{sent}: {message}");
        }
        // A type error under a header whose name has brackets: the path is one key, no panic.
        let body = r#"{"scenario": {"name": "x", "attempts": [{"status": 429, "headers": {"a]b[c": 7}}]}}"#;
        let CreateRunError::BadRequest { param, .. } = refused(body) else { panic!("a 400") };
        assert_eq!(param.as_deref(), Some(r#"scenario.attempts[0].headers["a]b[c"]"#));
    }
}
