//! The origin squall writes into every URL it hands out, for clients that reach it at another
//! address than the one it listens on: behind a container's port mapping or a proxy.

use std::fmt;
use std::str::FromStr;

/// `http://HOST[:PORT]` or `https://HOST[:PORT]`, as clients reach the server (`--public-url`).
/// A path is refused: squall's routes start at `/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicUrl(String);

impl PublicUrl {
    /// The origin, without a trailing `/`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PublicUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a public URL was refused, with the URL given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadPublicUrl {
    given: String,
    why: &'static str,
}

impl fmt::Display for BadPublicUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "public URL {:?}: {} (expected http://HOST[:PORT] or https://HOST[:PORT])", self.given, self.why)
    }
}

impl std::error::Error for BadPublicUrl {}

impl FromStr for PublicUrl {
    type Err = BadPublicUrl;

    fn from_str(given: &str) -> Result<Self, Self::Err> {
        let bad = |why| BadPublicUrl { given: given.to_owned(), why };
        let (scheme, rest) = given.split_once("://").ok_or_else(|| bad("no scheme"))?;
        if scheme != "http" && scheme != "https" {
            return Err(bad("the scheme is neither http nor https"));
        }
        let authority = rest.strip_suffix('/').unwrap_or(rest);
        if authority.contains(['/', '?', '#']) {
            return Err(bad("it has a path, a query or a fragment"));
        }
        if authority.contains('@') {
            return Err(bad("it has a user"));
        }
        let (host, port) = split_port(authority);
        if host.is_empty() || host.contains(char::is_whitespace) {
            return Err(bad("no host"));
        }
        if port.is_some_and(|port| port.parse::<u16>().map_or(true, |p| p == 0)) {
            return Err(bad("the port is not a number from 1 to 65535"));
        }
        Ok(PublicUrl(format!("{scheme}://{authority}")))
    }
}

/// The origin URLs handed out in reply to `request` start with: with `from_host`, the one the
/// request named (HTTP/2's `:authority`, else its `Host`) in `fixed`'s scheme, so each client
/// gets URLs at the address it reached, whatever port mapping sits between; else, or when the
/// request names no usable origin, `fixed`.
pub(super) fn origin_for<B>(fixed: &str, from_host: bool, request: &http::Request<B>) -> String {
    let named = request
        .uri()
        .authority()
        .map(|a| a.as_str())
        .or_else(|| request.headers().get(http::header::HOST).and_then(|h| h.to_str().ok()));
    let scheme = fixed.split_once("://").map_or("http", |(scheme, _)| scheme);
    match named.filter(|_| from_host).map(|authority| format!("{scheme}://{authority}").parse::<PublicUrl>()) {
        Some(Ok(origin)) => origin.0,
        _ => fixed.to_owned(),
    }
}

/// `HOST` and its `PORT`, if any; an IPv6 host keeps its brackets.
fn split_port(authority: &str) -> (&str, Option<&str>) {
    let host_end = match authority.strip_prefix('[') {
        Some(inner) => inner.find(']').map_or(authority.len(), |end| end + 2),
        None => authority.find(':').unwrap_or(authority.len()),
    };
    let (host, after) = authority.split_at(host_end);
    (host, after.strip_prefix(':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_origin_is_kept_without_its_trailing_slash() {
        for (given, kept) in [
            ("http://127.0.0.1:32768", "http://127.0.0.1:32768"),
            ("https://squall.test/", "https://squall.test"),
            ("http://[::1]:8080", "http://[::1]:8080"),
        ] {
            assert_eq!(given.parse::<PublicUrl>().map(|u| u.to_string()), Ok(kept.to_owned()), "{given}");
        }
    }

    #[test]
    fn a_requests_host_names_the_origin_only_when_asked_and_well_formed() {
        let request = |host: &str| http::Request::builder().header("host", host).body(()).expect("a request");
        let fixed = "https://127.0.0.1:8080";
        assert_eq!(origin_for(fixed, true, &request("localhost:32768")), "https://localhost:32768");
        assert_eq!(origin_for(fixed, false, &request("localhost:32768")), fixed);
        assert_eq!(origin_for(fixed, true, &request("evil/path")), fixed);
        let h2 = http::Request::builder().uri("http://[::1]:9000/__squall/runs").body(()).expect("a request");
        assert_eq!(origin_for(fixed, true, &h2), "https://[::1]:9000");
    }

    #[test]
    fn anything_but_an_origin_is_refused_saying_why() {
        for (given, why) in [
            ("127.0.0.1:8080", "no scheme"),
            ("ftp://host", "neither http nor https"),
            ("http://host/squall", "a path"),
            ("http://host?x=1", "a query"),
            ("http://user@host", "a user"),
            ("http://:8080", "no host"),
            ("http://host:0", "the port"),
            ("http://host:99999", "the port"),
            ("http://[::1]:x", "the port"),
        ] {
            let refused = given.parse::<PublicUrl>().expect_err(given).to_string();
            assert!(refused.contains(why) && refused.contains(given), "{given}: {refused}");
        }
    }
}
