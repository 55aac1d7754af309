//! How the archive buffers, batches and syncs ([`ArchiveOptions`], [`FsyncPolicy`]), and
//! what it counted ([`ArchiveStats`], for the monitor).

use std::time::Duration;

use crate::rules::Rules;

/// When the writer makes what it wrote durable (fsync, or the store's equivalent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FsyncPolicy {
    /// At once for batches a producer waits on as `stored` (an empty one too: what came
    /// before it is synced); every `fsync_interval` for the rest (default).
    #[default]
    Stored,
    /// After every batch.
    Always,
    /// Only every `fsync_interval`; `stored` acknowledgements wait for it.
    Interval,
}

/// How the archive buffers, batches and syncs.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchiveOptions {
    /// What to archive.
    pub rules: Rules,
    /// Records the buffer holds before new ones are dropped.
    pub buffer_records: usize,
    /// Bytes the buffer holds before new ones are dropped.
    pub buffer_bytes: usize,
    /// Records written per batch at most.
    pub batch_records: usize,
    /// When to make writes durable.
    pub fsync: FsyncPolicy,
    /// How often to sync what no one waits on.
    pub fsync_interval: Duration,
    /// How often to drop expired days.
    pub expire_interval: Duration,
    /// Where records go when the buffer is full, before any is dropped (the embedded path);
    /// `None`: dropped at once.
    pub spill_dir: Option<std::path::PathBuf>,
    /// Bytes the spill files may hold.
    pub spill_bytes: u64,
}

impl Default for ArchiveOptions {
    fn default() -> Self {
        ArchiveOptions {
            rules: Rules::default(),
            buffer_records: 1_000_000,
            buffer_bytes: 128 * 1024 * 1024,
            batch_records: 100_000,
            fsync: FsyncPolicy::Stored,
            fsync_interval: Duration::from_secs(1),
            expire_interval: Duration::from_secs(600),
            spill_dir: None,
            spill_bytes: 4 << 30,
        }
    }
}

/// A snapshot of the archive's counters, for the monitor.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ArchiveStats {
    /// The store, for people.
    pub backend: String,
    /// Records waiting to be written (buffered and in the batch being written).
    pub backlog_records: u64,
    /// Their bytes.
    pub backlog_bytes: u64,
    /// Records written.
    pub written: u64,
    /// Records dropped because the buffer (and the spill) was full, or left unwritten at
    /// shutdown.
    pub dropped: u64,
    /// The same, by priority (indexed by the priority's number, 1 to 11).
    pub dropped_by_priority: [u64; 12],
    /// Records that went to the spill files since the start.
    pub spilled: u64,
    /// Bytes waiting in the spill files.
    pub spill_bytes: u64,
    /// Records already past their retention when they arrived (not written).
    pub expired_on_arrival: u64,
    /// Failed write or sync attempts (each retried).
    pub write_errors: u64,
    /// The last failure, if the last attempt failed.
    pub last_error: Option<String>,
    /// Days of a retention class dropped by expiry.
    pub slots_expired: u64,
    /// Stored records that queries skipped because they do not decode.
    pub skipped_unreadable: u64,
    /// What the store repaired at start-up.
    pub recovery: crate::backend::Recovery,
}
