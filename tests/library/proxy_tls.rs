//! squall in front of an `https://` upstream, without the internet: a TLS front (tokio-rustls,
//! with the test certificate of `tests/fixtures/tls`, issued to `localhost` by a test CA) before
//! a real squall plays the provider. Trusting the CA (`--upstream-ca`), the stream passes and
//! a fault still fires at its delta; without it, the client gets a 502 that names the upstream
//! and the certificate, and nothing reaches the provider.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use squall::embedded::MockProvider;
use squall::journal::EndKind;
use squall::scenario::load::from_toml_str;
use squall::scenario::Catalogue;
use squall::server::{ServerConfig, Upstream};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::rustls::pki_types::pem::PemObject as _;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::ServerConfig as TlsServerConfig;
use tokio_rustls::TlsAcceptor;

use super::proxy::stream_request;
use squall_testkit::harness::read_body;

fn fixture(name: &str) -> PathBuf {
    squall_testkit::tls_fixture(name)
}

/// A TLS front on a loopback port for `backend` (`host:port`): every connection's handshake
/// with the test certificate, then its bytes both ways. Returns the port.
async fn tls_front(backend: String) -> u16 {
    let certificates: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(fixture("server.pem"))
        .expect("the test certificate")
        .collect::<Result<_, _>>()
        .expect("PEM");
    let key = PrivateKeyDer::from_pem_file(fixture("server.key")).expect("the test key");
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = TlsServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(certificates, key)
        .expect("a certificate and its key");
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let (acceptor, backend) = (acceptor.clone(), backend.clone());
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(socket).await else { return };
                let Ok(mut plain) = TcpStream::connect(&backend).await else { return };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    port
}

/// A real squall behind a TLS front, with one run scripted by `toml`: the run, and the
/// front's `https://localhost:PORT/…` base URL for it.
async fn provider_over_tls(toml: &str) -> (MockProvider, squall::embedded::ScriptedRun, String) {
    let real = MockProvider::start().await;
    let run = real.run(from_toml_str("real", &format!("name = \"real\"\n{toml}")).expect("valid"));
    let base = run.base_url().to_owned();
    let rest = base.strip_prefix("http://").expect("a plain base URL");
    let (backend, path) = rest.split_once('/').expect("a path");
    let port = tls_front(backend.to_owned()).await;
    (real, run, format!("https://localhost:{port}/{path}"))
}

async fn proxy(upstream: Upstream, toml: &str) -> (MockProvider, squall::embedded::ScriptedRun) {
    let mut config = ServerConfig::loopback(Catalogue::default());
    config.upstream = Some(upstream);
    let provider = MockProvider::start_with(config).await;
    let run = provider.run(from_toml_str("proxy", &format!("name = \"proxy\"\n{toml}")).expect("valid"));
    (provider, run)
}

#[tokio::test]
async fn trusting_its_ca_squall_forwards_over_tls_and_cuts_the_real_stream_at_its_delta() {
    let (_real, real_run, url) =
        provider_over_tls("[[attempts]]\nstream = { text = \"Hello brave world\" }\n[[attempts]]\nstream = { text = \"Hello brave world\" }\n").await;
    let upstream = Upstream::parse(&url, None).expect("valid").trusting(&fixture("ca.pem")).expect("the test CA");
    let (_provider, run) =
        proxy(upstream, "[[attempts]]\n[[attempts]]\nfault = { kind = \"reset\", after_deltas = 1 }\n").await;

    let whole = read_body(stream_request(run.base_url()).await).await;
    assert!(whole.error.is_none() && whole.text().contains("response.completed"), "{}", whole.text());
    let deltas = |text: &str| text.matches("response.output_text.delta").count();
    assert!(deltas(&whole.text()) >= 3, "{}", whole.text());
    let cut = read_body(stream_request(run.base_url()).await).await;
    assert_eq!(deltas(&cut.text()), 2, "one delta event (name and type): {}", cut.text());
    assert!(cut.error.is_some(), "the reset breaks the body");

    let journal = run.journal();
    let call = journal[0].upstream.clone().expect("journaled");
    assert_eq!((call.url.as_str(), call.status), (url.as_str(), Some(200)));
    assert_eq!((journal[0].end, journal[1].end), (Some(EndKind::Completed), Some(EndKind::Reset)));
    assert_eq!(real_run.journal().len(), 2, "both requests reached the provider through TLS");
}

#[tokio::test]
async fn an_upstream_whose_certificate_squall_does_not_trust_is_a_502_naming_it() {
    let (_real, real_run, url) = provider_over_tls("[[attempts]]\n").await;
    let (_provider, run) = proxy(Upstream::parse(&url, None).expect("valid"), "[[attempts]]\n").await;
    let response = stream_request(run.base_url()).await;
    assert_eq!(response.status(), 502);
    let body: Value = response.json().await.expect("json");
    let message = body["error"]["message"].as_str().expect("a message");
    assert!(
        message.contains(&url) && message.contains("certificate") && message.contains("--upstream-ca"),
        "{message}"
    );
    let call = run.journal()[0].upstream.clone().expect("journaled");
    assert!(call.status.is_none() && call.error.as_deref().is_some_and(|e| e.contains("UnknownIssuer")), "{call:?}");
    assert!(real_run.journal().is_empty(), "nothing reached the provider");
}
