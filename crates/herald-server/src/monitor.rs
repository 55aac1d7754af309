//! Server-wide counters and the registry of live connections, for `MONITOR` and the CLI.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use herald_proto::value::Field;
use herald_proto::Value;
use herald_router::{DropCounters, DropReason, Drops, Queue};
use tokio::sync::Notify;

use crate::close_reason::CloseReason;

/// One subscription as the monitor shows it.
#[derive(Debug)]
pub struct SubscriptionState {
    /// Client-chosen id.
    pub id: u64,
    /// The filter, as text.
    pub filter: String,
    /// Its queue.
    pub queue: Arc<Queue>,
    /// Its queue group, if any.
    pub group: Option<Arc<str>>,
}

/// What the session, the writer and the monitor share about one connection.
#[derive(Debug)]
pub struct ConnectionState {
    /// Server-wide id.
    pub id: u64,
    /// Remote address.
    pub peer: SocketAddr,
    /// Client name from `HELLO`.
    pub name: Mutex<String>,
    /// Records received from this client.
    pub records_in: AtomicU64,
    /// Its subscriptions; locked by its own session, writer and the monitor only.
    pub subscriptions: Mutex<Vec<SubscriptionState>>,
    /// Wakes the connection's writer when a queue has records.
    pub writer: Arc<Notify>,
    /// The writer closed the connection because a `disconnect` subscription fell behind.
    pub slow_consumer: Notify,
    /// Browser connections only: records delivered from the queue but held back by the
    /// filters applied before sending (host, process, text). Not a loss.
    pub filtered: Option<AtomicU64>,
    /// Who the connection is, once its token was checked.
    pub access: std::sync::OnceLock<crate::auth::Access>,
    /// Told when the connection's identity is revoked: its session closes.
    pub revoked: Notify,
}

impl ConnectionState {
    /// Returns a state for a connection from `peer`.
    pub fn new(id: u64, peer: SocketAddr) -> Self {
        ConnectionState {
            id,
            peer,
            name: Mutex::new(String::new()),
            records_in: AtomicU64::new(0),
            subscriptions: Mutex::new(Vec::new()),
            writer: Arc::default(),
            slow_consumer: Notify::new(),
            filtered: None,
            access: std::sync::OnceLock::new(),
            revoked: Notify::new(),
        }
    }

    /// Returns a state for a browser's WebSocket from `peer`, named `name`, whose monitor
    /// entry also shows the records its own filters held back.
    pub fn browser(id: u64, peer: SocketAddr, name: String) -> Self {
        ConnectionState {
            name: Mutex::new(name),
            filtered: Some(AtomicU64::new(0)),
            ..ConnectionState::new(id, peer)
        }
    }

    /// Locks the subscription list.
    pub fn subscriptions(&self) -> MutexGuard<'_, Vec<SubscriptionState>> {
        lock(&self.subscriptions)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[derive(Debug, Default, Clone, Copy)]
struct Sample {
    records_in: u64,
    delivered: u64,
    rate_in: f64,
    rate_out: f64,
}

/// Server-wide counters. Hot-path counters are added once per batch, not per record.
#[derive(Debug)]
pub struct Monitor {
    name: String,
    started: Instant,
    connections_total: AtomicU64,
    records_in: AtomicU64,
    bytes_in: AtomicU64,
    deliveries: AtomicU64,
    drops: DropCounters,
    rejected_frames: AtomicU64,
    refused_requests: AtomicU64,
    refused_records: AtomicU64,
    denied: AtomicU64,
    http_refused: AtomicU64,
    http_header_timeouts: AtomicU64,
    http_tls_failed: AtomicU64,
    closes: [AtomicU64; CloseReason::ALL.len()],
    connections: Mutex<BTreeMap<u64, Arc<ConnectionState>>>,
    sample: Mutex<Sample>,
}

impl Monitor {
    /// Returns a monitor for server `name` with every counter at zero.
    pub fn new(name: &str) -> Self {
        Monitor {
            name: name.to_string(),
            started: Instant::now(),
            connections_total: AtomicU64::new(0),
            records_in: AtomicU64::new(0),
            bytes_in: AtomicU64::new(0),
            deliveries: AtomicU64::new(0),
            drops: Default::default(),
            rejected_frames: AtomicU64::new(0),
            refused_requests: AtomicU64::new(0),
            refused_records: AtomicU64::new(0),
            denied: AtomicU64::new(0),
            http_refused: AtomicU64::new(0),
            http_header_timeouts: AtomicU64::new(0),
            http_tls_failed: AtomicU64::new(0),
            closes: Default::default(),
            connections: Mutex::new(BTreeMap::new()),
            sample: Mutex::new(Sample::default()),
        }
    }

    /// Registers a new connection.
    pub fn add_connection(&self, state: Arc<ConnectionState>) {
        self.connections_total.fetch_add(1, Ordering::Relaxed);
        lock(&self.connections).insert(state.id, state);
    }

    /// Returns every registered connection.
    pub fn connections(&self) -> Vec<Arc<ConnectionState>> {
        lock(&self.connections).values().cloned().collect()
    }

    /// Forgets a connection.
    pub fn remove_connection(&self, id: u64) {
        lock(&self.connections).remove(&id);
    }

    /// Counts a batch received: `deliveries` records were queued for subscribers.
    pub fn count_batch(&self, records: u64, bytes: u64, deliveries: u64) {
        self.records_in.fetch_add(records, Ordering::Relaxed);
        self.bytes_in.fetch_add(bytes, Ordering::Relaxed);
        self.deliveries.fetch_add(deliveries, Ordering::Relaxed);
    }

    /// Returns a number that grows whenever records come in or are queued for delivery: the
    /// server is quiet while it stands still.
    pub fn activity(&self) -> u64 {
        self.records_in
            .load(Ordering::Relaxed)
            .wrapping_add(self.deliveries.load(Ordering::Relaxed))
    }

    pub(crate) fn count_denied(&self) {
        self.denied.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_close(&self, reason: CloseReason) {
        self.closes[reason.index()].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_rejected_frame(&self) {
        self.rejected_frames.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_refused_request(&self) {
        self.refused_requests.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_refused_records(&self, count: u64) {
        self.refused_records.fetch_add(count, Ordering::Relaxed);
    }

    pub(crate) fn count_http_refused(&self) {
        self.http_refused.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_http_header_timeout(&self) {
        self.http_header_timeouts.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts an HTTPS connection whose TLS handshake failed, timed out, or never began
    /// (the client spoke plain HTTP).
    pub(crate) fn count_http_tls_failed(&self) {
        self.http_tls_failed.fetch_add(1, Ordering::Relaxed);
    }

    /// The HTTP front door's counters: connections open, refused over a limit, closed
    /// because no request head came in time, and failed TLS handshakes.
    pub fn http_value(&self, open: usize) -> Value {
        let load = |counter: &AtomicU64| Value::Int(counter.load(Ordering::Relaxed) as i64);
        Value::Map(vec![
            ("connections".into(), Value::Int(open as i64)),
            ("refused".into(), load(&self.http_refused)),
            ("header_timeouts".into(), load(&self.http_header_timeouts)),
            ("tls_failed".into(), load(&self.http_tls_failed)),
        ])
    }

    pub(crate) fn count_drops(&self, drops: &Drops) {
        self.drops.add(drops);
    }

    /// Returns the records lost so far (every reason but `superseded`, which latest-only
    /// subscribers ask for).
    pub fn dropped(&self) -> u64 {
        self.drops.snapshot().losses()
    }

    /// Returns how often connections closed for `reason`.
    pub fn closes(&self, reason: CloseReason) -> u64 {
        self.closes[reason.index()].load(Ordering::Relaxed)
    }

    fn delivered(&self) -> u64 {
        let connections = lock(&self.connections);
        connections
            .values()
            .flat_map(|c| {
                c.subscriptions()
                    .iter()
                    .map(|s| s.queue.delivered())
                    .collect::<Vec<_>>()
            })
            .sum()
    }

    /// Updates the record rates; called once per `elapsed` by the server's sampler task.
    pub fn sample(&self, elapsed: Duration) {
        let records_in = self.records_in.load(Ordering::Relaxed);
        let delivered = self.delivered();
        let mut sample = lock(&self.sample);
        let seconds = elapsed.as_secs_f64().max(1e-3);
        sample.rate_in = records_in.saturating_sub(sample.records_in) as f64 / seconds;
        sample.rate_out = delivered.saturating_sub(sample.delivered) as f64 / seconds;
        sample.records_in = records_in;
        sample.delivered = delivered;
    }

    /// Returns everything as named values, the body of a `MONITOR_REPLY`.
    pub fn snapshot(&self) -> Vec<Field> {
        let int = |v: u64| Value::Int(i64::try_from(v).unwrap_or(i64::MAX));
        let load = |counter: &AtomicU64| int(counter.load(Ordering::Relaxed));
        let sample = *lock(&self.sample);
        let connections = self.connections();
        let clients: Vec<Value> = connections
            .iter()
            .map(|c| Value::Map(connection_fields(c)))
            .collect();
        let subscriptions: usize = connections.iter().map(|c| c.subscriptions().len()).sum();
        let closes = CloseReason::ALL
            .iter()
            .map(|r| (r.name().to_string(), load(&self.closes[r.index()])));
        vec![
            ("server".into(), Value::Str(self.name.clone())),
            (
                "version".into(),
                Value::Str(env!("CARGO_PKG_VERSION").into()),
            ),
            (
                "uptime_ms".into(),
                int(self.started.elapsed().as_millis() as u64),
            ),
            ("connections".into(), int(connections.len() as u64)),
            ("connections_total".into(), load(&self.connections_total)),
            ("subscriptions".into(), int(subscriptions as u64)),
            ("records_in".into(), load(&self.records_in)),
            ("bytes_in".into(), load(&self.bytes_in)),
            ("deliveries".into(), load(&self.deliveries)),
            ("dropped".into(), int(self.dropped())),
            ("drops".into(), drops_map(&self.drops.snapshot())),
            ("rejected_frames".into(), load(&self.rejected_frames)),
            ("refused_requests".into(), load(&self.refused_requests)),
            ("refused_records".into(), load(&self.refused_records)),
            ("denied".into(), load(&self.denied)),
            ("rate_in".into(), Value::Float(sample.rate_in)),
            ("rate_out".into(), Value::Float(sample.rate_out)),
            ("closes".into(), Value::Map(closes.collect())),
            ("clients".into(), Value::Array(clients)),
        ]
    }
}

/// Losses by priority name, those with any.
pub(crate) fn priorities_map(lost: &[u64; 12]) -> Value {
    let fields = herald_proto::priority::ALL_PRIORITIES
        .iter()
        .filter(|p| lost[**p as usize] > 0)
        .map(|p| (p.name().to_string(), Value::from(lost[*p as usize])))
        .collect();
    Value::Map(fields)
}

/// Returns drop counts by reason as a map (reason name → count).
pub(crate) fn drops_map(drops: &Drops) -> Value {
    let entries = DropReason::ALL
        .iter()
        .map(|r| (r.name().to_string(), Value::Int(drops.get(*r) as i64)));
    Value::Map(entries.collect())
}

fn connection_fields(connection: &ConnectionState) -> Vec<Field> {
    let int = |v: u64| Value::Int(i64::try_from(v).unwrap_or(i64::MAX));
    let subscriptions: Vec<Value> = connection
        .subscriptions()
        .iter()
        .map(|s| {
            Value::Map(vec![
                ("id".into(), int(s.id)),
                ("filter".into(), Value::Str(s.filter.clone())),
                (
                    "group".into(),
                    // Empty when the subscription is in no queue group.
                    Value::Str(s.group.as_deref().unwrap_or_default().to_string()),
                ),
                (
                    "policy".into(),
                    Value::Str(s.queue.config().policy.name().into()),
                ),
                ("depth".into(), int(s.queue.depth())),
                ("depth_bytes".into(), int(s.queue.depth_bytes())),
                ("delivered".into(), int(s.queue.delivered())),
                ("dropped".into(), int(s.queue.dropped())),
                ("drops".into(), drops_map(&s.queue.drops())),
                (
                    "dropped_priorities".into(),
                    priorities_map(&s.queue.lost_by_priority()),
                ),
            ])
        })
        .collect();
    let mut fields: Vec<Field> = vec![
        ("id".into(), int(connection.id)),
        ("name".into(), Value::Str(lock(&connection.name).clone())),
        ("peer".into(), Value::Str(connection.peer.to_string())),
        (
            "records_in".into(),
            int(connection.records_in.load(Ordering::Relaxed)),
        ),
    ];
    // Only where the server has identities: an open server's connections have none.
    if let Some(name) = connection.access.get().and_then(|access| access.name()) {
        fields.push(("identity".into(), Value::Str(name.to_string())));
    }
    if let Some(filtered) = &connection.filtered {
        fields.push(("filtered".into(), int(filtered.load(Ordering::Relaxed))));
    }
    fields.push(("subscriptions".into(), Value::Array(subscriptions)));
    fields
}
