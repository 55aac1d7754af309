//! The TLS settings: a certificate and key make both front doors (the native port and
//! HTTP/WebSocket) speak TLS; a client CA file lets clients present certificates (mutual
//! TLS), which may be required. The files are read by [`crate::tls`], again when they change.

use std::path::PathBuf;

use super::{invalid, ConfigError, RawConfig};

/// Whether clients must present a certificate, when a client CA is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientAuth {
    /// A client may present a certificate signed by the client CA; one without any still
    /// connects (and authenticates with a token, or not at all on an open server).
    #[default]
    Optional,
    /// The TLS handshake fails for a client without a certificate signed by the client CA.
    Required,
}

/// TLS for both front doors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsConfig {
    /// The server's certificate chain (PEM), leaf first.
    pub cert: PathBuf,
    /// The certificate's private key (PEM: PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// CA certificates (PEM) that sign client certificates; `None`: clients present none.
    pub client_ca: Option<PathBuf>,
    /// Whether a client certificate is required (only with `client_ca`).
    pub client_auth: ClientAuth,
}

/// Reads `tls_cert`, `tls_key`, `tls_client_ca` and `tls_client_auth`; `None` without a
/// certificate (plain TCP).
///
/// # Errors
/// [`ConfigError::Invalid`]: one of a pair without the other, a client setting without a
/// certificate, or an unknown `tls_client_auth`.
pub(super) fn from_raw(raw: &RawConfig) -> Result<Option<TlsConfig>, ConfigError> {
    let client_auth = match raw.tls_client_auth.as_deref() {
        None | Some("optional") => ClientAuth::Optional,
        Some("required") => ClientAuth::Required,
        Some(other) => {
            return Err(invalid(
                "tls_client_auth",
                format!("`{other}` (expected optional or required)"),
            ))
        }
    };
    let (cert, key) = match (&raw.tls_cert, &raw.tls_key) {
        (Some(cert), Some(key)) => (PathBuf::from(cert), PathBuf::from(key)),
        (Some(_), None) => {
            return Err(invalid(
                "tls_key",
                "missing: tls_cert needs the certificate's private key as tls_key".to_string(),
            ))
        }
        (None, Some(_)) => {
            return Err(invalid(
                "tls_cert",
                "missing: tls_key needs its certificate chain as tls_cert".to_string(),
            ))
        }
        (None, None) => {
            if raw.tls_client_ca.is_some() {
                return Err(invalid(
                    "tls_client_ca",
                    "needs tls_cert and tls_key: client certificates are checked only over TLS"
                        .to_string(),
                ));
            }
            if raw.tls_client_auth.is_some() {
                return Err(invalid(
                    "tls_client_auth",
                    "needs tls_cert, tls_key and tls_client_ca".to_string(),
                ));
            }
            return Ok(None);
        }
    };
    let client_ca = raw.tls_client_ca.as_ref().map(PathBuf::from);
    if client_ca.is_none() && client_auth == ClientAuth::Required {
        return Err(invalid(
            "tls_client_auth",
            "`required` needs tls_client_ca, the CA that signs the client certificates".to_string(),
        ));
    }
    Ok(Some(TlsConfig {
        cert,
        key,
        client_ca,
        client_auth,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(
        cert: Option<&str>,
        key: Option<&str>,
        ca: Option<&str>,
        auth: Option<&str>,
    ) -> RawConfig {
        RawConfig {
            tls_cert: cert.map(Into::into),
            tls_key: key.map(Into::into),
            tls_client_ca: ca.map(Into::into),
            tls_client_auth: auth.map(Into::into),
            ..RawConfig::default()
        }
    }

    #[test]
    fn a_pair_turns_tls_on_and_client_settings_need_it() {
        assert_eq!(from_raw(&raw(None, None, None, None)).unwrap(), None);
        let tls = from_raw(&raw(
            Some("c.pem"),
            Some("k.pem"),
            Some("ca.pem"),
            Some("required"),
        ))
        .unwrap()
        .unwrap();
        assert_eq!(tls.client_auth, ClientAuth::Required);
        assert_eq!(tls.client_ca, Some(PathBuf::from("ca.pem")));
        let message = |raw: RawConfig| from_raw(&raw).unwrap_err().to_string();
        assert!(message(raw(Some("c"), None, None, None)).contains("`tls_key`: missing"));
        assert!(message(raw(None, Some("k"), None, None)).contains("`tls_cert`: missing"));
        assert!(message(raw(None, None, Some("ca"), None)).contains("needs tls_cert"));
        assert!(message(raw(Some("c"), Some("k"), None, Some("required")))
            .contains("needs tls_client_ca"));
        assert!(
            message(raw(Some("c"), Some("k"), Some("ca"), Some("always")))
                .contains("`always` (expected optional or required)")
        );
    }
}
