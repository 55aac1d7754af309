//! Limits on what clients may hold: connections in all and per address, on the native port
//! and on HTTP, and how long an HTTP client may take to send a request's head. Each limit
//! hit is counted in the monitor and answered with the reason.

use std::time::Duration;

use super::{duration, positive, ConfigError, RawConfig};

/// Default limit of native connections from one IP address.
pub const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS: usize = 1_000;
/// Default limit of simultaneous HTTP connections (WebSockets included).
pub const DEFAULT_HTTP_MAX_CONNECTIONS: usize = 1_024;
/// Default limit of HTTP connections from one IP address.
pub const DEFAULT_HTTP_MAX_CONNECTIONS_PER_ADDRESS: usize = 256;
/// Default time an HTTP client has to send a request's head, counted from the connection's
/// start or the end of its previous response: a connection that says nothing, sends its
/// head a byte at a time, or sits idle between requests is closed after it.
pub const DEFAULT_HTTP_HEADER_TIMEOUT_MS: u64 = 10_000;

/// The HTTP front door's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// Simultaneous connections, WebSockets included.
    pub max_connections: usize,
    /// Connections from one IP address.
    pub max_connections_per_address: usize,
    /// Time to send a request's head (also the idle time allowed between requests).
    pub header_timeout: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_connections: DEFAULT_HTTP_MAX_CONNECTIONS,
            max_connections_per_address: DEFAULT_HTTP_MAX_CONNECTIONS_PER_ADDRESS,
            header_timeout: Duration::from_millis(DEFAULT_HTTP_HEADER_TIMEOUT_MS),
        }
    }
}

/// Reads the native per-address limit.
pub(super) fn per_address(raw: &RawConfig) -> Result<usize, ConfigError> {
    let default = DEFAULT_MAX_CONNECTIONS_PER_ADDRESS as u64;
    Ok(positive(
        "max_connections_per_address",
        raw.max_connections_per_address,
        default,
    )? as usize)
}

/// Reads the HTTP limits.
pub(super) fn http(raw: &RawConfig) -> Result<HttpLimits, ConfigError> {
    Ok(HttpLimits {
        max_connections: positive(
            "http_max_connections",
            raw.http_max_connections,
            DEFAULT_HTTP_MAX_CONNECTIONS as u64,
        )? as usize,
        max_connections_per_address: positive(
            "http_max_connections_per_address",
            raw.http_max_connections_per_address,
            DEFAULT_HTTP_MAX_CONNECTIONS_PER_ADDRESS as u64,
        )? as usize,
        header_timeout: duration(
            "http_header_timeout",
            raw.http_header_timeout.clone(),
            DEFAULT_HTTP_HEADER_TIMEOUT_MS,
        )?,
    })
}
