//! TLS on both front doors, with rustls on ring: the server's certificate and key, and,
//! for mutual TLS, the CA that signs client certificates. The files are read again when
//! they change ([`Tls::reload_if_changed`], polled by [`watch`]): a new connection gets the
//! new certificate, connections already open keep theirs and are not dropped.

pub mod dev;
pub mod dial;
pub mod peer;
pub mod session;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwap;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use tokio_rustls::TlsAcceptor;

use crate::config::{ClientAuth, TlsConfig};
use crate::shutdown::Shutdown;

/// How often the certificate, key and client CA files are looked at.
pub const FILES_POLL: Duration = Duration::from_secs(1);

/// Why the TLS files could not be used; the message names the file and the problem.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TlsError(String);

/// The server's TLS settings as last read, swapped whole when the files change.
#[derive(Debug)]
pub struct Tls {
    settings: TlsConfig,
    current: ArcSwap<ServerConfig>,
    /// The same certificate for cluster routes, which ask for no client certificate (the
    /// members prove the cluster secret instead).
    routes: ArcSwap<ServerConfig>,
    /// The files' bytes when last read: certificate, key, client CA.
    last: Mutex<[Option<Vec<u8>>; 3]>,
}

impl Tls {
    /// Reads the files `settings` names.
    ///
    /// # Errors
    /// [`TlsError`] naming the file that is missing, empty or not what it should be, or a
    /// key that does not match the certificate.
    pub fn load(settings: &TlsConfig) -> Result<Tls, TlsError> {
        let files = read_files(settings);
        let config = build(settings, &files, true)?;
        let routes = build(settings, &files, false)?;
        Ok(Tls {
            settings: settings.clone(),
            current: ArcSwap::from_pointee(config),
            routes: ArcSwap::from_pointee(routes),
            last: Mutex::new(files),
        })
    }

    /// An acceptor with the current certificate, for one new connection.
    pub fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(self.current.load_full())
    }

    /// An acceptor with the current certificate for one cluster route, which asks for no
    /// client certificate.
    pub fn route_acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(self.routes.load_full())
    }

    /// An acceptor that offers HTTP/2 by ALPN, as gRPC clients require.
    pub fn acceptor_h2(&self) -> TlsAcceptor {
        let mut config = (*self.current.load_full()).clone();
        config.alpn_protocols = vec![b"h2".to_vec()];
        TlsAcceptor::from(Arc::new(config))
    }

    /// Says how the server speaks TLS, for its banner.
    pub fn describe(&self) -> String {
        let clients = match (&self.settings.client_ca, self.settings.client_auth) {
            (None, _) => "no client certificates".to_string(),
            (Some(ca), ClientAuth::Optional) => {
                format!("client certificates signed by {} accepted", ca.display())
            }
            (Some(ca), ClientAuth::Required) => {
                format!("client certificates signed by {} required", ca.display())
            }
        };
        format!(
            "TLS with {} (native and HTTP; {clients}); reloaded when the files change",
            self.settings.cert.display()
        )
    }

    /// Reads the files again if any changed since they were last read; returns true if the
    /// new ones were taken. Connections already open keep the certificate they had.
    ///
    /// # Errors
    /// [`TlsError`] when the changed files do not make a valid configuration (the old one
    /// stays; a certificate and key replaced one after the other mismatch for a moment).
    pub fn reload_if_changed(&self) -> Result<bool, TlsError> {
        let files = read_files(&self.settings);
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if *last == files {
            return Ok(false);
        }
        let config = build(&self.settings, &files, true);
        let routes = build(&self.settings, &files, false);
        *last = files;
        self.current.store(Arc::new(config?));
        self.routes.store(Arc::new(routes?));
        Ok(true)
    }
}

fn read_files(settings: &TlsConfig) -> [Option<Vec<u8>>; 3] {
    let read = |path: &Path| std::fs::read(path).ok();
    [
        read(&settings.cert),
        read(&settings.key),
        settings.client_ca.as_deref().and_then(read),
    ]
}

/// Builds the rustls configuration from the files' bytes (`files` as [`read_files`] reads),
/// with the client CA when `clients` (the front doors) and without (routes).
fn build(
    settings: &TlsConfig,
    files: &[Option<Vec<u8>>; 3],
    clients: bool,
) -> Result<ServerConfig, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certs = certificates(&settings.cert, files[0].as_deref(), "tls_cert")?;
    let key = private_key(&settings.key, files[1].as_deref())?;
    let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|err| TlsError(format!("TLS versions: {err}")))?;
    let builder = match settings.client_ca.as_ref().filter(|_| clients) {
        None => builder.with_no_client_auth(),
        Some(path) => {
            let mut roots = RootCertStore::empty();
            for cert in certificates(path, files[2].as_deref(), "tls_client_ca")? {
                roots
                    .add(cert)
                    .map_err(|err| TlsError(format!("tls_client_ca {}: {err}", path.display())))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            let verifier = match settings.client_auth {
                ClientAuth::Optional => verifier.allow_unauthenticated(),
                ClientAuth::Required => verifier,
            };
            let verifier = verifier
                .build()
                .map_err(|err| TlsError(format!("tls_client_ca {}: {err}", path.display())))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    builder.with_single_cert(certs, key).map_err(|err| {
        TlsError(format!(
            "tls_key {} does not go with tls_cert {}: {err}",
            settings.key.display(),
            settings.cert.display()
        ))
    })
}

fn certificates(
    path: &Path,
    bytes: Option<&[u8]>,
    key: &str,
) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bytes = readable(path, bytes, key)?;
    let certs = CertificateDer::pem_slice_iter(bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| TlsError(format!("{key} {}: not PEM: {err}", path.display())))?;
    if certs.is_empty() {
        return Err(TlsError(format!(
            "{key} {}: no certificate in it (expected PEM `-----BEGIN CERTIFICATE-----`)",
            path.display()
        )));
    }
    Ok(certs)
}

fn private_key(path: &Path, bytes: Option<&[u8]>) -> Result<PrivateKeyDer<'static>, TlsError> {
    let bytes = readable(path, bytes, "tls_key")?;
    PrivateKeyDer::from_pem_slice(bytes).map_err(|err| {
        TlsError(format!(
            "tls_key {}: no private key in it (expected PEM `-----BEGIN PRIVATE KEY-----`, \
             RSA or EC): {err}",
            path.display()
        ))
    })
}

fn readable<'a>(path: &Path, bytes: Option<&'a [u8]>, key: &str) -> Result<&'a [u8], TlsError> {
    bytes.ok_or_else(|| {
        let why = match std::fs::metadata(path) {
            Err(err) => err.to_string(),
            Ok(_) => "unreadable".to_string(),
        };
        TlsError(format!("{key} {}: {why}", path.display()))
    })
}

/// Reloads the TLS files when they change, until shutdown.
pub async fn watch(tls: Arc<Tls>, mut shutdown: Shutdown) {
    let mut tick = tokio::time::interval(FILES_POLL);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = shutdown.recv() => return,
        }
        match tls.reload_if_changed() {
            Ok(false) => {}
            Ok(true) => tracing::info!(
                "TLS files changed: new connections get the new certificate, open ones keep theirs"
            ),
            Err(err) => tracing::warn!(
                "the TLS files changed but do not make a valid configuration, so the server keeps \
                 the one it had: {err}"
            ),
        }
    }
}
