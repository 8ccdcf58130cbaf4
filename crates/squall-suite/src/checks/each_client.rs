//! `every client of the herd: <step>`: any check, judged on every instance of a herd alone —
//! its own requests (those at its client base URL) and its own outputs — as if it had been the
//! only client. What holds for one client of a case holds for a herd's clients one by one: a
//! batch of module calls each degrades in time (seed 004), each of a herd of main sessions
//! starts one deep research (REQ-0006-030). The step's verdict is the worst of its clients',
//! a client seen to miss before a client that could not be decided; it is unsure (a slower run
//! could change it) unless some client missed for certain.

use super::{Judged, Unsure};
use crate::verdict::Verdict;

/// What a Then step starts with (after "ideally ", if it has that) to be judged on each client.
pub(crate) const PREFIX: &str = "every client of the herd: ";

/// Worst first: a miss seen on one client is a verdict whatever another could not show.
const SEVERITY: [Verdict; 5] =
    [Verdict::Fail, Verdict::Warn, Verdict::Inconclusive, Verdict::Pass, Verdict::NotApplicable];

/// The clients shown by name when some did not pass.
const NAMED: usize = 5;

/// One verdict from every client's, in client order: the worst, with the clients that did not
/// pass named with what each showed (or client 0's observation when all passed).
pub(super) fn combine(clients: Vec<Judged>) -> Judged {
    let verdict =
        SEVERITY.into_iter().find(|v| clients.iter().any(|c| c.verdict == *v)).unwrap_or(Verdict::Inconclusive);
    let note = clients.first().map(|c| c.note.clone()).unwrap_or_default();
    let missed_for_certain =
        clients.iter().any(|c| matches!(c.verdict, Verdict::Fail | Verdict::Warn) && c.unsure.is_none());
    let unsure = match clients.first() {
        None => Some(Unsure::Slower("no client ran".to_owned())),
        Some(_) if missed_for_certain => None,
        Some(_) => clients.iter().find_map(|c| c.unsure.clone()),
    };
    let passed = clients.iter().filter(|c| c.verdict == Verdict::Pass).count();
    let others: Vec<String> = clients
        .iter()
        .enumerate()
        .filter(|(_, c)| c.verdict != Verdict::Pass)
        .map(|(k, c)| format!("client {k} {}: {}", c.verdict.as_str(), c.observed))
        .collect();
    let observed = match (clients.first(), others.is_empty()) {
        (None, _) => "no client ran".to_owned(),
        (Some(first), true) => format!("all {} clients pass (client 0: {})", clients.len(), first.observed),
        (Some(_), false) => {
            let more = others.len().saturating_sub(NAMED);
            let mut named = others.into_iter().take(NAMED).collect::<Vec<_>>().join("; ");
            if more > 0 {
                named.push_str(&format!("; and {more} more"));
            }
            format!("{passed} of {} clients pass; {named}", clients.len())
        }
    };
    Judged { verdict, observed, note, unsure }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(verdict: Verdict, observed: &str) -> Judged {
        let unsure = (verdict == Verdict::Inconclusive).then(|| Unsure::Slower("noise".to_owned()));
        Judged { verdict, observed: observed.to_owned(), note: " (margin)".to_owned(), unsure }
    }

    #[test]
    fn a_herd_passes_only_when_every_client_does_and_a_miss_outweighs_a_client_not_judged() {
        let all = combine(vec![judged(Verdict::Pass, "2 attempts"), judged(Verdict::Pass, "3 attempts")]);
        assert_eq!(all.verdict, Verdict::Pass);
        assert_eq!(all.observed, "all 2 clients pass (client 0: 2 attempts)");
        assert_eq!(all.note, " (margin)");
        let one = combine(vec![
            judged(Verdict::Pass, "2"),
            judged(Verdict::Inconclusive, "cannot decide"),
            judged(Verdict::Fail, "400 s"),
        ]);
        assert_eq!((one.verdict, one.unsure), (Verdict::Fail, None), "a certain miss decides");
        assert_eq!(one.observed, "1 of 3 clients pass; client 1 inconclusive: cannot decide; client 2 fail: 400 s");
        let undecided = combine(vec![judged(Verdict::Pass, "2"), judged(Verdict::Inconclusive, "cannot decide")]);
        assert_eq!(
            (undecided.verdict, undecided.unsure.as_ref().map(Unsure::why)),
            (Verdict::Inconclusive, Some("noise"))
        );
        assert_eq!(combine(Vec::new()).verdict, Verdict::Inconclusive);
    }

    #[test]
    fn a_large_herd_names_its_first_clients_that_missed_and_counts_the_rest() {
        let clients = (0..8).map(|k| judged(Verdict::Fail, &format!("{k}"))).collect();
        let observed = combine(clients).observed;
        assert!(observed.starts_with("0 of 8 clients pass; client 0 fail: 0;") && observed.ends_with("; and 3 more"));
    }
}
