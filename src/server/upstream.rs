//! The upstream a proxying server forwards model requests to (`squall serve --upstream URL`):
//! one base URL fixed when the server starts, never one a request names, so squall reaches
//! nothing but it. A request's path under a run's base URL is appended to the upstream's
//! (`/responses` → `{upstream}/responses`; a Gemini path to the upstream's root), its query kept.
//!
//! The client's headers go along (its own key among them) except the hop-by-hop ones and
//! `host`; with a key of squall's own (`SQUALL_UPSTREAM_KEY`) the client's credentials are
//! dropped and the key is sent as the API expects it (`Authorization: Bearer`, `x-api-key`,
//! `x-goog-api-key`). Plain `http://` upstreams: a gateway, a local model server, another
//! squall; TLS is not spoken.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use crate::journal::CREDENTIAL_HEADERS;
use crate::wire::reply::Api;

/// Hop-by-hop headers (RFC 9110 §7.6.1), and those squall sets itself.
const NOT_FORWARDED: [&str; 8] =
    ["connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "host"];

/// How long the upstream has to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where model requests are forwarded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    /// `host:port`.
    authority: String,
    /// The base URL's path without a trailing `/` (`/v1`, or empty).
    path: String,
    /// A key to send instead of the client's (`SQUALL_UPSTREAM_KEY`).
    key: Option<String>,
}

type UpstreamClient = Client<HttpConnector, Full<Bytes>>;

thread_local! {
    /// One pooled HTTP/1.1 client per serving thread: a forwarded request reuses an idle
    /// connection of its own thread, so the upstream's bytes never wake another thread.
    static CLIENT: UpstreamClient = {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(CONNECT_TIMEOUT));
        Client::builder(TokioExecutor::new()).build(connector)
    };
}

/// An upstream URL squall cannot forward to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("upstream `{url}`: {reason}")]
pub struct BadUpstream {
    /// The URL as given.
    pub url: String,
    /// Why squall cannot forward to it.
    pub reason: String,
}

impl Upstream {
    /// `http://host:port/path` (the base URL an SDK would be given: ending in `/v1` for OpenAI-
    /// and Anthropic-compatible servers), with an optional key of squall's own.
    pub fn parse(url: &str, key: Option<String>) -> Result<Upstream, BadUpstream> {
        let bad = |reason: &str| BadUpstream { url: url.to_owned(), reason: reason.to_owned() };
        let rest = match url.split_once("://") {
            Some(("http", rest)) => rest,
            Some(("https", _)) => {
                return Err(bad("https is not spoken: give squall a plain http:// upstream (a gateway or a TLS-terminating sidecar in front of the provider)"))
            }
            _ => return Err(bad("expected http://HOST:PORT/PATH")),
        };
        let (authority, path) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
        if authority.is_empty() || authority.contains('@') {
            return Err(bad("expected a host (and port), without user information"));
        }
        if path.contains('?') || path.contains('#') {
            return Err(bad("a base URL has no query or fragment"));
        }
        let authority = if authority.contains(':') { authority.to_owned() } else { format!("{authority}:80") };
        let path = format!("/{}", path.trim_matches('/'));
        let path = if path == "/" { String::new() } else { path };
        Ok(Upstream { authority, path, key: key.filter(|k| !k.is_empty()) })
    }

    /// `http://host:port/path`, as the journal and messages name it.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.authority, self.path)
    }

    /// The path and query on the upstream for a request to `rest` (under a run's base URL).
    fn target(&self, api: Api, rest: &str, query: Option<&str>) -> String {
        let path = match api {
            // Gemini paths carry their version: `/v1beta/models/…`, or `/models/…` under `/v1`.
            Api::Gemini => {
                let root = self.path.strip_suffix("/v1").unwrap_or(&self.path);
                if rest.starts_with("/models/") {
                    format!("{root}/v1{rest}")
                } else {
                    format!("{root}{rest}")
                }
            }
            _ => format!("{}{rest}", self.path),
        };
        match query {
            Some(query) => format!("{path}?{query}"),
            None => path,
        }
    }

    /// Send one model request and return the upstream's reply as it starts (its body streams).
    pub(super) async fn send(
        &self,
        api: Api,
        method: &Method,
        (rest, query): (&str, Option<&str>),
        headers: &HeaderMap,
        body: Bytes,
    ) -> Result<hyper::Response<Incoming>, String> {
        let mut request = Request::builder()
            .method(method.clone())
            .uri(format!("http://{}{}", self.authority, self.target(api, rest, query)))
            .body(Full::new(body))
            .map_err(|e| e.to_string())?;
        *request.headers_mut() = self.forwarded_headers(api, headers);
        let client = CLIENT.with(UpstreamClient::clone);
        client.request(request).await.map_err(|e| {
            // The error's own words are "client error (Connect)": say what is under it.
            let mut reason = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(cause) = source {
                reason = format!("{reason}: {cause}");
                source = cause.source();
            }
            reason
        })
    }

    /// The client's headers as the upstream gets them.
    fn forwarded_headers(&self, api: Api, headers: &HeaderMap) -> HeaderMap {
        let mut out = HeaderMap::with_capacity(headers.len() + 1);
        for (name, value) in headers {
            let name_str = name.as_str();
            let credential = CREDENTIAL_HEADERS.contains(&name_str);
            if NOT_FORWARDED.contains(&name_str) || (credential && self.key.is_some()) || name_str == "content-length" {
                continue;
            }
            out.append(name.clone(), value.clone());
        }
        if let Ok(host) = HeaderValue::from_str(&self.authority) {
            out.insert(http::header::HOST, host);
        }
        if let Some(key) = &self.key {
            let (name, value) = match api {
                Api::Responses | Api::Chat => ("authorization", format!("Bearer {key}")),
                Api::Messages => ("x-api-key", key.clone()),
                Api::Gemini => ("x-goog-api-key", key.clone()),
            };
            if let Ok(value) = HeaderValue::from_str(&value) {
                out.insert(HeaderName::from_static(name), value);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_takes_each_apis_paths() {
        let upstream = Upstream::parse("http://gateway:8080/v1/", None).expect("valid");
        assert_eq!(upstream.url(), "http://gateway:8080/v1");
        assert_eq!(upstream.target(Api::Responses, "/responses", None), "/v1/responses");
        assert_eq!(upstream.target(Api::Messages, "/messages", None), "/v1/messages");
        let gemini = "/v1beta/models/g:streamGenerateContent";
        assert_eq!(upstream.target(Api::Gemini, gemini, Some("alt=sse")), format!("{gemini}?alt=sse"));
        assert_eq!(upstream.target(Api::Gemini, "/models/g:generateContent", None), "/v1/models/g:generateContent");
        let root = Upstream::parse("http://localhost", None).expect("valid");
        assert_eq!(
            (root.authority.as_str(), root.target(Api::Chat, "/chat/completions", None).as_str()),
            ("localhost:80", "/chat/completions")
        );
    }

    #[test]
    fn only_plain_http_base_urls_are_upstreams() {
        for (url, says) in [
            ("https://api.openai.com/v1", "https is not spoken"),
            ("ftp://x", "expected http://"),
            ("http://user:pw@host/v1", "without user information"),
            ("http://host/v1?x=1", "no query"),
        ] {
            let error = Upstream::parse(url, None).expect_err(url).to_string();
            assert!(error.contains(says) && error.contains(url), "{error}");
        }
    }

    #[test]
    fn a_key_of_squalls_own_replaces_the_clients_credentials() {
        let mut headers = HeaderMap::new();
        headers.insert("authorization", HeaderValue::from_static("Bearer client-key"));
        headers.insert("x-api-key", HeaderValue::from_static("client-key"));
        headers.insert("connection", HeaderValue::from_static("keep-alive"));
        headers.insert("x-session-id", HeaderValue::from_static("s1"));
        let passed = Upstream::parse("http://u:1/v1", None).expect("valid").forwarded_headers(Api::Responses, &headers);
        assert_eq!(passed["authorization"], "Bearer client-key");
        assert!(passed.get("connection").is_none());
        let own = Upstream::parse("http://u:1/v1", Some("own".into()))
            .expect("valid")
            .forwarded_headers(Api::Messages, &headers);
        assert_eq!((own["x-api-key"].to_str().ok(), own.get("authorization")), (Some("own"), None));
        assert_eq!((own["x-session-id"].to_str().ok(), own["host"].to_str().ok()), (Some("s1"), Some("u:1")));
    }
}
