//! What guards the routes, read before the server binds ([`crate::Server::preflight`]):
//! the cluster secret ([`super::secret`]) and TLS to the other members' route listeners;
//! and how the banner and `--check-config` say so.

use super::secret::RouteSecret;
use crate::config::{ClusterConfig, RouteTls};

/// What guards the routes, read before the server binds ([`crate::Server::preflight`]).
#[derive(Debug, Default)]
pub struct RouteGuards {
    /// The cluster secret (`secret_file`).
    pub secret: Option<RouteSecret>,
    /// TLS to the other members, checking their certificates against `ca`.
    pub tls: Option<herald_client::tls::Tls>,
}

impl RouteGuards {
    /// Reads the files `config` names: the secret, the CA of the members' certificates.
    ///
    /// # Errors
    /// A message naming the file that cannot be read or used.
    pub fn load(config: &ClusterConfig) -> Result<RouteGuards, String> {
        let secret = match &config.secret_file {
            None => None,
            Some(path) => Some(RouteSecret::load(path)?),
        };
        let tls = match &config.tls {
            None => None,
            Some(RouteTls { ca }) => {
                let options = herald_client::TlsOptions {
                    ca_file: ca.clone(),
                    client_cert: None,
                };
                let tls = herald_client::tls::Tls::new(&options);
                Some(tls.map_err(|err| format!("TLS on routes (cluster.ca): {err}"))?)
            }
        };
        Ok(RouteGuards { secret, tls })
    }
}

/// Says how routes are guarded, for the server's banner and `--check-config`.
pub fn describe_routes(config: &ClusterConfig) -> String {
    let secret = match &config.secret_file {
        Some(path) => format!(
            "members prove they know the cluster secret in {}",
            path.display()
        ),
        None => "not authenticated (no cluster secret): keep the route listener on loopback or \
                 a trusted network"
            .to_string(),
    };
    match &config.tls {
        None => secret,
        Some(RouteTls { ca }) => {
            let ca = ca
                .as_ref()
                .map_or("the system's trust store".to_string(), |ca| {
                    ca.display().to_string()
                });
            format!("{secret}; TLS, the other members' certificates checked against {ca}")
        }
    }
}
