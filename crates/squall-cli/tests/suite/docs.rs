//! The docs read as a manual: README.md and docs/*.md average under 20 words a sentence with
//! none over 60, measured as `../shared/tools/sentence_stats.py` measures them; docs/README.md
//! indexes every page; and docs/requirements.md still states every requirement id and number
//! it stated when it was rewritten (`tests/fixtures/requirements-stated.txt`).

use std::path::{Path, PathBuf};

use crate::kit::harness::require;
use crate::kit::suites::root;

/// The longest mean and the longest sentence the docs may have, in words.
const MEAN_UNDER: f64 = 20.0;
const LONGEST: usize = 60;

/// The words of each sentence of a Markdown page's prose: code blocks, tables, headings and HTML
/// left out, inline code one word, a link its text. Sentences split after `.`, `!` or `?` before
/// a capital, a bracket, a quote or emphasis; pieces under three words are not sentences.
fn sentences(markdown: &str) -> Vec<String> {
    let fenced = regex::Regex::new(r"(?s)```.*?```").expect("a valid pattern");
    let item = regex::Regex::new(r"^\s*([-*>]|\d+\.)\s").expect("a valid pattern");
    let code = regex::Regex::new(r"`[^`]*`").expect("a valid pattern");
    let link = regex::Regex::new(r"\[([^\]]*)\]\([^)]*\)").expect("a valid pattern");
    let text = fenced.replace_all(markdown, " ");
    let prose: Vec<String> = text
        .lines()
        .filter(|line| !line.trim().is_empty() && !line.trim_start().starts_with(['|', '#', '<']))
        .map(|line| match item.is_match(line) {
            true => line.trim().trim_start_matches(|c: char| "-*>0123456789. ".contains(c)).trim().to_owned(),
            false => line.trim().to_owned(),
        })
        .collect();
    let joined = prose.join(" ");
    let prose = code.replace_all(&joined, "X");
    let prose = link.replace_all(&prose, "$1").into_owned();
    split_sentences(&prose).into_iter().filter(|s| s.split_whitespace().count() >= 3).collect()
}

/// Splits at a run of spaces that follows `.`, `!` or `?` and precedes a capital, `(`, a
/// backtick, a quote or `*`.
fn split_sentences(prose: &str) -> Vec<String> {
    let chars: Vec<char> = prose.chars().collect();
    let (mut sentences, mut start, mut i) = (Vec::new(), 0, 0);
    while i < chars.len() {
        if !chars[i].is_whitespace() {
            i += 1;
            continue;
        }
        let run_end = (i..chars.len()).find(|&j| !chars[j].is_whitespace()).unwrap_or(chars.len());
        let after_end = i > 0 && ".!?".contains(chars[i - 1]);
        let before_start = chars.get(run_end).is_some_and(|c| c.is_ascii_uppercase() || "(`\"'*".contains(*c));
        if after_end && before_start {
            sentences.push(chars[start..i].iter().collect());
            start = run_end;
        }
        i = run_end;
    }
    sentences.push(chars[start..].iter().collect());
    sentences
}

fn pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages.insert(0, root().join("README.md"));
    pages
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_docs_average_under_twenty_words_a_sentence_and_none_runs_past_sixty() {
    let mut words = Vec::new();
    let mut longest = Vec::new();
    for page in pages() {
        for sentence in sentences(&read(&page)) {
            let count = sentence.split_whitespace().count();
            if count > LONGEST {
                longest.push(format!("{} ({count} words): {sentence}", page.display()));
            }
            words.push(count);
        }
    }
    let mean = words.iter().sum::<usize>() as f64 / words.len() as f64;
    require(words.len() > 1000, &format!("only {} sentences read: is the scan reading the pages?", words.len()));
    require(mean < MEAN_UNDER, &format!("{mean:.1} words a sentence over README.md and docs/*.md"));
    require(longest.is_empty(), &format!("sentences over {LONGEST} words:\n{}", longest.join("\n")));
}

/// The measure itself: what it splits, what it leaves out, and a long sentence found.
#[test]
fn the_measure_splits_prose_and_leaves_out_code_tables_and_headings() {
    let page = "# A heading of many words that is not prose\n\nOne two three. Four five six! `code a b c` is one word here.\n\n| a | table | row | of | words |\n\n```\nfenced code is left out entirely.\n```\n\n- A list item ends. [A link's text](http://x) counts.\n";
    let found = sentences(page);
    let counts: Vec<usize> = found.iter().map(|s| s.split_whitespace().count()).collect();
    require(counts == [3, 3, 5, 4, 4], &format!("{found:?}"));
    let long = format!("{}.", ["word"; 61].join(" "));
    require(sentences(&long).iter().any(|s| s.split_whitespace().count() == 61), "a 61-word sentence is one");
}

#[test]
fn docs_readme_names_every_page() {
    let index = read(&root().join("docs/README.md"));
    let missing: Vec<String> = pages()
        .iter()
        .skip(1)
        .filter_map(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_owned))
        .filter(|name| name != "README.md" && !index.contains(&format!("({name})")))
        .collect();
    require(missing.is_empty(), &format!("docs/README.md does not link {missing:?}"));
}

#[test]
fn requirements_md_still_states_every_id_and_number() {
    let page = read(&root().join("docs/requirements.md"));
    let stated = read(&root().join("crates/squall-cli/tests/fixtures/requirements-stated.txt"));
    let expected: Vec<&str> = stated.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()).collect();
    let missing: Vec<&&str> = expected.iter().filter(|token| !page.contains(**token)).collect();
    require(expected.len() > 200, &format!("only {} ids and numbers listed", expected.len()));
    require(missing.is_empty(), &format!("docs/requirements.md no longer states {missing:?}"));
}
