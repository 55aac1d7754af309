//! [`Backend`]: what a store must do. Deliberately small — write, list, read one partition,
//! look back in one partition, expire — so that paging, merging across retention classes,
//! filters and decimation are written once (in [`crate::query`]) and the conformance suite
//! checks both stores through the same code.

use herald_proto::archive::Cursor;
use herald_proto::PrioritySet;

use crate::entry::{Entry, Row, Table};
use crate::error::ArchiveError;
use crate::keep::Keep;

/// What a read is about: one name's samples, or the log records of all subjects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source<'a> {
    /// The samples of this name.
    Samples(&'a str),
    /// Log records.
    Logs,
}

impl Source<'_> {
    /// Returns the table read.
    pub fn table(self) -> Table {
        match self {
            Source::Samples(_) => Table::Samples,
            Source::Logs => Table::Logs,
        }
    }
}

/// One day of one retention class: the unit stores write together and expire together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Slot {
    /// Day since the epoch (UTC).
    pub day: i32,
    /// Retention class.
    pub keep: Keep,
}

impl Slot {
    /// Returns whether everything in the slot is past its retention at `now`.
    pub fn expired(self, now: i64) -> bool {
        crate::entry::day_start(self.day.saturating_add(1)).saturating_add(self.keep.as_nanos())
            <= now
    }
}

/// Which rows of a partition to read: producer's time in `[from, to)`, strictly after
/// `after`, with a priority in `priorities` (logs only; samples ignore it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowRange {
    /// Start, inclusive.
    pub from: i64,
    /// End, exclusive.
    pub to: i64,
    /// Only rows after this position.
    pub after: Option<Cursor>,
    /// Only these priorities (logs).
    pub priorities: PrioritySet,
}

/// What a store found when it opened after a run that did not close it (a crash, a
/// SIGKILL, a power cut), and what it repaired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Recovery {
    /// The last run did not close the store.
    pub unclean: bool,
    /// Files that run wrote, checked at start-up.
    pub files_checked: u64,
    /// Files whose torn end (a block half-written when the run ended) was cut.
    pub files_cut: u64,
    /// Bytes cut from them: never records acknowledged as stored.
    pub bytes_cut: u64,
    /// Records put back from the store's own log of what it had not yet written in place.
    pub replayed: u64,
}

/// What [`Backend::expire`] removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Expired {
    /// Slots (days of a retention class) dropped.
    pub slots: u64,
}

/// A store for the archive. Every method may block; callers keep them off async threads.
pub trait Backend: Send + Sync {
    /// Names the store and where it keeps its data, for logs and the monitor.
    fn describe(&self) -> String;

    /// Writes `entries` (any mix of tables, days and classes). On success they are the
    /// store's and every read sees them; [`Backend::sync`] makes them durable. A store may
    /// keep them in memory until then (the block store keeps its open blocks there).
    ///
    /// # Errors
    /// [`ArchiveError`]; nothing of a failed call may be assumed written, and writing the
    /// same entries again must be harmless (rows are keyed by name, time and sequence).
    fn write(&self, entries: &[Entry]) -> Result<(), ArchiveError>;

    /// As [`Backend::write`], for entries whose records are all known to pass this
    /// version's record checks ([`RawRecord::new`](herald_proto::frame::RawRecord::new)):
    /// the server's, which its frame decoder checked, and `migrate`'s. A store may note it,
    /// so that its reads need not check them again ([`Row::checked`](crate::Row::checked)).
    ///
    /// # Errors
    /// As [`Backend::write`].
    fn write_checked(&self, entries: &[Entry]) -> Result<(), ArchiveError> {
        self.write(entries)
    }

    /// Makes everything written so far durable.
    ///
    /// # Errors
    /// [`ArchiveError`].
    fn sync(&self) -> Result<(), ArchiveError>;

    /// Returns the slots holding data of `source` between `first_day` and `last_day`
    /// (inclusive), in any order. May include slots that turn out to hold nothing for it.
    ///
    /// # Errors
    /// [`ArchiveError`].
    fn slots(
        &self,
        source: Source<'_>,
        first_day: i32,
        last_day: i32,
    ) -> Result<Vec<Slot>, ArchiveError>;

    /// Returns up to `limit` rows of `source` in `slot` within `range`, ordered by time and
    /// then sequence.
    ///
    /// # Errors
    /// [`ArchiveError`].
    fn read(
        &self,
        source: Source<'_>,
        slot: Slot,
        range: &RowRange,
        limit: usize,
    ) -> Result<Vec<Row>, ArchiveError>;

    /// Returns the last sample of `name` in `slot` at or before `time`.
    ///
    /// # Errors
    /// [`ArchiveError`].
    fn last_at(&self, name: &str, slot: Slot, time: i64) -> Result<Option<Row>, ArchiveError>;

    /// Drops every slot past its retention at `now` (whole days, never single rows).
    ///
    /// # Errors
    /// [`ArchiveError`].
    fn expire(&self, now: i64) -> Result<Expired, ArchiveError>;

    /// Returns what the store repaired when it opened (nothing, for stores that need no
    /// repair).
    fn recovery(&self) -> Recovery {
        Recovery::default()
    }
}
