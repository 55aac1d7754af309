//! Every record the logger loses is counted here, by priority and by reason, and reported
//! to the server as a WARNING record once the background side gets going again.

use std::sync::atomic::{AtomicU64, Ordering};

use herald_proto::priority::ALL_PRIORITIES;
use herald_proto::{Kind, Priority, Record, Value};

/// The `type` of the record that reports drops.
pub const DROP_REPORT_TYPE: &str = "herald.logger.dropped";

/// Why a record was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DropReason {
    /// The logger's buffer was full (and the logger does not wait, or waited in vain).
    BufferFull,
    /// The client's send buffer was full when the background side handed the record over.
    SendBufferFull,
    /// The client refused the record (bad subject, larger than a frame).
    Rejected,
    /// The logger or its connection was closed.
    Closed,
    /// Shed from the disk buffer when its quota was full.
    DiskQuota,
    /// Cut from a torn segment tail of the disk buffer after a crash.
    DiskTorn,
    /// The disk buffer could not write it (disk full, I/O error).
    DiskError,
}

/// How many reasons there are.
const REASONS: usize = 7;

impl DropReason {
    const ALL: [DropReason; REASONS] = [
        DropReason::BufferFull,
        DropReason::SendBufferFull,
        DropReason::Rejected,
        DropReason::Closed,
        DropReason::DiskQuota,
        DropReason::DiskTorn,
        DropReason::DiskError,
    ];

    fn name(self) -> &'static str {
        match self {
            DropReason::BufferFull => "buffer_full",
            DropReason::SendBufferFull => "send_buffer_full",
            DropReason::Rejected => "rejected",
            DropReason::Closed => "closed",
            DropReason::DiskQuota => "disk_quota",
            DropReason::DiskTorn => "disk_torn",
            DropReason::DiskError => "disk_error",
        }
    }
}

/// Priority wire values run 1..=11; slot 0 counts records whose priority is unknown (a
/// torn entry of the disk buffer whose header was cut).
const PRIORITY_SLOTS: usize = 12;

/// Drop counters shared by the logging threads and the background side.
#[derive(Default)]
pub(crate) struct DropCounter {
    by_priority: [AtomicU64; PRIORITY_SLOTS],
    by_reason: [AtomicU64; REASONS],
}

impl DropCounter {
    /// Counts one lost record.
    pub(crate) fn count(&self, priority: Priority, reason: DropReason) {
        self.by_priority[priority as usize].fetch_add(1, Ordering::Relaxed);
        self.by_reason[reason as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Counts `count` records lost, of priority slot `slot` (a wire value, 0 unknown), or of
    /// the disk buffer's rank of a drop report, which is counted as the WARNING it is.
    pub(crate) fn count_slot(&self, slot: usize, reason: DropReason, count: u64) {
        if count == 0 {
            return;
        }
        let slot = match slot {
            slot if slot == usize::from(super::spool::REPORT_RANK) => Priority::Warning as usize,
            slot if slot < PRIORITY_SLOTS => slot,
            _ => 0,
        };
        self.by_priority[slot].fetch_add(count, Ordering::Relaxed);
        self.by_reason[reason as usize].fetch_add(count, Ordering::Relaxed);
    }

    /// Returns the records lost so far.
    pub(crate) fn total(&self) -> u64 {
        self.by_reason
            .iter()
            .map(|n| n.load(Ordering::Relaxed))
            .sum()
    }

    /// Returns the current counts.
    pub(crate) fn snapshot(&self) -> DropSnapshot {
        DropSnapshot {
            by_priority: self
                .by_priority
                .each_ref()
                .map(|n| n.load(Ordering::Relaxed)),
            by_reason: self.by_reason.each_ref().map(|n| n.load(Ordering::Relaxed)),
        }
    }
}

/// Drop counts at one moment, or between two moments.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DropSnapshot {
    by_priority: [u64; PRIORITY_SLOTS],
    by_reason: [u64; REASONS],
}

impl DropSnapshot {
    /// Returns the records lost in all.
    pub(crate) fn total(&self) -> u64 {
        self.by_reason.iter().sum()
    }

    /// Returns the drops counted since `earlier`.
    pub(crate) fn since(&self, earlier: &DropSnapshot) -> DropSnapshot {
        DropSnapshot {
            by_priority: std::array::from_fn(|i| self.by_priority[i] - earlier.by_priority[i]),
            by_reason: std::array::from_fn(|i| self.by_reason[i] - earlier.by_reason[i]),
        }
    }

    /// Returns the WARNING record that reports these drops on `subject`: text for people,
    /// and the fields `dropped` (total), `dropped_by_priority` and `dropped_by_reason`
    /// (maps from name to count, nonzero entries only).
    pub(crate) fn into_record(self, subject: &str) -> Record {
        let names = ALL_PRIORITIES.iter().map(|p| (p.name(), *p as usize));
        let by_priority: Vec<(String, Value)> = names
            .chain([("unknown", 0)])
            .map(|(name, slot)| (name, self.by_priority[slot]))
            .filter(|(_, n)| *n > 0)
            .map(|(name, n)| (name.to_string(), count_value(n)))
            .collect();
        let by_reason: Vec<(String, Value)> = DropReason::ALL
            .iter()
            .map(|r| (r.name(), self.by_reason[*r as usize]))
            .filter(|(_, n)| *n > 0)
            .map(|(name, n)| (name.to_string(), count_value(n)))
            .collect();
        let text = format!(
            "logger dropped {} records ({}; {})",
            self.total(),
            describe(&by_priority),
            describe(&by_reason)
        );
        Record {
            priority: Priority::Warning,
            type_name: DROP_REPORT_TYPE.to_string(),
            text,
            fields: vec![
                ("dropped".to_string(), count_value(self.total())),
                ("dropped_by_priority".to_string(), Value::Map(by_priority)),
                ("dropped_by_reason".to_string(), Value::Map(by_reason)),
            ],
            ..Record::new(Kind::Log, subject)
        }
    }
}

fn count_value(count: u64) -> Value {
    Value::Int(i64::try_from(count).unwrap_or(i64::MAX))
}

/// Returns `"3 DEBUG, 2 INFO"`.
fn describe(counts: &[(String, Value)]) -> String {
    let parts: Vec<String> = counts
        .iter()
        .map(|(name, count)| match count {
            Value::Int(n) => format!("{n} {name}"),
            _ => name.clone(),
        })
        .collect();
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_the_drops_since_the_last_report() {
        let counter = DropCounter::default();
        counter.count(Priority::Info, DropReason::BufferFull);
        let reported = counter.snapshot();
        counter.count(Priority::Debug, DropReason::BufferFull);
        counter.count(Priority::Debug, DropReason::BufferFull);
        counter.count(Priority::Error, DropReason::SendBufferFull);
        assert_eq!(counter.total(), 4);
        let delta = counter.snapshot().since(&reported);
        assert_eq!(delta.total(), 3);
        let record = delta.into_record("APP");
        assert_eq!(record.priority, Priority::Warning);
        assert_eq!(record.subject, "APP");
        assert_eq!(
            record.text,
            "logger dropped 3 records (2 DEBUG, 1 ERROR; 2 buffer_full, 1 send_buffer_full)"
        );
        assert_eq!(record.fields[0], ("dropped".to_string(), Value::Int(3)));
    }

    #[test]
    fn disk_losses_are_reported_by_reason_and_an_unknown_priority_by_that_name() {
        let counter = DropCounter::default();
        counter.count_slot(Priority::Debug as usize, DropReason::DiskQuota, 5);
        counter.count_slot(0, DropReason::DiskTorn, 1);
        // A drop report lost from the disk buffer is the WARNING it is, not its rank there.
        let report = usize::from(crate::logger::spool::REPORT_RANK);
        counter.count_slot(report, DropReason::DiskTorn, 1);
        let record = counter.snapshot().into_record("APP");
        assert_eq!(
            record.text,
            "logger dropped 7 records (5 DEBUG, 1 WARNING, 1 unknown; 5 disk_quota, 2 disk_torn)"
        );
    }
}
