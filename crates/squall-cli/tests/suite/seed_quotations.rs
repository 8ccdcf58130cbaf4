//! Every word squall presents as a seed's is the seed's: the clauses each requirement and each
//! scenario names are on the line they cite, and every quotation the features, docs and kept
//! reports give as seed text appears in the seeds (`../shared/seeds`, or `SQUALL_SEEDS`),
//! ignoring only Markdown backticks and whitespace, `…` marking an elision.

use std::path::{Path, PathBuf};

use squall_suite::clauses::{appears_in, has_cjk, quotations, Clause, SEED_FILES};
use squall_suite::requirements::{known_requirements, requirement_clauses};

use crate::kit::suites::root;

/// The seeds, as (file name, text); the test fails, naming the place looked, when they are absent.
fn seeds() -> Vec<(String, String)> {
    let dir = std::env::var_os("SQUALL_SEEDS").map_or_else(|| root().join("../shared/seeds"), PathBuf::from);
    SEED_FILES
        .iter()
        .map(|(_, file)| {
            let text = std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| {
                panic!("the seed {file} is not in {} ({e}): set SQUALL_SEEDS to the seeds directory", dir.display())
            });
            ((*file).to_owned(), text)
        })
        .collect()
}

/// Why `clause` is not the seed's words on the line it cites, if it is not.
fn misquoted(clause: &Clause, seeds: &[(String, String)]) -> Option<String> {
    let text = &seeds.iter().find(|(file, _)| *file == clause.file)?.1;
    let line = text.lines().nth(clause.line - 1).unwrap_or("");
    (!appears_in(&clause.words, line))
        .then(|| format!("{}: \"{}\" is not on that line, which reads: {line}", clause.cite(), clause.words))
}

fn files_under(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(path) = pending.pop() {
        if path.is_dir() {
            let skip = path.file_name().is_some_and(|n| n == "node_modules" || n == "target" || n == ".venv");
            if !skip {
                pending.extend(std::fs::read_dir(&path).expect("readable").map(|e| e.expect("an entry").path()));
            }
        } else if path.extension().is_some_and(|e| e == extension) {
            found.push(path);
        }
    }
    found.sort();
    found
}

#[test]
fn every_requirement_and_every_scenario_cites_the_seed_line_it_answers() {
    let seeds = seeds();
    let mut problems = Vec::new();
    for id in known_requirements() {
        let clauses = requirement_clauses(id);
        assert!(!clauses.is_empty(), "{id} names no seed clause");
        problems.extend(clauses.iter().filter_map(|c| misquoted(c, &seeds)).map(|p| format!("{id}: {p}")));
    }
    let cases = squall_suite::cases::from_dir(&root().join("features")).expect("the features read");
    for case in &cases {
        if case.clauses.is_empty() {
            problems.push(format!("{} `{}`: names no seed clause (`Seed NNN, line L: \"…\"`)", case.file, case.name));
        }
        problems.extend(case.clauses.iter().filter_map(|c| misquoted(c, &seeds)).map(|p| format!("{}: {p}", case.id)));
    }
    assert!(cases.len() > 40, "{} cases read", cases.len());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The quotations presented as seed text in a file: any in Chinese; in a feature, every one
/// outside its steps, tags and tables; in docs/requirements.md, every one in the `seed
/// wording` column. Markdown is read as it renders: a table cell's `\|` is a `|`.
fn seed_quotations(path: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(path).expect("readable");
    let text = if path.extension().is_some_and(|e| e == "md") { text.replace("\\|", "|") } else { text };
    let is_feature = path.extension().is_some_and(|e| e == "feature");
    let is_step = |line: &str| {
        let words = line.trim_start();
        ["Given ", "When ", "Then ", "And ", "But ", "|", "@"].iter().any(|k| words.starts_with(k))
    };
    let prose: Vec<&str> = text.lines().map(|l| if is_feature && is_step(l) { "" } else { l }).collect();
    let mut found: Vec<(usize, String)> = quotations(&prose.join("\n"))
        .into_iter()
        .filter(|(_, quote)| has_cjk(quote) || (is_feature && !quote.contains('<')))
        .collect();
    if path.ends_with("docs/requirements.md") {
        for (index, line) in text.lines().enumerate() {
            let Some(cell) = line.strip_prefix("| ").and_then(|l| l.split(" | ").nth(1)) else { continue };
            found.extend(quotations(cell).into_iter().map(|(_, quote)| (index + 1, quote)));
        }
    }
    found
}

#[test]
fn every_quotation_given_as_seed_text_is_in_the_seeds_verbatim() {
    let seeds = seeds();
    let root = root();
    let mut files = files_under(&root.join("features"), "feature");
    for dir in ["features", "docs", "reports", "integrations", "reference-impl"] {
        files.extend(files_under(&root.join(dir), "md"));
    }
    files.push(root.join("README.md"));
    let mut checked = 0;
    let mut problems = Vec::new();
    for file in &files {
        for (line, quote) in seed_quotations(file) {
            checked += 1;
            if !seeds.iter().any(|(_, text)| appears_in(&quote, text)) {
                let shown = quote.split_whitespace().collect::<Vec<_>>().join(" ");
                problems.push(format!("{}:{line}: \"{shown}\"", file.strip_prefix(root).unwrap_or(file).display()));
            }
        }
    }
    assert!(checked > 50, "only {checked} quotations found: is the scan reading the files?");
    assert!(problems.is_empty(), "{} quotations are not in the seeds:\n{}", problems.len(), problems.join("\n"));
}

/// The scan itself: a misquotation in a feature's description is found and is not in the seeds,
/// while the same words in a step (a string the step passes on) are not taken for a quotation.
#[test]
fn a_misquotation_in_a_feature_is_found_and_rejected() {
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("X.feature");
    let text = "Feature: x\n  REQ-0006-001: 429/5xx are retried \"直到 maxRetries\".\n\n  Scenario: y\n    Seed 000, line 41: \"**预算不放松**：重试不得无限；必须有次数上限 + 退避，避免重试风暴。\"\n    Then the events contain no \"runtime.error\"\n";
    std::fs::write(&path, text).expect("writes");
    let found = seed_quotations(&path);
    let quotes: Vec<&str> = found.iter().map(|(_, q)| q.as_str()).collect();
    assert_eq!(quotes, ["直到 maxRetries", "**预算不放松**：重试不得无限；必须有次数上限 + 退避，避免重试风暴。"]);
    let seeds = seeds();
    assert!(!seeds.iter().any(|(_, text)| appears_in(quotes[0], text)), "the herd case's old quotation is in no seed");
    assert!(seeds.iter().any(|(_, text)| appears_in(quotes[1], text)));
    let clause = Clause::new("000", 42, "**预算不放松**").expect("a seed");
    assert!(
        misquoted(&clause, &seeds).is_some_and(|why| why.contains("seed 000, line 42")),
        "the right words on the wrong line"
    );
}
