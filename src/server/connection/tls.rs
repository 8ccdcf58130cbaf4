//! Serving over TLS (feature `tls`, which the command line has): HTTP/2 and HTTP/1.1 chosen by
//! ALPN, as production providers serve them, with a certificate the user gives (PEM files) or
//! one issued at start by a test CA of squall's own (rcgen), for `localhost`, `127.0.0.1` and
//! `::1`. The CA's PEM is what clients are told to trust (docs/iut-contract.md); its key lives
//! only in memory, so nothing else it could sign outlives the server.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose};
use rustls::ServerConfig as RustlsConfig;
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// Why TLS could not be set up, naming the file at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}")]
pub struct TlsError {
    what: String,
}

impl TlsError {
    fn new(what: impl Into<String>) -> TlsError {
        TlsError { what: what.into() }
    }
}

/// How a server speaks TLS: its certificate chain and key, and — for a generated certificate —
/// the PEM of the CA that issued it.
#[derive(Clone)]
pub struct ServerTls {
    acceptor: TlsAcceptor,
    ca_pem: Option<String>,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let issuer = if self.ca_pem.is_some() { "a generated test CA" } else { "the certificate given" };
        write!(f, "ServerTls {{ ALPN h2, http/1.1; {issuer} }}")
    }
}

/// The names a generated certificate is valid for: what clients on this machine dial.
pub const GENERATED_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

impl ServerTls {
    /// A certificate for [`GENERATED_NAMES`], issued by a CA generated now: trust
    /// [`ServerTls::ca_pem`] to reach the server.
    pub fn generated() -> Result<ServerTls, TlsError> {
        let failed = |e: rcgen::Error| TlsError::new(format!("cannot generate the test certificate: {e}"));
        let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(failed)?;
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name.push(DnType::CommonName, "squall test CA");
        ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
        let ca_key = KeyPair::generate().map_err(failed)?;
        let ca_cert = ca.self_signed(&ca_key).map_err(failed)?;
        let names: Vec<String> = GENERATED_NAMES.iter().map(|n| (*n).to_owned()).collect();
        let mut leaf = CertificateParams::new(names).map_err(failed)?;
        leaf.distinguished_name.push(DnType::CommonName, "squall");
        leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let leaf_key = KeyPair::generate().map_err(failed)?;
        let leaf_cert = leaf.signed_by(&leaf_key, &ca_cert, &ca_key).map_err(failed)?;
        let chain = vec![leaf_cert.der().clone()];
        let key = PrivateKeyDer::try_from(leaf_key.serialize_der()).map_err(TlsError::new)?;
        Ok(ServerTls { acceptor: acceptor(chain, key)?, ca_pem: Some(ca_cert.pem()) })
    }

    /// The certificate chain in `cert` and its private key in `key` (PEM files).
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<ServerTls, TlsError> {
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
            .and_then(|certs| certs.collect())
            .map_err(|e| TlsError::new(format!("{}: cannot read a PEM certificate chain: {e}", cert.display())))?;
        if chain.is_empty() {
            return Err(TlsError::new(format!("{}: no PEM certificate in it", cert.display())));
        }
        let key = PrivateKeyDer::from_pem_file(key)
            .map_err(|e| TlsError::new(format!("{}: cannot read a PEM private key: {e}", key.display())))?;
        let acceptor = acceptor(chain, key).map_err(|e| TlsError::new(format!("{}: {e}", cert.display())))?;
        Ok(ServerTls { acceptor, ca_pem: None })
    }

    /// The PEM of the CA that issued a generated certificate (`None` for one given).
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// Write the generated CA's PEM to `path`, whole or not at all (a temporary file beside it,
    /// renamed): clients told to trust it never read half a certificate.
    pub fn write_ca(&self, path: &Path) -> Result<PathBuf, TlsError> {
        let Some(pem) = &self.ca_pem else {
            return Err(TlsError::new("the certificate was given, not generated: there is no CA of squall's to write"));
        };
        let failed = |e: std::io::Error| TlsError::new(format!("{}: cannot write the CA: {e}", path.display()));
        let partial = path.with_extension("pem.partial");
        std::fs::write(&partial, pem).map_err(failed)?;
        std::fs::rename(&partial, path).map_err(failed)?;
        Ok(path.to_owned())
    }

    pub(in crate::server) fn acceptor(&self) -> &TlsAcceptor {
        &self.acceptor
    }
}

/// A TLS acceptor offering HTTP/2 first, then HTTP/1.1 (ALPN), with rustls's safe defaults.
fn acceptor(chain: Vec<CertificateDer<'static>>, key: PrivateKeyDer<'static>) -> Result<TlsAcceptor, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = RustlsConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::new(format!("TLS versions: {e}")))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| TlsError::new(format!("the certificate and its key do not make a TLS identity: {e}")))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}
