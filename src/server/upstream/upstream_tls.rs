//! TLS to an `https://` upstream (feature `upstream-tls`, which the command line has): rustls
//! with ring, trusting Mozilla's root certificates as the official SDKs do (webpki-roots) and
//! any CA a team's gateway or staging provider is signed by (`--upstream-ca FILE`, PEM). The
//! certificate is checked against the upstream's host name; HTTP/1.1 is spoken inside.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::Request;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use rustls::{ClientConfig, RootCertStore};
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::CertificateDer;

/// A pooled HTTPS client for one upstream, its trusted roots fixed when the server starts.
#[derive(Clone)]
pub(in crate::server) struct TlsClient {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    /// CA certificates trusted besides Mozilla's roots (for `Debug`).
    extra_roots: usize,
}

impl std::fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TlsClient {{ Mozilla's roots and {} more }}", self.extra_roots)
    }
}

impl TlsClient {
    /// A client trusting Mozilla's roots and the `extra` CA certificates, giving the upstream
    /// `connect_timeout` to accept a connection.
    pub(in crate::server) fn new(
        extra: &[CertificateDer<'static>],
        connect_timeout: Duration,
    ) -> Result<TlsClient, String> {
        let mut roots = RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
        for (n, certificate) in extra.iter().enumerate() {
            roots.add(certificate.clone()).map_err(|e| format!("CA certificate {} cannot be trusted: {e}", n + 1))?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS cannot be set up: {e}"))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(connect_timeout));
        let connector =
            HttpsConnectorBuilder::new().with_tls_config(config).https_only().enable_http1().wrap_connector(http);
        Ok(TlsClient { client: Client::builder(TokioExecutor::new()).build(connector), extra_roots: extra.len() })
    }

    /// Send one request over TLS.
    pub(in crate::server) async fn request(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<hyper::Response<Incoming>, hyper_util::client::legacy::Error> {
        self.client.request(request).await
    }
}

/// The certificates of a PEM file, or why there are none: the file's name in every message.
pub(in crate::server) fn read_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let text = std::fs::read(path).map_err(|e| format!("cannot read the CA file {}: {e}", path.display()))?;
    let certificates = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("the CA file {} is not PEM: {e}", path.display()))?;
    if certificates.is_empty() {
        return Err(format!("the CA file {} holds no certificate (-----BEGIN CERTIFICATE-----)", path.display()));
    }
    Ok(certificates)
}
