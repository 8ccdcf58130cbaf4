//! Seed clauses: the exact words of a seed document that a requirement or a case answers, with
//! the file and line they are on, so a verdict can be traced to the sentence it judges.
//!
//! A scenario names its clauses in its description, one per line:
//!
//! ```gherkin
//! Scenario: A 5xx on the first attempt, then success
//!   Seed 000, line 54: "单测：模拟 provider 第一次 5xx，第二次成功，最终成功。"
//! ```
//!
//! The words are the seed's own (`…` marks an elision); squall's tests hold every clause and
//! every quotation its features, docs and reports present as seed text to the seeds verbatim
//! ([`appears_in`]), ignoring only Markdown backticks and whitespace.

use serde::{Deserialize, Serialize};

/// The seed documents squall judges against, by number: their file names in the seeds directory.
pub const SEED_FILES: [(&str, &str); 5] = [
    ("000", "000_294a847aa3c1187d.txt"),
    ("001", "001_fbd005a2ff7475ab.txt"),
    ("002", "002_e02b6e0cdc5d207e.txt"),
    ("003", "003_c43d7f2f76859fef.txt"),
    ("004", "004_8c232c8a18c550ae.txt"),
];

/// The mark of an elision inside a quotation.
pub const ELISION: char = '…';

/// Words of a seed, where they are.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Clause {
    /// The seed's number (`000`).
    pub seed: String,
    /// The seed's file name (`000_294a847aa3c1187d.txt`).
    pub file: String,
    /// The line the words are on, from 1.
    pub line: usize,
    /// The seed's words, `…` marking what was left out.
    pub words: String,
}

impl Clause {
    /// Seed `seed`'s words at `line`; `None` for a seed squall does not know.
    pub fn new(seed: &str, line: usize, words: &str) -> Option<Clause> {
        let file = SEED_FILES.iter().find(|(number, _)| *number == seed)?.1;
        Some(Clause { seed: seed.to_owned(), file: file.to_owned(), line, words: words.to_owned() })
    }

    /// `seed 000, line 54`.
    pub fn cite(&self) -> String {
        format!("seed {}, line {}", self.seed, self.line)
    }

    /// The clause a description line names (`Seed 000, line 54: "words"`): `None` for a line
    /// that does not start with `Seed `, an error saying what is wrong for one that does but
    /// does not read as a clause.
    pub fn parse(line: &str) -> Option<Result<Clause, String>> {
        let rest = line.trim().strip_prefix("Seed ")?;
        Some(Self::parse_rest(rest).ok_or_else(|| {
            format!(
                "`{}` does not read as a seed clause: write `Seed NNN, line L: \"the seed's words\"` \
                 with NNN one of {}",
                line.trim(),
                SEED_FILES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
            )
        }))
    }

    fn parse_rest(rest: &str) -> Option<Clause> {
        let (seed, rest) = rest.split_once(", line ")?;
        let (line, rest) = rest.split_once(": ")?;
        let words = rest.trim().strip_prefix('"')?.strip_suffix('"')?;
        (!words.trim().is_empty()).then_some(())?;
        Clause::new(seed, line.parse().ok().filter(|l| *l > 0)?, words)
    }

    /// Every clause a description names, in order.
    pub fn all_in(description: &str) -> Result<Vec<Clause>, String> {
        description.lines().filter_map(Clause::parse).collect()
    }
}

/// Whether `quote` appears in `text`: ignoring Markdown backticks and whitespace, each part
/// between elisions (`…`) in order.
pub fn appears_in(quote: &str, text: &str) -> bool {
    let text = comparable(text);
    let mut from = 0;
    for part in quote.split(ELISION).map(comparable).filter(|p| !p.is_empty()) {
        match text[from..].find(&part) {
            Some(at) => from += at + part.len(),
            None => return false,
        }
    }
    from > 0
}

/// Text without backticks or whitespace: what a verbatim comparison compares.
fn comparable(text: &str) -> String {
    text.chars().filter(|c| *c != '`' && !c.is_whitespace()).collect()
}

/// Whether `text` has a CJK character: a quotation of a seed in Chinese.
pub fn has_cjk(text: &str) -> bool {
    text.chars().any(|c| matches!(c as u32, 0x3000..=0x303F | 0x4E00..=0x9FFF | 0xFF00..=0xFFEF))
}

/// The quotations in `text` between ASCII double quotes, each with the line (from 1) it starts
/// on; paragraphs (split at blank lines) are paired separately, so one stray quote mark cannot
/// shift the pairs of a whole file.
pub fn quotations(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            open = None;
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find('"') {
            match open.take() {
                Some((start, mut quote)) => {
                    quote.push_str(&rest[..at]);
                    found.push((start, quote));
                }
                None => open = Some((index + 1, String::new())),
            }
            rest = &rest[at + 1..];
        }
        if let Some((_, quote)) = open.as_mut() {
            quote.push_str(rest);
            quote.push('\n');
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clause_line_reads_and_a_malformed_one_says_how_to_write_it() {
        let clause = Clause::parse("    Seed 000, line 54: \"单测：…最终成功。\"").expect("a clause").expect("reads");
        assert_eq!(
            (clause.file.as_str(), clause.line, clause.words.as_str()),
            ("000_294a847aa3c1187d.txt", 54, "单测：…最终成功。")
        );
        assert_eq!(clause.cite(), "seed 000, line 54");
        assert!(Clause::parse("Given attempt 1 succeeds").is_none());
        for bad in ["Seed 009, line 3: \"x\"", "Seed 000, line 0: \"x\"", "Seed 000 line 3 x", "Seed 000, line 3: \"\""]
        {
            let error = Clause::parse(bad).expect("starts like a clause").expect_err(bad);
            assert!(error.contains(bad) && error.contains("Seed NNN, line L"), "{error}");
        }
    }

    #[test]
    fn a_quotation_appears_only_verbatim_with_elisions_in_order() {
        let seed = "- `ProviderRateLimitException`（429）：优先遵循 `retryAfterMs`（可配置是否启用）。";
        assert!(appears_in("优先遵循 retryAfterMs", seed), "backticks and spaces are ignored");
        assert!(appears_in("ProviderRateLimitException … 优先遵循", seed));
        assert!(!appears_in("优先遵循 … ProviderRateLimitException", seed), "parts out of order");
        assert!(!appears_in("429/5xx … 重试（直到 maxRetries）", seed), "words the seed does not have");
        assert!(!appears_in("…", seed), "an elision alone quotes nothing");
    }

    #[test]
    fn quotations_pair_within_paragraphs_and_span_lines() {
        let text = "a \"one\nline two\" b \"三\"\nstray \"\n\nnext \"四\"";
        let quotes = quotations(text);
        assert_eq!(quotes, vec![(1, "one\nline two".to_owned()), (2, "三".to_owned()), (5, "四".to_owned())]);
        assert!(has_cjk("三") && !has_cjk("three"));
    }
}
