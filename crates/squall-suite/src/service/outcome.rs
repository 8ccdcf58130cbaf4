//! What a client posts for a verdict (`docs/service.md`), read as the IUT contract's outputs:
//! `result` (the `result.json` object), `events` (the records of `events.jsonl`, as an array or
//! as JSON Lines), and how it ended — or, for a herd, one such outcome per client under
//! `clients`. The server has read the body into [`PostedOutcome`]; what is left to check is what
//! its types cannot say.

use std::time::Duration;

use serde_json::Value;

use crate::iut::IutRun;
use squall::server::{PostedEvents, PostedOutcome, Refusal};

/// The posted outcome as runs of the implementation: one, or a herd's, client 0 first.
pub(super) fn runs(outcome: &PostedOutcome, herd: Option<u32>) -> Result<Vec<IutRun>, Refusal> {
    match (herd, &outcome.clients) {
        (Some(size), Some(clients)) if clients.len() == size as usize => {
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
fn run(outcome: &PostedOutcome, at: &str) -> Result<IutRun, Refusal> {
    let field = |name: &str| if at.is_empty() { name.to_owned() } else { format!("{at}.{name}") };
    let result = outcome.result.clone().map(Value::Object);
    let events = match &outcome.events {
        None => Vec::new(),
        Some(PostedEvents::Records(events)) => events.clone(),
        Some(PostedEvents::Lines(lines)) => lines
            .lines()
            .filter(|line| !line.trim().is_empty())
            .enumerate()
            .map(|(n, line)| {
                serde_json::from_str(line)
                    .map_err(|e| Refusal::bad(&field("events"), format!("line {} of `events` is not JSON: {e}", n + 1)))
            })
            .collect::<Result<_, _>>()?,
    };
    let timeout_s = outcome.case_timeout_s.unwrap_or(0.0);
    if !(timeout_s.is_finite() && timeout_s >= 0.0) {
        return Err(Refusal::bad(&field("case_timeout_s"), "`case_timeout_s` is a number of seconds"));
    }
    let output_errors =
        if result.is_none() { vec!["the outcome has no `result` object".to_owned()] } else { Vec::new() };
    Ok(IutRun {
        out_dir: tempfile::tempdir().map_err(|e| Refusal::bad("result", format!("cannot judge now: {e}")))?.into(),
        result,
        events,
        output_errors,
        stderr: outcome.stderr.clone().unwrap_or_default(),
        exit_code: Some(outcome.exit_code.unwrap_or(0)),
        timed_out: outcome.timed_out.unwrap_or(false),
        timeout: Duration::from_secs_f64(timeout_s),
        told_time_scale: None,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn posted(value: Value) -> PostedOutcome {
        serde_json::from_value(value).expect("an outcome")
    }

    #[test]
    fn an_outcome_reads_as_the_contracts_outputs() {
        let one =
            runs(&posted(json!({"result": {"ok": true}, "events": "{\"type\": \"a\"}\n\n{\"type\": \"b\"}\n"})), None)
                .expect("reads");
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].events.len(), 2);
        assert_eq!((one[0].exit_code, one[0].timed_out), (Some(0), false));
        let herd = posted(json!({"clients": [{"result": {"ok": true}}, {"result": null, "exit_code": 3}]}));
        let both = runs(&herd, Some(2)).expect("reads");
        assert!(both[1].result.is_none() && both[1].exit_code == Some(3));
        let bad = |outcome: PostedOutcome, herd: Option<u32>| runs(&outcome, herd).err().and_then(|r| r.param);
        assert_eq!(bad(posted(json!({"events": "nope"})), None).as_deref(), Some("events"));
        assert_eq!(bad(herd.clone(), Some(3)).as_deref(), Some("clients"));
    }
}
