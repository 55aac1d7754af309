//! The background side of a logger: a tokio task that wakes on its tick, on a full batch or
//! on an urgent record, turns entries into records and hands them to the client.
//!
//! Identical records collapse here, before they cost network, by the server's log-storm
//! rule ([`herald_proto::storm`]): held back, then sent as one summary per window.
//!
//! It runs on the runtime the logger was made in (a library must not start its own) and
//! never waits on the network while draining: [`Client::try_publish`] only encodes into the
//! client's send buffer, and a full send buffer counts as a drop. Work between two awaits
//! is bounded by [`DRAIN_CHUNK`] records.

use std::sync::Arc;
use std::time::{Duration, Instant};

use herald_proto::storm::{self, Collapser, StormRule, Summary, Verdict};
use herald_proto::{Kind, Record, Value};
use tokio::sync::{mpsc, oneshot};

use super::clock::Converter;
use super::drops::{DropReason, DropSnapshot};
use super::entry::{Entry, SubjectRef};
use super::subjects::Table;
use super::Shared;
use crate::{Client, ClientError};

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
    pub(crate) client: Client,
    pub(crate) commands: mpsc::UnboundedReceiver<Command>,
    pub(crate) tick: Duration,
    pub(crate) report_interval: Duration,
    /// The logger's own subject, on which drops are reported.
    pub(crate) report_subject: String,
    /// When identical records collapse.
    pub(crate) storm: StormRule,
}

impl Worker {
    /// Runs until the logger is closed or its last handle is dropped.
    pub(crate) async fn run(self) {
        let mut state = Drain::new(self.client, Arc::clone(&self.shared), self.storm);
        let mut commands = self.commands;
        loop {
            let command = tokio::select! {
                biased;
                command = commands.recv() => Some(command),
                () = self.shared.buffer.woken() => None,
                () = tokio::time::sleep(self.tick) => None,
            };
            self.shared.buffer.rearm();
            match command {
                None => {
                    state.drain().await;
                    state.report_drops(&self.report_subject, Some(self.report_interval));
                }
                Some(Some(Command::Flush(reply))) => {
                    state.drain().await;
                    state.report_drops(&self.report_subject, None);
                    let _ = reply.send(());
                }
                Some(Some(Command::Close(ack))) => {
                    return state.close(&self.report_subject, ack).await;
                }
                // Every handle's guard sends `Close` when dropped, so this is a guard
                // that could not: stop without waiting for anyone.
                Some(None) => return,
            }
        }
    }
}

/// Turns entries into records and keeps the drop accounting.
struct Drain {
    client: Client,
    shared: Arc<Shared>,
    /// Reused for every entry, so its strings keep their capacity.
    record: Record,
    subjects: Arc<Table>,
    reported: DropSnapshot,
    last_report: Option<Instant>,
    /// Turns the entries' stamps into times; anchored anew at each drain.
    convert: Converter,
    /// Where deferred texts are rendered, kept between entries.
    scratch: Vec<u8>,
    /// Log storms being collapsed, and when their windows were last looked at.
    storms: Collapser<Record>,
    storm_tick: Instant,
}

impl Drain {
    fn new(client: Client, shared: Arc<Shared>, storm: StormRule) -> Self {
        let record = Record {
            origin: crate::origin::local_origin(),
            ..Record::new(Kind::Log, "")
        };
        Drain {
            client,
            subjects: shared.subjects.snapshot(),
            shared,
            record,
            reported: DropSnapshot::default(),
            last_report: None,
            convert: Converter::default(),
            scratch: Vec::new(),
            storms: Collapser::new(storm),
            storm_tick: Instant::now(),
        }
    }

    /// Hands over what each shard holds when the drain reaches it (so that busy logging
    /// threads cannot keep it going forever), yielding to the runtime between chunks.
    async fn drain(&mut self) {
        self.convert = self.shared.clock.converter();
        let mut chunk_left = DRAIN_CHUNK;
        for shard in 0..self.shared.buffer.shard_count() {
            for _ in 0..self.shared.buffer.shard_len(shard) {
                let Some(entry) = self.shared.buffer.pop(shard) else {
                    break;
                };
                self.send(entry);
                chunk_left -= 1;
                if chunk_left == 0 {
                    chunk_left = DRAIN_CHUNK;
                    tokio::task::yield_now().await;
                }
            }
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
            if let Err(error) = self.client.try_publish(&record) {
                self.shared.drops.count(record.priority, reason(&error));
            }
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
        if let Err(error) = self.client.try_publish(&self.record) {
            self.shared.drops.count(priority, reason(&error));
        }
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
    fn report_drops(&mut self, subject: &str, interval: Option<Duration>) {
        let now = self.shared.drops.snapshot();
        let delta = now.since(&self.reported);
        if delta.total() == 0 {
            return;
        }
        let recent = |at: Instant| interval.is_some_and(|interval| at.elapsed() < interval);
        if self.last_report.is_some_and(recent) {
            return;
        }
        let report = Record {
            origin: herald_proto::Origin {
                host: self.record.origin.host.clone(),
                process: self.record.origin.process.clone(),
                routine: module_path!().to_string(),
                ..herald_proto::Origin::default()
            },
            ..delta.into_record(subject)
        };
        match self.client.try_publish(&report) {
            // Still no room: the counts stay unreported and go with the next report.
            Err(ClientError::BufferFull(_)) => return,
            // Reported, or nobody left to report to (the counts stay in `dropped()`).
            Ok(()) | Err(_) => self.reported = now,
        }
        self.last_report = Some(Instant::now());
    }

    async fn close(mut self, subject: &str, ack: CloseAck) {
        self.shared.close();
        self.drain().await;
        let mut ended = Vec::new();
        self.storms.finish(&mut ended);
        self.send_summaries(ended);
        self.report_drops(subject, None);
        match ack {
            CloseAck::Async(reply) => {
                let _ = reply.send(());
            }
            CloseAck::Blocking {
                done,
                flush_timeout,
            } => {
                if let Err(error) = self.client.flush(flush_timeout).await {
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
        _ => DropReason::Closed,
    }
}
