//! TLS to the server (`herald+tls://`), with rustls on ring: the server's certificate is
//! checked against a CA file (`?ca=`) or the system's trust store, and for the name the URL
//! gives; a client certificate and key (`?cert=`, `?key=`) make it mutual TLS.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

/// How to reach servers over TLS.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// CA certificates (PEM) the server's certificate must chain to; `None`: the system's
    /// trust store.
    pub ca_file: Option<PathBuf>,
    /// The client's certificate chain and private key (PEM), for mutual TLS.
    pub client_cert: Option<(PathBuf, PathBuf)>,
}

/// A TLS configuration ready for connections, built once per client (and by a server for
/// each connection of its feed to a mirror).
#[derive(Clone)]
pub struct Tls {
    connector: TlsConnector,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls").finish_non_exhaustive()
    }
}

impl Tls {
    /// Reads the files `options` names.
    ///
    /// # Errors
    /// A message naming the file that is missing or not what it should be.
    pub fn new(options: &TlsOptions) -> Result<Tls, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let roots = match &options.ca_file {
            Some(path) => {
                let mut roots = RootCertStore::empty();
                for cert in certificates(path, "CA file")? {
                    roots
                        .add(cert)
                        .map_err(|err| format!("CA file {}: {err}", path.display()))?;
                }
                roots
            }
            None => system_roots()?,
        };
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|err| format!("TLS versions: {err}"))?
            .with_root_certificates(roots);
        let config = match &options.client_cert {
            None => builder.with_no_client_auth(),
            Some((cert, key_file)) => {
                let chain = certificates(cert, "client certificate")?;
                let key = PrivateKeyDer::from_pem_file(key_file).map_err(|err| {
                    format!(
                        "client key {}: no private key in PEM: {err}",
                        key_file.display()
                    )
                })?;
                builder.with_client_auth_cert(chain, key).map_err(|err| {
                    format!(
                        "client key {} does not go with certificate {}: {err}",
                        key_file.display(),
                        cert.display()
                    )
                })?
            }
        };
        Ok(Tls {
            connector: TlsConnector::from(Arc::new(config)),
        })
    }

    /// Completes a TLS handshake with `server` (`host:port`) over `stream`.
    ///
    /// # Errors
    /// A message saying why, with a hint where the likely cause is known.
    pub async fn connect(
        &self,
        server: &str,
        stream: TcpStream,
    ) -> Result<TlsStream<TcpStream>, String> {
        let host = host_of(server);
        let name = ServerName::try_from(host.to_string())
            .map_err(|_| format!("`{host}` is not a host name or IP address TLS can check"))?;
        self.connector
            .connect(name, stream)
            .await
            .map_err(|err| format!("TLS handshake failed: {err}{}", hint(&err.to_string())))
    }
}

/// The host of `host:port` (`[::1]:7400` gives `::1`).
fn host_of(server: &str) -> &str {
    let host = server.rsplit_once(':').map_or(server, |(host, _)| host);
    host.trim_start_matches('[').trim_end_matches(']')
}

/// What to try, for TLS failures whose cause is usual (empty for others).
pub(crate) fn hint(error: &str) -> &'static str {
    if error.contains("InvalidContentType") || error.contains("corrupt message") {
        " (does the server speak TLS on this port? a plain server is reached with herald://)"
    } else if error.contains("UnknownIssuer") {
        " (the server's certificate is not signed by a CA this client trusts: give its CA as ?ca=FILE)"
    } else if error.contains("BadSignature") {
        " (the server's certificate does not verify against the CA given: is ?ca= the CA that signed it?)"
    } else if error.contains("CertificateRequired") {
        " (the server requires a client certificate: give ?cert=FILE&key=FILE)"
    } else if error.contains("NotValidForName") {
        " (the certificate does not name the host in the URL: use a name it was made for)"
    } else {
        ""
    }
}

fn certificates(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let bytes = std::fs::read(path).map_err(|err| format!("{what} {}: {err}", path.display()))?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| format!("{what} {}: not PEM: {err}", path.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "{what} {}: no certificate in it (expected PEM `-----BEGIN CERTIFICATE-----`)",
            path.display()
        ));
    }
    Ok(certs)
}

fn system_roots() -> Result<RootCertStore, String> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        return Err(format!(
            "no CA certificates in the system's trust store ({}): give the server's CA as \
             ?ca=FILE",
            found
                .errors
                .first()
                .map_or("none found".to_string(), ToString::to_string)
        ));
    }
    Ok(roots)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_is_what_the_certificate_must_name() {
        assert_eq!(host_of("broker.site:7400"), "broker.site");
        assert_eq!(host_of("127.0.0.1:7400"), "127.0.0.1");
        assert_eq!(host_of("[::1]:7400"), "::1");
    }

    #[test]
    fn a_missing_file_is_named() {
        let options = TlsOptions {
            ca_file: Some(PathBuf::from("/nonexistent/ca.pem")),
            client_cert: None,
        };
        let err = Tls::new(&options).unwrap_err();
        assert!(err.starts_with("CA file /nonexistent/ca.pem: "), "{err}");
    }
}
