//! [`Entry`]: a record on its way into the archive, and [`Row`]: one coming back out.

use herald_proto::archive::{Cursor, StoredRecord};
use herald_proto::frame::RawRecord;
use herald_proto::Kind;

use crate::keep::Keep;

/// Nanoseconds in a day.
pub const DAY_NANOS: i64 = 86_400_000_000_000;

/// Returns the day (since the Unix epoch, UTC) that `time` falls on.
pub fn day_of(time: i64) -> i32 {
    i32::try_from(time.div_euclid(DAY_NANOS)).unwrap_or(i32::MAX)
}

/// Returns the first nanosecond of `day`.
pub fn day_start(day: i32) -> i64 {
    i64::from(day).saturating_mul(DAY_NANOS)
}

/// Returns `day` as `2026-11-20`.
pub fn day_name(day: i32) -> String {
    herald_proto::time::format_iso8601(day_start(day))[..10].to_string()
}

/// Parses `2026-11-20` back into a day number (the inverse of [`day_name`]).
pub fn parse_day_name(name: &str) -> Option<i32> {
    let nanos = herald_proto::time::parse_iso8601(&format!("{name}T00:00:00Z")).ok()?;
    i32::try_from(nanos.div_euclid(DAY_NANOS)).ok()
}

/// A record to archive: the record as it arrived, with what the server added.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The server's sequence number.
    pub seq: u64,
    /// The server's clock when it arrived.
    pub received: i64,
    /// The retention class chosen by the rules.
    pub keep: Keep,
    /// The record.
    pub record: RawRecord,
}

/// Which table a record goes to: logs are read by time across all subjects, everything
/// else by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Table {
    /// Information-object changes and messages, clustered by (name, time).
    Samples,
    /// Log records, clustered by time.
    Logs,
}

impl Table {
    /// Returns the table `kind` goes to.
    pub fn of(kind: Kind) -> Table {
        match kind {
            Kind::Log => Table::Logs,
            Kind::Message | Kind::Info => Table::Samples,
        }
    }

    /// Returns the table's name in both stores.
    pub fn name(self) -> &'static str {
        match self {
            Table::Samples => "samples",
            Table::Logs => "logs",
        }
    }
}

impl Entry {
    /// Returns the table this entry goes to.
    pub fn table(&self) -> Table {
        Table::of(self.record.meta.kind)
    }

    /// Returns the day its producer's time falls on.
    pub fn day(&self) -> i32 {
        day_of(self.record.meta.time)
    }
}

/// A record read back, with its time for ordering and paging.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Producer's time.
    pub time: i64,
    /// The record and what the server added.
    pub stored: StoredRecord,
    /// The store knows the record passed this version's record checks when it was written
    /// ([`Backend::write_checked`](crate::Backend::write_checked)): readers need not check
    /// it again before handing it out.
    pub checked: bool,
}

impl Row {
    /// Returns the row's position, as a cursor.
    pub fn cursor(&self) -> Cursor {
        Cursor {
            time: self.time,
            seq: self.stored.seq,
        }
    }
}
