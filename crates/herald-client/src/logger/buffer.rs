//! The bounded lock-free buffer between the logging threads and the background side, and
//! what a log call does when it is full ([`WhenFull`]).
//!
//! The buffer is a few [`crossbeam_queue::ArrayQueue`]s ("shards"); each thread always
//! pushes into the same one, given round-robin when the thread first logs. A push is one
//! slot claim (a compare-and-swap, no lock, no allocation) on a queue that, with more shards
//! than cores, no other running thread is likely to touch. One queue for all threads cost
//! three times as much per call as soon as two threads logged at once on two cores: every
//! push moved the queue's tail and the neighbouring slots from one core's cache to the
//! other's. Records of one thread stay in order; records of different threads never had an
//! order beyond their timestamps.
//!
//! The background side is woken only when a push finds its shard at the batch size or the
//! record is urgent; otherwise its timer finds the records. The wake
//! ([`tokio::sync::Notify`]) may take tokio's internal lock, so a flag keeps it to one wake
//! per batch rather than one per call.
//!
//! The wake's state sits on cache lines of its own: the background side writes it every
//! time it waits, and the fields every push reads (the shards, the mask) must not share a
//! line with it, or each push after a wake misses the cache. Measured with
//! `herald bench logger` (128 B text), padding the wake and the drop counts took the call's
//! median from 130 to 113 ns on the 2-core test machine.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crossbeam_queue::ArrayQueue;
use crossbeam_utils::CachePadded;
use tokio::sync::Notify;

use super::entry::Entry;

/// Default number of records the buffer holds, all shards together.
pub const DEFAULT_BUFFER_RECORDS: usize = 16_384;
/// Default number of buffered records that wakes the background side before its tick.
pub const DEFAULT_BATCH_RECORDS: usize = 512;
/// Most shards a buffer is split into.
pub const MAX_BUFFER_SHARDS: usize = 64;

/// Returns the default shard count: four per core, a power of two, at most
/// [`MAX_BUFFER_SHARDS`].
pub fn default_buffer_shards() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    (4 * cores).next_power_of_two().min(MAX_BUFFER_SHARDS)
}

/// What a log call does when the buffer is full. Either way, a record that is finally not
/// buffered is counted in [`Logger::dropped`](super::Logger::dropped) and reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum WhenFull {
    /// Drops the new record and counts it: a log call never waits (the default).
    #[default]
    DropNewest,
    /// Waits up to the given time for room, then drops and counts. The wait blocks the
    /// calling thread, a tokio worker thread included, so keep it short.
    Wait(Duration),
}

/// A thread looks at its shard's length once every this many pushes.
const LOOK_EVERY_PUSHES: u32 = 16;

/// Hands each thread its shard number, round-robin.
static NEXT_THREAD: AtomicU32 = AtomicU32::new(0);

/// What a logging thread keeps for itself.
struct ThreadState {
    /// This thread's number, from [`NEXT_THREAD`]; its shard is this modulo the count.
    number: u32,
    pushes: Cell<u32>,
}

thread_local! {
    static THREAD: ThreadState = ThreadState {
        number: NEXT_THREAD.fetch_add(1, Ordering::Relaxed),
        pushes: Cell::new(0),
    };
}

/// Returns this thread's number and whether this push should look at the shard's length
/// (every [`LOOK_EVERY_PUSHES`]th push). Reading the length reads the consumer's index, a
/// cache miss whenever the background side has taken an entry since; measured, it cost as
/// much as the push itself, so a thread pays it only now and then. The batch wake is an
/// early start, not a guarantee: the tick still runs.
#[inline]
fn this_thread() -> (usize, bool) {
    THREAD
        .try_with(|state| {
            let pushes = state.pushes.get().wrapping_add(1);
            state.pushes.set(pushes);
            (state.number as usize, pushes % LOOK_EVERY_PUSHES == 0)
        })
        // During thread teardown: shard 0, and always look.
        .unwrap_or((0, true))
}

/// The shards of entries and the background side's wake-up.
pub(crate) struct Buffer {
    shards: Box<[ArrayQueue<Entry>]>,
    /// `shards.len() - 1`; the count is a power of two.
    shard_mask: usize,
    /// Entries in one shard that wake the background side.
    shard_batch: usize,
    /// Written by the background side at every wait: apart from what pushes read.
    wake: CachePadded<Wake>,
}

/// The background side's wake-up.
struct Wake {
    notify: Notify,
    /// Set by the first push that asks for a wake, cleared by the background side when it
    /// wakes: the pushes in between need not call `Notify` again.
    pending: AtomicBool,
}

impl Buffer {
    /// Returns a buffer of `capacity` entries in all (at least one per shard), split into
    /// `shards` (rounded up to a power of two, at most [`MAX_BUFFER_SHARDS`]), that wakes
    /// the background side when about `batch_records` are waiting.
    pub(crate) fn new(capacity: usize, batch_records: usize, shards: usize) -> Self {
        let count = shards.clamp(1, MAX_BUFFER_SHARDS).next_power_of_two();
        let per_shard = (capacity / count).max(1);
        Buffer {
            shards: (0..count).map(|_| ArrayQueue::new(per_shard)).collect(),
            shard_mask: count - 1,
            shard_batch: (batch_records / count).max(1),
            wake: CachePadded::new(Wake {
                notify: Notify::new(),
                pending: AtomicBool::new(false),
            }),
        }
    }

    /// Buffers the entry that `entry` makes in this thread's shard, waking the background
    /// side if `urgent` or a batch is ready; returns false, after giving the entry to
    /// `lost`, if the shard stayed full as long as `when_full` allows.
    ///
    /// An entry is several cache lines, and every move is a copy: so the entry is made
    /// here, where the queue takes it, and comes back through `lost`, not in a returned
    /// `Result` (which was copied on every call, full or not). Measured with gdb: five
    /// copies of the entry per log call before, one (into the queue's slot) after.
    #[inline(always)]
    pub(crate) fn push(
        &self,
        entry: impl FnOnce() -> Entry,
        urgent: bool,
        when_full: WhenFull,
        lost: impl FnOnce(Entry),
    ) -> bool {
        let (thread, look) = this_thread();
        let shard = &self.shards[thread & self.shard_mask];
        let buffered = match shard.push(entry()) {
            Ok(()) => true,
            Err(entry) => match when_full {
                WhenFull::DropNewest => {
                    lost(entry);
                    false
                }
                WhenFull::Wait(timeout) => match self.push_waiting(shard, entry, timeout) {
                    Ok(()) => true,
                    Err(entry) => {
                        lost(entry);
                        false
                    }
                },
            },
        };
        if urgent || (look && shard.len() >= self.shard_batch) {
            self.wake();
        }
        buffered
    }

    /// Retries `entry` until there is room or `timeout` has passed.
    #[allow(clippy::result_large_err)]
    fn push_waiting(
        &self,
        shard: &ArrayQueue<Entry>,
        mut entry: Entry,
        timeout: Duration,
    ) -> Result<(), Entry> {
        let deadline = Instant::now() + timeout;
        let mut spins = 0u32;
        loop {
            self.wake();
            if spins < 16 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
            spins += 1;
            entry = match shard.push(entry) {
                Ok(()) => return Ok(()),
                Err(entry) if Instant::now() >= deadline => return Err(entry),
                Err(entry) => entry,
            };
        }
    }

    /// Wakes the background side, unless a wake is already on its way.
    pub(crate) fn wake(&self) {
        let wake = &self.wake;
        if !wake.pending.load(Ordering::Relaxed) && !wake.pending.swap(true, Ordering::AcqRel) {
            wake.notify.notify_one();
        }
    }

    /// Waits until a push asks for the background side (the permit is kept if the wake
    /// came while nobody waited).
    pub(crate) async fn woken(&self) {
        self.wake.notify.notified().await;
    }

    /// Lets the next push that wants a wake send one; the background side calls this
    /// before it drains.
    pub(crate) fn rearm(&self) {
        self.wake.pending.store(false, Ordering::Release);
    }

    /// Returns the number of shards.
    pub(crate) fn shard_count(&self) -> usize {
        self.shards.len()
    }

    /// Takes the oldest entry of shard `shard`.
    pub(crate) fn pop(&self, shard: usize) -> Option<Entry> {
        self.shards[shard].pop()
    }

    /// Returns the entries waiting in shard `shard`.
    pub(crate) fn shard_len(&self, shard: usize) -> usize {
        self.shards[shard].len()
    }

    /// Returns true if some shard is more than half full.
    pub(crate) fn half_full(&self) -> bool {
        self.shards.iter().any(|s| s.len() * 2 > s.capacity())
    }

    /// Returns the entries waiting, all shards together.
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(ArrayQueue::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logger::entry::{Source, SubjectRef, Text};
    use herald_proto::Priority;

    fn entry() -> Entry {
        Entry::new(
            0,
            Priority::Info,
            SubjectRef::Id(0),
            Text::new("t"),
            Vec::new(),
            Source::default(),
        )
    }

    #[test]
    fn a_full_buffer_gives_the_entry_back() {
        let buffer = Buffer::new(2, 100, 1);
        assert!(buffer.push(entry, false, WhenFull::DropNewest, drop));
        assert!(buffer.push(entry, false, WhenFull::DropNewest, drop));
        assert!(!buffer.push(entry, false, WhenFull::DropNewest, drop));
        let waited = Instant::now();
        let timeout = Duration::from_millis(20);
        assert!(!buffer.push(entry, false, WhenFull::Wait(timeout), drop));
        assert!(waited.elapsed() >= timeout);
        assert_eq!(buffer.len(), 2);
    }

    #[test]
    fn a_waiting_push_succeeds_once_room_is_made() {
        let buffer = std::sync::Arc::new(Buffer::new(1, 100, 1));
        assert!(buffer.push(entry, false, WhenFull::DropNewest, drop));
        let consumer = std::sync::Arc::clone(&buffer);
        let thread = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(10));
            consumer.pop(0).is_some()
        });
        let wait = WhenFull::Wait(Duration::from_secs(10));
        assert!(buffer.push(entry, false, wait, drop));
        assert!(thread.join().unwrap());
    }

    #[tokio::test]
    async fn the_batch_size_and_urgent_entries_wake_the_background_side() {
        let buffer = Buffer::new(100, 2, 1);
        assert!(buffer.push(entry, false, WhenFull::DropNewest, drop));
        assert!(!buffer.wake.pending.load(Ordering::Relaxed));
        for _ in 0..LOOK_EVERY_PUSHES {
            assert!(buffer.push(entry, false, WhenFull::DropNewest, drop));
        }
        tokio::time::timeout(Duration::from_secs(5), buffer.woken())
            .await
            .unwrap();
        buffer.rearm();
        while buffer.pop(0).is_some() {}
        assert!(buffer.push(entry, true, WhenFull::DropNewest, drop));
        tokio::time::timeout(Duration::from_secs(5), buffer.woken())
            .await
            .unwrap();
    }

    #[test]
    fn each_thread_keeps_to_one_shard_in_order() {
        let buffer = Buffer::new(64, 1000, 4);
        assert_eq!(buffer.shard_count(), 4);
        std::thread::scope(|scope| {
            for thread in 0..4 {
                let buffer = &buffer;
                scope.spawn(move || {
                    for n in 0..8 {
                        let mut e = entry();
                        e.time = thread * 100 + n;
                        assert!(buffer.push(|| e, false, WhenFull::DropNewest, drop));
                    }
                });
            }
        });
        assert_eq!(buffer.len(), 32);
        let mut seen = std::collections::HashMap::new();
        for shard in 0..buffer.shard_count() {
            for e in std::iter::from_fn(|| buffer.pop(shard)) {
                let (thread, n) = (e.time / 100, e.time % 100);
                let (first_shard, next) = seen.entry(thread).or_insert((shard, 0));
                assert_eq!((*first_shard, *next), (shard, n), "thread {thread}");
                *next += 1;
            }
        }
        assert_eq!(seen.len(), 4);
        assert!(default_buffer_shards().is_power_of_two());
    }
}
