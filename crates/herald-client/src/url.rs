//! Server URLs: `herald://host:port[,host2:port2…][?name=…&token=…]`, and
//! `herald+tls://…[?ca=…&cert=…&key=…]` for TLS (see [`TlsOptions`]).

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use crate::tls::TlsOptions;

/// Port used when a server in the URL names none.
pub const DEFAULT_PORT: u16 = 7400;
/// URL used when none is given.
pub const DEFAULT_URL: &str = "herald://127.0.0.1:7400";

/// A parsed server URL: one or more servers to try in order, and connection options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerUrl {
    /// `host:port` of each server, in the order to try them.
    pub servers: Vec<String>,
    /// Client name (`?name=`).
    pub name: Option<String>,
    /// Authentication token (`?token=`).
    pub token: Option<String>,
    /// TLS to every server (`herald+tls://`, with `?ca=`, `?cert=` and `?key=`).
    pub tls: Option<TlsOptions>,
}

/// Why a URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad server URL `{url}`: {reason}")]
pub struct UrlError {
    /// The URL as given.
    pub url: String,
    /// What is wrong with it.
    pub reason: String,
}

impl FromStr for ServerUrl {
    type Err = UrlError;

    fn from_str(url: &str) -> Result<Self, Self::Err> {
        let bad = |reason: String| UrlError {
            url: url.to_string(),
            reason,
        };
        let (tls, rest) = match url.split_once("://") {
            Some(("herald", rest)) => (false, rest),
            Some(("herald+tls", rest)) => (true, rest),
            Some((scheme, _)) => {
                return Err(bad(format!(
                    "scheme `{scheme}` is not herald:// or herald+tls://"
                )))
            }
            None => (false, url),
        };
        let (hosts, query) = rest.split_once('?').unwrap_or((rest, ""));
        let hosts = hosts.trim_end_matches('/');
        if hosts.is_empty() {
            return Err(bad(
                "no server named (expected herald://host:port)".to_string()
            ));
        }
        let mut servers = Vec::new();
        for host in hosts.split(',') {
            servers.push(parse_host(host).map_err(bad)?);
        }
        let mut parsed = ServerUrl {
            servers,
            name: None,
            token: None,
            tls: None,
        };
        let (mut ca, mut cert, mut key) = (None, None, None);
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (option, value) = pair.split_once('=').unwrap_or((pair, ""));
            match option {
                "name" => parsed.name = Some(value.to_string()),
                "token" => parsed.token = Some(value.to_string()),
                "ca" => ca = Some(PathBuf::from(value)),
                "cert" => cert = Some(PathBuf::from(value)),
                "key" => key = Some(PathBuf::from(value)),
                _ => {
                    return Err(bad(format!(
                        "unknown option `{option}` (expected name, token, ca, cert or key)"
                    )))
                }
            }
            if !tls && matches!(option, "ca" | "cert" | "key") {
                return Err(bad(format!("`{option}` needs herald+tls://")));
            }
        }
        let client_cert = match (cert, key) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            (Some(_), None) => {
                return Err(bad("`cert` without `key` (mutual TLS needs both)".into()))
            }
            (None, Some(_)) => {
                return Err(bad("`key` without `cert` (mutual TLS needs both)".into()))
            }
        };
        if tls {
            parsed.tls = Some(TlsOptions {
                ca_file: ca,
                client_cert,
            });
        }
        Ok(parsed)
    }
}

fn parse_host(host: &str) -> Result<String, String> {
    if host.is_empty() {
        return Err("empty server between commas".to_string());
    }
    let (name, port) = if let Some(close) = host.strip_prefix('[').and_then(|_| host.find(']')) {
        let (name, rest) = host.split_at(close + 1);
        match rest.strip_prefix(':') {
            Some(port) => (name, Some(port)),
            None if rest.is_empty() => (name, None),
            None => return Err(format!("unexpected `{rest}` after `{name}`")),
        }
    } else if host.matches(':').count() > 1 {
        return Err(format!(
            "IPv6 address `{host}` needs brackets, as in [::1]:7400"
        ));
    } else {
        match host.split_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        }
    };
    if name.is_empty() {
        return Err(format!("server `{host}` has no host name"));
    }
    let port = match port {
        None => DEFAULT_PORT,
        Some(port) => port
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| format!("bad port `{port}` in `{host}`"))?,
    };
    Ok(format!("{name}:{port}"))
}

impl fmt::Display for ServerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = match self.tls {
            Some(_) => "herald+tls",
            None => "herald",
        };
        write!(f, "{scheme}://{}", self.servers.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_servers_and_options() {
        let url: ServerUrl = "herald://h1:7400,h2?name=mount&token=t".parse().unwrap();
        assert_eq!(url.servers, ["h1:7400", "h2:7400"]);
        assert_eq!(url.name.as_deref(), Some("mount"));
        assert_eq!(url.token.as_deref(), Some("t"));
        let bare: ServerUrl = "127.0.0.1:9000".parse().unwrap();
        assert_eq!(bare.servers, ["127.0.0.1:9000"]);
        let v6: ServerUrl = "herald://[::1]:7401".parse().unwrap();
        assert_eq!(v6.servers, ["[::1]:7401"]);
        assert_eq!(url.tls, None);
        let tls: ServerUrl = "herald+tls://h1?ca=/etc/ca.pem&cert=c.pem&key=k.pem&token=t"
            .parse()
            .unwrap();
        let options = tls.tls.clone().unwrap();
        assert_eq!(options.ca_file, Some(PathBuf::from("/etc/ca.pem")));
        assert_eq!(
            options.client_cert,
            Some((PathBuf::from("c.pem"), PathBuf::from("k.pem")))
        );
        assert_eq!(tls.to_string(), "herald+tls://h1:7400");
        let system: ServerUrl = "herald+tls://h1".parse().unwrap();
        assert_eq!(system.tls, Some(TlsOptions::default()));
    }

    #[test]
    fn errors_name_the_problem() {
        let err = "http://x:1".parse::<ServerUrl>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "bad server URL `http://x:1`: scheme `http` is not herald:// or herald+tls://"
        );
        let err = "herald://x:port".parse::<ServerUrl>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "bad server URL `herald://x:port`: bad port `port` in `x:port`"
        );
        let err = "herald://x?nmae=1".parse::<ServerUrl>().unwrap_err();
        assert!(err
            .to_string()
            .ends_with("unknown option `nmae` (expected name, token, ca, cert or key)"));
        let err = "herald://x?ca=ca.pem".parse::<ServerUrl>().unwrap_err();
        assert!(
            err.to_string().ends_with("`ca` needs herald+tls://"),
            "{err}"
        );
        let err = "herald+tls://x?cert=c.pem"
            .parse::<ServerUrl>()
            .unwrap_err();
        assert!(err
            .to_string()
            .ends_with("`cert` without `key` (mutual TLS needs both)"));
        assert!("herald://".parse::<ServerUrl>().is_err());
        assert!("herald://a,,b".parse::<ServerUrl>().is_err());
    }
}
