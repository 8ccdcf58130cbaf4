//! `squall serve`'s TLS flags: a generated test certificate (`--tls`), whose CA is written where
//! clients are told to trust it, or a certificate and key the user gives.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use squall::server::tls::ServerTls;

/// How `squall serve` speaks TLS.
#[derive(Debug, clap::Args)]
pub(crate) struct TlsArgs {
    /// Serve over TLS (HTTP/2 and HTTP/1.1 by ALPN) with a certificate for localhost, 127.0.0.1
    /// and ::1 issued by a test CA generated at start; the CA's PEM is written to --tls-ca-out.
    #[arg(long)]
    tls: bool,
    /// Serve over TLS with this PEM certificate chain instead (with --tls-key).
    #[arg(long, value_name = "PEM", requires = "tls_key", conflicts_with = "tls")]
    tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM).
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Where --tls writes its CA's PEM (default: squall-ca-PORT.pem in the system's temporary
    /// directory); point SSL_CERT_FILE, REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS or AWS_CA_BUNDLE at it.
    #[arg(long, value_name = "FILE", requires = "tls")]
    tls_ca_out: Option<PathBuf>,
}

impl TlsArgs {
    /// The TLS the server is asked for, if any; the error names the file at fault.
    pub(crate) fn server_tls(&self) -> anyhow::Result<Option<ServerTls>> {
        match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Ok(Some(ServerTls::from_pem_files(cert, key)?)),
            _ if self.tls => Ok(Some(ServerTls::generated()?)),
            _ => Ok(None),
        }
    }

    /// Write a generated certificate's CA where asked (or beside the other temporary files,
    /// named by the server's `port`), and say where: nothing to do for a certificate given.
    pub(crate) fn write_ca(&self, tls: &ServerTls, port: u16) -> anyhow::Result<Option<PathBuf>> {
        if tls.ca_pem().is_none() {
            return Ok(None);
        }
        let path =
            self.tls_ca_out.clone().unwrap_or_else(|| std::env::temp_dir().join(format!("squall-ca-{port}.pem")));
        let written = tls.write_ca(&path).with_context(|| format!("--tls-ca-out {}", Path::display(&path)))?;
        Ok(Some(written))
    }
}
