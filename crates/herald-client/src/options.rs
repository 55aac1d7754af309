//! [`ClientOptions`]: how a client connects and behaves, and their defaults.

use std::time::Duration;

use crate::outbox::DEFAULT_OUTBOX_BYTES;
use crate::tls::TlsOptions;

/// Default events buffered per subscription before the client drops (and reports a gap).
pub const DEFAULT_SUBSCRIPTION_BUFFER: usize = 65_536;
/// Default heartbeat interval asked of the server.
pub const DEFAULT_HEARTBEAT_INTERVAL: Duration = Duration::from_secs(1);
/// Default silence after which the server counts as dead.
pub const DEFAULT_HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(5);
/// Default time allowed to connect and complete the handshake, per server.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Default time a client keeps trying to fail over before it gives up.
pub const DEFAULT_RECONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default time to wait for the answer to a control request.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// How a client connects and behaves.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Name shown by the server's monitor; the URL's `?name=` overrides it.
    pub name: String,
    /// Authentication token; the URL's `?token=` overrides it.
    pub token: String,
    /// TLS to every server: set by a `herald+tls://` URL (with its `?ca=`, `?cert=` and
    /// `?key=`), or here for a `herald://` one.
    pub tls: Option<TlsOptions>,
    /// Heartbeat interval asked of the server; the client pings as often.
    pub heartbeat_interval: Duration,
    /// Silence after which the server counts as dead.
    pub heartbeat_timeout: Duration,
    /// Time allowed per server to connect and shake hands.
    pub connect_timeout: Duration,
    /// Events buffered per subscription.
    pub subscription_buffer: usize,
    /// Bytes buffered for sending (or sent and not yet acknowledged) before `publish`
    /// waits: the window a failover may have to resend.
    pub outbox_bytes: usize,
    /// How long to keep trying to reach a server (the next in the URL, then around again)
    /// after the connection fails; zero turns failover off.
    pub reconnect_timeout: Duration,
    /// The producer id sent in `HELLO`, under which the client numbers its records so that
    /// cluster members can drop what a failover sends again; chosen at random when 0.
    pub producer: u64,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            name: default_name(),
            token: String::new(),
            tls: None,
            heartbeat_interval: DEFAULT_HEARTBEAT_INTERVAL,
            heartbeat_timeout: DEFAULT_HEARTBEAT_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            subscription_buffer: DEFAULT_SUBSCRIPTION_BUFFER,
            outbox_bytes: DEFAULT_OUTBOX_BYTES,
            reconnect_timeout: DEFAULT_RECONNECT_TIMEOUT,
            producer: 0,
        }
    }
}

/// Returns a random non-zero producer id.
pub(crate) fn random_producer() -> u64 {
    use std::hash::BuildHasher;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    // RandomState is seeded from the operating system's randomness.
    let id = std::collections::hash_map::RandomState::new().hash_one((nanos, std::process::id()));
    id.max(1)
}

fn default_name() -> String {
    std::env::args()
        .next()
        .and_then(|arg0| {
            std::path::Path::new(&arg0)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "herald-client".to_string())
}
