//! The background side of a logger: a tokio task that wakes on its tick, on a full batch or
//! on an urgent record, turns entries into records and hands them to the client.
//!
//! Identical records collapse here, before they cost network, by the server's log-storm
//! rule ([`herald_proto::storm`]): held back, then sent as one summary per window.
//!
//! It runs on the runtime the logger was made in (a library must not start its own) and
//! never waits on the network while draining: [`Client::try_publish`] only encodes into the
//! client's send buffer, and a full send buffer counts as a drop. Work between two awaits
//! is bounded by [`DRAIN_CHUNK`] records. With a disk buffer it also does all the disk
//! work (`spooling`): the log calls never touch the disk.

use std::sync::Arc;
use std::time::{Duration, Instant};

use herald_proto::storm::{self, Collapser, StormRule, Summary, Verdict};
use herald_proto::{Kind, Record, Value};
use tokio::sync::{mpsc, oneshot};

use super::clock::Converter;
use super::drops::{DropReason, DropSnapshot};
use super::entry::{Entry, SubjectRef};
use super::link::Link;
use super::spool::Spool;
use super::subjects::Table;
use super::Shared;
use crate::ClientError;

/// Default time between two drains when nothing wakes the background side earlier.
pub const DEFAULT_TICK: Duration = Duration::from_millis(2);
/// Default least time between two drop reports (a flush or close reports at once).
pub const DEFAULT_DROP_REPORT_INTERVAL: Duration = Duration::from_secs(1);
/// Records handed to the client between two yields to the runtime.
const DRAIN_CHUNK: usize = 256;
/// Least time between two ends of storm windows looked for.
const STORM_TICK: Duration = Duration::from_millis(100);
/// The field that marks a record sent as flight-recorder context.
pub const FLIGHT_RECORDER_FIELD: &str = "flight_recorder";

/// What a logger handle asks of the background side.
pub(crate) enum Command {
    /// Hand over everything buffered (and report drops), then answer.
    Flush(oneshot::Sender<()>),
    /// Hand over everything buffered, report drops, answer and stop.
    Close(CloseAck),
}

/// How the background side answers a close.
pub(crate) enum CloseAck {
    /// An async `close`, which flushes the client itself once answered.
    Async(oneshot::Sender<()>),
    /// A `Drop` waiting on a thread: the background side flushes the client first.
    Blocking {
        done: std::sync::mpsc::SyncSender<()>,
        flush_timeout: Duration,
    },
}

/// The background side's state.
pub(crate) struct Worker {
    pub(crate) shared: Arc<Shared>,
    pub(crate) link: Link,
    /// The disk buffer, if the logger has one.
    pub(crate) spool: Option<Spool>,
    pub(crate) commands: mpsc::UnboundedReceiver<Command>,
    pub(crate) tick: Duration,
    pub(crate) report_interval: Duration,
    /// The logger's own subject, on which drops are reported.
    pub(crate) report_subject: String,
    /// When identical records collapse.
    pub(crate) storm: StormRule,
    /// Longest time an async close spends sending what the disk buffer holds.
    pub(crate) close_timeout: Duration,
}

impl Worker {
    /// Runs until the logger is closed or its last handle is dropped.
    pub(crate) async fn run(self) {
        let mut state = Drain::new(self.link, Arc::clone(&self.shared), self.storm);
        state.spool = self.spool;
        let mut commands = self.commands;
        let mut busy = false;
        loop {
            // While the disk buffer has more to send, the next step goes at once.
            let pause = if busy { Duration::ZERO } else { self.tick };
            let command = tokio::select! {
                biased;
                command = commands.recv() => Some(command),
                () = self.shared.buffer.woken() => None,
                () = tokio::time::sleep(pause) => None,
            };
            self.shared.buffer.rearm();
            match command {
                None => {
                    busy = state
                        .step(&self.report_subject, Some(self.report_interval))
                        .await;
                }
                Some(Some(Command::Flush(reply))) => {
                    busy = state.step(&self.report_subject, None).await;
                    let _ = reply.send(());
                }
                Some(Some(Command::Close(ack))) => {
                    return state
                        .close(&self.report_subject, ack, self.close_timeout)
                        .await;
                }
                // Every handle's guard sends `Close` when dropped, so this is a guard
                // that could not: stop without waiting for anyone.
                Some(None) => return,
            }
        }
    }
}

/// Turns entries into records and keeps the drop accounting.
pub(super) struct Drain {
    pub(super) link: Link,
    pub(super) shared: Arc<Shared>,
    /// The disk buffer, if any.
    pub(super) spool: Option<Spool>,
    /// True while records go to `spilled` (for the disk buffer) instead of the client.
    pub(super) spilling: bool,
    /// Records encoded for the disk buffer: (priority, bytes).
    pub(super) spilled: Vec<(u8, Vec<u8>)>,
    /// Reused for every entry, so its strings keep their capacity.
    record: Record,
    subjects: Arc<Table>,
    reported: DropSnapshot,
    last_report: Option<Instant>,
    /// Turns the entries' stamps into times; anchored anew at each drain.
    convert: Converter,
    /// The latest time given to a record of each shard: a record is never given an earlier
    /// one than the record logged before it on its shard (two drains' anchors may differ by
    /// a little).
    floors: Vec<i64>,
    /// The floor of the shard being drained.
    floor: i64,
    /// Where deferred texts are rendered, kept between entries.
    scratch: Vec<u8>,
    /// Log storms being collapsed, and when their windows were last looked at.
    storms: Collapser<Record>,
    storm_tick: Instant,
}

impl Drain {
    fn new(link: Link, shared: Arc<Shared>, storm: StormRule) -> Self {
        let record = Record {
            origin: crate::origin::local_origin(),
            ..Record::new(Kind::Log, "")
        };
        Drain {
            link,
            spool: None,
            spilling: false,
            spilled: Vec::new(),
            subjects: shared.subjects.snapshot(),
            shared,
            record,
            reported: DropSnapshot::default(),
            last_report: None,
            convert: Converter::default(),
            floors: Vec::new(),
            floor: i64::MIN,
            scratch: Vec::new(),
            storms: Collapser::new(storm),
            storm_tick: Instant::now(),
        }
    }

    /// Does what a wake-up asks: without a disk buffer, hands the buffered records to the
    /// client (if there is one yet) and reports drops; with one, see `spooling`. Returns
    /// true if there is more to do at once.
    async fn step(&mut self, subject: &str, interval: Option<Duration>) -> bool {
        if self.spool.is_some() {
            return self.spooled_step(subject, interval).await;
        }
        let connected = self.link.client().await.is_some();
        self.salvage();
        if !connected {
            return false; // not connected yet: the records wait in the buffer
        }
        self.drain().await;
        self.report_drops(subject, interval);
        false
    }

    /// Hands over what each shard holds when the drain reaches it (so that busy logging
    /// threads cannot keep it going forever), yielding to the runtime between chunks.
    pub(super) async fn drain(&mut self) {
        self.convert = self.shared.clock.converter();
        let mut chunk_left = DRAIN_CHUNK;
        let shards = self.shared.buffer.shard_count();
        self.floors.resize(shards, i64::MIN);
        for shard in 0..shards {
            self.floor = self.floors[shard];
            for _ in 0..self.shared.buffer.shard_len(shard) {
                let Some(entry) = self.shared.buffer.pop(shard) else {
                    break;
                };
                self.send(entry);
                chunk_left -= 1;
                if chunk_left == 0 {
                    chunk_left = DRAIN_CHUNK;
                    self.floors[shard] = self.floor;
                    tokio::task::yield_now().await;
                }
            }
            self.floors[shard] = self.floor;
        }
        if self.storm_tick.elapsed() >= STORM_TICK {
            self.storm_tick = Instant::now();
            let mut summaries = Vec::new();
            let now = herald_proto::time::now_nanos();
            self.storms.tick(now, &mut summaries);
            self.send_summaries(summaries);
        }
    }

    /// Sends storm summaries: each the last record held back, marked.
    fn send_summaries(&mut self, summaries: Vec<Summary<Record>>) {
        for summary in summaries {
            let marks = storm::summary_fields(&summary);
            let mut record = summary.record;
            storm::put_marks(&mut record.fields, marks);
            self.deliver(&record);
        }
    }

    /// Hands `record` to the client, or encodes it for the disk buffer while spilling;
    /// counts it if it cannot go.
    fn deliver(&mut self, record: &Record) {
        if self.spilling {
            let mut bytes = Vec::new();
            record.encode(&mut bytes);
            if bytes.len() > super::spool::MAX_SPILLED_RECORD_BYTES {
                self.shared
                    .drops
                    .count(record.priority, DropReason::Rejected);
            } else {
                self.spilled.push((record.priority as u8, bytes));
            }
            return;
        }
        let Some(client) = self.link.current() else {
            self.shared.drops.count(record.priority, DropReason::Closed);
            return;
        };
        if let Err(error) = client.try_publish(record) {
            self.shared.drops.count(record.priority, reason(&error));
        }
    }

    /// Hands over `entry`, preceded by the flight recorder's context it carries.
    fn send(&mut self, mut entry: Entry) {
        for context in std::mem::take(&mut entry.context) {
            self.publish(context, true);
        }
        self.publish(entry, false);
    }

    fn publish(&mut self, entry: Entry, context: bool) {
        let priority = entry.priority;
        self.fill(entry);
        if !context {
            // In the order logged on the shard (context records are older by nature).
            self.record.time = self.record.time.max(self.floor);
            self.floor = self.record.time;
        }
        if context {
            let mark = (FLIGHT_RECORDER_FIELD.to_string(), Value::Bool(true));
            self.record.fields.push(mark);
        } else if self.storms.rule().is_on() {
            let r = &self.record;
            let key = storm::key(
                r.subject.as_bytes(),
                r.priority as u8,
                r.origin.host.as_bytes(),
                r.origin.process.as_bytes(),
                r.origin.log_id.as_bytes(),
                r.text.as_bytes(),
            );
            let now = herald_proto::time::now_nanos();
            let marked = || r.fields.iter().any(|(name, _)| name == storm::STORM_FIELD);
            match self.storms.offer(key, now, r.time, || r.clone(), marked) {
                Verdict::Pass => {}
                Verdict::Starts => {
                    let marks = storm::collapsing_fields(self.storms.rule().window_ns);
                    storm::put_marks(&mut self.record.fields, marks);
                }
                Verdict::Held => return,
            }
        }
        debug_assert_eq!(priority, self.record.priority);
        let record = std::mem::take(&mut self.record);
        self.deliver(&record);
        self.record = record;
    }

    /// Copies `entry` into the reused record.
    fn fill(&mut self, entry: Entry) {
        let Entry {
            time,
            priority,
            subject,
            text,
            fields,
            thread,
            source,
            context,
        } = entry;
        debug_assert!(context.is_empty(), "context is sent before its record");
        if let SubjectRef::Id(id) = subject {
            if self.subjects.name(id).is_none() {
                self.subjects = self.shared.subjects.snapshot();
            }
        }
        let record = &mut self.record;
        record.time = self.convert.nanos(time);
        record.priority = priority;
        let subject = match &subject {
            SubjectRef::Id(id) => self.subjects.name(*id).unwrap_or_default(),
            SubjectRef::Owned(name) => name,
        };
        debug_assert!(!subject.is_empty(), "subject ids come from the table");
        replace(&mut record.subject, subject);
        text.write_to(&mut record.text, &mut self.scratch);
        record.fields = fields;
        replace(&mut record.origin.thread, thread.as_str());
        replace(&mut record.origin.file, source.file);
        replace(&mut record.origin.routine, source.routine);
        record.origin.line = (source.line > 0).then_some(u64::from(source.line));
    }

    /// Publishes a WARNING about the drops since the last report, unless there were none
    /// or the last report is younger than `interval` (`None` reports at once).
    pub(super) fn report_drops(&mut self, subject: &str, interval: Option<Duration>) {
        let now = self.shared.drops.snapshot();
        let delta = now.since(&self.reported);
        if delta.total() == 0 {
            return;
        }
        let recent = |at: Instant| interval.is_some_and(|interval| at.elapsed() < interval);
        if self.last_report.is_some_and(recent) {
            return;
        }
        let (now, delta) = if self.spilling {
            // Room for the report first, so that what making it sheds is in it too.
            self.make_room_for_report();
            let now = self.shared.drops.snapshot();
            (now, now.since(&self.reported))
        } else {
            (now, delta)
        };
        let report = Record {
            origin: herald_proto::Origin {
                host: self.record.origin.host.clone(),
                process: self.record.origin.process.clone(),
                routine: module_path!().to_string(),
                ..herald_proto::Origin::default()
            },
            ..delta.into_record(subject)
        };
        let published = match self.link.current() {
            _ if self.spilling => {
                // On disk, after the records logged before it; shed last.
                let mut bytes = Vec::new();
                report.encode(&mut bytes);
                self.spilled.push((super::spool::REPORT_RANK, bytes));
                Ok(())
            }
            Some(client) => client.try_publish(&report),
            None => return, // no connection yet: reported once there is one
        };
        match published {
            // Still no room: the counts stay unreported and go with the next report.
            Err(ClientError::BufferFull(_)) => return,
            // Reported, or nobody left to report to (the counts stay in `dropped()`).
            Ok(()) | Err(_) => self.reported = now,
        }
        self.last_report = Some(Instant::now());
    }

    /// Sends the summaries of the storms still going.
    pub(super) fn finish_storms(&mut self) {
        let mut ended = Vec::new();
        self.storms.finish(&mut ended);
        self.send_summaries(ended);
    }

    async fn close(mut self, subject: &str, ack: CloseAck, timeout: Duration) {
        self.shared.close();
        if self.spool.is_some() {
            return self.spooled_close(subject, ack, timeout).await;
        }
        self.salvage();
        self.drain().await;
        self.finish_storms();
        self.report_drops(subject, None);
        match ack {
            CloseAck::Async(reply) => {
                let _ = reply.send(());
            }
            CloseAck::Blocking {
                done,
                flush_timeout,
            } => {
                let flushed = match self.link.current() {
                    Some(client) => client.flush(flush_timeout).await,
                    None => Err(ClientError::Closed("no server answered".to_string())),
                };
                if let Err(error) = flushed {
                    tracing::debug!(error = %error, "herald logger could not flush on drop");
                }
                let _ = done.send(());
            }
        }
    }
}

fn replace(target: &mut String, value: &str) {
    target.clear();
    target.push_str(value);
}

fn reason(error: &ClientError) -> DropReason {
    match error {
        ClientError::BufferFull(_) => DropReason::SendBufferFull,
        ClientError::InvalidRecord(_) | ClientError::TooLarge { .. } => DropReason::Rejected,
        // A disk buffer's `state` could not be written to reserve numbers.
        ClientError::Numbering(_) => DropReason::DiskError,
        _ => DropReason::Closed,
    }
}
