//! The cases read from the built-in features: every scenario, named as cucumber names it, each
//! with its action and checks; ids unique and stable; the export within its levels.

use squall::clock::TimeScale;
use std::collections::BTreeSet;

use super::export::{describe, CaseQuery, CALIBRATION_ID, SCHEMA};
use super::*;
use crate::requirements::ProfileSelection;
use crate::verdict::Level;
use squall::scenario::Catalogue;

fn embedded() -> Vec<CasePlan> {
    from_texts(crate::features::embedded_features().iter().copied()).expect("the built-in features read")
}

#[test]
fn every_built_in_scenario_is_a_case_named_as_the_kept_report_names_it() {
    let plans = embedded();
    let text = crate::report::read::gunzip(include_bytes!("../../../../reports/reference/report.json.gz"));
    let kept: serde_json::Value =
        serde_json::from_str(&text.expect("decompresses")).expect("the kept reference report");
    let reported: BTreeSet<(String, String)> = kept["requirements"]
        .as_array()
        .expect("requirements")
        .iter()
        .flat_map(|r| r["cases"].as_array().expect("cases").iter())
        .map(|c| (c["feature"].as_str().unwrap_or("").to_owned(), c["name"].as_str().unwrap_or("").to_owned()))
        .collect();
    let planned: BTreeSet<(String, String)> = plans.iter().map(|p| (p.feature.clone(), p.name.clone())).collect();
    assert_eq!(planned, reported, "the kept report runs every profile: the same cases");
    assert!(plans.iter().all(|p| p.when.is_some() && !p.then.is_empty()), "each case acts and checks");
}

#[test]
fn ids_are_the_file_stem_and_the_name_in_words() {
    assert_eq!(case_id("REQ-0006-001.feature", "Status 408 is retried"), "req-0006-001/status-408-is-retried");
    assert_eq!(
        case_id("SEED-001-safety-gate.feature", "Quota is never retried, even though it arrives as a 429"),
        "seed-001-safety-gate/quota-is-never-retried-even-though-it-arrives-as-a-429"
    );
    let plans = embedded();
    let ids: BTreeSet<&str> = plans.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids.len(), plans.len(), "unique");
}

#[test]
fn a_step_no_table_reads_is_named_with_its_file_and_scenario() {
    let feature =
        "Feature: F\n  Scenario: S\n    Given attempt 1 dances\n    When the implementation streams one model call\n";
    let error = from_texts([("x.feature", feature)]).expect_err("an unknown step").to_string();
    assert_eq!(error, "x.feature: scenario `S`: step `attempt 1 dances`: no Given step reads so");
    let feature =
        "Feature: F\n  Scenario: S\n    Given the provider breaks the stream with \"eof\" after lunch on attempt 1\n";
    let error = from_texts([("y.feature", feature)]).expect_err("a bad point").to_string();
    assert!(error.contains("unknown point in the stream `after lunch`"), "{error}");
    let twice = "Feature: F\n  Scenario: S\n    Then the server sees exactly 1 attempt\n  Scenario: s\n    Then the server sees exactly 1 attempt\n";
    let error = from_texts([("z.feature", twice)]).expect_err("a duplicate").to_string();
    assert_eq!(error, "z.feature: two scenarios have the id `z/s`: rename one");
}

fn query(level: Level, profiles: &[&str]) -> CaseQuery {
    CaseQuery {
        profiles: ProfileSelection::parse(profiles).expect("profiles"),
        level,
        tags: None,
        time_scale: TimeScale::of(0.01),
    }
}

#[test]
fn the_export_holds_what_the_service_can_judge_with_scenarios_that_validate() {
    let plans = embedded();
    let catalogue = Catalogue::embedded().expect("the built-in catalogue");
    let list = describe(&plans, &query(Level::Events, &["all"]), &catalogue).expect("exports");
    assert_eq!(list.schema, SCHEMA);
    assert_eq!(list.calibration.id, CALIBRATION_ID);
    let tasks_cases = plans.iter().filter(|p| p.when.as_ref().is_some_and(|(_, a)| a.needs == Level::Tasks)).count();
    assert!(tasks_cases > 0);
    assert_eq!(list.cases.len(), plans.len() - tasks_cases, "every wire and events case, no tasks case");
    for case in &list.cases {
        squall::scenario::validate::validate(&case.scenario).unwrap_or_else(|e| panic!("{}: {e}", case.id));
        assert!(case.level <= Level::Events && !case.checks.is_empty(), "{}", case.id);
    }
    let jitter = list
        .cases
        .iter()
        .find(|c| c.id == "seed-002-retry-strategy/waits-follow-1-s-2-n-plus-a-random-jitter-of-0-to-1-s");
    assert!(jitter.is_some_and(|c| c.timed && c.client.max_retries == Some(5)), "{jitter:?}");
    let spread =
        list.cases.iter().find(|c| c.id == "herd-storms/clients-that-failed-at-once-spread-their-first-retries");
    assert!(
        spread.is_some_and(|c| c.herd && c.client.time_scale == TimeScale::of(0.2)),
        "the herd spread case asks for 1/5: {spread:?}"
    );
    let text = serde_json::to_string(&list).expect("serializes");
    let back: super::export::CaseList = serde_json::from_str(&text).expect("reads back");
    assert_eq!(back, list);

    let wire = describe(&plans, &query(Level::Wire, &["prd-0006"]), &catalogue).expect("exports");
    assert!(wire
        .cases
        .iter()
        .all(|c| c.level == Level::Wire && c.requirements.iter().all(|r| r.starts_with("REQ-0006"))));
    assert!(wire.cases.len() < list.cases.len());
    let error = describe(&plans, &query(Level::Tasks, &[]), &catalogue).expect_err("tasks").to_string();
    assert!(error.starts_with("level `tasks`"), "{error}");
}
