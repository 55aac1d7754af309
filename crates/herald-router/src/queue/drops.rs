//! What a queue lost, why, and the gap notice it owes its subscriber.

use std::sync::atomic::{AtomicU64, Ordering};

use super::Delivery;

/// Why a record did not reach a subscriber.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The queue was full and the record was shed (by priority, then by policy).
    QueueFull,
    /// Policy `block`: no room came within the block timeout.
    BlockTimeout,
    /// A protected record found even the hard limit reached.
    HardLimit,
    /// Latest-only delivery: a newer record on the same subject replaced it. The subscriber
    /// asked for this, so it is counted but not reported as a gap.
    Superseded,
    /// Policy `disconnect`: the subscriber fell behind and is being disconnected.
    SlowConsumer,
    /// The subscription ended (unsubscribe, or its connection closed) with records queued.
    Closed,
    /// The server-wide budget of queued bytes was reached and this queue was among the
    /// largest.
    ServerBudget,
}

impl DropReason {
    /// Every reason, in the order of [`DropReason::index`].
    pub const ALL: [DropReason; 7] = [
        DropReason::QueueFull,
        DropReason::BlockTimeout,
        DropReason::HardLimit,
        DropReason::Superseded,
        DropReason::SlowConsumer,
        DropReason::Closed,
        DropReason::ServerBudget,
    ];

    /// Returns the snake-case name used by the monitor.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::QueueFull => "queue_full",
            DropReason::BlockTimeout => "block_timeout",
            DropReason::HardLimit => "hard_limit",
            DropReason::Superseded => "superseded",
            DropReason::SlowConsumer => "slow_consumer",
            DropReason::Closed => "closed",
            DropReason::ServerBudget => "server_budget",
        }
    }

    /// Returns the position of this reason in [`DropReason::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Records dropped, per reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Drops(pub [u64; DropReason::ALL.len()]);

impl Drops {
    /// Counts one drop for `reason`.
    pub fn add(&mut self, reason: DropReason, count: u64) {
        self.0[reason.index()] += count;
    }

    /// Adds every count of `other`.
    pub fn merge(&mut self, other: &Drops) {
        for (mine, theirs) in self.0.iter_mut().zip(other.0) {
            *mine += theirs;
        }
    }

    /// Returns the drops for `reason`.
    pub fn get(&self, reason: DropReason) -> u64 {
        self.0[reason.index()]
    }

    /// Returns all drops.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// Returns the records lost: every reason but `superseded`, which latest-only
    /// subscribers ask for.
    pub fn losses(&self) -> u64 {
        self.total() - self.get(DropReason::Superseded)
    }
}

/// Drop counts that many threads add to: one atomic per reason.
#[derive(Debug, Default)]
pub struct DropCounters([AtomicU64; DropReason::ALL.len()]);

impl DropCounters {
    /// Adds every count of `drops`.
    pub fn add(&self, drops: &Drops) {
        for (counter, count) in self.0.iter().zip(drops.0) {
            if count > 0 {
                counter.fetch_add(count, Ordering::Relaxed);
            }
        }
    }

    /// Moves `count` drops from one reason to another (a blocked record that timed out was
    /// first counted as refused for a full queue).
    pub fn reclassify(&self, from: DropReason, to: DropReason, count: u64) {
        self.0[from.index()].fetch_sub(count, Ordering::Relaxed);
        self.0[to.index()].fetch_add(count, Ordering::Relaxed);
    }

    /// Returns the counts so far.
    pub fn snapshot(&self) -> Drops {
        Drops(std::array::from_fn(|index| {
            self.0[index].load(Ordering::Relaxed)
        }))
    }
}

/// Records lost since the writer last looked: the makings of a gap notice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Gap {
    /// How many records were lost.
    pub count: u64,
    /// Lowest sequence number lost.
    pub first_seq: u64,
    /// Highest sequence number lost.
    pub last_seq: u64,
    /// Lost records per priority (index = priority number).
    pub by_priority: [u64; 12],
}

impl Gap {
    /// Adds one lost record.
    pub fn add(&mut self, delivery: &Delivery) {
        if self.count == 0 {
            self.first_seq = delivery.seq;
            self.last_seq = delivery.seq;
        }
        self.count += 1;
        // Shedding by priority can lose an older record after a newer one.
        self.first_seq = self.first_seq.min(delivery.seq);
        self.last_seq = self.last_seq.max(delivery.seq);
        self.by_priority[delivery.priority as usize] += 1;
    }

    /// Adds the losses of `other`.
    pub fn merge(&mut self, other: &Gap) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *other;
            return;
        }
        self.count += other.count;
        self.first_seq = self.first_seq.min(other.first_seq);
        self.last_seq = self.last_seq.max(other.last_seq);
        for (mine, theirs) in self.by_priority.iter_mut().zip(other.by_priority) {
            *mine += theirs;
        }
    }
}
