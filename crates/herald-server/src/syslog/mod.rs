//! The syslog front door (`[syslog]`): UDP and TCP listeners whose messages become log
//! records routed and archived as if published here.
//!
//! - [`parse`]: one message, RFC 5424 or RFC 3164;
//! - [`record`]: a message as a record;
//! - [`listen`]: the sockets, TCP framing (RFC 6587) and the counters;
//! - [`door`]: the listeners running, which a reload may start, stop, move or restart
//!   ([`running`]: their state);
//! - [`stats`]: what the listeners counted, and where they are.
//!
//! A message that does not read is counted as bad input (`syslog.bad` in the monitor, the
//! last one kept as `syslog.last_bad` with its sender) and the listener goes on.

pub mod door;
pub mod listen;
pub mod parse;
pub mod record;
pub mod running;
pub mod stats;
pub mod udp;

pub use stats::{Addresses, SyslogStats};

use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::Bytes;
use herald_proto::frame::RawRecord;
use herald_proto::record::RecordMeta;
use herald_proto::time::now_nanos;
use herald_proto::{Kind, Record};
use herald_router::RouteContext;

use crate::shared::Shared;

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
