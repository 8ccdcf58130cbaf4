use super::*;
use crate::results::{by_requirement, CheckRecord};
use crate::{Level, Strength};

fn case(id: &str, checks: &[(&str, Verdict)]) -> CaseRecord {
    let checks = checks
        .iter()
        .map(|(name, verdict)| CheckRecord {
            name: (*name).to_owned(),
            level: Level::Wire,
            strength: if *verdict == Verdict::Warn { Strength::Should } else { Strength::Must },
            verdict: *verdict,
            expected: "2 attempts".into(),
            observed: "1 attempt".into(),
            draws: None,
        })
        .collect();
    let name = crate::results::CaseName {
        id: id.to_owned(),
        name: id.to_owned(),
        feature: "f".into(),
        tags: vec!["REQ-0006-001".into()],
        clauses: vec![],
    };
    CaseRecord::judged(name, checks, None)
}

fn waiver(id: &str, expires: &str) -> Waiver {
    Waiver { id: id.into(), reason: "known gap".into(), owner: "qa".into(), expires: expires.into() }
}

#[test]
fn a_waiver_turns_a_failed_must_into_waived_never_pass() {
    let mut cases =
        vec![case("req/a", &[("the server sees exactly 2 attempts", Verdict::Fail), ("ok", Verdict::Pass)])];
    let records = apply(&mut cases, &[waiver("req/a", "2027-01-01")], "2026-11-26");
    assert_eq!(records[0].status, WaiverStatus::Applied);
    assert_eq!(records[0].waived, vec!["req/a#the-server-sees-exactly-2-attempts".to_owned()]);
    assert_eq!(cases[0].verdict, Verdict::Waived);
    assert_eq!(cases[0].checks[1].verdict, Verdict::Pass, "a passing check stays as it was");
    let requirement = &by_requirement(&cases)[0];
    assert_eq!(requirement.verdict, Verdict::Waived);
    assert_eq!(requirement.verdict.as_requirement(), "pass with waivers");
    assert!(requirement.verdict.is_acceptable());
    assert_eq!(requirement.cases_tally.passed(), 0, "a waived case is never counted as passed");
}

#[test]
fn a_waiver_expires_on_its_date_and_says_so() {
    let mut cases = vec![case("req/a", &[("x", Verdict::Fail)])];
    let records = apply(&mut cases, &[waiver("req/a", "2026-11-26")], "2026-11-26");
    assert_eq!((records[0].status, cases[0].verdict), (WaiverStatus::Expired, Verdict::Fail));
}

#[test]
fn a_check_waiver_accepts_that_check_only() {
    let mut cases = vec![case("req/a", &[("first", Verdict::Fail), ("second", Verdict::Fail)])];
    let records = apply(&mut cases, &[waiver("req/a#first", "2027-01-01")], "2026-11-26");
    assert_eq!(records[0].waived, vec!["req/a#first".to_owned()]);
    assert_eq!(cases[0].verdict, Verdict::Fail, "the other MUST still fails");
    let mut unused = vec![case("req/b", &[("x", Verdict::Pass)])];
    let records = apply(&mut unused, &[waiver("req/b", "2027-01-01"), waiver("req/c", "2027-01-01")], "2026-11-26");
    assert_eq!((records[0].status, records[1].status), (WaiverStatus::Unused, WaiverStatus::NotRun));
}

#[test]
fn a_waiver_file_with_an_unknown_id_or_a_bad_date_is_an_error_naming_it() {
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("waivers.toml");
    let known = vec!["req/a".to_owned()];
    let write = |text: &str| std::fs::write(&path, text).expect("writes");
    write("[[waiver]]\nid = \"req/a#x\"\nreason = \"r\"\nowner = \"o\"\nexpires = \"2027-01-31\"\n");
    assert_eq!(read(&path, &known).expect("reads").len(), 1);
    write("[[waiver]]\nid = \"req/zz\"\nreason = \"r\"\nowner = \"o\"\nexpires = \"2027-01-31\"\n");
    let error = read(&path, &known).expect_err("unknown").to_string();
    assert!(error.contains("waivers.toml: waiver `req/zz`: no case has this id"), "{error}");
    write("[[waiver]]\nid = \"req/a\"\nreason = \"r\"\nowner = \"o\"\nexpires = \"next week\"\n");
    assert!(read(&path, &known).expect_err("no date").to_string().contains("`next week` is not a date"));
    write("[[waiver]]\nid = \"req/a\"\nreason = \"r\"\nowner = \"o\"\nexpires = \"2027-02-30\"\n");
    assert!(read(&path, &known).is_err(), "not a day of the calendar");
    write("[[waiver]]\nid = \"req/a\"\nreason = \"r\"\n");
    assert!(read(&path, &known).expect_err("no owner").to_string().contains("not a waivers file"));
}
