//! The security settings: where the identities are kept, and whether a server reachable
//! from the network may run without any (`insecure_open`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use super::RawConfig;

/// Where identities live and what a server without any may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecurityConfig {
    /// The identities file; `None`: `identities.toml` in the data directory
    /// ([`SecurityConfig::identities_path`]).
    pub identities: Option<PathBuf>,
    /// Serve everyone on a non-loopback address with no identities, on purpose.
    pub insecure_open: bool,
}

pub(super) fn from_raw(raw: &RawConfig) -> SecurityConfig {
    SecurityConfig {
        identities: raw.identities.as_ref().map(PathBuf::from),
        insecure_open: raw.insecure_open.unwrap_or(false),
    }
}

impl SecurityConfig {
    /// The identities file for a server whose data directory is `data_dir`.
    pub fn identities_path(&self, data_dir: &Path) -> PathBuf {
        self.identities
            .clone()
            .unwrap_or_else(|| crate::auth::store::default_path(data_dir))
    }

    /// Says why this server may not take cluster routes on `listen`, if it may not: without
    /// a cluster secret (`secret`: whether there is one) routes are not authenticated, so
    /// beyond loopback anyone who reaches the port could join the cluster — identities or
    /// not — unless `insecure_open` says that is meant.
    pub fn refuse_routes(&self, listen: SocketAddr, secret: bool) -> Option<String> {
        if secret || self.insecure_open || listen.ip().is_loopback() {
            return None;
        }
        Some(format!(
            "refusing to serve cluster routes on {listen} with no cluster secret: anyone who \
             can reach the port could join the cluster, publish and change every information \
             object, whatever identities the clients need. Give every member the same secret \
             (`[cluster] secret_file`, --cluster-secret-file, HERALD_CLUSTER_SECRET_FILE; make \
             one with `head -c 32 /dev/urandom | base64 > cluster.secret`), or keep the route \
             listener on a trusted network and say so with --insecure-open (insecure_open = \
             true, HERALD_INSECURE_OPEN=true)."
        ))
    }

    /// Says why a server without identities may not serve on `addresses`, if it may not:
    /// one of them is reachable from beyond this machine and `insecure_open` is off.
    pub fn refuse_open(
        &self,
        addresses: &[(&str, SocketAddr)],
        identities: &Path,
    ) -> Option<String> {
        if self.insecure_open {
            return None;
        }
        let (what, exposed) = addresses.iter().find(|(_, a)| !a.ip().is_loopback())?;
        Some(format!(
            "refusing to serve {what} on {exposed} with no identities: anyone who can reach it \
             could publish, subscribe and change every information object. Either add an \
             identity and give its token to the clients (`herald token new NAME --identities {} \
             --publish '*' --subscribe '*' --info-read '*' --info-write '*' --query`), or \
             accept an open server on purpose with --insecure-open (insecure_open = true, \
             HERALD_INSECURE_OPEN=true). Loopback addresses (127.0.0.1, ::1) are served open.",
            identities.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(insecure_open: bool) -> SecurityConfig {
        SecurityConfig {
            identities: None,
            insecure_open,
        }
    }

    #[test]
    fn routes_beyond_loopback_need_a_secret_or_insecure_open_whatever_the_identities() {
        let any: SocketAddr = "0.0.0.0:7401".parse().unwrap();
        let loopback: SocketAddr = "127.0.0.1:7401".parse().unwrap();
        let refusal = config(false).refuse_routes(any, false).unwrap();
        assert!(
            refusal.contains("cluster routes on 0.0.0.0:7401 with no cluster secret"),
            "{refusal}"
        );
        assert!(refusal.contains("--cluster-secret-file"), "{refusal}");
        assert_eq!(config(false).refuse_routes(loopback, false), None);
        assert_eq!(config(true).refuse_routes(any, false), None);
        assert_eq!(
            config(false).refuse_routes(any, true),
            None,
            "a secret guards them"
        );
    }

    #[test]
    fn only_loopback_is_served_open_unless_asked() {
        let loopback: SocketAddr = "127.0.0.1:7400".parse().unwrap();
        let v6: SocketAddr = "[::1]:7480".parse().unwrap();
        let any: SocketAddr = "0.0.0.0:7480".parse().unwrap();
        assert_eq!(
            config(false).refuse_open(&[("native", loopback), ("http", v6)], Path::new("i.toml")),
            None
        );
        let refusal = config(false)
            .refuse_open(&[("native", loopback), ("HTTP", any)], Path::new("i.toml"))
            .unwrap();
        assert!(refusal.contains("HTTP on 0.0.0.0:7480"), "{refusal}");
        assert!(refusal.contains("herald token new"), "{refusal}");
        assert!(refusal.contains("--insecure-open"), "{refusal}");
        assert_eq!(
            config(true).refuse_open(&[("HTTP", any)], Path::new("i.toml")),
            None
        );
    }
}
