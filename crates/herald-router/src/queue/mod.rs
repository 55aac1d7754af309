//! The bounded queue between the router and one subscriber's connection writer, with the
//! subscriber's policy for when it is full.
//!
//! Whatever the policy, a full queue sheds the lowest priorities first, keeps records at or
//! above the protected priority while the hard byte limit allows, and remembers every loss
//! as a [`Gap`] that the writer reports to the subscriber before the records that follow.

mod budget;
mod confirm;
mod drops;
mod lanes;
mod latest;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytes::Bytes;
use herald_proto::{Policy, Priority};
use tokio::sync::Notify;

pub use budget::QueueBudget;
use confirm::Confirmations;
pub use drops::{DropCounters, DropReason, Drops, Gap};
use lanes::{End, Lanes};
use latest::Latest;

/// Default bound of a subscriber queue, in records.
pub const DEFAULT_QUEUE_RECORDS: usize = 65_536;
/// Default bound of a subscriber queue, in bytes of encoded records.
pub const DEFAULT_QUEUE_BYTES: usize = 64 * 1024 * 1024;
/// Default hard bound, in bytes, up to which protected records are kept in a full queue.
pub const DEFAULT_QUEUE_HARD_BYTES: usize = 128 * 1024 * 1024;
/// Default longest wait of a publisher under policy `block`.
pub const DEFAULT_BLOCK_TIMEOUT: Duration = Duration::from_millis(100);

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
    /// Byte range of the subject within `record` (for latest-only delivery).
    pub subject: (u32, u32),
    /// The producer that numbered the record (0: not numbered), for a cluster route.
    pub producer: u64,
    /// The producer's number of the record.
    pub pseq: u64,
    /// On a cluster route: the queue groups the far member gives the record to (one member
    /// each); `None`: none of them.
    pub groups: Option<Arc<Vec<Arc<str>>>>,
}

impl Delivery {
    /// Returns the subject's bytes, sharing the record's memory.
    pub fn subject(&self) -> Bytes {
        self.record
            .slice(self.subject.0 as usize..self.subject.1 as usize)
    }
}

/// Bounds and policy of one queue.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueueConfig {
    /// Most records held (protected records may exceed it up to `hard_bytes`).
    pub max_records: usize,
    /// Most record bytes held (protected records may exceed it up to `hard_bytes`).
    pub max_bytes: usize,
    /// Most record bytes held at all.
    pub hard_bytes: usize,
    /// What to do when full.
    pub policy: Policy,
    /// Records at or above this priority are not shed while `hard_bytes` allows.
    pub protected: Priority,
    /// Longest wait of a publisher under [`Policy::Block`].
    pub block_timeout: Duration,
    /// Latest-only delivery: at most one record per subject per this interval.
    pub latest_interval: Option<Duration>,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            max_records: DEFAULT_QUEUE_RECORDS,
            max_bytes: DEFAULT_QUEUE_BYTES,
            hard_bytes: DEFAULT_QUEUE_HARD_BYTES,
            policy: Policy::DropNew,
            protected: Priority::Emergency,
            block_timeout: DEFAULT_BLOCK_TIMEOUT,
            latest_interval: None,
        }
    }
}

/// What one push did.
#[derive(Debug, Default)]
pub struct Pushed {
    /// Records lost, by reason.
    pub drops: Drops,
    /// Under policy `block`: records that did not fit and wait for room.
    pub blocked: Vec<Delivery>,
    /// In a numbered queue, the highest number given (0: none); see
    /// [`Queue::wait_settled`].
    pub last_number: u64,
}

#[derive(Debug)]
struct Inner {
    lanes: Lanes,
    latest: Option<Latest>,
    gap: Gap,
    /// Records lost by priority (index = priority number), those of gaps already taken;
    /// the pending gap holds the rest.
    lost_by_priority: [u64; 12],
    /// Losses of other cluster members' routes owed to this subscriber, by member.
    remote: Vec<(String, Gap)>,
    /// In a numbered queue (a cluster route's), its numbers and their confirmations.
    confirm: Option<Confirmations>,
}

/// A bounded queue of deliveries for one subscriber. Publishers push, the subscriber's
/// connection writer drains; the lock is per subscriber, never shared by all connections.
#[derive(Debug)]
pub struct Queue {
    inner: Mutex<Inner>,
    config: QueueConfig,
    writer: Arc<Notify>,
    space: Notify,
    disconnect: AtomicBool,
    /// Policy `block` timed out and the queue has not drained since: it drops (as
    /// `drop-new`) instead of making publishers wait again, so a subscriber that stopped
    /// reading costs each publisher at most one wait per episode.
    stalled: AtomicBool,
    /// Records accepted into the queue.
    pushed: AtomicU64,
    /// Records handed to the writer.
    sent: AtomicU64,
    /// Records accepted and later removed unsent (shed, superseded, discarded).
    evicted: AtomicU64,
    drops: DropCounters,
    /// The bytes all queues of the server may hold together, if bounded.
    budget: Option<Arc<QueueBudget>>,
    /// In a numbered queue: every number up to this one is settled.
    settled: AtomicU64,
    /// In a numbered queue: waits for settlement end at once (the route is down).
    released: AtomicBool,
    settle: Notify,
}

impl Queue {
    /// Returns an empty queue whose writer is woken through `writer`.
    pub fn new(config: QueueConfig, writer: Arc<Notify>) -> Self {
        let latest = config.latest_interval.map(Latest::new);
        Queue {
            inner: Mutex::new(Inner {
                lanes: Lanes::default(),
                latest,
                gap: Gap::default(),
                lost_by_priority: [0; 12],
                remote: Vec::new(),
                confirm: None,
            }),
            config,
            writer,
            space: Notify::new(),
            disconnect: AtomicBool::new(false),
            stalled: AtomicBool::new(false),
            pushed: AtomicU64::new(0),
            sent: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
            drops: Default::default(),
            budget: None,
            settled: AtomicU64::new(0),
            released: AtomicBool::new(false),
            settle: Notify::new(),
        }
    }

    /// Returns an empty numbered queue (a cluster route's, see [`Queue::wait_settled`])
    /// that shares `budget` with the server's other queues.
    pub fn numbered(
        config: QueueConfig,
        writer: Arc<Notify>,
        budget: Arc<QueueBudget>,
    ) -> Arc<Self> {
        Queue::budgeted(config, writer, budget, true)
    }

    /// Returns an empty queue that shares `budget` with the server's other queues (and
    /// sheds for it when it is among the largest).
    pub fn with_budget(
        config: QueueConfig,
        writer: Arc<Notify>,
        budget: Arc<QueueBudget>,
    ) -> Arc<Self> {
        Queue::budgeted(config, writer, budget, false)
    }

    fn budgeted(
        config: QueueConfig,
        writer: Arc<Notify>,
        budget: Arc<QueueBudget>,
        numbered: bool,
    ) -> Arc<Self> {
        let mut queue = Queue::new(config, writer);
        if numbered {
            let inner = queue.inner.get_mut().unwrap_or_else(|p| p.into_inner());
            inner.confirm = Some(Confirmations::new());
        }
        queue.budget = Some(Arc::clone(&budget));
        let queue = Arc::new(queue);
        budget.register(&queue);
        queue
    }

    /// Moves the shared budget by the change in what this queue holds.
    fn account(&self, before: usize, inner: &Inner) {
        if let Some(budget) = &self.budget {
            budget.change(before, held(inner));
        }
    }

    /// Returns the queue's bounds and policy.
    pub fn config(&self) -> &QueueConfig {
        &self.config
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding this lock leaves plain data behind; keep serving it.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Queues `deliveries` (draining the vector). What does not fit is shed by priority and
    /// policy, counted, and remembered for the next gap notice; under policy `block` it is
    /// returned in [`Pushed::blocked`] instead, for the caller to wait with
    /// [`Queue::push_blocking`]. Wakes the writer.
    pub fn push_batch(&self, deliveries: &mut Vec<Delivery>) -> Pushed {
        let policy = match self.config.policy {
            Policy::Block if self.is_stalled() => Policy::DropNew,
            policy => policy,
        };
        self.push(deliveries.drain(..), policy)
    }

    /// Returns whether a `block` subscriber timed out and has not drained since (its
    /// records are dropped meanwhile instead of making publishers wait).
    pub fn is_stalled(&self) -> bool {
        self.stalled.load(Ordering::Acquire)
    }

    fn push(&self, deliveries: impl Iterator<Item = Delivery>, policy: Policy) -> Pushed {
        let mut pushed = Pushed::default();
        let mut accepted = 0;
        let mut inner = self.lock();
        let before = held(&inner);
        for mut delivery in deliveries {
            if let Some(confirm) = &mut inner.confirm {
                pushed.last_number = confirm.number(&mut delivery);
            }
            match self.place(&mut inner, delivery, policy, &mut pushed) {
                Placed::Accepted => accepted += 1,
                Placed::Dropped => {}
                Placed::Blocked(delivery) => pushed.blocked.push(delivery),
            }
        }
        self.account(before, &inner);
        drop(inner);
        self.pushed.fetch_add(accepted, Ordering::Relaxed);
        self.drops.add(&pushed.drops);
        self.writer.notify_one();
        if let Some(budget) = &self.budget {
            // Losses of other queues too (the largest shed): the caller counts them all.
            pushed.drops.merge(&budget.relieve());
        }
        pushed
    }

    /// Sheds unprotected records, lowest priority and oldest first, until the queue holds
    /// at most `target` bytes; counts them under `reason` and owes the subscriber a gap
    /// notice. Returns how many records were shed.
    pub fn shed_to(&self, target: usize, reason: DropReason) -> u64 {
        let mut inner = self.lock();
        let before = held(&inner);
        let protected = self.config.protected;
        let mut shed = 0;
        while inner.lanes.bytes() > target {
            let Some(victim) = inner.lanes.evict(|p| p < protected, End::Oldest) else {
                break;
            };
            inner.gap.add(&victim);
            shed += 1;
        }
        self.account(before, &inner);
        drop(inner);
        if shed > 0 {
            let mut drops = Drops::default();
            drops.add(reason, shed);
            self.drops.add(&drops);
            self.evicted.fetch_add(shed, Ordering::Relaxed);
            self.writer.notify_one();
        }
        shed
    }

    fn place(
        &self,
        inner: &mut Inner,
        delivery: Delivery,
        policy: Policy,
        pushed: &mut Pushed,
    ) -> Placed {
        let config = &self.config;
        let len = delivery.record.len();
        if let Some(latest) = &mut inner.latest {
            if latest.replaces(&delivery) || latest.records() < config.max_records {
                if latest.push(delivery).is_some() {
                    pushed.drops.add(DropReason::Superseded, 1);
                    self.evicted.fetch_add(1, Ordering::Relaxed);
                }
                return Placed::Accepted;
            }
            inner.gap.add(&delivery);
            pushed.drops.add(DropReason::QueueFull, 1);
            return Placed::Dropped;
        }
        let lanes = &mut inner.lanes;
        let fits = |lanes: &Lanes| {
            lanes.records() < config.max_records && lanes.bytes() + len <= config.max_bytes
        };
        if fits(lanes) {
            lanes.push(delivery);
            return Placed::Accepted;
        }
        if delivery.priority >= config.protected {
            return self.place_protected(inner, delivery, pushed);
        }
        match policy {
            Policy::Block => return Placed::Blocked(delivery),
            Policy::Disconnect => {
                self.disconnect.store(true, Ordering::Release);
                pushed.drops.add(DropReason::SlowConsumer, 1);
                return Placed::Dropped;
            }
            Policy::DropNew | Policy::DropOld => {}
        }
        // Shed lower priorities first: strictly lower for drop-new (the newcomer loses a
        // tie), up to its own for drop-old (the oldest of the lowest priority loses).
        let (limit, end) = match policy {
            Policy::DropOld => (delivery.priority, End::Oldest),
            _ => (delivery.priority, End::Newest),
        };
        let strict = policy != Policy::DropOld;
        let eligible = |p: Priority| p < config.protected && (p < limit || (!strict && p == limit));
        self.shed_for(
            inner,
            delivery,
            eligible,
            end,
            fits,
            DropReason::QueueFull,
            pushed,
        )
    }

    /// A protected record in a full queue: kept while the hard limit allows, making room
    /// by shedding unprotected records if needed.
    fn place_protected(
        &self,
        inner: &mut Inner,
        delivery: Delivery,
        pushed: &mut Pushed,
    ) -> Placed {
        let (len, hard, protected) = (
            delivery.record.len(),
            self.config.hard_bytes,
            self.config.protected,
        );
        let fits = |lanes: &Lanes| lanes.bytes() + len <= hard;
        self.shed_for(
            inner,
            delivery,
            |p| p < protected,
            End::Oldest,
            fits,
            DropReason::HardLimit,
            pushed,
        )
    }

    /// Evicts `eligible` records (lowest priority first, from `end` of their lane) until
    /// `delivery` fits, and queues it. If shedding cannot make room, nothing is evicted and
    /// only `delivery` is lost, for `refused`.
    #[allow(clippy::too_many_arguments)]
    fn shed_for(
        &self,
        inner: &mut Inner,
        delivery: Delivery,
        eligible: impl Fn(Priority) -> bool + Copy,
        end: End,
        fits: impl Fn(&Lanes) -> bool,
        refused: DropReason,
        pushed: &mut Pushed,
    ) -> Placed {
        let mut victims = Vec::new();
        while !fits(&inner.lanes) {
            match inner.lanes.evict(eligible, end) {
                Some(victim) => victims.push(victim),
                None => break,
            }
        }
        if !fits(&inner.lanes) {
            for victim in victims.into_iter().rev() {
                inner.lanes.restore(victim, end);
            }
            inner.gap.add(&delivery);
            pushed.drops.add(refused, 1);
            return Placed::Dropped;
        }
        for victim in &victims {
            inner.gap.add(victim);
        }
        pushed
            .drops
            .add(DropReason::QueueFull, victims.len() as u64);
        self.evicted
            .fetch_add(victims.len() as u64, Ordering::Relaxed);
        inner.lanes.push(delivery);
        Placed::Accepted
    }

    /// Policy `block`: waits up to the block timeout for room for `blocked`, then sheds what
    /// still does not fit as `drop-new` would, and marks the queue stalled: until it has
    /// drained, pushes drop instead of blocking. Only the publisher calling this waits.
    /// `started` is when the publisher began waiting, so that waits for several queues
    /// overlap instead of adding up.
    pub async fn push_blocking(
        &self,
        mut blocked: Vec<Delivery>,
        started: tokio::time::Instant,
    ) -> Drops {
        let deadline = started + self.config.block_timeout;
        let mut drops = Drops::default();
        loop {
            let space = self.space.notified();
            tokio::pin!(space);
            space.as_mut().enable();
            let pushed = self.push(blocked.drain(..), Policy::Block);
            drops.merge(&pushed.drops);
            blocked = pushed.blocked;
            if blocked.is_empty() {
                return drops;
            }
            if tokio::time::timeout_at(deadline, space).await.is_err() {
                break;
            }
        }
        // Until the subscriber has caught up, publishers do not wait for it again.
        self.stalled.store(true, Ordering::Release);
        let pushed = self.push(blocked.into_iter(), Policy::DropNew);
        let mut timed_out = Drops::default();
        timed_out.add(
            DropReason::BlockTimeout,
            pushed.drops.get(DropReason::QueueFull),
        );
        self.drops.reclassify(
            DropReason::QueueFull,
            DropReason::BlockTimeout,
            timed_out.total(),
        );
        drops.merge(&timed_out);
        drops
    }

    /// Moves up to `max_bytes` of deliveries (at least one, if any is ready) into `out`, in
    /// sequence order, and takes the pending gap, if any. The gap is reported before the
    /// records, since the losses happened while they waited.
    pub fn drain(&self, out: &mut Vec<Delivery>, max_bytes: usize) -> Option<Gap> {
        let before = out.len();
        let mut inner = self.lock();
        let held_before = held(&inner);
        let gap = std::mem::take(&mut inner.gap);
        note_lost(&mut inner.lost_by_priority, &gap);
        if let Some(latest) = &mut inner.latest {
            latest.drain(Instant::now(), out, max_bytes);
        } else {
            let mut taken = 0;
            while let Some(len) = inner.lanes.oldest_len() {
                if taken > 0 && taken + len > max_bytes {
                    break;
                }
                taken += len;
                out.extend(inner.lanes.pop_oldest());
            }
        }
        if inner.lanes.records() == 0 {
            // Caught up: a `block` subscriber that stalled makes publishers wait again.
            self.stalled.store(false, Ordering::Release);
        }
        let oldest_left = inner.lanes.oldest_seq();
        if let Some(confirm) = &mut inner.confirm {
            confirm.drained(&out[before..], oldest_left);
            self.publish_settled(confirm.settled());
        }
        self.account(held_before, &inner);
        drop(inner);
        let moved = out.len() - before;
        self.sent.fetch_add(moved as u64, Ordering::Relaxed);
        if moved > 0 {
            self.space.notify_waiters();
        }
        (gap.count > 0).then_some(gap)
    }

    /// Owes the subscriber a gap notice for records that cluster member `member` lost on its
    /// route to this server (`gap` in that member's sequence numbers), and wakes the writer.
    pub fn note_remote_gap(&self, member: &str, gap: Gap) {
        if gap.count == 0 {
            return;
        }
        let mut inner = self.lock();
        match inner.remote.iter_mut().find(|(m, _)| m == member) {
            Some((_, owed)) => owed.merge(&gap),
            None => inner.remote.push((member.to_string(), gap)),
        }
        drop(inner);
        self.writer.notify_one();
    }

    /// Takes the gap notices owed for other members' routes (see [`Queue::note_remote_gap`]).
    pub fn take_remote_gaps(&self) -> Vec<(String, Gap)> {
        std::mem::take(&mut self.lock().remote)
    }

    /// Latest-only delivery: returns when the next waiting record may be sent.
    pub fn next_ready(&self) -> Option<Instant> {
        self.lock().latest.as_ref().and_then(Latest::next_ready)
    }

    /// Returns true once (and only once) if policy `disconnect` fired: the writer then
    /// closes the connection with a `slow_consumer` error.
    pub fn take_disconnect(&self) -> bool {
        self.disconnect.swap(false, Ordering::AcqRel)
    }

    /// Discards everything queued (the subscription or its connection is going away) and
    /// counts it under `reason`. Returns how many records were discarded.
    pub fn discard(&self, reason: DropReason) -> u64 {
        self.discard_as_gap(reason).count
    }

    /// As [`Queue::discard`]; returns what was discarded, with the loss still owed to the
    /// subscriber, as one gap (a cluster link keeps it for the member, should it return).
    pub fn discard_as_gap(&self, reason: DropReason) -> Gap {
        let mut inner = self.lock();
        let before = held(&inner);
        let mut lost = std::mem::take(&mut inner.gap);
        let owed = lost.count;
        let mut cleared = inner.lanes.clear();
        if let Some(latest) = &mut inner.latest {
            cleared.extend(latest.clear());
        }
        for delivery in &cleared {
            lost.add(delivery);
        }
        let discarded = lost.count - owed;
        note_lost(&mut inner.lost_by_priority, &lost);
        self.account(before, &inner);
        drop(inner);
        self.evicted.fetch_add(discarded, Ordering::Relaxed);
        let mut drops = Drops::default();
        drops.add(reason, discarded);
        self.drops.add(&drops);
        lost
    }

    /// Takes every record waiting, in sequence order, unsent and not lost: a queue group
    /// member that leaves hands them to the others ([`Router::hand_over`]). They count as
    /// evicted (gone unsent), with no loss and no gap.
    ///
    /// [`Router::hand_over`]: crate::Router::hand_over
    pub fn take_queued(&self) -> Vec<Delivery> {
        let mut inner = self.lock();
        let before = held(&inner);
        let mut taken = inner.lanes.clear();
        if let Some(latest) = &mut inner.latest {
            taken.extend(latest.clear());
        }
        self.account(before, &inner);
        drop(inner);
        self.evicted
            .fetch_add(taken.len() as u64, Ordering::Relaxed);
        taken.sort_by_key(|delivery| delivery.seq);
        taken
    }

    /// Puts back records [`Queue::take_queued`] took that found no other home, for the
    /// queue's [`Queue::discard`] to count as lost.
    pub fn put_back(&self, deliveries: Vec<Delivery>) {
        let count = deliveries.len() as u64;
        let mut inner = self.lock();
        let before = held(&inner);
        for delivery in deliveries {
            inner.lanes.push(delivery);
        }
        self.account(before, &inner);
        drop(inner);
        self.evicted.fetch_sub(count, Ordering::Relaxed);
    }

    /// Owes the subscriber a gap notice for `gap` (records lost elsewhere for it), and wakes
    /// the writer.
    pub fn owe_gap(&self, gap: &Gap) {
        if gap.count == 0 {
            return;
        }
        self.lock().gap.merge(gap);
        self.writer.notify_one();
    }

    /// Returns the records waiting.
    pub fn depth(&self) -> u64 {
        let gone = self.sent.load(Ordering::Relaxed) + self.evicted.load(Ordering::Relaxed);
        self.pushed.load(Ordering::Relaxed).saturating_sub(gone)
    }

    /// Returns the receive time of the oldest record waiting, if any (how far the writer is
    /// behind).
    pub fn oldest_received(&self) -> Option<i64> {
        self.lock().lanes.oldest_received()
    }

    /// Returns the record bytes waiting.
    pub fn depth_bytes(&self) -> u64 {
        held(&self.lock()) as u64
    }

    /// Returns the records handed to the writer so far.
    pub fn delivered(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    /// Returns the records lost so far (every reason but `superseded`).
    pub fn dropped(&self) -> u64 {
        self.drops.snapshot().losses()
    }

    /// Returns the drops so far, by reason.
    pub fn drops(&self) -> Drops {
        self.drops.snapshot()
    }

    /// Returns the records lost so far by priority (index = priority number): every loss a
    /// gap notice reports or will report (`superseded` records are no loss).
    pub fn lost_by_priority(&self) -> [u64; 12] {
        let inner = self.lock();
        let mut lost = inner.lost_by_priority;
        for (total, pending) in lost.iter_mut().zip(inner.gap.by_priority) {
            *total += pending;
        }
        lost
    }
}

/// Adds the losses of `gap` to `totals`.
fn note_lost(totals: &mut [u64; 12], gap: &Gap) {
    if gap.count > 0 {
        for (total, lost) in totals.iter_mut().zip(gap.by_priority) {
            *total += lost;
        }
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        if let Some(budget) = &self.budget {
            let inner = self.inner.get_mut().unwrap_or_else(|p| p.into_inner());
            budget.change(held(inner), 0);
        }
    }
}

/// Returns the record bytes a queue holds.
fn held(inner: &Inner) -> usize {
    inner.lanes.bytes() + inner.latest.as_ref().map_or(0, Latest::bytes)
}

enum Placed {
    /// Queued (in latest-only mode, possibly replacing an older record of its subject).
    Accepted,
    /// Not queued: dropped and counted.
    Dropped,
    /// Policy `block`: waits for room.
    Blocked(Delivery),
}

#[cfg(test)]
mod tests;
