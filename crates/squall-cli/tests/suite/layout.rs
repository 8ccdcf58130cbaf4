//! The layout stays a layering. Across crates Cargo holds it (`squall` ← `squall-suite` ←
//! `squall-cli`); here, that the library stays light, and that in no crate does a top-level
//! module reach, through its `crate::` paths, a module that reaches it back, nor does any file
//! name a file that names it back (test modules aside: they may look anywhere).
//! The scenario model is its own module so that the wire renders from it while the scenario's
//! loading measures faults against the wire; the provider owns an attempt's context and failure
//! so that the engine drives providers without providers reaching into the engine.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::kit::command::squall_bin;
use crate::kit::suites::root;

/// Top-level module → the top-level modules its non-test code names with `crate::`.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let paths = regex::Regex::new(r"crate::([a-z_]+)").expect("a valid pattern");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut files = vec![src.to_path_buf()];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).expect("a readable directory").map(|e| e.expect("an entry").path()));
            continue;
        }
        let relative = path.strip_prefix(src).expect("under src");
        let name = relative.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let in_tests = relative.components().any(|c| c.as_os_str() == "tests");
        if !name.ends_with(".rs") || name == "tests.rs" || name.ends_with("_tests.rs") || in_tests {
            continue;
        }
        let top = relative.components().next().and_then(|c| c.as_os_str().to_str()).unwrap_or("");
        let module = top.trim_end_matches(".rs").to_owned();
        let text = std::fs::read_to_string(&path).expect("a readable file");
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
        let code: String = code.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
        let reached = graph.entry(module.clone()).or_default();
        for found in paths.captures_iter(&code) {
            if found[1] != module {
                reached.insert(found[1].to_owned());
            }
        }
    }
    graph
}

/// Each source file's module path (`timing::calibration`; `lib.rs` and `mod.rs` name their
/// folder's module) → the files its non-test code names through `crate::`, `super::` or `self::`
/// paths (the longest prefix of a path that is a file).
fn file_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let paths = regex::Regex::new(r"\b(crate|super|self)((?:::[a-z_][a-z0-9_]*)+)").expect("a valid pattern");
    let mut sources = BTreeMap::new();
    let mut pending = vec![src.to_path_buf()];
    while let Some(path) = pending.pop() {
        if path.is_dir() {
            pending
                .extend(std::fs::read_dir(&path).expect("a readable directory").map(|e| e.expect("an entry").path()));
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(src).expect("under src").with_extension("");
            let mut parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
            if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                parts.pop();
            }
            sources.insert(parts, path);
        }
    }
    let mut graph = BTreeMap::new();
    for (module, path) in &sources {
        let text = std::fs::read_to_string(path).expect("a readable file");
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
        let code: String = code.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
        let mut named = BTreeSet::new();
        for found in paths.captures_iter(&code) {
            let mut parts: Vec<String> = found[2].split("::").skip(1).map(str::to_owned).collect();
            // Where the path starts: the crate's root, this module, or its parent.
            let mut full: Vec<String> = match &found[1] {
                "crate" => Vec::new(),
                "self" => module.clone(),
                _ => module[..module.len().saturating_sub(1)].to_vec(),
            };
            while parts.first().is_some_and(|p| p == "super") {
                parts.remove(0);
                full.pop();
            }
            full.extend(parts);
            if let Some(file) = (1..=full.len()).rev().map(|n| full[..n].to_vec()).find(|p| sources.contains_key(p)) {
                if &file != module {
                    named.insert(file.join("::"));
                }
            }
        }
        graph.insert(module.join("::"), named);
    }
    graph
}

/// Every pair of files that name each other directly, a module and its own submodules aside.
fn files_naming_each_other(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let nested = |a: &str, b: &str| a.is_empty() || b.starts_with(&format!("{a}::"));
    let mut found = Vec::new();
    for (a, named) in graph {
        for b in named.iter().filter(|b| a < *b && !nested(a, b) && !nested(b, a)) {
            if graph.get(b).is_some_and(|back| back.contains(a)) {
                found.push(format!("{a} <-> {b}"));
            }
        }
    }
    found
}

/// Every pair of modules that reach each other, directly or through others.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let reaches = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut next: Vec<&str> = graph.get(from).into_iter().flatten().map(String::as_str).collect();
        while let Some(module) = next.pop() {
            if seen.insert(module.to_owned()) {
                next.extend(graph.get(module).into_iter().flatten().map(String::as_str));
            }
        }
        seen
    };
    let mut found = Vec::new();
    for a in graph.keys() {
        for b in reaches(a).iter().filter(|b| a < *b) {
            if reaches(b).contains(a) {
                found.push(format!("{a} <-> {b}"));
            }
        }
    }
    found
}

/// The crates `cargo tree` says `package` builds with (`-e normal,build`), each once.
fn crates_of(package: &str) -> BTreeSet<String> {
    let output = squall_testkit::cargo()
        .args(["tree", "--offline", "-p", package, "-e", "normal,build", "--prefix", "none"])
        .current_dir(root())
        .output()
        .expect("cargo tree runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        .collect()
}

/// A Rust team's `squall = "…"` gets the test double alone: docs/embedded.md gives the count.
#[test]
fn the_library_a_test_depends_on_is_light() {
    let crates = crates_of("squall");
    assert!(crates.contains("hyper") && crates.contains("squall"), "the walk found the crates: {crates:?}");
    for heavy in ["clap", "cucumber", "squall-suite", "squall-reference", "tokio-tungstenite", "rustls"] {
        assert!(!crates.contains(heavy), "{heavy} is built for a plain `squall` dependency");
    }
    // 61 with HTTP/2 (h2, fnv, futures-sink, tokio-util): docs/embedded.md.
    assert!(crates.len() <= 64, "{} crates: {crates:?}", crates.len());
    assert!(crates_of("squall-cli").contains("cucumber"), "the command line has the suite");
}

/// In no crate do two top-level modules reach each other, nor do two files name each other.
#[test]
fn no_crate_has_an_import_circle() {
    for src in ["src", "crates/squall-suite/src", "crates/squall-cli/src", "reference-impl/src"] {
        let (modules, files) = (module_graph(&root().join(src)), file_graph(&root().join(src)));
        assert!(files.len() > 5, "{src}: the walk found the files: {files:?}");
        let found = circles(&modules);
        assert!(found.is_empty(), "{src}: modules that reach each other: {found:?}\n{modules:#?}");
        let found = files_naming_each_other(&files);
        assert!(found.is_empty(), "{src}: files that name each other: {found:?}");
    }
}

#[test]
fn two_files_that_name_each_other_are_found_and_a_module_and_its_part_are_not() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("runner".to_owned(), BTreeSet::from(["settings".to_owned()])),
        ("settings".to_owned(), BTreeSet::from(["runner".to_owned()])),
        ("timing".to_owned(), BTreeSet::from(["timing::wait_asks".to_owned()])),
        ("timing::wait_asks".to_owned(), BTreeSet::from(["timing".to_owned()])),
    ]
    .into();
    assert_eq!(files_naming_each_other(&graph), ["runner <-> settings"]);
}

#[test]
fn a_circle_is_found() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a".to_owned(), BTreeSet::from(["b".to_owned()])),
        ("b".to_owned(), BTreeSet::from(["c".to_owned()])),
        ("c".to_owned(), BTreeSet::from(["a".to_owned()])),
    ]
    .into();
    assert_eq!(circles(&graph), ["a <-> b", "a <-> c", "b <-> c"]);
}

/// What `cargo package -p PACKAGE --list` would publish.
fn packaged(package: &str) -> BTreeSet<String> {
    let output = squall_testkit::cargo()
        .args(["package", "--offline", "--allow-dirty", "--list", "-p", package])
        .current_dir(root())
        .output()
        .expect("cargo package runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).lines().map(str::to_owned).collect()
}

/// The names of the files in `dir` ending in `.ext`, as `dir/name`.
fn files_in(dir: &str, ext: &str) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(root().join(dir))
        .expect("a directory")
        .map(|entry| entry.expect("an entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(ext))
        .map(|name| format!("{dir}/{name}"))
        .collect();
    files.sort();
    files
}

/// The published crates carry what they embed at build time (`cargo package --workspace`
/// verifies that they build from what they carry: docs/testing.md).
#[test]
fn the_published_crates_carry_what_they_embed() {
    let library = packaged("squall");
    let suite = packaged("squall-suite");
    let scenarios = files_in("scenarios", ".toml");
    let features = files_in("features", ".feature");
    assert!(scenarios.len() > 10 && features.len() > 10, "{scenarios:?} {features:?}");
    let lacking = |package: &BTreeSet<String>, needed: Vec<String>| -> Vec<String> {
        needed.into_iter().filter(|file| !package.contains(file)).collect()
    };
    let needed = ["build.rs", "crates/embed_files.rs", "docs/embedded.md"].map(str::to_owned);
    let missing = lacking(&library, needed.into_iter().chain(scenarios).collect());
    assert!(missing.is_empty(), "squall's package lacks {missing:?}");
    let missing = lacking(
        &suite,
        ["build.rs", "embed_files.rs", "clock/versions.map"]
            .map(str::to_owned)
            .into_iter()
            .chain(
                files_in("crates/squall-suite/clock", ".c").into_iter().map(|f| f.replace("crates/squall-suite/", "")),
            )
            .chain(
                files_in("crates/squall-suite/clock", ".h").into_iter().map(|f| f.replace("crates/squall-suite/", "")),
            )
            .chain(features)
            .collect(),
    );
    assert!(missing.is_empty(), "squall-suite's package lacks {missing:?}");
    assert!(!library.iter().any(|f| f.starts_with("tests/") || f.starts_with("reports/")), "{library:?}");
}

/// The reports stand on their own: the judge (the engine, the checks, the timing and the
/// verdicts) names no module of the reports' (the report and its formats, waivers, provenance,
/// the summary), which read the judge's results and never the other way.
#[test]
fn the_judge_does_not_reach_into_the_reports() {
    let graph = module_graph(&root().join("crates/squall-suite/src"));
    let reports = ["report", "waivers", "provenance", "summary"];
    let reaching: Vec<String> = ["engine", "checks", "timing", "verdict", "results"]
        .iter()
        .flat_map(|judge| {
            let names = graph.get(*judge).cloned().unwrap_or_default();
            reports.iter().filter(move |r| names.contains(**r)).map(move |r| format!("{judge} -> {r}"))
        })
        .collect();
    assert!(reaching.is_empty(), "{reaching:?}");
    assert!(graph.contains_key("engine") && graph.contains_key("report"), "the graph reads the suite's modules");
}

/// Each crate owns its tests and benches: no `[[test]]` or `[[bench]]` of any manifest names a
/// path outside its own crate's directory (the library's are `tests/library/`, the command
/// line's and the suite's under their crates; what they share is `squall-testkit`).
#[test]
fn no_crate_runs_tests_or_benches_from_another_crates_directory() {
    let manifests =
        ["Cargo.toml", "crates/squall-cli/Cargo.toml", "crates/squall-suite/Cargo.toml", "reference-impl/Cargo.toml"];
    let mut reaching = Vec::new();
    for manifest in manifests {
        let text = std::fs::read_to_string(root().join(manifest)).expect("a manifest");
        let mut section = String::new();
        for line in text.lines().map(str::trim) {
            if line.starts_with('[') {
                section = line.to_owned();
            } else if matches!(section.as_str(), "[[test]]" | "[[bench]]")
                && line.starts_with("path")
                && line.contains("..")
            {
                reaching.push(format!("{manifest} {section} {line}"));
            }
        }
    }
    assert!(reaching.is_empty(), "{reaching:?}");
    assert!(root().join("tests/library/main.rs").is_file(), "the library's integration tests are its own");
}

/// Only the engine's launcher starts an implementation: calibration, the lockstep herd, the soak
/// and every run again hand it plans (`engine::launch`). The compiler keeps its process handling
/// private to it; this holds that nothing else in the suite spawns a process of its own.
#[test]
fn only_the_engines_launcher_starts_a_process() {
    let src = root().join("crates/squall-suite/src");
    let spawning =
        regex::Regex::new(r"process::Command|Command::new|tokio::process|std::process::Child").expect("a pattern");
    let mut files = vec![src.clone()];
    let mut starters = Vec::new();
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).expect("a readable directory").map(|e| e.expect("an entry").path()));
            continue;
        }
        let relative = path.strip_prefix(&src).expect("under src").to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).expect("a readable file");
        if relative.ends_with(".rs") && spawning.is_match(&text) {
            starters.push(relative);
        }
    }
    starters.sort();
    let launcher = ["engine/launch/command.rs", "engine/launch/warm.rs"];
    assert_eq!(starters, launcher, "files that start processes");
}

/// The judge builds without the reference implementation (`--no-default-features`). A build,
/// not a check, reuses the dependencies the test command built wherever their features agree;
/// the rest compile again. It replaces the `squall` the other tests run, so this test runs
/// alone, last (.config/nextest.toml), and puts that `squall` back.
#[test]
#[ignore = "slow: builds the crates again without features (scripts/test.sh runs it)"]
fn the_judge_builds_without_the_reference() {
    let _kept = KeptFile::keep(Path::new(squall_bin()));
    cargo(&["build", "--quiet", "-p", "squall-cli", "--no-default-features"]);
}

/// The library's unit tests pass without its features, as a Rust team's plain `squall = "…"`
/// builds it. The build takes a core or two for half a minute: it runs last among the light
/// suites (.config/nextest.toml).
#[test]
#[ignore = "slow: builds the library again without features (scripts/test.sh runs it)"]
fn the_library_passes_without_features() {
    let tested = cargo(&["test", "--quiet", "-p", "squall", "--lib"]);
    assert!(tested.contains("test result: ok.") && !tested.contains(" 0 passed"), "{tested}");
}

/// `cargo ARGS` from the repository's root, as the test command's build ran it; its stdout.
fn cargo(args: &[&str]) -> String {
    let output = squall_testkit::cargo().args(args).current_dir(root()).output().expect("cargo runs");
    assert!(output.status.success(), "cargo {}:\n{}", args.join(" "), String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A file put back as it was when this is dropped: cargo replaces the `squall` it builds.
struct KeptFile {
    path: std::path::PathBuf,
    copy: std::path::PathBuf,
}

impl KeptFile {
    fn keep(path: &Path) -> Self {
        let copy = path.with_extension("kept");
        std::fs::copy(path, &copy).expect("a copy of the file");
        KeptFile { path: path.to_owned(), copy }
    }
}

impl Drop for KeptFile {
    fn drop(&mut self) {
        // A rename replaces the file at once: nothing can run half of it.
        std::fs::rename(&self.copy, &self.path).expect("the file put back");
    }
}
