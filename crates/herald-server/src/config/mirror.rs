//! `[[mirror]]`: a one-way mirror this server feeds. The source connects out to the mirror's
//! client port (so a mirror on a public network needs no way into the control network) and
//! streams the records of some subjects and the information objects of some names, which
//! the mirror then holds read-only (docs/cluster.md, "Mirrors").

use std::path::PathBuf;

use herald_client::TlsOptions;
use herald_proto::glob::Glob;
use serde::Deserialize;

use super::{invalid, ConfigError};

/// One `[[mirror]]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMirror {
    /// The mirror's client port: `herald://host:port`, or `herald+tls://host:port`.
    pub to: Option<String>,
    /// With `herald+tls://`: the CA file (PEM) the mirror's certificate must chain to
    /// (default: the system's trust store).
    pub ca: Option<String>,
    /// With `herald+tls://`: this server's certificate chain (PEM), when the mirror takes
    /// client certificates.
    pub cert: Option<String>,
    /// The private key of `cert` (PEM).
    pub key: Option<String>,
    /// Globs of the subjects whose records are streamed.
    pub subjects: Option<Vec<String>>,
    /// Globs of the information objects streamed.
    pub objects: Option<Vec<String>>,
    /// The token of this server's identity on the mirror, if it has identities.
    pub token: Option<String>,
}

/// A mirror this server feeds. Its `Debug` form (what `herald serve --check-config`
/// prints) hides the token.
#[derive(Clone, PartialEq, Eq)]
pub struct MirrorConfig {
    /// `host:port` of the mirror's client port.
    pub to: String,
    /// TLS to the mirror (`to` = `herald+tls://…`); `None`: plain TCP.
    pub tls: Option<TlsOptions>,
    /// Subjects whose records are streamed.
    pub subjects: Vec<Glob>,
    /// Information objects streamed.
    pub objects: Vec<Glob>,
    /// The token presented to the mirror (`""`: none).
    pub token: String,
}

impl std::fmt::Debug for MirrorConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let token = if self.token.is_empty() {
            "none"
        } else {
            "(set, not shown)"
        };
        f.debug_struct("MirrorConfig")
            .field("to", &self.to)
            .field("tls", &self.tls)
            .field("subjects", &self.subjects)
            .field("objects", &self.objects)
            .field("token", &format_args!("{token}"))
            .finish()
    }
}

/// Checks the `[[mirror]]` sections.
///
/// # Errors
/// [`ConfigError::Invalid`] naming the mirror and what is wrong.
pub(super) fn from_raw(raw: Option<Vec<RawMirror>>) -> Result<Vec<MirrorConfig>, ConfigError> {
    let mut mirrors = Vec::new();
    for (index, raw) in raw.unwrap_or_default().into_iter().enumerate() {
        let at = |what: String| invalid("mirror", format!("mirror {}: {what}", index + 1));
        let to = raw.to.unwrap_or_default();
        let (tls, address) = match to.strip_prefix("herald+tls://") {
            Some(address) => (true, address),
            None => (false, to.strip_prefix("herald://").unwrap_or(&to)),
        };
        let address = address.trim_end_matches('/');
        let valid = address.rsplit_once(':').is_some_and(|(host, port)| {
            !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0)
        });
        if !valid || address.contains("://") || address.contains('?') {
            return Err(at(format!(
                "`to` = `{to}` is not herald://host:port or herald+tls://host:port (the \
                 mirror's client port; its CA, certificate and token are the keys `ca`, \
                 `cert`, `key` and `token`)"
            )));
        }
        let tls = mirror_tls(tls, raw.ca, raw.cert, raw.key).map_err(at)?;
        let globs = |key: &str, list: Option<Vec<String>>| -> Result<Vec<Glob>, ConfigError> {
            list.unwrap_or_default()
                .iter()
                .map(|g| Glob::new(g).map_err(|err| at(format!("`{key}` names `{g}`: {err}"))))
                .collect()
        };
        let subjects = globs("subjects", raw.subjects)?;
        let objects = globs("objects", raw.objects)?;
        if subjects.is_empty() && objects.is_empty() {
            return Err(at(
                "streams nothing: give `subjects` or `objects` (globs such as \"ANTENNA.*\")"
                    .to_string(),
            ));
        }
        mirrors.push(MirrorConfig {
            to: address.to_string(),
            tls,
            subjects,
            objects,
            token: raw.token.unwrap_or_default(),
        });
    }
    Ok(mirrors)
}

/// The TLS options of a mirror whose `to` is `herald+tls://` (`tls`), from its `ca`, `cert`
/// and `key`; `None` for plain TCP, which takes none of them.
fn mirror_tls(
    tls: bool,
    ca: Option<String>,
    cert: Option<String>,
    key: Option<String>,
) -> Result<Option<TlsOptions>, String> {
    if !tls {
        return match [("ca", &ca), ("cert", &cert), ("key", &key)]
            .into_iter()
            .find(|(_, value)| value.is_some())
        {
            Some((name, _)) => Err(format!(
                "`{name}` is for TLS: write `to` as herald+tls://host:port"
            )),
            None => Ok(None),
        };
    }
    let client_cert = match (cert, key) {
        (Some(cert), Some(key)) => Some((PathBuf::from(cert), PathBuf::from(key))),
        (None, None) => None,
        (Some(_), None) => return Err("`cert` needs its private key as `key`".to_string()),
        (None, Some(_)) => return Err("`key` needs its certificate chain as `cert`".to_string()),
    };
    Ok(Some(TlsOptions {
        ca_file: ca.map(PathBuf::from),
        client_cert,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(to: &str, ca: Option<&str>, cert: Option<&str>, key: Option<&str>) -> RawMirror {
        RawMirror {
            to: Some(to.to_string()),
            ca: ca.map(Into::into),
            cert: cert.map(Into::into),
            key: key.map(Into::into),
            subjects: Some(vec!["A.*".to_string()]),
            ..RawMirror::default()
        }
    }

    #[test]
    fn herald_tls_takes_a_ca_and_a_client_certificate_and_plain_tcp_none() {
        let mirrors = from_raw(Some(vec![
            raw(
                "herald+tls://public.example.org:7400",
                Some("ca.pem"),
                None,
                None,
            ),
            raw("herald+tls://h:1", None, Some("c.pem"), Some("k.pem")),
            raw("herald://h:2", None, None, None),
        ]))
        .unwrap();
        assert_eq!(mirrors[0].to, "public.example.org:7400");
        let tls = mirrors[0].tls.as_ref().unwrap();
        assert_eq!(tls.ca_file, Some(PathBuf::from("ca.pem")));
        assert_eq!(tls.client_cert, None);
        let tls = mirrors[1].tls.as_ref().unwrap();
        assert_eq!(tls.ca_file, None, "the system's trust store");
        assert_eq!(
            tls.client_cert,
            Some((PathBuf::from("c.pem"), PathBuf::from("k.pem")))
        );
        assert_eq!(mirrors[2].tls, None);
        let error = |raw: RawMirror| from_raw(Some(vec![raw])).unwrap_err().to_string();
        assert!(error(raw("herald://h:1", Some("ca.pem"), None, None))
            .contains("mirror 1: `ca` is for TLS: write `to` as herald+tls://host:port"),);
        assert!(error(raw("herald+tls://h:1", None, Some("c.pem"), None))
            .contains("`cert` needs its private key as `key`"));
        assert!(error(raw("herald+tls://h:1?ca=x.pem", None, None, None))
            .contains("is not herald://host:port or herald+tls://host:port"));
    }

    #[test]
    fn the_printed_configuration_hides_the_token() {
        let mirror = MirrorConfig {
            to: "127.0.0.1:7400".into(),
            tls: None,
            subjects: Vec::new(),
            objects: Vec::new(),
            token: "hrd_secret".into(),
        };
        let printed = format!("{mirror:#?}");
        assert!(!printed.contains("hrd_secret"), "{printed}");
        assert!(printed.contains("(set, not shown)"), "{printed}");
    }
}
