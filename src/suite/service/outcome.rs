//! What a client posts for a verdict (`docs/service.md`): its outcome in the shape of the IUT
//! contract's outputs — `result` (the `result.json` object), optional `events` (the records of
//! `events.jsonl`, as an array or as JSON Lines), and how it ended — or, for a herd, one such
//! object per client under `clients`.

use std::time::Duration;

use serde_json::Value;

use crate::iut::IutRun;
use crate::server::judge_api::Refusal;

/// The posted outcome as runs of the implementation: one, or a herd's, client 0 first.
pub(crate) fn runs(outcome: &Value, herd: Option<u32>) -> Result<Vec<IutRun>, Refusal> {
    match (herd, outcome.get("clients")) {
        (Some(size), Some(Value::Array(clients))) if clients.len() == size as usize => {
            clients.iter().enumerate().map(|(k, client)| run(client, &format!("clients[{k}]"))).collect()
        }
        (Some(size), _) => Err(Refusal::bad(
            "clients",
            format!("A herd case's outcome has `clients`: an array of {size} outcomes, client 0 first"),
        )),
        (None, _) => Ok(vec![run(outcome, "")?]),
    }
}

/// One client's outcome.
fn run(outcome: &Value, at: &str) -> Result<IutRun, Refusal> {
    let field = |name: &str| if at.is_empty() { name.to_owned() } else { format!("{at}.{name}") };
    let Value::Object(fields) = outcome else { return Err(Refusal::bad(at, "An outcome is a JSON object")) };
    let result = match fields.get("result") {
        None | Some(Value::Null) => None,
        Some(value @ Value::Object(_)) => Some(value.clone()),
        Some(_) => return Err(Refusal::bad(&field("result"), "`result` is the result.json object")),
    };
    let events = match fields.get("events") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(events)) => events.clone(),
        Some(Value::String(lines)) => lines
            .lines()
            .filter(|line| !line.trim().is_empty())
            .enumerate()
            .map(|(n, line)| {
                serde_json::from_str(line)
                    .map_err(|e| Refusal::bad(&field("events"), format!("line {} of `events` is not JSON: {e}", n + 1)))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(Refusal::bad(&field("events"), "`events` is an array of records, or JSON Lines")),
    };
    let number = |name: &str| fields.get(name).filter(|v| !v.is_null());
    let exit_code = match number("exit_code") {
        None => Some(0),
        Some(value) => Some(
            value
                .as_i64()
                .and_then(|code| i32::try_from(code).ok())
                .ok_or_else(|| Refusal::bad(&field("exit_code"), "`exit_code` is a whole number"))?,
        ),
    };
    let timed_out = match fields.get("timed_out") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(Refusal::bad(&field("timed_out"), "`timed_out` is true or false")),
    };
    let timeout_s = match number("case_timeout_s") {
        None => 0.0,
        Some(value) => value
            .as_f64()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .ok_or_else(|| Refusal::bad(&field("case_timeout_s"), "`case_timeout_s` is a number of seconds"))?,
    };
    let stderr = fields.get("stderr").and_then(Value::as_str).unwrap_or("").to_owned();
    let output_errors =
        if result.is_none() { vec!["the outcome has no `result` object".to_owned()] } else { Vec::new() };
    Ok(IutRun {
        out_dir: tempfile::tempdir().map_err(|e| Refusal::bad("result", format!("cannot judge now: {e}")))?.into(),
        result,
        events,
        output_errors,
        stderr,
        exit_code,
        timed_out,
        timeout: Duration::from_secs_f64(timeout_s),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_outcome_reads_as_the_contracts_outputs() {
        let one = runs(&json!({"result": {"ok": true}, "events": "{\"type\": \"a\"}\n\n{\"type\": \"b\"}\n"}), None)
            .expect("reads");
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].events.len(), 2);
        assert_eq!((one[0].exit_code, one[0].timed_out), (Some(0), false));
        let herd = json!({"clients": [{"result": {"ok": true}}, {"result": null, "exit_code": 3}]});
        let runs2 = runs(&herd, Some(2)).expect("reads");
        assert!(runs2[1].result.is_none() && runs2[1].exit_code == Some(3));
        let bad = |outcome: Value, herd: Option<u32>| runs(&outcome, herd).err().map(|r| (r.param, r.message));
        assert_eq!(bad(json!({"result": 1}), None).map(|(p, _)| p), Some(Some("result".to_owned())));
        assert_eq!(bad(json!({"events": "nope"}), None).map(|(p, _)| p), Some(Some("events".to_owned())));
        assert_eq!(bad(herd.clone(), Some(3)).map(|(p, _)| p), Some(Some("clients".to_owned())));
        let nested = json!({"clients": [{"result": {"ok": true}}, {"timed_out": "yes"}]});
        assert_eq!(bad(nested, Some(2)).map(|(p, _)| p), Some(Some("clients[1].timed_out".to_owned())));
    }
}
