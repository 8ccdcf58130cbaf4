//! The paths model requests come to: a run's base URL, `/runs/{id}/v1/...`, and each herd
//! client's under it, `/runs/{id}/clients/{k}/v1/...` (Gemini's requests come to
//! `/runs/{id}/v1beta/models/...`: its SDKs append the API version themselves; Azure OpenAI's to
//! `/runs/{id}/openai/deployments/{deployment}/...` or `/runs/{id}/openai/v1/...`, the run's URL
//! being the Azure endpoint) (the same for a catalogue scenario's shared
//! run under `/scenarios/{name}/`). A herd's requests are told apart by the path alone: a client
//! needs no header, only the base URL it was given.

/// Herd clients a run tells apart: `k` in `0..MAX_CLIENTS`.
pub(crate) const MAX_CLIENTS: u32 = 10_000;

/// A model request's path, split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BasePath<'a> {
    /// The run's id (or the catalogue scenario's name).
    pub id: &'a str,
    /// The herd client whose base URL it came to; `None` for the run's own.
    pub client: Option<u32>,
    /// What follows `/v1`: `/responses`, `/messages`, ... (`/` for the base URL itself); for
    /// the Gemini API, the whole `/v1beta/models/{model}:{method}`; for Azure OpenAI, the whole
    /// `/openai/…`.
    pub rest: &'a str,
}

/// Split `{prefix}{id}[/clients/{k}]/v1/rest` (or `…/v1beta/rest`, kept whole); `None` when the
/// path is not of that form (a client number that is not a number under [`MAX_CLIENTS`] among
/// them).
pub(crate) fn split_base<'a>(path: &'a str, prefix: &str) -> Option<BasePath<'a>> {
    let after = path.strip_prefix(prefix)?;
    let (id, rest) = after.split_once('/')?;
    let (client, rest) = match rest.strip_prefix("clients/") {
        Some(numbered) => {
            let (k, rest) = numbered.split_once('/')?;
            let digits_only = !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit());
            let k: u32 = k.parse().ok().filter(|k| digits_only && *k < MAX_CLIENTS)?;
            (Some(k), rest)
        }
        None => (None, rest),
    };
    let kept_whole = ["v1beta/", "openai/", "api/", "model/"];
    if kept_whole.iter().any(|start| rest.starts_with(start)) {
        // `rest` lies at the end of `path`, after a `/`.
        let with_slash = &path[path.len() - rest.len() - 1..];
        return Some(BasePath { id, client, rest: with_slash });
    }
    let rest = rest.strip_prefix("v1")?;
    if !rest.is_empty() && !rest.starts_with('/') {
        return None;
    }
    Some(BasePath { id, client, rest: if rest.is_empty() { "/" } else { rest } })
}

/// A run's OpenAI base URL under `origin`, for herd client `client` or the run's own.
pub(crate) fn base_url(origin: &str, run_id: &str, client: Option<u32>) -> String {
    format!("{}/v1", anthropic_base_url(origin, run_id, client))
}

/// The same without `/v1`, which Anthropic's SDKs append.
pub(crate) fn anthropic_base_url(origin: &str, run_id: &str, client: Option<u32>) -> String {
    match client {
        Some(k) => format!("{origin}/runs/{run_id}/clients/{k}"),
        None => format!("{origin}/runs/{run_id}"),
    }
}

/// The Responses API's WebSocket under an OpenAI base URL: `ws://…/v1/responses`, or `wss://`
/// when the base URL is `https://`.
pub fn responses_websocket_url(base_url: &str) -> String {
    let url = match base_url.strip_prefix("https://") {
        Some(rest) => format!("wss://{rest}"),
        None => base_url.replacen("http://", "ws://", 1),
    };
    format!("{url}/responses")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(path: &str) -> Option<(&str, Option<u32>, &str)> {
        split_base(path, "/runs/").map(|b| (b.id, b.client, b.rest))
    }

    #[test]
    fn the_websocket_url_keeps_the_base_urls_security() {
        assert_eq!(responses_websocket_url("http://h:1/runs/r/v1"), "ws://h:1/runs/r/v1/responses");
        assert_eq!(responses_websocket_url("https://h:1/runs/r/v1"), "wss://h:1/runs/r/v1/responses");
    }

    #[test]
    fn base_paths_split_into_id_client_and_rest() {
        assert_eq!(split("/runs/r1-x/v1/responses"), Some(("r1-x", None, "/responses")));
        assert_eq!(split("/runs/r1/v1"), Some(("r1", None, "/")));
        assert_eq!(split("/runs/r1/clients/7/v1/messages"), Some(("r1", Some(7), "/messages")));
        assert_eq!(split("/runs/r1/clients/9999/v1"), Some(("r1", Some(9999), "/")));
        assert_eq!(
            split("/runs/r1/clients/2/v1beta/models/g:generateContent"),
            Some(("r1", Some(2), "/v1beta/models/g:generateContent"))
        );
        assert_eq!(
            split("/runs/r1/openai/deployments/gpt-4o/chat/completions"),
            Some(("r1", None, "/openai/deployments/gpt-4o/chat/completions"))
        );
        for refused in [
            "/runs/r1/v2/responses",
            "/runs/r1/v1x",
            "/runs/r1/v1beta",
            "/runs/r1/clients/10000/v1/responses",
            "/runs/r1/clients/-1/v1/responses",
            "/runs/r1/clients/+1/v1/responses",
            "/runs/r1/clients//v1/responses",
            "/runs/r1/clients/x/v1/responses",
            "/runs/r1/clients/3/v2/responses",
        ] {
            assert_eq!(split(refused), None, "{refused}");
        }
    }

    #[test]
    fn base_urls_are_the_paths_that_split_back() {
        for client in [None, Some(0), Some(41)] {
            let url = base_url("http://h:1", "r9", client);
            let path = url.strip_prefix("http://h:1").expect("origin");
            assert_eq!(split(&format!("{path}/responses")), Some(("r9", client, "/responses")));
            assert_eq!(anthropic_base_url("http://h:1", "r9", client) + "/v1", url);
        }
    }
}
