//! The upstream a proxying server forwards model requests to (`squall serve --upstream URL`):
//! one base URL fixed when the server starts, never one a request names, so squall reaches
//! nothing but it. A request's path under a run's base URL is appended to the upstream's
//! (`/responses` → `{upstream}/responses`; a Gemini path to the upstream's root), its query kept.
//!
//! The client's headers go along (its own key among them) except the hop-by-hop ones and
//! `host`; with a key of squall's own (`SQUALL_UPSTREAM_KEY`) the client's credentials are
//! dropped and the key is sent as the API expects it (`Authorization: Bearer`, `x-api-key`,
//! `x-goog-api-key`). `http://` upstreams (a gateway, a local model server, another squall)
//! and `https://` ones (a provider itself: TLS in [`self::upstream_tls`], with Mozilla's roots
//! and any CA given with `--upstream-ca`). An `http://` upstream is spoken to directly
//! ([`self::plain_upstream`]); an `https://` one through hyper's client and rustls.

mod plain_upstream;
pub(in crate::server) mod proxied_body;
pub(in crate::server) mod recording;
#[cfg(feature = "upstream-tls")]
mod upstream_tls;

use std::path::Path;
use std::time::Duration;

use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};

use self::plain_upstream::PlainBody;
use crate::api::Api;
use crate::journal::CREDENTIAL_HEADERS;

/// Hop-by-hop headers (RFC 9110 §7.6.1), and those squall sets itself.
const NOT_FORWARDED: [&str; 8] =
    ["connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "host"];

/// How long the upstream has to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the upstream may take to send its response head, and may then go silent mid-body,
/// by default: nginx's `proxy_read_timeout`.
pub const DEFAULT_UPSTREAM_READ_TIMEOUT: Duration = Duration::from_secs(60);

/// Where model requests are forwarded.
#[derive(Debug, Clone)]
pub struct Upstream {
    /// `http` or `https`.
    scheme: Scheme,
    /// `host` or `host:port`, as given (the `Host` header the upstream gets).
    authority: String,
    /// The base URL's path without a trailing `/` (`/v1`, or empty).
    path: String,
    /// A key to send instead of the client's (`SQUALL_UPSTREAM_KEY`).
    key: Option<String>,
    /// How long it may take to send its response head, and may go silent mid-body.
    read_timeout: Duration,
    /// The client of an `https://` upstream, its trusted roots fixed with it.
    #[cfg(feature = "upstream-tls")]
    tls: Option<self::upstream_tls::TlsClient>,
}

/// How squall speaks to the upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    Http,
    Https,
}

impl Scheme {
    fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }
}

/// An upstream's reply as it starts: its status and headers, its body still to come.
pub(super) struct UpstreamResponse {
    pub(super) status: StatusCode,
    pub(super) headers: HeaderMap,
    pub(super) body: UpstreamBody,
}

/// An upstream reply's body, read as it is polled.
#[derive(Debug)]
pub(super) enum UpstreamBody {
    /// From an `http://` upstream, read off its connection directly.
    Plain(PlainBody),
    /// From an `https://` upstream, through hyper's client.
    #[cfg(feature = "upstream-tls")]
    Tls(hyper::body::Incoming),
}

impl UpstreamBody {
    /// The next bytes of the body, `None` at its end, or why it broke.
    pub(super) fn poll_data(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, String>>> {
        match self {
            UpstreamBody::Plain(body) => body.poll_data(cx),
            #[cfg(feature = "upstream-tls")]
            UpstreamBody::Tls(body) => loop {
                use http_body::Body as _;
                return match std::task::ready!(std::pin::Pin::new(&mut *body).poll_frame(cx)) {
                    Some(Ok(frame)) => match frame.into_data() {
                        Ok(data) => Poll::Ready(Some(Ok(data))),
                        // Trailers: nothing to pass on.
                        Err(_) => continue,
                    },
                    Some(Err(error)) => Poll::Ready(Some(Err(describe(&error)))),
                    None => Poll::Ready(None),
                };
            },
        }
    }
}

/// What squall says of an https upstream when built without the `upstream-tls` feature.
#[cfg(not(feature = "upstream-tls"))]
const WITHOUT_TLS: &str = "this squall was built without TLS (the `upstream-tls` feature, which the command line has)";

/// Why a forwarded request failed, in words: the client's error ("client error (Connect)") and
/// every cause under it, with advice when the upstream's certificate was not trusted.
#[cfg(feature = "upstream-tls")]
fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut reason = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        reason = format!("{reason}: {cause}");
        source = cause.source();
    }
    if reason.contains("certificate") {
        reason.push_str(
            " (squall trusts Mozilla's roots, as the official SDKs do; add the upstream's CA with --upstream-ca)",
        );
    }
    reason
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
    /// `http://host:port/path` or `https://host/path` (the base URL an SDK would be given:
    /// ending in `/v1` for OpenAI- and Anthropic-compatible servers), with an optional key of
    /// squall's own. An https upstream is trusted as the official SDKs trust a provider
    /// (Mozilla's roots); [`Upstream::trusting`] adds a CA.
    pub fn parse(url: &str, key: Option<String>) -> Result<Upstream, BadUpstream> {
        let bad = |reason: &str| BadUpstream { url: url.to_owned(), reason: reason.to_owned() };
        let (scheme, rest) = match url.split_once("://") {
            Some(("http", rest)) => (Scheme::Http, rest),
            Some(("https", rest)) => (Scheme::Https, rest),
            _ => return Err(bad("expected http://HOST:PORT/PATH or https://HOST/PATH")),
        };
        let (authority, path) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
        if authority.is_empty() || authority.contains('@') {
            return Err(bad("expected a host (and port), without user information"));
        }
        if path.contains('?') || path.contains('#') {
            return Err(bad("a base URL has no query or fragment"));
        }
        let path = format!("/{}", path.trim_matches('/'));
        let path = if path == "/" { String::new() } else { path };
        let upstream = Upstream {
            scheme,
            authority: authority.to_owned(),
            path,
            key: key.filter(|k| !k.is_empty()),
            read_timeout: DEFAULT_UPSTREAM_READ_TIMEOUT,
            #[cfg(feature = "upstream-tls")]
            tls: None,
        };
        upstream.with_roots(&[]).map_err(|reason| bad(&reason))
    }

    /// The same upstream, with `timeout` for its response head and for any silence mid-body
    /// (`--upstream-timeout`; [`DEFAULT_UPSTREAM_READ_TIMEOUT`] otherwise). A reply that
    /// exceeds it is the upstream's failure: a 504 before the head, a broken reply after it.
    pub fn reading_within(self, timeout: Duration) -> Upstream {
        Upstream { read_timeout: timeout, ..self }
    }

    /// How long it may take to send its response head, and may go silent mid-body.
    pub fn read_timeout(&self) -> Duration {
        self.read_timeout
    }

    /// The same upstream, also trusting the CA certificates in `ca_file` (PEM): a gateway or
    /// staging provider signed by a team's own CA (`--upstream-ca`, `SQUALL_UPSTREAM_CA`).
    pub fn trusting(self, ca_file: &Path) -> Result<Upstream, BadUpstream> {
        let bad = |reason: String| BadUpstream { url: self.url(), reason };
        if self.scheme != Scheme::Https {
            return Err(bad(format!("a CA ({}) is for an https:// upstream", ca_file.display())));
        }
        #[cfg(feature = "upstream-tls")]
        {
            let roots = self::upstream_tls::read_certificates(ca_file).map_err(bad)?;
            self.clone().with_roots(&roots).map_err(bad)
        }
        #[cfg(not(feature = "upstream-tls"))]
        Err(bad(WITHOUT_TLS.to_owned()))
    }

    /// The upstream with its client: for https, one trusting Mozilla's roots and `extra`.
    #[cfg(feature = "upstream-tls")]
    fn with_roots(self, extra: &[rustls_pki_types::CertificateDer<'static>]) -> Result<Upstream, String> {
        match self.scheme {
            Scheme::Http => Ok(self),
            Scheme::Https => {
                Ok(Upstream { tls: Some(self::upstream_tls::TlsClient::new(extra, CONNECT_TIMEOUT)?), ..self })
            }
        }
    }

    #[cfg(not(feature = "upstream-tls"))]
    fn with_roots(self, _: &[()]) -> Result<Upstream, String> {
        match self.scheme {
            Scheme::Http => Ok(self),
            Scheme::Https => Err(WITHOUT_TLS.to_owned()),
        }
    }

    /// The base URL, as the journal and messages name it.
    pub fn url(&self) -> String {
        format!("{}://{}{}", self.scheme.as_str(), self.authority, self.path)
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
    ) -> Result<UpstreamResponse, String> {
        let target = self.target(api, rest, query);
        let headers = self.forwarded_headers(api, headers);
        #[cfg(feature = "upstream-tls")]
        if let Some(tls) = &self.tls {
            let uri = format!("https://{}{target}", self.authority);
            let mut request = http::Request::builder()
                .method(method.clone())
                .uri(uri)
                .body(http_body_util::Full::new(body))
                .map_err(|e| e.to_string())?;
            *request.headers_mut() = headers;
            let (parts, body) = tls.request(request).await.map_err(|e| describe(&e))?.into_parts();
            return Ok(UpstreamResponse {
                status: parts.status,
                headers: parts.headers,
                body: UpstreamBody::Tls(body),
            });
        }
        let request = http1_request(method, &target, &headers, &body);
        let reply = plain_upstream::send(&self.authority, &request, CONNECT_TIMEOUT).await?;
        Ok(UpstreamResponse { status: reply.status, headers: reply.headers, body: UpstreamBody::Plain(reply.body) })
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
                Api::Responses
                | Api::Chat
                | Api::OllamaChat
                | Api::OllamaGenerate
                | Api::Bedrock
                | Api::BedrockInvoke => ("authorization", format!("Bearer {key}")),
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

/// A whole HTTP/1.1 request, head and body, as one write sends it.
fn http1_request(method: &Method, target: &str, headers: &HeaderMap, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(512 + body.len());
    for part in [method.as_str().as_bytes(), b" ", target.as_bytes(), b" HTTP/1.1\r\n"] {
        out.extend_from_slice(part);
    }
    for (name, value) in headers {
        for part in [name.as_str().as_bytes(), b": ", value.as_bytes(), b"\r\n"] {
            out.extend_from_slice(part);
        }
    }
    out.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
    out.extend_from_slice(body);
    out
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
            (root.url().as_str(), root.target(Api::Chat, "/chat/completions", None).as_str()),
            ("http://localhost", "/chat/completions")
        );
    }

    #[test]
    fn an_https_upstream_needs_the_tls_feature_and_says_so_without_it() {
        let provider = Upstream::parse("https://api.openai.com/v1", None);
        if cfg!(feature = "upstream-tls") {
            let provider = provider.expect("valid");
            assert_eq!(
                (provider.url().as_str(), provider.authority.as_str()),
                ("https://api.openai.com/v1", "api.openai.com")
            );
        } else {
            let refused = provider.expect_err("no TLS").to_string();
            assert!(refused.contains("`upstream-tls` feature"), "{refused}");
        }
    }

    #[cfg(feature = "upstream-tls")]
    #[test]
    fn a_ca_file_is_read_for_an_https_upstream_only_and_named_when_it_fails() {
        let dir = std::env::temp_dir().join(format!("squall-upstream-ca-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").expect("write");
        let https = || Upstream::parse("https://gateway.internal/v1", None).expect("valid");
        for (upstream, file, says) in [
            (https(), dir.join("missing.pem"), "cannot read the CA file"),
            (https(), empty.clone(), "holds no certificate"),
            (Upstream::parse("http://gateway/v1", None).expect("valid"), empty.clone(), "for an https:// upstream"),
        ] {
            let error = upstream.trusting(&file).expect_err("refused").to_string();
            assert!(error.contains(says) && error.contains(&file.display().to_string()), "{error}");
        }
        let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tls/ca.pem");
        let trusting = https().trusting(&fixture).expect("a CA is added");
        assert!(format!("{trusting:?}").contains("and 1 more"), "{trusting:?}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn only_http_and_https_base_urls_are_upstreams() {
        for (url, says) in [
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
