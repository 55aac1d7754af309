//! How a logger behaves: [`LoggerOptions`] and its defaults.

use std::path::PathBuf;
use std::time::Duration;

use herald_proto::storm::StormRule;
use herald_proto::Priority;

use super::buffer::{
    default_buffer_shards, WhenFull, DEFAULT_BATCH_RECORDS, DEFAULT_BUFFER_RECORDS,
};
use super::recorder::{DEFAULT_FLIGHT_RECORDER_AGE, DEFAULT_FLIGHT_RECORDER_RECORDS};
use super::spool::DEFAULT_BUFFER_QUOTA_BYTES;
use super::worker::{DEFAULT_DROP_REPORT_INTERVAL, DEFAULT_TICK};

/// Default lowest priority a logger sends.
pub const DEFAULT_THRESHOLD: Priority = Priority::Info;
/// Default longest wait for the last records when a logger is dropped.
pub const DEFAULT_CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

/// How a logger behaves. Every field has a default; `LoggerOptions::new(subject)` is usual.
#[derive(Debug, Clone)]
pub struct LoggerOptions {
    /// The subject of records logged without one, and of drop reports.
    pub subject: String,
    /// Lowest priority sent; below it records go to the flight recorder.
    pub threshold: Priority,
    /// Records the buffer holds before log calls drop (or wait), all shards together.
    pub buffer_records: usize,
    /// Queues the buffer is split into; each thread uses one, so threads logging at the same
    /// time rarely touch the same memory. A power of two (rounded up); one thread can fill
    /// only its shard, `buffer_records / buffer_shards`. Default: four per core, at most 64.
    pub buffer_shards: usize,
    /// What a log call does when the buffer is full.
    pub when_full: WhenFull,
    /// Buffered records that wake the background side before its tick (counted per shard,
    /// `batch_records / buffer_shards`, by a thread's every 16th log call).
    pub batch_records: usize,
    /// Longest time a record waits in the buffer when nothing wakes the background side.
    pub tick: Duration,
    /// Records at or above this priority wake the background side at once.
    pub flush_immediately: Priority,
    /// Below-threshold records the flight recorder keeps; 0 turns it off.
    pub flight_recorder_records: usize,
    /// Flight-recorder records older than this (before the trigger) are not sent.
    pub flight_recorder_age: Duration,
    /// Sending a record at or above this priority sends the flight recorder's records first.
    pub flight_recorder_trigger: Priority,
    /// Least time between two drop reports.
    pub drop_report_interval: Duration,
    /// Longest wait for the last records when the last handle is dropped.
    pub close_timeout: Duration,
    /// Follow threshold messages sent through the server (`herald threshold`); see
    /// [`remote`](super::remote).
    pub remote_threshold: bool,
    /// When identical records collapse before they are sent (a log storm): the server's
    /// rule ([`herald_proto::storm`]), by default 10 per 10 s; `repeats: 0` sends all.
    pub storm: StormRule,
    /// The disk buffer's directory (`None`: no disk buffer). While no server answers, the
    /// background side moves the buffered records to segment files there; once one answers
    /// they are sent first, in order, with their timestamps and numbers; what is there when
    /// the program ends is sent at its next start. Only a logger that makes its own
    /// connection ([`Logger::connect`](super::Logger::connect)) may have one; one logger
    /// per directory. The files are those of the Python client's disk buffer
    /// (python/README.md, "Disk buffer").
    pub buffer_dir: Option<PathBuf>,
    /// Most bytes of segments the disk buffer holds; when full, the lowest priorities are
    /// shed first, and counted (`disk_quota`). At least 64 KiB.
    pub buffer_quota: u64,
}

impl LoggerOptions {
    /// Returns the default options with `subject`.
    pub fn new(subject: impl Into<String>) -> Self {
        LoggerOptions {
            subject: subject.into(),
            ..LoggerOptions::default()
        }
    }
}

impl Default for LoggerOptions {
    /// Returns the defaults, with the program's name as subject.
    fn default() -> Self {
        LoggerOptions {
            subject: program_name(),
            threshold: DEFAULT_THRESHOLD,
            buffer_records: DEFAULT_BUFFER_RECORDS,
            buffer_shards: default_buffer_shards(),
            when_full: WhenFull::default(),
            batch_records: DEFAULT_BATCH_RECORDS,
            tick: DEFAULT_TICK,
            flush_immediately: Priority::Emergency,
            flight_recorder_records: DEFAULT_FLIGHT_RECORDER_RECORDS,
            flight_recorder_age: DEFAULT_FLIGHT_RECORDER_AGE,
            flight_recorder_trigger: Priority::Error,
            drop_report_interval: DEFAULT_DROP_REPORT_INTERVAL,
            close_timeout: DEFAULT_CLOSE_TIMEOUT,
            remote_threshold: true,
            storm: StormRule::default(),
            buffer_dir: None,
            buffer_quota: DEFAULT_BUFFER_QUOTA_BYTES,
        }
    }
}

fn program_name() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.file_stem().map(|n| n.to_string_lossy().into_owned()))
        .filter(|name| herald_proto::record::check_subject(name).is_ok())
        .unwrap_or_else(|| "herald-client".to_string())
}
