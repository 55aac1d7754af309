//! [`Archive`]: the bounded buffer and the writer thread in front of a [`Backend`].
//!
//! The router's side only appends to the buffer (one short lock per batch) and never waits on
//! the store. The writer thread takes batches, writes them, makes them durable according to
//! the [`FsyncPolicy`], and raises the durability watermark that `stored` acknowledgements
//! wait on. If the store is slow or down, records wait in the buffer; as it fills, the
//! lowest priorities are shed first ([`shed_limit`]: TRACE to DEBUG past 80 % of its bound,
//! INFO and NOTICE past 90 %, WARNING past 95 %, ERROR and above only when it is full) —
//! to the spill files when there are some (written by their own thread, `overflow`: the
//! router only hands records over), else dropped and counted by priority — except
//! records a producer waits on as `stored`, which are always kept (their producers'
//! in-flight windows bound them).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use herald_proto::frame::RawRecord;
use herald_proto::time::now_nanos;
use herald_proto::Priority;
use tokio::sync::watch;

use crate::backend::{Backend, Slot};
use crate::buffer::{Buffer, Handed, Keeps};
use crate::entry::Entry;
use crate::error::ArchiveError;
pub use crate::options::{ArchiveOptions, ArchiveStats, FsyncPolicy};
use crate::overflow::{join_until, Overflow};
use crate::rules::Rules;
use crate::spill::Spill;

/// What [`Archive::offer`] did with a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Offer {
    /// Records the rules matched and the buffer took.
    pub archived: u64,
    /// Records the rules matched but the full buffer (and spill) dropped.
    pub dropped: u64,
    /// Records the full buffer handed to the spill files' thread (which counts what it
    /// cannot write as dropped).
    pub spilled: u64,
    /// Durability ticket: the batch is durable once [`Archive::durable`] reaches it.
    pub ticket: u64,
}

#[derive(Debug, Default)]
struct Counters {
    written: AtomicU64,
    dropped: AtomicU64,
    dropped_by_priority: [AtomicU64; 12],
    expired_on_arrival: AtomicU64,
    write_errors: AtomicU64,
    skipped_unreadable: AtomicU64,
    slots_expired: AtomicU64,
}

impl Counters {
    /// Counts `record` as lost.
    fn lost(&self, record: &RawRecord) {
        self.dropped.fetch_add(1, Ordering::Relaxed);
        self.dropped_by_priority[record.meta.priority as usize].fetch_add(1, Ordering::Relaxed);
    }
}

struct Inner {
    backend: Arc<dyn Backend>,
    options: ArchiveOptions,
    /// The rules in force: `options.rules` until a reload replaces them.
    rules: arc_swap::ArcSwap<Rules>,
    buffer: Mutex<Buffer>,
    ready: Condvar,
    durable: watch::Sender<u64>,
    counters: Arc<Counters>,
    /// The spill files and their thread, on the embedded path.
    overflow: Option<Overflow>,
    last_error: Mutex<Option<String>>,
}

/// The archive: rules, buffer and writer thread in front of a store.
pub struct Archive {
    inner: Arc<Inner>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Archive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Archive")
            .field("backend", &self.inner.backend.describe())
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Archive {
    /// Starts the writer thread in front of `backend`.
    ///
    /// # Errors
    /// The thread could not be spawned.
    pub fn start(backend: Arc<dyn Backend>, options: ArchiveOptions) -> std::io::Result<Archive> {
        let counters = Arc::new(Counters::default());
        let overflow = match &options.spill_dir {
            Some(dir) => {
                let spill = Spill::open(dir, options.spill_bytes)?;
                let counters = Arc::clone(&counters);
                Some(Overflow::start(spill, move |entry| {
                    counters.lost(&entry.record)
                })?)
            }
            None => None,
        };
        let inner = Arc::new(Inner {
            backend,
            rules: arc_swap::ArcSwap::from_pointee(options.rules.clone()),
            options,
            buffer: Mutex::new(Buffer::default()),
            ready: Condvar::new(),
            durable: watch::Sender::new(0),
            counters,
            overflow,
            last_error: Mutex::new(None),
        });
        let thread = std::thread::Builder::new()
            .name("herald-archive".into())
            .spawn({
                let inner = Arc::clone(&inner);
                move || inner.run()
            })?;
        Ok(Archive {
            inner,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Returns the store, for queries.
    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.inner.backend
    }

    /// Returns the rules in force.
    pub fn rules(&self) -> Arc<Rules> {
        self.inner.rules.load_full()
    }

    /// Puts `rules` in force for the records offered from now on; what is archived keeps
    /// the retention it was taken with.
    pub fn set_rules(&self, rules: Rules) {
        self.inner.rules.store(Arc::new(rules));
    }

    /// Returns the subject of the first of `records` no rule archives, if any.
    pub fn unarchived<'a>(&self, records: &'a [RawRecord]) -> Option<&'a str> {
        records
            .iter()
            .find(|record| self.inner.rules.load().keep_for(record).is_none())
            .map(RawRecord::subject)
    }

    /// Takes the records the rules match (numbered from `first_seq`, received at
    /// `received`) into the buffer: the vector moves in whole, with the retention of each
    /// record, and the writer thread makes them entries. With `stored`, they are taken even
    /// over the bound and the writer syncs them at once (under [`FsyncPolicy::Stored`]).
    pub fn offer(
        &self,
        records: Vec<RawRecord>,
        first_seq: u64,
        received: i64,
        stored: bool,
    ) -> Offer {
        let rules = self.inner.rules.load();
        let mut offer = Offer::default();
        // Records over their priority's share, for the spill files' thread.
        let mut overflow = Vec::new();
        let mut keeps = None;
        // Where each record taken was in `records`, once one was left out.
        let mut offsets: Option<Vec<u32>> = None;
        let mut bytes = 0;
        let mut buffer = lock(&self.inner.buffer);
        let queued = buffer.records + buffer.in_flight;
        let queued_bytes = buffer.bytes + buffer.in_flight_bytes;
        for (offset, record) in records.iter().enumerate() {
            let taken = offer.archived as usize;
            let size = record.bytes.len();
            if let Some(keep) = rules.keep_for(record) {
                let queued = (queued + taken, queued_bytes + bytes + size);
                if stored || !self.inner.over_bound(queued, record.meta.priority) {
                    Keeps::push(&mut keeps, taken, keep);
                    if let Some(offsets) = &mut offsets {
                        offsets.push(offset as u32);
                    }
                    offer.archived += 1;
                    bytes += size;
                    continue;
                }
                if self.inner.overflow.is_some() {
                    overflow.push(Entry {
                        seq: first_seq + offset as u64,
                        received,
                        keep,
                        record: record.clone(),
                    });
                } else {
                    offer.dropped += 1;
                    self.inner.counters.lost(record);
                }
            }
            // Left out: the records before it were all taken, at their own places.
            offsets.get_or_insert_with(|| (0..offset as u32).collect());
        }
        if let Some(keeps) = keeps {
            let at = (first_seq, received);
            buffer.push(Handed::new(records, keeps, offsets, at, bytes));
        }
        offer.ticket = buffer.issued;
        if stored {
            buffer.wanted = buffer.issued;
            buffer.stored_at = Some(Instant::now());
        }
        let wake = buffer.wake_writer(stored, offer.archived as usize, WAKE_RECORDS);
        drop(buffer);
        if let (Some(spill), false) = (&self.inner.overflow, overflow.is_empty()) {
            let count = overflow.len() as u64;
            match spill.hand_over(overflow) {
                Ok(()) => offer.spilled += count,
                Err(refused) => {
                    offer.dropped += count;
                    refused
                        .iter()
                        .for_each(|entry| self.inner.counters.lost(&entry.record));
                }
            }
        }
        if wake {
            self.inner.ready.notify_one();
        }
        offer
    }

    /// Returns a watch of the durability watermark: every ticket up to its value is durable.
    pub fn durable(&self) -> watch::Receiver<u64> {
        self.inner.durable.subscribe()
    }

    /// Returns the counters.
    pub fn stats(&self) -> ArchiveStats {
        let buffer = lock(&self.inner.buffer);
        let counters = &self.inner.counters;
        ArchiveStats {
            backend: self.inner.backend.describe(),
            backlog_records: (buffer.records + buffer.in_flight) as u64,
            backlog_bytes: (buffer.bytes + buffer.in_flight_bytes) as u64,
            written: counters.written.load(Ordering::Relaxed),
            dropped: counters.dropped.load(Ordering::Relaxed),
            dropped_by_priority: std::array::from_fn(|p| {
                counters.dropped_by_priority[p].load(Ordering::Relaxed)
            }),
            spilled: self
                .inner
                .overflow
                .as_ref()
                .map_or(0, |o| o.spill().records()),
            spill_bytes: self
                .inner
                .overflow
                .as_ref()
                .map_or(0, |o| o.spill().bytes()),
            expired_on_arrival: counters.expired_on_arrival.load(Ordering::Relaxed),
            write_errors: counters.write_errors.load(Ordering::Relaxed),
            last_error: lock(&self.inner.last_error).clone(),
            slots_expired: counters.slots_expired.load(Ordering::Relaxed),
            skipped_unreadable: counters.skipped_unreadable.load(Ordering::Relaxed),
            recovery: self.inner.backend.recovery(),
        }
    }

    /// Counts stored records a query skipped because they do not decode.
    pub fn count_skipped(&self, count: u64) {
        self.inner
            .counters
            .skipped_unreadable
            .fetch_add(count, Ordering::Relaxed);
    }

    /// Writes what is buffered, syncs, and stops the writer; gives up on a store that stays
    /// down for `grace` and counts what it could not write as dropped.
    pub fn close(&self, grace: Duration) {
        let deadline = Instant::now() + grace;
        // What was handed to the spill goes into its files first (the next start reads them
        // if this writer cannot).
        if let Some(overflow) = &self.inner.overflow {
            overflow.stop(deadline);
        }
        lock(&self.inner.buffer).closing = true;
        self.inner.ready.notify_one();
        if let Some(thread) = lock(&self.thread).take() {
            join_until(thread, deadline);
        }
    }
}

impl Drop for Archive {
    fn drop(&mut self) {
        self.close(Duration::from_secs(5));
    }
}

/// Backoff between attempts while the store fails.
/// Records in the buffer that wake the writer at once; fewer wait up to [`LINGER`] (records
/// a producer waits on as `stored` wake it at once).
const WAKE_RECORDS: usize = 4096;
/// How long records no one waits on may gather before the writer takes them.
const LINGER: Duration = Duration::from_millis(5);
/// For this long after a producer asked for `stored`, records do not linger: see
/// `Inner::next_batch`.
const STORED_RECENTLY: Duration = Duration::from_millis(100);
const RETRY_MIN: Duration = Duration::from_millis(50);
const RETRY_MAX: Duration = Duration::from_secs(2);

/// The share of the buffer's bounds (numerator, denominator) that records of `priority`
/// may fill: the lowest priorities are shed first, and the last tenth of the buffer is kept
/// for WARNING and above, the last twentieth for ERROR and above.
pub fn shed_limit(priority: Priority) -> (usize, usize) {
    match priority {
        Priority::Trace | Priority::Delouse | Priority::Debug => (8, 10),
        Priority::Info | Priority::Notice => (9, 10),
        Priority::Warning => (19, 20),
        _ => (1, 1),
    }
}

impl Inner {
    /// Whether a record of `priority` is over what the buffer may hold for its priority,
    /// with `records` queued before it and `bytes` queued with it.
    fn over_bound(&self, (records, bytes): (usize, usize), priority: Priority) -> bool {
        let (num, den) = shed_limit(priority);
        records * den >= self.options.buffer_records * num
            || bytes * den > self.options.buffer_bytes.saturating_mul(num)
    }

    fn run(self: Arc<Self>) {
        let mut last_sync = Instant::now();
        let mut last_expire: Option<Instant> = None;
        let mut committed = 0u64;
        // The last batch's vector, emptied: the next batch is taken into it.
        let mut spare: Vec<Entry> = Vec::new();
        loop {
            if last_expire.is_none_or(|at| at.elapsed() >= self.options.expire_interval) {
                self.expire();
                last_expire = Some(Instant::now());
            }
            let next = self.next_batch(last_sync, std::mem::take(&mut spare));
            let Some((mut batch, end, wanted, closing, spilled)) = next else {
                self.sync(committed, &mut last_sync);
                return;
            };
            if !batch.is_empty() {
                if !self.write(&batch, closing) {
                    // A spilled batch's file stays on disk for the next start.
                    self.abandon(if spilled { &[] } else { &batch });
                    return;
                }
                if spilled {
                    // The spill file goes once its records are durable in the store (a store
                    // may hold what it was given in memory until it syncs).
                    self.sync(committed, &mut last_sync);
                    self.spill_written();
                }
                committed = end;
            }
            let due = last_sync.elapsed() >= self.options.fsync_interval;
            let sync_now = match self.options.fsync {
                FsyncPolicy::Always => !batch.is_empty(),
                FsyncPolicy::Stored => due || wanted > *self.durable.borrow(),
                FsyncPolicy::Interval => due,
            };
            if sync_now && committed > *self.durable.borrow() {
                self.sync(committed, &mut last_sync);
            } else if due {
                last_sync = Instant::now();
            }
            batch.clear();
            spare = batch;
        }
    }

    /// Waits for records (or the sync interval) and takes a batch (into `spare`, an empty
    /// vector whose room is kept). Returns `None` when closing with nothing left.
    #[allow(clippy::type_complexity)]
    fn next_batch(
        &self,
        last_sync: Instant,
        spare: Vec<Entry>,
    ) -> Option<(Vec<Entry>, u64, u64, bool, bool)> {
        let mut buffer = lock(&self.buffer);
        if let (Some(overflow), true) = (&self.overflow, buffer.records == 0) {
            // Memory is drained: the oldest spill file comes next, read without holding up
            // the router. Its records were never given tickets (no producer waits on them),
            // so the watermark stays.
            let (end, wanted, closing) = (buffer.issued, buffer.wanted, buffer.closing);
            drop(buffer);
            let mut spill = overflow.spill();
            if !spill.is_empty() {
                match spill.take() {
                    Ok(batch) if !batch.is_empty() => {
                        return Some((batch, end, wanted, closing, true));
                    }
                    Err(err) => self.failed("spill read", &ArchiveError::io("spill", err)),
                    Ok(_) => {}
                }
            }
            drop(spill);
            buffer = lock(&self.buffer);
        }
        // Records no one waits on gather for up to LINGER (or WAKE_RECORDS of them): fewer,
        // larger batches, and the router rarely has to wake this thread. While producers ask
        // for `stored`, records are written as they come instead: the sync that answers a
        // producer then finds little left to write (`herald-bench-compare --ack stored`,
        // 4,000 in flight: ~570 k records/s lingering, see docs/benchmarks.md).
        let linger = match buffer.stored_at {
            Some(at) if at.elapsed() < STORED_RECENTLY => Duration::ZERO,
            _ => LINGER,
        };
        let mut lingered: Option<Instant> = None;
        while !buffer.closing {
            let pending = buffer.records;
            let stored_waiting = buffer.wanted > buffer.issued - pending as u64;
            // A producer waits on records written but not yet synced (they came before its
            // `stored` request, which brought none): under `Stored` the sync is owed now,
            // not at the interval (`Interval` makes it wait for that by design).
            let sync_owed =
                self.options.fsync == FsyncPolicy::Stored && buffer.wanted > *self.durable.borrow();
            if pending >= WAKE_RECORDS || (pending > 0 && stored_waiting) || sync_owed {
                break;
            }
            let wait = if pending == 0 {
                lingered = None;
                self.options
                    .fsync_interval
                    .saturating_sub(last_sync.elapsed())
            } else {
                linger.saturating_sub(lingered.get_or_insert_with(Instant::now).elapsed())
            };
            if wait.is_zero() {
                break;
            }
            buffer.writer_asleep = true;
            buffer = self
                .ready
                .wait_timeout(buffer, wait)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            buffer.writer_asleep = false;
        }
        if buffer.records == 0 && buffer.closing {
            return None;
        }
        // Whole routed batches are taken under the lock and become entries after it, so
        // that the router's offers do not wait on that (a batch may take the count a little
        // past `batch_records`).
        let mut handed = Vec::new();
        buffer.take(self.options.batch_records, &mut handed);
        let end = buffer.issued - buffer.records as u64;
        let (wanted, closing) = (buffer.wanted, buffer.closing);
        drop(buffer);
        let mut batch = spare;
        for handed in handed {
            handed.into_entries(&mut batch);
        }
        Some((batch, end, wanted, closing, false))
    }

    /// Deletes the spill file whose records were just written.
    fn spill_written(&self) {
        let result = self.overflow.as_ref().map(|o| o.spill().written());
        if let Some(Err(err)) = result {
            self.failed("spill delete", &ArchiveError::io("spill", err));
        }
    }

    /// Writes `batch`, retrying while the store fails. Returns false if it gave up (only
    /// when closing).
    fn write(&self, batch: &[Entry], closing: bool) -> bool {
        let now = now_nanos();
        let expired_already = |entry: &Entry| {
            let slot = Slot {
                day: entry.day(),
                keep: entry.keep,
            };
            slot.expired(now)
        };
        // Almost always nothing is past its retention: then the batch is written as it is.
        let filtered: Vec<Entry>;
        let live: &[Entry] = if batch.iter().any(expired_already) {
            filtered = batch
                .iter()
                .filter(|entry| !expired_already(entry))
                .cloned()
                .collect();
            &filtered
        } else {
            batch
        };
        let expired = (batch.len() - live.len()) as u64;
        self.counters
            .expired_on_arrival
            .fetch_add(expired, Ordering::Relaxed);
        let mut backoff = RETRY_MIN;
        let mut attempts = 0;
        loop {
            match self.backend.write_checked(live) {
                Ok(()) => break,
                Err(err) => {
                    attempts += 1;
                    self.failed("write", &err);
                    // Shutdown may have begun after this batch was taken.
                    let closing = closing || lock(&self.buffer).closing;
                    if closing && attempts >= 3 {
                        return false;
                    }
                    std::thread::sleep(backoff);
                    backoff = (backoff * 2).min(RETRY_MAX);
                }
            }
        }
        *lock(&self.last_error) = None;
        self.counters
            .written
            .fetch_add(live.len() as u64, Ordering::Relaxed);
        let mut buffer = lock(&self.buffer);
        buffer.in_flight = 0;
        buffer.in_flight_bytes = 0;
        true
    }

    /// Syncs the store and raises the watermark to `target` (every ticket written so far).
    fn sync(&self, target: u64, last_sync: &mut Instant) {
        let mut backoff = RETRY_MIN;
        loop {
            match self.backend.sync() {
                Ok(()) => break,
                Err(err) => {
                    self.failed("sync", &err);
                    if lock(&self.buffer).closing {
                        return;
                    }
                    std::thread::sleep(backoff);
                    backoff = (backoff * 2).min(RETRY_MAX);
                }
            }
        }
        *last_sync = Instant::now();
        self.durable.send_if_modified(|durable| {
            let raised = target > *durable;
            *durable = (*durable).max(target);
            raised
        });
    }

    fn failed(&self, what: &str, err: &ArchiveError) {
        self.counters.write_errors.fetch_add(1, Ordering::Relaxed);
        let message = format!("archive {what} failed: {err}");
        tracing::warn!(backend = %self.backend.describe(), "{message}");
        *lock(&self.last_error) = Some(message);
    }

    /// Counts what is left unwritten at shutdown as dropped.
    fn abandon(&self, in_flight: &[Entry]) {
        let mut buffer = lock(&self.buffer);
        let mut lost = in_flight.len();
        for entry in in_flight {
            self.counters.lost(&entry.record);
        }
        for record in buffer.clear() {
            self.counters.lost(&record);
            lost += 1;
        }
        tracing::error!(
            lost,
            "archive store unavailable at shutdown; records not archived"
        );
    }

    fn expire(&self) {
        match self.backend.expire(now_nanos()) {
            Ok(expired) => {
                self.counters
                    .slots_expired
                    .fetch_add(expired.slots, Ordering::Relaxed);
            }
            Err(err) => self.failed("expire", &err),
        }
    }
}
