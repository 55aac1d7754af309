//! The syslog front door (`[syslog]`): UDP and TCP listeners whose messages become log
//! records routed and archived as if published here.
//!
//! - [`parse`]: one message, RFC 5424 or RFC 3164;
//! - [`record`]: a message as a record;
//! - [`listen`]: the sockets, TCP framing (RFC 6587) and the counters;
//! - [`door`]: the listeners running, which a reload may start, stop, move or restart.
//!
//! A message that does not read is counted as bad input (`syslog.bad` in the monitor, the
//! last one kept as `syslog.last_bad` with its sender) and the listener goes on.

pub mod door;
pub mod listen;
pub mod parse;
pub mod record;
pub mod udp;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use herald_proto::frame::RawRecord;
use herald_proto::record::RecordMeta;
use herald_proto::time::now_nanos;
use herald_proto::value::{Field, Value};
use herald_proto::{Kind, Record};
use herald_router::RouteContext;

use crate::server::Shared;

/// Bytes of a bad message kept for the monitor.
const SAMPLE_BYTES: usize = 200;

/// What the listeners counted.
#[derive(Debug, Default)]
pub struct SyslogStats {
    /// Where the listeners are: a reload may move them.
    addresses: Mutex<Addresses>,
    /// Messages taken as records.
    pub records: AtomicU64,
    /// Messages refused as bad input.
    pub bad: AtomicU64,
    /// TCP connections ever accepted.
    pub connections: AtomicU64,
    /// TCP connections refused over the connection limits.
    pub refused: AtomicU64,
    /// The last bad message: sender, why, its first bytes.
    last_bad: Mutex<Option<(String, String, String)>>,
}

/// The UDP and TCP addresses listened on.
#[derive(Debug, Default, Clone, Copy)]
pub struct Addresses {
    /// The UDP socket's address.
    pub udp: Option<SocketAddr>,
    /// The TCP listener's address.
    pub tcp: Option<SocketAddr>,
    /// The UDP socket's inode, by which the kernel counts what it dropped for it.
    pub udp_inode: Option<u64>,
}

impl SyslogStats {
    /// Returns where the listeners are.
    pub fn addresses(&self) -> Addresses {
        *self.addresses.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records where the listeners are now.
    pub fn set_addresses(&self, addresses: Addresses) {
        *self.addresses.lock().unwrap_or_else(|p| p.into_inner()) = addresses;
    }

    /// Returns true while a listener runs (the monitor has a `syslog` section).
    pub fn is_on(&self) -> bool {
        let addresses = self.addresses();
        addresses.udp.is_some() || addresses.tcp.is_some()
    }
    /// Counts a bad message from `peer`, keeping it as the sample.
    pub fn bad(&self, peer: &str, why: &str, bytes: &[u8]) {
        self.bad.fetch_add(1, Ordering::Relaxed);
        let sample = String::from_utf8_lossy(&bytes[..bytes.len().min(SAMPLE_BYTES)]);
        let mut last = self.last_bad.lock().unwrap_or_else(|p| p.into_inner());
        *last = Some((peer.to_string(), why.to_string(), sample.into_owned()));
        tracing::debug!(peer, why, "syslog: bad message");
    }

    /// Returns the counters as the monitor's `syslog` section.
    pub fn snapshot(&self) -> Value {
        let int = |n: u64| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
        let address =
            |a: Option<SocketAddr>| Value::Str(a.map(|a| a.to_string()).unwrap_or_default());
        let addresses = self.addresses();
        let mut fields: Vec<Field> = vec![
            ("udp".into(), address(addresses.udp)),
            ("tcp".into(), address(addresses.tcp)),
            ("records".into(), int(self.records.load(Ordering::Relaxed))),
            ("bad".into(), int(self.bad.load(Ordering::Relaxed))),
            (
                "connections".into(),
                int(self.connections.load(Ordering::Relaxed)),
            ),
            ("refused".into(), int(self.refused.load(Ordering::Relaxed))),
        ];
        if let Some(drops) = addresses.udp_inode.and_then(udp::drops) {
            fields.push(("udp_dropped".into(), int(drops)));
        }
        let last = self.last_bad.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((peer, why, sample)) = last.as_ref() {
            fields.push((
                "last_bad".into(),
                Value::Map(vec![
                    ("peer".into(), Value::Str(peer.clone())),
                    ("error".into(), Value::Str(why.clone())),
                    ("sample".into(), Value::Str(sample.clone())),
                ]),
            ));
        }
        Value::Map(fields)
    }
}

/// Turns messages into records and routes them, one batch at a time. The records of a
/// batch are encoded one after the other into one buffer, checked as they are written, and
/// routed as slices of it (as a `PUBLISH` frame's records are); the record they are filled
/// into is reused, so a message costs no allocation of its own.
pub struct Ingest {
    shared: Arc<Shared>,
    /// The configuration in force, read again at every flush (a reload may change it).
    config: Arc<crate::Config>,
    stats: Arc<SyslogStats>,
    route: RouteContext,
    /// The batch's records, encoded, and where each is with its routing fields.
    encoded: Vec<u8>,
    spans: Vec<(usize, RecordMeta)>,
    records: Vec<RawRecord>,
    record: Record,
    /// The subject template of `config`, read once.
    template: record::Template,
    /// When the batch's first message was read: the time of the batch's messages that
    /// carry none (one clock read a batch, not one a message).
    received: Option<i64>,
}

/// Returns the subject template `config` gives syslog records.
fn template_of(config: &crate::Config) -> record::Template {
    record::Template::new(
        config
            .syslog
            .as_ref()
            .map_or(crate::config::syslog::DEFAULT_SUBJECT, |c| {
                c.subject.as_str()
            }),
    )
}

impl Ingest {
    /// Returns an ingest for one listener or connection.
    pub fn new(shared: Arc<Shared>, stats: Arc<SyslogStats>) -> Ingest {
        let config = shared.config();
        Ingest {
            template: template_of(&config),
            received: None,
            config,
            shared,
            stats,
            route: RouteContext::default(),
            encoded: Vec::new(),
            spans: Vec::new(),
            records: Vec::new(),
            record: Record::new(Kind::Log, ""),
        }
    }

    /// Reads one message from `peer`; a good one waits for [`Ingest::flush`].
    pub fn message(&mut self, bytes: &[u8], peer: &str) {
        let now = *self.received.get_or_insert_with(now_nanos);
        let message = match parse::parse(bytes, now) {
            Ok(message) => message,
            Err(why) => return self.stats.bad(peer, &why, bytes),
        };
        record::fill(&mut self.record, message, &self.template, now, peer);
        let start = self.encoded.len();
        // The record checks, as for a published record, made while it is written: a subject
        // the template made too long, for one, refuses this message alone.
        match self.record.encode_meta(&mut self.encoded) {
            Ok(meta) => self.spans.push((start, meta)),
            Err(err) => {
                self.encoded.truncate(start);
                let why = format!("the record made of it is refused: {err}");
                self.stats.bad(peer, &why, bytes);
            }
        }
    }

    /// Routes the records read since the last flush (and offers them to the archive).
    pub async fn flush(&mut self) {
        // The next batch's buffer is made as large as this one at once, not grown to it
        // (growing was 5 % of a message's time).
        let room = self.encoded.len() + self.encoded.len() / 8;
        let batch = Bytes::from(std::mem::replace(
            &mut self.encoded,
            Vec::with_capacity(room),
        ));
        let spans = &self.spans;
        self.records.clear();
        self.records
            .extend(spans.iter().enumerate().map(|(index, (start, meta))| {
                let end = spans.get(index + 1).map_or(batch.len(), |(next, _)| *next);
                RawRecord {
                    bytes: batch.slice(*start..end),
                    meta: *meta,
                }
            }));
        self.spans.clear();
        self.received = None;
        let over_quota = crate::ingest::ingest(&self.shared, &mut self.route, &self.records).await;
        // Those refused over their source's quota are counted there (dropped, reason quota).
        let taken = self.records.len() as u64 - over_quota;
        self.stats.records.fetch_add(taken, Ordering::Relaxed);
        self.records.clear();
        let config = self.shared.config();
        if !Arc::ptr_eq(&config, &self.config) {
            self.template = template_of(&config);
            self.config = config;
        }
    }

    /// Returns how many records wait for [`Ingest::flush`].
    pub fn pending(&self) -> usize {
        self.spans.len()
    }
}
