//! Sources for deep research: a pluggable search/fetch backend, the tools that use it, and a
//! fixture backend for tests and the IUT adapter (no network).

use serde_json::{json, Value};

use crate::provider::ToolSpec;

/// A source a sub-session collected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// Its address.
    pub url: String,
    /// Its title.
    pub title: String,
    /// What it says, in short.
    pub snippet: String,
}

/// Where research comes from. Implement it over a real search API to use the runner for real.
pub trait ResearchBackend: Send + Sync + std::fmt::Debug {
    /// Sources for `query`.
    fn search(&self, query: &str) -> Vec<Source>;
    /// The text at `url`, if it can be read.
    fn fetch(&self, url: &str) -> Option<String>;
}

/// Canned sources about provider retry, enough for a sub-session to collect evidence.
#[derive(Debug, Clone)]
pub struct FixtureBackend {
    sources: Vec<Source>,
}

impl Default for FixtureBackend {
    fn default() -> Self {
        let source = |url: &str, title: &str, snippet: &str| Source {
            url: url.to_owned(),
            title: title.to_owned(),
            snippet: snippet.to_owned(),
        };
        FixtureBackend {
            sources: vec![
                source(
                    "https://fixtures.squall.invalid/opencode-session-retry",
                    "OpenCode SessionRetry",
                    "Retries provider errors with 2 s exponential backoff capped at 30 s and honours Retry-After.",
                ),
                source(
                    "https://fixtures.squall.invalid/openai-python-retries",
                    "openai-python retries",
                    "Retries 408, 409, 429 and 5xx twice by default with 0.5 s to 8 s backoff.",
                ),
                source(
                    "https://fixtures.squall.invalid/rfc9110-retry-after",
                    "RFC 9110 Retry-After",
                    "Retry-After is delay-seconds or an HTTP-date.",
                ),
            ],
        }
    }
}

/// A query that makes the fixture backend return a 1 MB result: the conformance suite's way
/// to check the tool-output budget (REQ-0003-001) without a real web.
pub const HUGE_OUTPUT_QUERY: &str = "squall:huge-output";

impl ResearchBackend for FixtureBackend {
    fn search(&self, query: &str) -> Vec<Source> {
        if query.contains(HUGE_OUTPUT_QUERY) {
            let snippet = format!("BEGIN {} END", "retry ".repeat(1024 * 1024 / 6));
            return vec![Source {
                url: "https://fixtures.squall.invalid/huge".to_owned(),
                title: "A very large page".to_owned(),
                snippet,
            }];
        }
        self.sources.clone()
    }

    fn fetch(&self, url: &str) -> Option<String> {
        self.sources.iter().find(|s| s.url == url).map(|s| format!("# {}\n\n{}", s.title, s.snippet))
    }
}

/// The search tool a sub-session offers.
pub const WEB_SEARCH: &str = "web_search";
/// The fetch tool a sub-session offers.
pub const WEB_FETCH: &str = "web_fetch";

/// The tools a deep-research sub-session offers.
pub fn tool_specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: WEB_SEARCH.to_owned(),
            description: "Search the web; returns sources with url, title and snippet.".to_owned(),
            parameters: json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
        },
        ToolSpec {
            name: WEB_FETCH.to_owned(),
            description: "Fetch a page by url.".to_owned(),
            parameters: json!({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}),
        },
    ]
}

/// Run a research tool, recording every source it touches in `collected`.
pub fn run_tool(backend: &dyn ResearchBackend, name: &str, arguments: &Value, collected: &mut Vec<Source>) -> String {
    match name {
        WEB_SEARCH => {
            let query = arguments["query"].as_str().unwrap_or("");
            let found = backend.search(query);
            for source in &found {
                if !collected.iter().any(|c| c.url == source.url) {
                    collected.push(source.clone());
                }
            }
            json!(found
                .iter()
                .map(|s| json!({"url": s.url, "title": s.title, "snippet": s.snippet}))
                .collect::<Vec<_>>())
            .to_string()
        }
        WEB_FETCH => {
            let url = arguments["url"].as_str().unwrap_or("");
            match backend.fetch(url) {
                Some(page) => {
                    if !collected.iter().any(|c| c.url == url) {
                        collected.push(Source { url: url.to_owned(), title: url.to_owned(), snippet: String::new() });
                    }
                    page
                }
                None => json!({"error": format!("could not fetch {url}")}).to_string(),
            }
        }
        other => json!({"error": format!("unknown tool `{other}`")}).to_string(),
    }
}
