//! Server configuration: one TOML file, `HERALD_*` environment variables and command-line
//! flags, merged in that order of precedence (flags win), then validated in one place.
//!
//! Loading has two stages, as quickwit and ripgrep do: the merged table deserializes into
//! [`RawConfig`] (every key optional, unknown keys refused), and [`Config::from_raw`] turns
//! that into typed values (socket addresses, `Duration`s, byte counts).

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use herald_proto::frame::DEFAULT_MAX_FRAME_BYTES;
use herald_proto::storm::{
    StormRule, DEFAULT_REPEATS, DEFAULT_WINDOW_NS as DEFAULT_STORM_WINDOW_NS,
};
use herald_proto::PriorityError;
use herald_router::QueueConfig;
use serde::Deserialize;

use crate::units::{parse_bytes, parse_duration};
use error::invalid;

pub mod archive;
pub mod cluster;
mod env;
mod error;
pub mod limits;
mod load;
pub mod mirror;
mod origin;
pub mod security;
pub mod source;
pub mod syslog;
pub mod tls;

pub use archive::{ArchiveBackendConfig, ArchiveConfig, RawArchiveConfig, ARCHIVE_KEYS};
pub use cluster::{ClusterConfig, NamespaceConfig, RawClusterConfig, RouteTls, CLUSTER_KEYS};
pub use error::ConfigError;
pub use limits::HttpLimits;
pub use load::Loaded;
pub use mirror::MirrorConfig;
pub use security::SecurityConfig;
pub use source::Source;
pub use syslog::{RawSyslogConfig, SyslogConfig, SYSLOG_KEYS};
pub use tls::{ClientAuth, TlsConfig};

/// Default data directory, relative to where the server starts.
pub const DEFAULT_DATA_DIR: &str = "./herald-data";
/// Default address of the native protocol.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7400";
/// Default address of the HTTP front door (API, later UI, WebSocket and metrics).
pub const DEFAULT_HTTP: &str = "127.0.0.1:7480";
/// Default server name, shown to clients and in the monitor.
pub const DEFAULT_NAME: &str = "herald";
/// Default limit of simultaneous client connections.
pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;
/// Default bytes all subscriber queues may hold together (each queue has its own bound
/// too): four subscribers that stopped reading fill it at the default queue size.
pub const DEFAULT_QUEUE_BUDGET_BYTES: u64 = 256 * 1024 * 1024;
/// Default limit of subscriptions per connection.
pub const DEFAULT_MAX_SUBSCRIPTIONS: usize = 1_000;
/// Default interval between heartbeats sent to an idle peer.
pub const DEFAULT_HEARTBEAT_INTERVAL_MS: u64 = 1_000;
/// Default silence after which a peer counts as dead.
pub const DEFAULT_HEARTBEAT_TIMEOUT_MS: u64 = 5_000;
/// Default time a new connection has to send `HELLO`.
pub const DEFAULT_HANDSHAKE_TIMEOUT_MS: u64 = 5_000;
/// Default longest wait of a publisher for a subscriber with policy `block`.
pub const DEFAULT_MAX_BLOCK_TIMEOUT_MS: u64 = 1_000;
/// Default log level of the server's own diagnostics.
pub const DEFAULT_LOG_LEVEL: &str = "info";
/// Prefix of the environment variables that set configuration keys.
pub const ENV_PREFIX: &str = "HERALD_";
/// Environment variable naming the configuration file (not itself a key).
pub const ENV_CONFIG_FILE: &str = "HERALD_CONFIG";
/// `HERALD_*` variables that belong to the clients and the CLI, not to the server's settings.
pub const CLIENT_ENV_VARS: [&str; 2] = [ENV_CONFIG_FILE, "HERALD_SERVER"];

/// Prefix of the variables of `scripts/cassandra.sh` and the CQL tests (`HERALD_CASSANDRA`,
/// `HERALD_CASSANDRA_PORT`, …), which are not server settings either.
pub const SCRIPT_ENV_PREFIX: &str = "HERALD_CASSANDRA";

/// Every key, as written in the file; `HERALD_<KEY>` in upper case sets the same.
pub const KEYS: [&str; 35] = [
    "name",
    "listen",
    "http",
    "otlp_grpc",
    "data_dir",
    "max_frame_bytes",
    "max_connections",
    "max_connections_per_address",
    "http_max_connections",
    "http_max_connections_per_address",
    "http_header_timeout",
    "max_subscriptions",
    "queue_records",
    "queue_bytes",
    "queue_hard_bytes",
    "queue_budget_bytes",
    "protected_priority",
    "storm_window",
    "storm_repeats",
    "source_quota",
    "max_block_timeout",
    "heartbeat_interval",
    "heartbeat_timeout",
    "handshake_timeout",
    "log_level",
    "identities",
    "insecure_open",
    "tls_cert",
    "tls_key",
    "tls_client_ca",
    "tls_client_auth",
    "archive",
    "cluster",
    "mirror",
    "syslog",
];

/// A number or a string with a unit (`65536` or `"64KiB"`, `2000` ms or `"2s"`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Quantity {
    /// A plain number (bytes or milliseconds).
    Number(u64),
    /// Text with a unit.
    Text(String),
}

/// The configuration as written, every key optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    /// Server name.
    pub name: Option<String>,
    /// Address for the native protocol.
    pub listen: Option<String>,
    /// Address for HTTP.
    pub http: Option<String>,
    /// Address for OTLP/gRPC (off when absent).
    pub otlp_grpc: Option<String>,
    /// Largest frame accepted.
    pub max_frame_bytes: Option<Quantity>,
    /// Most simultaneous connections.
    pub max_connections: Option<u64>,
    /// Most connections from one IP address.
    pub max_connections_per_address: Option<u64>,
    /// Most simultaneous HTTP connections.
    pub http_max_connections: Option<u64>,
    /// Most HTTP connections from one IP address.
    pub http_max_connections_per_address: Option<u64>,
    /// Time an HTTP client has to send a request's head.
    pub http_header_timeout: Option<Quantity>,
    /// Most subscriptions per connection.
    pub max_subscriptions: Option<u64>,
    /// Subscriber queue bound in records.
    pub queue_records: Option<u64>,
    /// Subscriber queue bound in bytes.
    pub queue_bytes: Option<Quantity>,
    /// Hard bound up to which protected records are kept, in bytes.
    pub queue_hard_bytes: Option<Quantity>,
    /// Bytes all subscriber queues may hold together.
    pub queue_budget_bytes: Option<Quantity>,
    /// Lowest priority that is never shed while the hard bound allows.
    pub protected_priority: Option<String>,
    /// Window in which identical log records are counted (log storms).
    pub storm_window: Option<Quantity>,
    /// Identical log records passed per window before they collapse; 0: never.
    pub storm_repeats: Option<u64>,
    /// Records per second one source may publish; 0: no quota.
    pub source_quota: Option<u64>,
    /// Longest a publisher may wait for a subscriber with policy `block`.
    pub max_block_timeout: Option<Quantity>,
    /// Heartbeat interval.
    pub heartbeat_interval: Option<Quantity>,
    /// Heartbeat timeout.
    pub heartbeat_timeout: Option<Quantity>,
    /// Handshake timeout.
    pub handshake_timeout: Option<Quantity>,
    /// Diagnostics log level.
    pub log_level: Option<String>,
    /// Where the server keeps its data (information objects, the embedded archive).
    pub data_dir: Option<String>,
    /// The identities file.
    pub identities: Option<String>,
    /// Serve a non-loopback address with no identities.
    pub insecure_open: Option<bool>,
    /// The server's certificate chain (PEM): with `tls_key`, both front doors speak TLS.
    pub tls_cert: Option<String>,
    /// The certificate's private key (PEM).
    pub tls_key: Option<String>,
    /// CA certificates (PEM) that sign client certificates (mutual TLS).
    pub tls_client_ca: Option<String>,
    /// `optional` or `required`: whether clients must present a certificate.
    pub tls_client_auth: Option<String>,
    /// The `[archive]` section.
    pub archive: Option<RawArchiveConfig>,
    /// The `[cluster]` section.
    pub cluster: Option<RawClusterConfig>,
    /// The `[[mirror]]` sections.
    pub mirror: Option<Vec<mirror::RawMirror>>,
    /// The `[syslog]` section.
    pub syslog: Option<RawSyslogConfig>,
}

/// The validated configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Server name.
    pub name: String,
    /// Address for the native protocol.
    pub listen: SocketAddr,
    /// Address for HTTP.
    pub http: SocketAddr,
    /// Address for OpenTelemetry logs over gRPC (OTLP/gRPC), if served.
    pub otlp_grpc: Option<SocketAddr>,
    /// Largest frame accepted.
    pub max_frame_bytes: u32,
    /// Most simultaneous connections.
    pub max_connections: usize,
    /// Most connections from one IP address.
    pub max_connections_per_address: usize,
    /// The HTTP front door's limits.
    pub http_limits: HttpLimits,
    /// Most subscriptions per connection.
    pub max_subscriptions: usize,
    /// Bounds and defaults of each subscriber queue; a subscriber may ask for smaller
    /// bounds, another policy, protected priority or latest-only delivery.
    pub queue: QueueConfig,
    /// Bytes all subscriber queues may hold together; past it the largest queues shed.
    pub queue_budget_bytes: usize,
    /// Longest a publisher may wait for a subscriber with policy `block`.
    pub max_block_timeout: Duration,
    /// When identical log records collapse.
    pub storm: StormRule,
    /// Records per second one source may publish (0: no quota).
    pub source_quota: u64,
    /// Heartbeat interval.
    pub heartbeat_interval: Duration,
    /// Heartbeat timeout.
    pub heartbeat_timeout: Duration,
    /// Handshake timeout.
    pub handshake_timeout: Duration,
    /// Diagnostics log level.
    pub log_level: String,
    /// Where the server keeps its data.
    pub data_dir: PathBuf,
    /// The archive: store, rules, buffer and sync.
    pub archive: ArchiveConfig,
    /// Identities and the refusing default.
    pub security: SecurityConfig,
    /// TLS on both front doors, if configured.
    pub tls: Option<TlsConfig>,
    /// This server's cluster, if it is a member of one.
    pub cluster: Option<ClusterConfig>,
    /// The mirrors this server feeds.
    pub mirrors: Vec<MirrorConfig>,
    /// The syslog listeners, if any.
    pub syslog: Option<SyslogConfig>,
}

impl Default for Config {
    fn default() -> Self {
        Config::from_raw(RawConfig::default()).expect("the defaults are valid")
    }
}

impl Config {
    /// Validates `raw` and fills in defaults.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the key and quoting the value.
    pub fn from_raw(raw: RawConfig) -> Result<Config, ConfigError> {
        let max_connections_per_address = limits::per_address(&raw)?;
        let queue_budget_bytes = bytes(
            "queue_budget_bytes",
            raw.queue_budget_bytes.clone(),
            DEFAULT_QUEUE_BUDGET_BYTES,
        )? as usize;
        let http_limits = limits::http(&raw)?;
        let security = security::from_raw(&raw);
        let tls = tls::from_raw(&raw)?;
        let listen = raw.listen.as_deref().unwrap_or(DEFAULT_LISTEN);
        let max_frame_bytes = bytes(
            "max_frame_bytes",
            raw.max_frame_bytes,
            u64::from(DEFAULT_MAX_FRAME_BYTES),
        )?;
        let max_frame_bytes = u32::try_from(max_frame_bytes)
            .ok()
            .filter(|n| (1024..=256 << 20).contains(n))
            .ok_or_else(|| {
                invalid(
                    "max_frame_bytes",
                    format!("{max_frame_bytes} is outside 1KiB..=256MiB"),
                )
            })?;
        let defaults = QueueConfig::default();
        let max_bytes = bytes("queue_bytes", raw.queue_bytes, defaults.max_bytes as u64)? as usize;
        let hard_bytes = bytes(
            "queue_hard_bytes",
            raw.queue_hard_bytes,
            defaults.hard_bytes as u64,
        )? as usize;
        if hard_bytes < max_bytes {
            return Err(invalid(
                "queue_hard_bytes",
                format!("{hard_bytes} is smaller than queue_bytes {max_bytes}"),
            ));
        }
        let protected = match raw.protected_priority {
            None => defaults.protected,
            Some(name) => name
                .parse()
                .map_err(|err: PriorityError| invalid("protected_priority", err.to_string()))?,
        };
        let queue = QueueConfig {
            max_records: positive(
                "queue_records",
                raw.queue_records,
                defaults.max_records as u64,
            )? as usize,
            max_bytes,
            hard_bytes,
            protected,
            ..defaults
        };
        let max_block_timeout = duration(
            "max_block_timeout",
            raw.max_block_timeout,
            DEFAULT_MAX_BLOCK_TIMEOUT_MS,
        )?;
        let heartbeat_interval = duration(
            "heartbeat_interval",
            raw.heartbeat_interval,
            DEFAULT_HEARTBEAT_INTERVAL_MS,
        )?;
        let heartbeat_timeout = duration(
            "heartbeat_timeout",
            raw.heartbeat_timeout,
            DEFAULT_HEARTBEAT_TIMEOUT_MS,
        )?;
        if heartbeat_timeout <= heartbeat_interval {
            return Err(invalid(
                "heartbeat_timeout",
                format!("{heartbeat_timeout:?} must be longer than heartbeat_interval {heartbeat_interval:?}"),
            ));
        }
        let archive = archive::from_raw(raw.archive)?;
        let cassandra = matches!(archive.backend, ArchiveBackendConfig::Cassandra { .. });
        let cluster = cluster::from_raw(raw.cluster, cassandra, tls.is_some())?;
        let log_level = raw
            .log_level
            .unwrap_or_else(|| DEFAULT_LOG_LEVEL.to_string());
        if !["error", "warn", "info", "debug", "trace"].contains(&log_level.as_str()) {
            return Err(invalid(
                "log_level",
                format!("`{log_level}` (expected error, warn, info, debug or trace)"),
            ));
        }
        Ok(Config {
            name: server_name(raw.name)?,
            listen: resolve("listen", listen, DEFAULT_LISTEN)?,
            http: resolve(
                "http",
                raw.http.as_deref().unwrap_or(DEFAULT_HTTP),
                DEFAULT_HTTP,
            )?,
            otlp_grpc: raw
                .otlp_grpc
                .as_deref()
                .map(|a| resolve("otlp_grpc", a, "0.0.0.0:4317"))
                .transpose()?,
            max_frame_bytes,
            max_connections: positive(
                "max_connections",
                raw.max_connections,
                DEFAULT_MAX_CONNECTIONS as u64,
            )? as usize,
            max_connections_per_address,
            http_limits,
            max_subscriptions: positive(
                "max_subscriptions",
                raw.max_subscriptions,
                DEFAULT_MAX_SUBSCRIPTIONS as u64,
            )? as usize,
            queue,
            queue_budget_bytes,
            max_block_timeout,
            heartbeat_interval,
            storm: StormRule {
                window_ns: duration(
                    "storm_window",
                    raw.storm_window,
                    (DEFAULT_STORM_WINDOW_NS / 1_000_000) as u64,
                )?
                .as_nanos()
                .min(i64::MAX as u128) as i64,
                repeats: u32::try_from(raw.storm_repeats.unwrap_or(u64::from(DEFAULT_REPEATS)))
                    .map_err(|_| invalid("storm_repeats", "more than 4294967295".to_string()))?,
            },
            source_quota: raw.source_quota.unwrap_or(0),
            heartbeat_timeout,
            handshake_timeout: duration(
                "handshake_timeout",
                raw.handshake_timeout,
                DEFAULT_HANDSHAKE_TIMEOUT_MS,
            )?,
            log_level,
            security,
            tls,
            data_dir: PathBuf::from(raw.data_dir.unwrap_or_else(|| DEFAULT_DATA_DIR.to_string())),
            cluster,
            mirrors: mirror::from_raw(raw.mirror)?,
            syslog: syslog::from_raw(raw.syslog)?,
            archive,
        })
    }
}

/// The server's name: not empty (a cluster and the monitor tell servers apart by it), no
/// control character, at most 255 bytes (it goes in `WELCOME`).
fn server_name(name: Option<String>) -> Result<String, ConfigError> {
    let Some(name) = name else {
        return Ok(DEFAULT_NAME.to_string());
    };
    if name.trim().is_empty() || name.len() > 255 || name.chars().any(char::is_control) {
        return Err(invalid(
            "name",
            format!("{name:?}: give 1 to 255 bytes of text, not only spaces, no control character"),
        ));
    }
    Ok(name)
}

fn positive(key: &'static str, value: Option<u64>, default: u64) -> Result<u64, ConfigError> {
    match value.unwrap_or(default) {
        0 => Err(invalid(key, "0 (must be at least 1)".to_string())),
        n => Ok(n),
    }
}

fn bytes(key: &'static str, value: Option<Quantity>, default: u64) -> Result<u64, ConfigError> {
    let parsed = match value {
        None => default,
        Some(Quantity::Number(n)) => n,
        Some(Quantity::Text(text)) => {
            parse_bytes(&text).map_err(|message| invalid(key, message))?
        }
    };
    positive(key, Some(parsed), default)
}

fn duration(
    key: &'static str,
    value: Option<Quantity>,
    default_ms: u64,
) -> Result<Duration, ConfigError> {
    let parsed = match value {
        None => Duration::from_millis(default_ms),
        Some(Quantity::Number(ms)) => Duration::from_millis(ms),
        Some(Quantity::Text(text)) => {
            parse_duration(&text).map_err(|message| invalid(key, message))?
        }
    };
    if parsed.is_zero() {
        return Err(invalid(key, "0 (must be longer than zero)".to_string()));
    }
    Ok(parsed)
}

fn resolve(key: &'static str, address: &str, example: &str) -> Result<SocketAddr, ConfigError> {
    let bad = |why: String| {
        invalid(
            key,
            format!("`{address}` {why} (expected host:port, e.g. {example})"),
        )
    };
    let mut addresses = address
        .to_socket_addrs()
        .map_err(|err| bad(format!("does not resolve: {err}")))?;
    addresses
        .next()
        .ok_or_else(|| bad("resolves to no address".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_loopback() {
        let config = Config::default();
        assert_eq!(config.listen.to_string(), "127.0.0.1:7400");
        assert_eq!(config.http.to_string(), "127.0.0.1:7480");
        assert_eq!(config.heartbeat_timeout, Duration::from_secs(5));
    }

    #[test]
    fn bad_values_quote_the_value() {
        let raw = RawConfig {
            heartbeat_interval: Some(Quantity::Text("soon".into())),
            ..RawConfig::default()
        };
        let err = Config::from_raw(raw).unwrap_err();
        assert_eq!(
            err.to_string(),
            "bad value for `heartbeat_interval`: bad duration `soon` (expected e.g. `500ms`, `2s`, `1m`, `1h`)"
        );
        let raw = RawConfig {
            listen: Some("nowhere".into()),
            ..RawConfig::default()
        };
        assert!(Config::from_raw(raw)
            .unwrap_err()
            .to_string()
            .starts_with("bad value for `listen`: `nowhere`"));
        let raw = RawConfig {
            http: Some("localhost".into()),
            ..RawConfig::default()
        };
        let err = Config::from_raw(raw).unwrap_err().to_string();
        assert!(
            err.starts_with("bad value for `http`: `localhost` does not resolve")
                && err.ends_with("(expected host:port, e.g. 127.0.0.1:7480)"),
            "{err}"
        );
    }
}
