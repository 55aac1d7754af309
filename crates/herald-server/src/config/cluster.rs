//! The `[cluster]` section: this server as a member of a cloud of servers — the cluster's
//! name, the address of its route listener (another port than the clients'), the address
//! the others reach it by, seed routes to members already running, the file of the secret
//! members prove to each other, and the namespaces of information objects
//! (`[[cluster.namespaces]]`) with their owners or the lease time.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use herald_proto::glob::Glob;
use serde::Deserialize;

use super::{duration, invalid, resolve, ConfigError, Quantity};

/// Default lease time of a namespace whose owner holds a lease in Cassandra.
pub const DEFAULT_LEASE_MS: u64 = 10_000;
/// Shortest lease: Cassandra's TTLs count whole seconds, and the lease is renewed every
/// quarter of it.
pub const MIN_LEASE: Duration = Duration::from_secs(4);

/// Default port of the route listener.
pub const DEFAULT_ROUTE_PORT: u16 = 7401;

/// Keys of the `[cluster]` section; `HERALD_CLUSTER_<KEY>` sets them too (`routes` as a
/// comma-separated list).
pub const CLUSTER_KEYS: [&str; 9] = [
    "name",
    "listen",
    "advertise",
    "routes",
    "lease",
    "hold",
    "secret_file",
    "tls",
    "ca",
];
/// Default time a link outlives its route's connection.
pub const DEFAULT_HOLD_MS: u64 = 30_000;

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
    /// How long a namespace's lease lasts without renewal (`10s`).
    pub lease: Option<Quantity>,
    /// How long a member keeps queuing for another whose route is down (`30s`).
    pub hold: Option<Quantity>,
    /// The file holding the cluster secret, the same on every member.
    pub secret_file: Option<String>,
    /// Routes speak TLS, with the server's certificate (`tls_cert`, `tls_key`).
    pub tls: Option<bool>,
    /// With `tls`: the CA file (PEM) the other members' certificates must chain to.
    pub ca: Option<String>,
    /// The namespaces of information objects.
    pub namespaces: Option<Vec<RawNamespace>>,
}

/// One `[[cluster.namespaces]]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawNamespace {
    /// Its name.
    pub name: Option<String>,
    /// Name globs of the objects it holds.
    pub names: Option<Vec<String>>,
    /// The member (server name) that owns it; none: a lease (archive on Cassandra).
    pub owner: Option<String>,
}

/// One namespace of information objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamespaceConfig {
    /// Its name (letters, digits, `_`, `-`, `.`).
    pub name: String,
    /// Globs of the object names it holds (the first namespace that takes a name has it).
    pub names: Vec<Glob>,
    /// The member that owns it; `None`: whoever holds its lease in Cassandra.
    pub owner: Option<String>,
}

/// TLS on routes: the listener speaks it with the server's certificate, a dialer checks the
/// other member's certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteTls {
    /// The CA file (PEM) the other members' certificates must chain to; `None`: the
    /// system's trust store.
    pub ca: Option<PathBuf>,
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
    /// How long a namespace's lease lasts without renewal.
    pub lease: Duration,
    /// How long a link outlives its route's connection, queuing for the far member.
    pub hold: Duration,
    /// The file of the secret every member proves it knows when a route starts
    /// (`crate::cluster::secret`); `None`: routes are not authenticated.
    pub secret_file: Option<PathBuf>,
    /// TLS on routes (`tls = true`); `None`: plain TCP.
    pub tls: Option<RouteTls>,
    /// The namespaces of information objects, in the order written.
    pub namespaces: Vec<NamespaceConfig>,
}

impl ClusterConfig {
    /// Cluster `name` with the route listener on `listen` and every other setting at its
    /// default: no seed, no secret, plain TCP, no namespace.
    pub fn new(name: &str, listen: SocketAddr) -> ClusterConfig {
        ClusterConfig {
            name: name.to_string(),
            listen,
            advertise: None,
            routes: Vec::new(),
            lease: Duration::from_millis(DEFAULT_LEASE_MS),
            hold: Duration::from_millis(DEFAULT_HOLD_MS),
            secret_file: None,
            tls: None,
            namespaces: Vec::new(),
        }
    }
}

/// Reads the section; `None` without one (a single server). `cassandra`: the archive is on
/// Apache Cassandra, so namespaces may be leased; `server_tls`: the server has a
/// certificate, which routes may speak TLS with.
///
/// # Errors
/// [`ConfigError::Invalid`] naming the key: no name, a bad address, a bad seed URL, a bad
/// namespace, a namespace without owner and no Cassandra.
pub(super) fn from_raw(
    raw: Option<RawClusterConfig>,
    cassandra: bool,
    server_tls: bool,
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
    let listen = resolve("cluster.listen", listen, &default_listen)?;
    let mut routes = Vec::new();
    for url in raw.routes.unwrap_or_default() {
        routes.push(seed(&url)?);
    }
    let lease = duration("cluster.lease", raw.lease, DEFAULT_LEASE_MS)?;
    if lease < MIN_LEASE {
        return Err(invalid(
            "cluster.lease",
            format!(
                "{} ms is too short: a lease lasts at least {} s",
                lease.as_millis(),
                MIN_LEASE.as_secs()
            ),
        ));
    }
    let mut namespaces: Vec<NamespaceConfig> = Vec::new();
    for (index, raw) in raw.namespaces.unwrap_or_default().into_iter().enumerate() {
        let namespace = namespace(index, raw, cassandra)?;
        if namespaces.iter().any(|n| n.name == namespace.name) {
            return Err(invalid(
                "cluster.namespaces",
                format!("namespace `{}` is named twice", namespace.name),
            ));
        }
        namespaces.push(namespace);
    }
    Ok(Some(ClusterConfig {
        name,
        listen,
        advertise: raw.advertise.filter(|a| !a.is_empty()),
        routes,
        lease,
        hold: duration("cluster.hold", raw.hold, DEFAULT_HOLD_MS)?,
        secret_file: raw.secret_file.filter(|f| !f.is_empty()).map(PathBuf::from),
        tls: route_tls(raw.tls, raw.ca, server_tls)?,
        namespaces,
    }))
}

/// TLS on routes: on with `tls = true`, which needs the server's certificate; `ca` only
/// with it.
fn route_tls(
    tls: Option<bool>,
    ca: Option<String>,
    server_tls: bool,
) -> Result<Option<RouteTls>, ConfigError> {
    let ca = ca.filter(|c| !c.is_empty()).map(PathBuf::from);
    match tls {
        Some(true) if !server_tls => Err(invalid(
            "cluster.tls",
            "needs tls_cert and tls_key: a route speaks TLS with the server's certificate"
                .to_string(),
        )),
        Some(true) => Ok(Some(RouteTls { ca })),
        _ if ca.is_some() => Err(invalid(
            "cluster.ca",
            "is for TLS on routes: set cluster.tls = true (and the server's tls_cert, tls_key)"
                .to_string(),
        )),
        _ => Ok(None),
    }
}

/// Checks one `[[cluster.namespaces]]`.
fn namespace(
    index: usize,
    raw: RawNamespace,
    cassandra: bool,
) -> Result<NamespaceConfig, ConfigError> {
    let at = |what: String| {
        invalid(
            "cluster.namespaces",
            format!("namespace {}: {what}", index + 1),
        )
    };
    let name = raw.name.unwrap_or_default();
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !valid {
        return Err(at(format!(
            "name `{name}`: give 1 to 64 letters, digits, `_`, `-` or `.`"
        )));
    }
    let mut names = Vec::new();
    for glob in raw.names.unwrap_or_default() {
        names.push(Glob::new(&glob).map_err(|err| at(format!("`{name}` names `{glob}`: {err}")))?);
    }
    if names.is_empty() {
        return Err(at(format!(
            "`{name}` has no `names` (globs of the objects it holds, such as \"ANTENNA.*\")"
        )));
    }
    let owner = raw.owner.filter(|o| !o.trim().is_empty());
    if owner.is_none() && !cassandra {
        return Err(at(format!(
            "`{name}` names no `owner`: without one its owner holds a lease in Cassandra, \
             and the archive is not on Cassandra (archive.backend = \"cassandra\"); name the \
             member that owns it"
        )));
    }
    Ok(NamespaceConfig { name, names, owner })
}

/// `host:port` of a seed given as `herald://host:port` (or bare `host:port`).
fn seed(url: &str) -> Result<String, ConfigError> {
    let bad = |why: &str| {
        invalid(
            "cluster.routes",
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
        assert_eq!(from_raw(None, false, false).unwrap(), None);
        let err = from_raw(Some(RawClusterConfig::default()), false, false)
            .unwrap_err()
            .to_string();
        assert!(err.contains("needs a `name`"), "{err}");
        let config = from_raw(
            Some(RawClusterConfig {
                name: Some("site".into()),
                routes: Some(vec!["herald://127.0.0.1:7401".into(), "h2:7411".into()]),
                ..RawClusterConfig::default()
            }),
            false,
            false,
        )
        .unwrap()
        .unwrap();
        assert_eq!(config.listen.port(), DEFAULT_ROUTE_PORT);
        assert_eq!(config.routes, ["127.0.0.1:7401", "h2:7411"]);
        let err = from_raw(
            Some(RawClusterConfig {
                name: Some("site".into()),
                routes: Some(vec!["http://x:1".into()]),
                ..RawClusterConfig::default()
            }),
            false,
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("route `http://x:1` is not a herald:// URL"),
            "{err}"
        );
    }

    #[test]
    fn tls_on_routes_needs_the_servers_certificate_and_ca_needs_tls() {
        let raw = |tls: Option<bool>, ca: Option<&str>| RawClusterConfig {
            name: Some("site".into()),
            tls,
            ca: ca.map(Into::into),
            ..RawClusterConfig::default()
        };
        let config = from_raw(Some(raw(Some(true), Some("ca.pem"))), false, true)
            .unwrap()
            .unwrap();
        let ca = Some(PathBuf::from("ca.pem"));
        assert_eq!(config.tls, Some(RouteTls { ca }));
        let config = from_raw(Some(raw(Some(true), None)), false, true)
            .unwrap()
            .unwrap();
        assert_eq!(
            config.tls,
            Some(RouteTls { ca: None }),
            "the system's trust store"
        );
        let config = from_raw(Some(raw(Some(false), None)), false, true)
            .unwrap()
            .unwrap();
        assert_eq!(config.tls, None);
        let err = from_raw(Some(raw(Some(true), None)), false, false)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`cluster.tls`: needs tls_cert and tls_key"),
            "{err}"
        );
        let err = from_raw(Some(raw(None, Some("ca.pem"))), false, true)
            .unwrap_err()
            .to_string();
        assert!(err.contains("`cluster.ca`: is for TLS on routes"), "{err}");
    }
}
