//! [`Local`]: what this server holds on its own — the router, the monitor, the information
//! service, the archive, the configuration in force and the parts the front doors keep —
//! below the cluster it may be a member of. The cluster's code takes it, and
//! [`Shared`](crate::shared::Shared), what sessions and front doors take, adds the cluster
//! over it: the modules depend one way, `shared` → `cluster` → `local`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use herald_archive::Archive;
use herald_router::{QueueBudget, Router};
use tokio::sync::watch;

use crate::auth::Guard;
use crate::config::Config;
use crate::connection_limit::ConnectionLimit;
use crate::info::InfoService;
use crate::monitor::Monitor;
use crate::shutdown::Shutdown;
use crate::tls::Tls;

/// What this server holds on its own, below its cluster.
#[derive(Debug)]
pub struct Local {
    /// The validated configuration in force: a reload replaces it ([`Local::config`]).
    pub(crate) config: arc_swap::ArcSwap<Config>,
    /// How live reloads are made: where the configuration comes from, one at a time.
    pub reloader: crate::reload::reloader::Reloader,
    /// The native port's open connections, against its limits.
    pub connections: Arc<ConnectionLimit>,
    /// The syslog TCP connections, against limits of their own (as many as the native
    /// port's).
    pub syslog_connections: Arc<ConnectionLimit>,
    /// The router.
    pub router: Router,
    /// Counters and connections.
    pub monitor: Monitor,
    /// Information objects: latest values, types, info subscribers.
    pub info: InfoService,
    /// The archive, unless turned off.
    pub archive: Option<Arc<Archive>>,
    /// The HTTP front door's open connections, against its limits.
    pub http_connections: Arc<ConnectionLimit>,
    /// The bytes every subscriber queue may hold together.
    pub queue_budget: Arc<QueueBudget>,
    /// Identities: who a token is, and whether the server is open.
    pub guard: Guard,
    /// TLS on both front doors, if configured.
    pub tls: Option<Arc<Tls>>,
    /// Numbered producers' records seen here, to drop duplicates after a failover.
    pub producers: crate::producers::Producers,
    /// What sources feed this server as a read-only mirror.
    pub mirrored: crate::mirror::Mirrored,
    /// The mirrors this server feeds.
    pub mirrors: std::sync::OnceLock<Vec<Arc<crate::mirror::link::MirrorLink>>>,
    /// The syslog listeners' counters (and addresses, while any runs).
    pub syslog: Arc<crate::syslog::stats::SyslogStats>,
    /// The syslog listeners running.
    pub syslog_doors: crate::syslog::running::Doors,
    /// What `POST /v1/logs` (OpenTelemetry) counted.
    pub otlp: crate::otlp::stats::OtlpStats,
    /// Log storms collapsed and source quotas.
    pub storms: crate::storm::Storms,
    /// The next connection id ([`Local::next_connection_id`]).
    pub(crate) next_connection: AtomicU64,
    /// The shutdown signal, for tasks started on demand (WebSocket connections).
    pub(crate) stopping: watch::Receiver<bool>,
}

impl Local {
    /// Returns the configuration in force.
    pub fn config(&self) -> Arc<Config> {
        self.config.load_full()
    }

    /// Puts `config` in force (a reload, which has applied what it changes).
    pub(crate) fn put_config(&self, config: Config) {
        self.config.store(Arc::new(config));
    }

    /// Returns a new connection id.
    pub fn next_connection_id(&self) -> u64 {
        self.next_connection.fetch_add(1, Ordering::Relaxed)
    }

    /// Returns a receiver of the server's shutdown signal.
    pub fn shutdown_signal(&self) -> Shutdown {
        Shutdown::new(self.stopping.clone())
    }
}
