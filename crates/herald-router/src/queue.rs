//! The bounded queue between the router and one subscriber's connection writer.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use herald_proto::Priority;
use tokio::sync::Notify;

/// Default bound of a subscriber queue, in records.
pub const DEFAULT_QUEUE_RECORDS: usize = 65_536;
/// Default bound of a subscriber queue, in bytes of encoded records.
pub const DEFAULT_QUEUE_BYTES: usize = 64 * 1024 * 1024;

/// One record on its way to one subscriber: shared bytes plus the server's stamps.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// The server's sequence number.
    pub seq: u64,
    /// The server's receive time, ns.
    pub received: i64,
    /// The record's priority (for shedding and gap notices).
    pub priority: Priority,
    /// The encoded record, shared with every other subscriber of it.
    pub record: Bytes,
}

/// Limits of one queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueLimits {
    /// Most records held.
    pub max_records: usize,
    /// Most record bytes held.
    pub max_bytes: usize,
}

impl Default for QueueLimits {
    fn default() -> Self {
        QueueLimits {
            max_records: DEFAULT_QUEUE_RECORDS,
            max_bytes: DEFAULT_QUEUE_BYTES,
        }
    }
}

/// Records that did not fit, since the writer last looked: the makings of a gap notice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Gap {
    /// How many records were dropped.
    pub count: u64,
    /// Lowest sequence number dropped.
    pub first_seq: u64,
    /// Highest sequence number dropped.
    pub last_seq: u64,
    /// Dropped records per priority (index = priority number).
    pub by_priority: [u64; 12],
}

impl Gap {
    fn add(&mut self, delivery: &Delivery) {
        if self.count == 0 {
            self.first_seq = delivery.seq;
        }
        self.count += 1;
        self.last_seq = delivery.seq;
        self.by_priority[delivery.priority as usize] += 1;
    }
}

#[derive(Debug, Default)]
struct Inner {
    items: VecDeque<Delivery>,
    bytes: usize,
    gap: Gap,
}

/// A bounded queue of deliveries for one subscriber. Publishers push, the subscriber's
/// connection writer drains; the lock is per subscriber, never shared by all connections.
#[derive(Debug)]
pub struct Queue {
    inner: Mutex<Inner>,
    limits: QueueLimits,
    writer: Arc<Notify>,
    pushed: AtomicU64,
    popped: AtomicU64,
    dropped: AtomicU64,
}

impl Queue {
    /// Returns an empty queue whose writer is woken through `writer`.
    pub fn new(limits: QueueLimits, writer: Arc<Notify>) -> Self {
        Queue {
            inner: Mutex::new(Inner::default()),
            limits,
            writer,
            pushed: AtomicU64::new(0),
            popped: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding this lock leaves plain data behind; keep serving it.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Appends `deliveries`; those that do not fit are dropped (policy `drop-new`), counted
    /// and remembered for the next gap notice. Wakes the writer. Returns how many were dropped.
    pub fn push_batch(&self, deliveries: &mut Vec<Delivery>) -> u64 {
        let mut dropped = 0;
        let mut accepted = 0;
        {
            let mut inner = self.lock();
            for delivery in deliveries.drain(..) {
                let len = delivery.record.len();
                if inner.items.len() >= self.limits.max_records
                    || inner.bytes + len > self.limits.max_bytes
                {
                    inner.gap.add(&delivery);
                    dropped += 1;
                    continue;
                }
                inner.bytes += len;
                inner.items.push_back(delivery);
                accepted += 1;
            }
        }
        self.pushed.fetch_add(accepted, Ordering::Relaxed);
        if dropped > 0 {
            self.dropped.fetch_add(dropped, Ordering::Relaxed);
        }
        self.writer.notify_one();
        dropped
    }

    /// Moves up to `max_bytes` of deliveries (at least one, if any) into `out` and takes the
    /// pending gap, if any. The gap is reported before the records, since they came before.
    pub fn drain(&self, out: &mut Vec<Delivery>, max_bytes: usize) -> Option<Gap> {
        let mut inner = self.lock();
        let gap = std::mem::take(&mut inner.gap);
        let mut taken = 0;
        while let Some(front) = inner.items.front() {
            if taken > 0 && taken + front.record.len() > max_bytes {
                break;
            }
            taken += front.record.len();
            out.extend(inner.items.pop_front());
        }
        inner.bytes -= taken;
        drop(inner);
        self.popped.fetch_add(out.len() as u64, Ordering::Relaxed);
        (gap.count > 0).then_some(gap)
    }

    /// Returns the records waiting.
    pub fn depth(&self) -> u64 {
        self.pushed
            .load(Ordering::Relaxed)
            .saturating_sub(self.popped.load(Ordering::Relaxed))
    }

    /// Returns the records delivered to the writer so far.
    pub fn delivered(&self) -> u64 {
        self.popped.load(Ordering::Relaxed)
    }

    /// Returns the records dropped so far.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delivery(seq: u64, priority: Priority) -> Delivery {
        Delivery {
            seq,
            received: 0,
            priority,
            record: Bytes::from_static(b"0123456789"),
        }
    }

    #[test]
    fn drops_new_records_when_full_and_reports_the_gap() {
        let queue = Queue::new(
            QueueLimits {
                max_records: 2,
                max_bytes: 1000,
            },
            Arc::default(),
        );
        let mut batch: Vec<Delivery> = (1..=4).map(|seq| delivery(seq, Priority::Info)).collect();
        batch.push(delivery(5, Priority::Error));
        assert_eq!(queue.push_batch(&mut batch), 3);
        let mut out = Vec::new();
        let gap = queue.drain(&mut out, usize::MAX).unwrap();
        assert_eq!(out.iter().map(|d| d.seq).collect::<Vec<_>>(), [1, 2]);
        assert_eq!((gap.count, gap.first_seq, gap.last_seq), (3, 3, 5));
        assert_eq!(gap.by_priority[Priority::Info as usize], 2);
        assert_eq!(gap.by_priority[Priority::Error as usize], 1);
        assert_eq!(
            (queue.depth(), queue.delivered(), queue.dropped()),
            (0, 2, 3)
        );
        assert!(
            queue.drain(&mut out, usize::MAX).is_none(),
            "a gap is reported once"
        );
    }

    #[test]
    fn byte_limit_and_drain_budget() {
        let queue = Queue::new(
            QueueLimits {
                max_records: 100,
                max_bytes: 25,
            },
            Arc::default(),
        );
        let mut batch: Vec<Delivery> = (1..=3).map(|seq| delivery(seq, Priority::Info)).collect();
        assert_eq!(queue.push_batch(&mut batch), 1);
        let mut out = Vec::new();
        queue.drain(&mut out, 5);
        assert_eq!(out.len(), 1, "at least one record even over budget");
        assert_eq!(queue.depth(), 1);
    }
}
