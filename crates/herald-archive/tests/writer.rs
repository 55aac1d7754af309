//! The archive writer in front of a store that can be made to fail: `stored` tickets become
//! durable, a full buffer drops and counts, and a store that comes back gets everything kept.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use herald_archive::conformance::{all_samples, BASE, SECOND};
use herald_archive::{
    Archive, ArchiveError, ArchiveErrorKind, ArchiveOptions, Backend, EmbeddedBackend, Entry,
    Expired, Row, RowRange, Slot, Source,
};
use herald_proto::frame::RawRecord;
use herald_proto::{Kind, Priority, Record, Value};

/// The embedded store, unavailable while `down` is set.
struct Flaky {
    store: EmbeddedBackend,
    down: AtomicBool,
    /// The sequence numbers of what was written, in order.
    written: std::sync::Mutex<Vec<u64>>,
}

impl Flaky {
    fn check(&self) -> Result<(), ArchiveError> {
        match self.down.load(Ordering::SeqCst) {
            true => Err(ArchiveError::new(
                ArchiveErrorKind::Unavailable,
                "store is down",
            )),
            false => Ok(()),
        }
    }
}

impl Backend for Flaky {
    fn describe(&self) -> String {
        "flaky embedded".into()
    }
    fn write(&self, entries: &[Entry]) -> Result<(), ArchiveError> {
        self.check()?;
        self.store.write(entries)?;
        let mut written = self.written.lock().unwrap();
        written.extend(entries.iter().map(|entry| entry.seq));
        Ok(())
    }
    fn sync(&self) -> Result<(), ArchiveError> {
        self.check()?;
        self.store.sync()
    }
    fn slots(&self, source: Source<'_>, first: i32, last: i32) -> Result<Vec<Slot>, ArchiveError> {
        self.store.slots(source, first, last)
    }
    fn read(
        &self,
        source: Source<'_>,
        slot: Slot,
        range: &RowRange,
        limit: usize,
    ) -> Result<Vec<Row>, ArchiveError> {
        self.store.read(source, slot, range, limit)
    }
    fn last_at(&self, name: &str, slot: Slot, time: i64) -> Result<Option<Row>, ArchiveError> {
        self.store.last_at(name, slot, time)
    }
    fn expire(&self, now: i64) -> Result<Expired, ArchiveError> {
        self.store.expire(now)
    }
}

/// A record of `kind` on `name` at second `i`, at `priority`.
fn at(kind: Kind, name: &str, i: i64, priority: Priority) -> RawRecord {
    let record = Record {
        time: BASE + i * SECOND,
        priority,
        text: format!("record {i}"),
        ..Record::new(kind, name)
    };
    RawRecord::new(Bytes::from(record.to_bytes())).unwrap()
}

fn records(name: &str, from: i64, count: i64) -> Vec<RawRecord> {
    (from..from + count)
        .map(|i| {
            let record = Record {
                time: BASE + i * SECOND,
                fields: vec![("value".into(), Value::Int(i))],
                ..Record::new(Kind::Info, name)
            };
            RawRecord::new(Bytes::from(record.to_bytes())).unwrap()
        })
        .collect()
}

/// The embedded store in `dir`, down until told otherwise.
fn down(dir: &std::path::Path) -> Arc<Flaky> {
    Arc::new(Flaky {
        store: EmbeddedBackend::open(dir),
        down: AtomicBool::new(true),
        written: std::sync::Mutex::default(),
    })
}

/// A buffer of 1,000 records, written 100 at a time.
fn small_buffer() -> ArchiveOptions {
    ArchiveOptions {
        buffer_records: 1_000,
        batch_records: 100,
        ..ArchiveOptions::default()
    }
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn stored_batches_become_durable_and_readable() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Arc::new(EmbeddedBackend::open(dir.path()));
    let archive = Archive::start(backend.clone(), ArchiveOptions::default()).unwrap();
    let offer = archive.offer(records("A.b", 0, 100), 1, 0, true);
    assert_eq!((offer.archived, offer.dropped, offer.ticket), (100, 0, 100));
    let durable = archive.durable();
    wait_until("the durable watermark", || {
        *durable.borrow() >= offer.ticket
    });
    assert_eq!(
        all_samples(&*backend, "A.b", BASE, BASE + 100 * SECOND, 1000).len(),
        100
    );
    let unmatched = Record::new(Kind::Message, "chat");
    let raw = RawRecord::new(Bytes::from(unmatched.to_bytes())).unwrap();
    assert_eq!(archive.unarchived(&[raw]), Some("chat"));
}

/// Records no one waits on are not woken for one by one, but they do not wait for the
/// sync interval either: the writer takes a few within milliseconds, and a stored one at
/// once however few are buffered.
#[test]
fn a_few_records_are_written_soon_and_a_stored_one_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Arc::new(EmbeddedBackend::open(dir.path()));
    let options = ArchiveOptions {
        fsync_interval: Duration::from_secs(3_600),
        ..ArchiveOptions::default()
    };
    let archive = Archive::start(backend.clone(), options).unwrap();
    // Let the writer fall asleep on an empty buffer first.
    std::thread::sleep(Duration::from_millis(50));
    let started = Instant::now();
    archive.offer(records("A.few", 0, 3), 1, 0, false);
    wait_until("three records written", || archive.stats().written == 3);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    std::thread::sleep(Duration::from_millis(50));
    let offer = archive.offer(records("A.one", 0, 1), 4, 0, true);
    let durable = archive.durable();
    wait_until("the stored record durable", || {
        *durable.borrow() >= offer.ticket
    });
    assert_eq!(archive.stats().written, 4);
}

#[test]
fn a_store_that_is_down_fills_the_buffer_then_drops_and_counts_and_catches_up() {
    let dir = tempfile::tempdir().unwrap();
    let flaky = down(&dir.path().join("store"));
    let archive = Archive::start(flaky.clone(), small_buffer()).unwrap();
    // INFO records may fill nine tenths of the buffer: the rest is kept for WARNING and up.
    let first = archive.offer(records("A.b", 0, 1_500), 1, 0, false);
    assert_eq!((first.archived, first.dropped), (900, 600));
    // A producer waiting on `stored` is never dropped, even over the bound.
    let stored = archive.offer(records("A.b", 1_500, 10), 1_501, 0, true);
    assert_eq!((stored.archived, stored.dropped), (10, 0));
    wait_until("a failed attempt", || archive.stats().write_errors > 0);
    let stats = archive.stats();
    assert_eq!((stats.backlog_records, stats.dropped), (910, 600));
    assert_eq!(stats.dropped_by_priority[Priority::Info as usize], 600);
    assert!(stats.last_error.unwrap().contains("store is down"));
    assert!(*archive.durable().borrow() < stored.ticket);
    flaky.down.store(false, Ordering::SeqCst);
    let durable = archive.durable();
    wait_until("catching up", || *durable.borrow() >= stored.ticket);
    let stats = archive.stats();
    assert_eq!(
        (stats.written, stats.backlog_records, stats.last_error),
        (910, 0, None)
    );
    let kept = all_samples(&flaky.store, "A.b", BASE, BASE + 2_000 * SECOND, 10_000);
    assert_eq!(kept.len(), 910);
}

/// As the buffer of a store that is down fills, the lowest priorities are shed first, each
/// drop counted by priority, and ERROR records still find room when DEBUG ones do not.
#[test]
fn a_filling_buffer_sheds_the_lowest_priorities_first() {
    let dir = tempfile::tempdir().unwrap();
    let flaky = down(&dir.path().join("store"));
    let archive = Archive::start(flaky.clone(), small_buffer()).unwrap();
    let order = [
        Priority::Debug,
        Priority::Info,
        Priority::Warning,
        Priority::Error,
    ];
    // 2,000 records, the four priorities taking turns.
    let mixed: Vec<RawRecord> = (0..2_000)
        .map(|i| at(Kind::Info, "A.mixed", i, order[i as usize % 4]))
        .collect();
    let offer = archive.offer(mixed, 1, 0, false);
    assert_eq!((offer.archived, offer.dropped), (1_000, 1_000));
    let stats = archive.stats();
    let dropped = |p: Priority| stats.dropped_by_priority[p as usize];
    // DEBUG stops at 800 buffered (200 of each taken by then), INFO at 900, WARNING at 950.
    assert_eq!(dropped(Priority::Debug), 300);
    assert!(dropped(Priority::Debug) > dropped(Priority::Info));
    assert!(dropped(Priority::Info) > dropped(Priority::Warning));
    assert!(dropped(Priority::Warning) > dropped(Priority::Error));
    assert_eq!(stats.dropped_by_priority.iter().sum::<u64>(), stats.dropped);
    // Past 95 % only ERROR and up are taken, until the buffer is full.
    let errors = archive.offer(
        vec![at(Kind::Info, "A.mixed", 3_000, Priority::Error)],
        2_001,
        0,
        false,
    );
    let warning = archive.offer(
        vec![at(Kind::Info, "A.mixed", 3_001, Priority::Warning)],
        2_002,
        0,
        false,
    );
    assert_eq!(
        (errors.dropped, warning.dropped),
        (1, 1),
        "the buffer is full"
    );
}

#[test]
fn records_left_out_of_a_batch_leave_the_others_numbered_by_their_place_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = down(&dir.path().join("store"));
    store.down.store(false, Ordering::SeqCst);
    let archive = Archive::start(store.clone(), small_buffer()).unwrap();
    // The default rules keep logs from INFO up: the DEBUG ones are not archived.
    let order = [
        Priority::Info,
        Priority::Debug,
        Priority::Debug,
        Priority::Warning,
    ];
    let batch: Vec<RawRecord> = (0..8)
        .map(|i| at(Kind::Log, "A.log", i, order[i as usize % 4]))
        .collect();
    let offer = archive.offer(batch, 100, 0, true);
    assert_eq!(offer.archived, 4);
    let durable = archive.durable();
    wait_until("the batch", || *durable.borrow() >= offer.ticket);
    assert_eq!(*store.written.lock().unwrap(), [100, 103, 104, 107]);
    // A batch whose first record is left out, and one with nothing to archive.
    let batch = vec![
        at(Kind::Log, "A.log", 8, Priority::Debug),
        at(Kind::Log, "A.log", 9, Priority::Error),
    ];
    let offer = archive.offer(batch, 200, 0, true);
    let none = archive.offer(
        vec![at(Kind::Log, "A.log", 10, Priority::Debug)],
        300,
        0,
        true,
    );
    assert_eq!(
        (offer.archived, none.archived, none.ticket),
        (1, 0, offer.ticket)
    );
    wait_until("the batch", || *durable.borrow() >= offer.ticket);
    assert_eq!(*store.written.lock().unwrap(), [100, 103, 104, 107, 201]);
}

#[test]
fn a_stored_request_with_no_records_of_its_own_is_synced_at_once() {
    // A client's `stored` flush is an empty `PUBLISH` when its records went out in earlier
    // frames: those are written already, and only a sync is owed. It used to wait for the
    // sync interval (here 30 s; 1 s by default) with the writer asleep.
    let dir = tempfile::tempdir().unwrap();
    let backend = Arc::new(EmbeddedBackend::open(dir.path()));
    let options = ArchiveOptions {
        fsync_interval: Duration::from_secs(30),
        ..ArchiveOptions::default()
    };
    let archive = Archive::start(backend, options).unwrap();
    let offer = archive.offer(records("A.b", 0, 10), 1, 0, false);
    wait_until("the records written", || archive.stats().written == 10);
    std::thread::sleep(Duration::from_millis(50)); // the writer back asleep
    let flush = archive.offer(Vec::new(), 11, 0, true);
    assert_eq!((flush.archived, flush.ticket), (0, offer.ticket));
    let durable = archive.durable();
    let started = Instant::now();
    wait_until("the sync", || *durable.borrow() >= flush.ticket);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn records_past_their_retention_on_arrival_are_counted_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Arc::new(EmbeddedBackend::open(dir.path()));
    let archive = Archive::start(backend.clone(), ArchiveOptions::default()).unwrap();
    let old = Record {
        time: 0,
        ..Record::new(Kind::Info, "A.old")
    };
    let raw = RawRecord::new(Bytes::from(old.to_bytes())).unwrap();
    let offer = archive.offer(vec![raw], 1, 0, true);
    let durable = archive.durable();
    wait_until("the batch", || *durable.borrow() >= offer.ticket);
    assert_eq!(archive.stats().expired_on_arrival, 1);
    assert_eq!(archive.stats().written, 0);
}

#[test]
fn a_full_buffer_spills_to_disk_and_the_spill_is_written_when_the_store_returns() {
    let dir = tempfile::tempdir().unwrap();
    let flaky = down(&dir.path().join("store"));
    let options = ArchiveOptions {
        spill_dir: Some(dir.path().join("spill")),
        spill_bytes: 1 << 20,
        ..small_buffer()
    };
    let archive = Archive::start(flaky.clone(), options.clone()).unwrap();
    let offer = archive.offer(records("A.b", 0, 3_000), 1, 0, false);
    // INFO fills nine tenths of the buffer, the rest goes to the spill.
    assert_eq!(
        (offer.archived, offer.spilled, offer.dropped),
        (900, 2_100, 0)
    );
    // The spill files' own thread writes them: the router only hands them over.
    wait_until("the spill thread", || archive.stats().spilled == 2_100);
    let stats = archive.stats();
    assert!(stats.spill_bytes > 0 && stats.dropped == 0, "{stats:?}");
    // Past the spill's own bound, records are dropped and counted.
    let many = archive.offer(records("A.c", 0, 20_000), 3_001, 0, false);
    assert_eq!(many.spilled + many.dropped, 20_000, "{many:?}");
    wait_until("the spill thread", || {
        let stats = archive.stats();
        stats.spilled + stats.dropped == 2_100 + 20_000
    });
    let dropped = archive.stats().dropped;
    assert!(dropped > 0);
    assert_eq!(
        archive.stats().dropped_by_priority[Priority::Info as usize],
        dropped
    );
    flaky.down.store(false, Ordering::SeqCst);
    let expected = 3_000 + 20_000 - dropped;
    wait_until("the spill to be written and deleted", || {
        let stats = archive.stats();
        stats.written >= expected && stats.spill_bytes == 0
    });
    let stats = archive.stats();
    assert_eq!((stats.spill_bytes, stats.backlog_records), (0, 0));
    let kept = all_samples(&flaky.store, "A.b", BASE, BASE + 4_000 * SECOND, 10_000);
    assert_eq!(kept.len(), 3_000);
    assert_eq!(
        std::fs::read_dir(dir.path().join("spill")).unwrap().count(),
        0
    );
}

#[test]
fn spill_files_left_by_a_stopped_server_are_written_by_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let store_dir = dir.path().join("store");
    let options = ArchiveOptions {
        buffer_records: 10,
        spill_dir: Some(dir.path().join("spill")),
        ..ArchiveOptions::default()
    };
    {
        let archive = Archive::start(down(&store_dir), options.clone()).unwrap();
        let offer = archive.offer(records("A.b", 0, 500), 1, 0, false);
        assert_eq!(offer.spilled, 491);
        archive.close(Duration::from_secs(10));
    }
    let store = Arc::new(EmbeddedBackend::open(&store_dir));
    let archive = Archive::start(store.clone(), options).unwrap();
    wait_until("the spill from before", || archive.stats().written >= 490);
    let kept = all_samples(&*store, "A.b", BASE, BASE + 1_000 * SECOND, 10_000);
    assert!(kept.len() >= 490, "{}", kept.len());
}
