//! A plain-text summary of a suite run: one line per requirement.

use std::fmt::Write as _;

use super::results::Verdict;
use super::runner::SuiteOutcome;

pub fn requirement_table(outcome: &SuiteOutcome) -> String {
    let mut out = String::new();
    for requirement in &outcome.requirements {
        let judged: Vec<_> = requirement.cases.iter().filter(|c| c.verdict != Verdict::NotApplicable).collect();
        let passed = judged.iter().filter(|c| c.verdict == Verdict::Pass).count();
        let _ = writeln!(
            out,
            "  {:<5} {:<26} {:>3}/{:<3} {}",
            requirement.verdict.as_str(),
            requirement.id,
            passed,
            judged.len(),
            requirement.title
        );
    }
    out
}
