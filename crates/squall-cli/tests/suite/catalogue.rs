//! The shipped catalogue: every file loads, names match files, and the catalogue covers
//! every fault kind and every REQ-0006 requirement.

use std::collections::BTreeSet;

use squall::scenario::{Catalogue, FaultKind};

fn shipped() -> Catalogue {
    Catalogue::load_dir(&crate::kit::suites::root().join("scenarios")).expect("every scenario file is valid")
}

#[test]
fn embedded_catalogue_is_the_scenarios_directory() {
    let embedded = Catalogue::embedded().expect("valid");
    let dir = shipped();
    let names = |c: &Catalogue| c.iter().map(|s| (**s).clone()).collect::<Vec<_>>();
    assert_eq!(names(&embedded), names(&dir));
}

#[test]
fn catalogue_covers_every_fault_kind() {
    let used: BTreeSet<&str> = shipped()
        .iter()
        .flat_map(|s| {
            let tracks = s.tracks.iter().flat_map(|t| t.attempts.clone());
            s.attempts.clone().into_iter().chain(tracks).collect::<Vec<_>>()
        })
        .filter_map(|a| a.fault.map(|f| f.kind.as_str()))
        .collect();
    for kind in FaultKind::ALL {
        assert!(used.contains(kind.as_str()), "no catalogue scenario uses fault `{}`", kind.as_str());
    }
}

#[test]
fn catalogue_covers_every_req_0006_requirement() {
    let covered: BTreeSet<String> = shipped().iter().flat_map(|s| s.requirements.clone()).collect();
    for req in ["REQ-0006-001", "REQ-0006-002", "REQ-0006-010", "REQ-0006-020", "REQ-0006-021", "REQ-0006-030"] {
        assert!(covered.contains(req), "no catalogue scenario names {req}");
    }
}

#[test]
fn a_bad_file_is_named_with_line_and_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("bad.toml");
    let toml = "name = \"bad\"\n\n[[attempts]]\nstream = { text = \"a b\" }\nfault = { kind = \"reset\", after_events = 900 }\n";
    std::fs::write(&file, toml).expect("write");
    let error = Catalogue::load_dir(dir.path()).expect_err("must fail").to_string();
    assert!(error.contains("bad.toml:5:"), "{error}");
    assert!(error.contains("attempts[0].fault.after_events") && error.contains("900"), "{error}");
}

#[test]
fn file_name_and_scenario_name_must_agree() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("one.toml"), "name = \"two\"\n").expect("write");
    let error = Catalogue::load_dir(dir.path()).expect_err("must fail").to_string();
    assert!(error.contains("one.toml:1:") && error.contains("`two` is not the file's name"), "{error}");
    // `squall scenarios check` reads files the same way.
    let error = squall::scenario::load::from_file(&dir.path().join("one.toml")).expect_err("must fail").to_string();
    assert!(error.contains("leave `name` out, or rename one of them"), "{error}");
}

#[test]
fn a_file_without_a_name_is_named_by_its_stem() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("flaky-503.toml"), "[[attempts]]\nstatus = 503\n").expect("write");
    let catalogue = Catalogue::load_dir(dir.path()).expect("loads");
    assert!(catalogue.get("flaky-503").is_some_and(|s| s.name == "flaky-503"));
    // Without a file there is no stem: an inline scenario names itself.
    let error = squall::scenario::load::from_toml_str("inline", "[[attempts]]\nstatus = 503\n").expect_err("no name");
    assert!(error.to_string().contains("name") && error.to_string().contains("must not be empty"), "{error}");
}
