//! [`StoreOptions`] and [`FsyncPolicy`]: how hard the store works to keep changes on disk.

use std::time::Duration;

/// Default time between fsyncs of the log, in milliseconds.
pub const DEFAULT_FSYNC_INTERVAL_MS: u64 = 100;

/// Default log size, in bytes, past which the store writes a snapshot and empties the log.
pub const DEFAULT_COMPACT_AFTER_BYTES: u64 = 64 * 1024 * 1024;

/// When the store asks the operating system to put the log on the disk itself.
///
/// Whatever the policy, every change is written to the log (handed to the operating system)
/// before the call that made it returns, so a process killed right after an acknowledgement —
/// even by SIGKILL — loses nothing. The policy only decides what a machine crash or power
/// loss can take: the changes since the last fsync.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsyncPolicy {
    /// fsync after every change: nothing acknowledged is lost even to a power cut, at the
    /// cost of one disk flush per change (milliseconds on disks without a write cache).
    Always,
    /// fsync a change once this much time has passed since the last fsync, and whenever
    /// [`InfoStore::sync`](crate::InfoStore::sync) is called (the server calls it on this
    /// interval, so an idle store is flushed too). A machine crash loses at most about this
    /// much time of changes.
    Interval(Duration),
    /// Never fsync except when compacting: the operating system writes when it likes.
    Never,
}

impl Default for FsyncPolicy {
    fn default() -> Self {
        FsyncPolicy::Interval(Duration::from_millis(DEFAULT_FSYNC_INTERVAL_MS))
    }
}

/// How an [`InfoStore`](crate::InfoStore) keeps its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreOptions {
    /// When to fsync the log.
    pub fsync: FsyncPolicy,
    /// Log size in bytes past which the store writes a new snapshot and empties the log, so a
    /// restart replays little. Compaction writes every object, so it blocks the store for
    /// about as long as writing the whole store takes.
    pub compact_after_bytes: u64,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            fsync: FsyncPolicy::default(),
            compact_after_bytes: DEFAULT_COMPACT_AFTER_BYTES,
        }
    }
}
