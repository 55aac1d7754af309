//! The `[cluster]` section: this server as a member of a cloud of servers — the cluster's
//! name, the address of its route listener (another port than the clients'), the address
//! the others reach it by, and seed routes to members already running.

use std::net::SocketAddr;

use serde::Deserialize;

use super::{invalid, resolve, ConfigError};

/// Default port of the route listener.
pub const DEFAULT_ROUTE_PORT: u16 = 7401;

/// Keys of the `[cluster]` section; `HERALD_CLUSTER_<KEY>` sets them too (`routes` as a
/// comma-separated list).
pub const CLUSTER_KEYS: [&str; 4] = ["name", "listen", "advertise", "routes"];

/// The section as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawClusterConfig {
    /// The cluster's name; members of different clusters refuse each other's routes.
    pub name: Option<String>,
    /// Address of the route listener.
    pub listen: Option<String>,
    /// `host:port` the other members reach this one by (default: `listen`).
    pub advertise: Option<String>,
    /// Members to join through: `herald://host:port` of their route listeners.
    pub routes: Option<Vec<String>>,
}

/// This server's place in a cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterConfig {
    /// The cluster's name.
    pub name: String,
    /// Where the route listener binds.
    pub listen: SocketAddr,
    /// What the other members are told to connect to; `None`: the listener's bound address.
    pub advertise: Option<String>,
    /// `host:port` of each seed member's route listener.
    pub routes: Vec<String>,
}

/// Reads the section; `None` without one (a single server).
///
/// # Errors
/// [`ConfigError::Invalid`] naming the key: no name, a bad address, a bad seed URL.
pub(super) fn from_raw(
    raw: Option<RawClusterConfig>,
) -> Result<Option<ClusterConfig>, ConfigError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let name = raw.name.filter(|n| !n.trim().is_empty()).ok_or_else(|| {
        invalid(
            "cluster",
            "[cluster] needs a `name`, the same on every member (HERALD_CLUSTER_NAME)".to_string(),
        )
    })?;
    let default_listen = format!("127.0.0.1:{DEFAULT_ROUTE_PORT}");
    let listen = raw.listen.as_deref().unwrap_or(&default_listen);
    let listen = resolve("cluster", listen, &default_listen)?;
    let mut routes = Vec::new();
    for url in raw.routes.unwrap_or_default() {
        routes.push(seed(&url)?);
    }
    Ok(Some(ClusterConfig {
        name,
        listen,
        advertise: raw.advertise.filter(|a| !a.is_empty()),
        routes,
    }))
}

/// `host:port` of a seed given as `herald://host:port` (or bare `host:port`).
fn seed(url: &str) -> Result<String, ConfigError> {
    let bad = |why: &str| {
        invalid(
            "cluster",
            format!(
                "route `{url}` {why} (expected herald://host:port of a member's route listener)"
            ),
        )
    };
    let rest = url.strip_prefix("herald://").unwrap_or(url);
    if rest.contains("://") {
        return Err(bad("is not a herald:// URL"));
    }
    let rest = rest.trim_end_matches('/');
    let Some((host, port)) = rest.rsplit_once(':') else {
        return Err(bad("names no port"));
    };
    if host.is_empty() || port.parse::<u16>().map_or(true, |p| p == 0) {
        return Err(bad("is not host:port"));
    }
    Ok(rest.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_needs_a_name_and_takes_seed_urls() {
        assert_eq!(from_raw(None).unwrap(), None);
        let err = from_raw(Some(RawClusterConfig::default()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("needs a `name`"), "{err}");
        let config = from_raw(Some(RawClusterConfig {
            name: Some("site".into()),
            routes: Some(vec!["herald://127.0.0.1:7401".into(), "h2:7411".into()]),
            ..RawClusterConfig::default()
        }))
        .unwrap()
        .unwrap();
        assert_eq!(config.listen.port(), DEFAULT_ROUTE_PORT);
        assert_eq!(config.routes, ["127.0.0.1:7401", "h2:7411"]);
        let err = from_raw(Some(RawClusterConfig {
            name: Some("site".into()),
            routes: Some(vec!["http://x:1".into()]),
            ..RawClusterConfig::default()
        }))
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("route `http://x:1` is not a herald:// URL"),
            "{err}"
        );
    }
}
