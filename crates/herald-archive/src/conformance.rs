//! The conformance suite every [`Backend`] must pass: write, range reads, paging across days
//! and retention classes, decimation, instant lookups, log filters, retention and restart.
//!
//! A store's tests call [`conformance_tests!`](crate::conformance_tests) with an expression
//! giving a [`Harness`]. Each check uses names of its own (prefixed per run), so several
//! checks may share one database, as the Cassandra tests do with one keyspace.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use herald_proto::archive::{
    ArchiveReply, ArchiveRequest, AtQuery, Bucket, BucketQuery, LogQuery, Page, SampleQuery,
    StoredRecord,
};
use herald_proto::frame::RawRecord;
use herald_proto::{Kind, Priority, PrioritySet, Record, Value};

use crate::backend::Backend;
use crate::entry::{Entry, DAY_NANOS};
use crate::keep::Keep;
use crate::query::{self, Budget};

/// Opens the store under test.
pub trait Harness {
    /// Opens the store; a second call opens the same data again, as after a restart.
    fn open(&self) -> Arc<dyn Backend>;
}

/// Generates one `#[test]` per check, each calling it with the harness `$harness` gives.
#[macro_export]
macro_rules! conformance_tests {
    ($harness:expr) => {
        $crate::conformance_tests!(@each $harness;
            write_then_range_read, pages_cover_days_and_classes_once, decimation_folds_samples,
            every_value_type_reads_back_and_unsigned_values_decimate,
            instant_lookup_finds_the_last_sample_at_or_before, log_filters_select_records,
            retention_drops_whole_expired_days, data_survives_a_restart,
            writing_the_same_entries_twice_stores_them_once,
            records_arriving_out_of_order_read_back_in_order,
            a_record_that_does_not_decode_is_skipped_and_counted,
            large_answers_come_in_parts_that_fit);
    };
    (@each $harness:expr; $($check:ident),*) => {
        $(
            #[test]
            fn $check() {
                let harness = $harness;
                $crate::conformance::$check(&harness);
            }
        )*
    };
}

/// 2026-11-20T00:00:00Z: the day most checks write on.
pub const BASE: i64 = 20_777 * DAY_NANOS;
/// One second.
pub const SECOND: i64 = 1_000_000_000;
/// A retention long enough that nothing in these checks expires on its own.
pub const LONG: Keep = Keep::days(36_500);

static NEXT_SEQ: AtomicU64 = AtomicU64::new(1);

/// Returns a prefix for names unique to this run and check.
pub fn unique(check: &str) -> String {
    let nanos = herald_proto::time::now_nanos();
    format!("T{}x{nanos}.{check}", std::process::id())
}

/// Returns an archived entry: a record of `kind` about `subject` at `time`, with the given
/// fields, numbered with a fresh sequence number.
pub fn entry(
    kind: Kind,
    subject: &str,
    time: i64,
    fields: Vec<(String, Value)>,
    keep: Keep,
) -> Entry {
    let record = Record {
        time,
        fields,
        ..Record::new(kind, subject)
    };
    entry_of(&record, keep)
}

/// Returns an archived entry holding `record`.
pub fn entry_of(record: &Record, keep: Keep) -> Entry {
    let seq = NEXT_SEQ.fetch_add(1, Ordering::Relaxed);
    Entry {
        seq,
        received: record.time + 1_000,
        keep,
        record: RawRecord::new(Bytes::from(record.to_bytes())).expect("a valid record"),
    }
}

fn value(v: i64) -> Vec<(String, Value)> {
    vec![("value".to_string(), Value::Int(v))]
}

fn samples_query(name: &str, from: i64, to: i64) -> SampleQuery {
    SampleQuery {
        name: name.to_string(),
        from,
        to,
        after: None,
        limit: 100_000,
    }
}

/// Reads every page of `name`'s samples in `[from, to)` with pages of `limit`.
pub fn all_samples(
    backend: &dyn Backend,
    name: &str,
    from: i64,
    to: i64,
    limit: u32,
) -> Vec<StoredRecord> {
    let mut query = SampleQuery {
        limit,
        ..samples_query(name, from, to)
    };
    let mut all = Vec::new();
    loop {
        let Page { records, next } = query::samples(backend, &query, Budget::records(usize::MAX))
            .expect("samples query")
            .0;
        assert!(records.len() <= limit as usize, "page over its limit");
        all.extend(records);
        match next {
            Some(next) => query.after = Some(next),
            None => return all,
        }
    }
}

/// The parts of `request`'s answer with parts of at most `max_bytes`.
pub fn parts(
    backend: &dyn Backend,
    request: &ArchiveRequest,
    max_bytes: usize,
) -> Vec<query::Answer> {
    let budget = Budget {
        bytes: max_bytes,
        ..Budget::records(usize::MAX)
    };
    let mut parts = Vec::new();
    query::answer_in_parts(backend, request, budget, |part| {
        parts.push(part);
        true
    })
    .expect("query");
    parts
}

/// Every bucket of `query` (one part) and the stored records skipped.
pub fn all_buckets(backend: &dyn Backend, query: &BucketQuery) -> (Vec<Bucket>, u64) {
    let request = ArchiveRequest::Buckets(query.clone());
    match query::answer(backend, &request, Budget::records(usize::MAX)).expect("buckets") {
        query::Answer {
            reply: ArchiveReply::Buckets(buckets),
            skipped,
        } => (buckets, skipped),
        other => panic!("buckets answered with {other:?}"),
    }
}

/// The values of `query` (one part) and the stored records skipped.
pub fn values_at(backend: &dyn Backend, query: &AtQuery) -> (Vec<Option<StoredRecord>>, u64) {
    let request = ArchiveRequest::At(query.clone());
    match query::answer(backend, &request, Budget::records(usize::MAX)).expect("at") {
        query::Answer {
            reply: ArchiveReply::At(found),
            skipped,
        } => (found, skipped),
        other => panic!("at answered with {other:?}"),
    }
}

fn all_logs(backend: &dyn Backend, mut query: LogQuery) -> Vec<Record> {
    let mut all = Vec::new();
    loop {
        let (page, _) =
            query::logs(backend, &query, Budget::records(usize::MAX)).expect("logs query");
        all.extend(page.records.iter().map(|s| s.decode().expect("a record")));
        match page.next {
            Some(next) => query.after = Some(next),
            None => return all,
        }
    }
}

fn times(records: &[StoredRecord]) -> Vec<i64> {
    records
        .iter()
        .map(|s| s.decode().expect("a record").time)
        .collect()
}

/// Written records come back byte for byte, in time order, only within `[from, to)`, only
/// for the name asked.
pub fn write_then_range_read(harness: &dyn Harness) {
    let backend = harness.open();
    let name = format!("{}.Signal", unique("range"));
    let other = format!("{name}.Other");
    let mut entries = Vec::new();
    for i in (0..20).rev() {
        entries.push(entry(Kind::Info, &name, BASE + i * SECOND, value(i), LONG));
        entries.push(entry(
            Kind::Message,
            &other,
            BASE + i * SECOND,
            value(-i),
            LONG,
        ));
    }
    backend.write(&entries).expect("write");
    backend.sync().expect("sync");
    let found = all_samples(
        &*backend,
        &name,
        BASE + 5 * SECOND,
        BASE + 10 * SECOND,
        1000,
    );
    assert_eq!(
        times(&found),
        (5..10).map(|i| BASE + i * SECOND).collect::<Vec<_>>()
    );
    let original = entries
        .iter()
        .find(|e| e.record.meta.time == BASE + 5 * SECOND)
        .unwrap();
    assert_eq!(
        found[0].record, original.record.bytes,
        "record bytes differ"
    );
    assert_eq!(
        (found[0].seq, found[0].received),
        (original.seq, original.received)
    );
    let none = all_samples(&*backend, &name, BASE - DAY_NANOS, BASE, 1000);
    assert!(none.is_empty(), "rows outside the range");
    assert_eq!(
        all_samples(&*backend, &other, BASE, BASE + DAY_NANOS, 1000).len(),
        20
    );
}

/// Returns `entry` with its one integer field (written as `d3` + 8 bytes, i64::MIN) turned
/// into a value of MessagePack extension type 5 (`c7 06 05` + 6 bytes, the same length):
/// well-formed MessagePack that no reader decodes as a record, as a damaged or foreign store
/// could hold.
pub fn poisoned(mut entry: Entry) -> Entry {
    let mut bytes = entry.record.bytes.to_vec();
    let at = bytes
        .windows(9)
        .position(|w| w == [0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0])
        .expect("an i64::MIN field");
    bytes[at..at + 9].copy_from_slice(&[0xc7, 0x06, 0x05, 0, 0, 0, 0, 0, 0]);
    assert!(RawRecord::new(Bytes::from(bytes.clone())).is_err());
    entry.record = RawRecord {
        bytes: Bytes::from(bytes),
        meta: entry.record.meta,
    };
    entry
}

/// A stored record that does not decode fails no query: samples, logs, buckets and the
/// instant lookup leave it out and count it as skipped.
pub fn a_record_that_does_not_decode_is_skipped_and_counted(harness: &dyn Harness) {
    let backend = harness.open();
    let name = format!("{}.Poisoned", unique("skip"));
    let good = |i: i64| entry(Kind::Info, &name, BASE + i * SECOND, value(i), LONG);
    let bad = poisoned(entry(
        Kind::Info,
        &name,
        BASE + SECOND,
        value(i64::MIN),
        LONG,
    ));
    let log = |i: i64, v: i64| {
        let record = Record {
            time: BASE + i * SECOND,
            fields: value(v),
            ..Record::new(Kind::Log, &name)
        };
        entry_of(&record, LONG)
    };
    let bad_log = poisoned(log(11, i64::MIN));
    backend
        .write(&[good(0), bad, good(2), log(10, 1), bad_log, log(12, 3)])
        .expect("write");
    let (page, skipped) = query::samples(
        &*backend,
        &samples_query(&name, BASE, BASE + 10 * SECOND),
        Budget::records(usize::MAX),
    )
    .expect("samples query");
    assert_eq!((times(&page.records).len(), skipped), (2, 1));
    let logs = LogQuery {
        from: BASE,
        to: BASE + 20 * SECOND,
        priorities: PrioritySet::ALL,
        subject: Some(name.clone()),
        limit: 100,
        ..LogQuery::default()
    };
    let (page, skipped) = query::logs(&*backend, &logs, Budget::records(usize::MAX)).expect("logs");
    assert_eq!((page.records.len(), skipped), (2, 1));
    let buckets = BucketQuery {
        name: name.clone(),
        from: BASE,
        to: BASE + 10 * SECOND,
        buckets: 1,
        field: None,
    };
    let (buckets, skipped) = all_buckets(&*backend, &buckets);
    assert_eq!((buckets[0].count, skipped), (2, 1));
    let at = AtQuery {
        names: vec![name.clone()],
        time: BASE + SECOND,
    };
    let (found, skipped) = values_at(&*backend, &at);
    assert_eq!((found, skipped), (vec![None], 1));
}

/// Paging through a range spanning days and retention classes returns every sample once,
/// in order.
pub fn pages_cover_days_and_classes_once(harness: &dyn Harness) {
    let backend = harness.open();
    let name = format!("{}.Signal", unique("pages"));
    let start = BASE + DAY_NANOS - 2_500 * SECOND;
    let entries: Vec<Entry> = (0..5_000)
        .map(|i| {
            let keep = if i % 3 == 0 { Keep::days(36_501) } else { LONG };
            entry(Kind::Info, &name, start + i * SECOND, value(i), keep)
        })
        .collect();
    backend.write(&entries).expect("write");
    for limit in [777, 5_000] {
        let found = all_samples(&*backend, &name, start, start + 5_000 * SECOND, limit);
        let expected: Vec<i64> = (0..5_000).map(|i| start + i * SECOND).collect();
        assert_eq!(times(&found), expected, "pages of {limit}");
    }
}

/// Decimation gives count, min, max, mean, first and last per bucket.
pub fn decimation_folds_samples(harness: &dyn Harness) {
    let backend = harness.open();
    let name = format!("{}.Rate", unique("buckets"));
    let entries: Vec<Entry> = (0..3_600)
        .map(|i| entry(Kind::Info, &name, BASE + i * SECOND, value(i % 60), LONG))
        .collect();
    backend.write(&entries).expect("write");
    let query = BucketQuery {
        name: name.clone(),
        from: BASE,
        to: BASE + 3_600 * SECOND,
        buckets: 60,
        field: None,
    };
    let (buckets, _) = all_buckets(&*backend, &query);
    assert_eq!(buckets.len(), 60);
    for (index, bucket) in buckets.iter().enumerate() {
        assert_eq!(bucket.start, BASE + index as i64 * 60 * SECOND);
        assert_eq!(bucket.count, 60);
        let stats = &bucket.fields[0];
        assert_eq!(stats.name, "value");
        assert_eq!(
            (stats.min, stats.max, stats.first, stats.last),
            (0.0, 59.0, 0.0, 59.0)
        );
        assert!((stats.mean - 29.5).abs() < 1e-9, "mean {}", stats.mean);
    }
    let coarse = BucketQuery {
        buckets: 1,
        field: Some("missing".into()),
        ..query
    };
    let (one, _) = all_buckets(&*backend, &coarse);
    assert_eq!(
        (one.len(), one[0].count, one[0].fields.len()),
        (1, 3_600, 0)
    );
}

/// Every value type of the data model, unsigned 64-bit integers above `i64::MAX` included,
/// reads back as written; such an integer decimates as the number it is.
pub fn every_value_type_reads_back_and_unsigned_values_decimate(harness: &dyn Harness) {
    let backend = harness.open();
    let name = format!("{}.Counter", unique("types"));
    let every = |n: u64| -> Vec<(String, Value)> {
        vec![
            ("value".into(), Value::UInt(u64::MAX - n)),
            ("flag".into(), Value::Bool(n.is_multiple_of(2))),
            ("int".into(), Value::Int(-(n as i64))),
            ("float".into(), Value::Float(0.5)),
            ("text".into(), Value::from("é")),
            ("bytes".into(), Value::Bytes(vec![0, 255])),
            ("when".into(), Value::Time(-1)),
            (
                "list".into(),
                Value::Array(vec![Value::UInt(1 << 63), Value::Int(-1)]),
            ),
            (
                "map".into(),
                Value::Map(vec![("max".into(), Value::UInt(u64::MAX))]),
            ),
        ]
    };
    let entries: Vec<Entry> = (0..4)
        .map(|i| entry(Kind::Info, &name, BASE + i * SECOND, every(i as u64), LONG))
        .collect();
    backend.write(&entries).expect("write");
    let found = all_samples(&*backend, &name, BASE, BASE + 10 * SECOND, 100);
    let fields: Vec<Vec<(String, Value)>> = found
        .iter()
        .map(|stored| Record::from_bytes(&stored.record).expect("decodes").fields)
        .collect();
    assert_eq!(fields, (0..4).map(every).collect::<Vec<_>>());
    let query = BucketQuery {
        name,
        from: BASE,
        to: BASE + 4 * SECOND,
        buckets: 1,
        field: Some("value".into()),
    };
    let (buckets, _) = all_buckets(&*backend, &query);
    let stats = &buckets[0].fields[0];
    assert_eq!((buckets[0].count, stats.first), (4, u64::MAX as f64));
}

/// The value at an instant is the last sample at or before it, looking back across days;
/// names without samples answer `None`, in the order asked.
pub fn instant_lookup_finds_the_last_sample_at_or_before(harness: &dyn Harness) {
    let backend = harness.open();
    let prefix = unique("at");
    let (a, b, silent) = (
        format!("{prefix}.A"),
        format!("{prefix}.B"),
        format!("{prefix}.C"),
    );
    let entries = vec![
        entry(Kind::Info, &a, BASE - 3 * DAY_NANOS, value(1), LONG),
        entry(Kind::Info, &a, BASE + 10 * SECOND, value(2), LONG),
        entry(
            Kind::Info,
            &a,
            BASE + 20 * SECOND,
            value(3),
            Keep::days(36_501),
        ),
        entry(
            Kind::Info,
            &b,
            BASE - DAY_NANOS + 5 * SECOND,
            value(7),
            LONG,
        ),
    ];
    backend.write(&entries).expect("write");
    let ask = |time: i64| {
        let query = AtQuery {
            names: vec![a.clone(), b.clone(), silent.clone()],
            time,
        };
        values_at(&*backend, &query)
            .0
            .iter()
            .map(|found| found.as_ref().map(|s| s.decode().unwrap().time))
            .collect::<Vec<_>>()
    };
    let day_before = BASE - DAY_NANOS + 5 * SECOND;
    assert_eq!(
        ask(BASE + 15 * SECOND),
        vec![Some(BASE + 10 * SECOND), Some(day_before), None]
    );
    assert_eq!(
        ask(BASE + 20 * SECOND),
        vec![Some(BASE + 20 * SECOND), Some(day_before), None]
    );
    assert_eq!(
        ask(BASE),
        vec![Some(BASE - 3 * DAY_NANOS), Some(day_before), None]
    );
    assert_eq!(ask(BASE - 4 * DAY_NANOS), vec![None, None, None]);
}

fn log(subject: &str, time: i64, priority: Priority, host: &str, text: &str) -> Entry {
    let mut record = Record {
        time,
        priority,
        text: text.to_string(),
        ..Record::new(Kind::Log, subject)
    };
    record.origin.host = host.to_string();
    record.origin.process = format!("{host}-proc");
    entry_of(&record, LONG)
}

/// Log queries filter by priority, subject glob, host, process and text, in time order.
pub fn log_filters_select_records(harness: &dyn Harness) {
    let backend = harness.open();
    let prefix = unique("logs");
    let mount = format!("{prefix}.ANTENNA.DV01.Mount");
    let daq = format!("{prefix}.DAQ");
    let at = BASE + 2 * 3_600 * SECOND;
    let mut entries = Vec::new();
    for i in 0..600 {
        let time = at + i * SECOND;
        let (subject, priority) = match i % 4 {
            0 => (&mount, Priority::Error),
            1 => (&mount, Priority::Info),
            2 => (&daq, Priority::Error),
            _ => (&daq, Priority::Warning),
        };
        let host = if i % 2 == 0 { "ctl1" } else { "ctl2" };
        entries.push(log(
            subject,
            time,
            priority,
            host,
            &format!("event {i} stuck={}", i % 5 == 0),
        ));
    }
    backend.write(&entries).expect("write");
    let base = LogQuery {
        from: at,
        to: at + 600 * SECOND,
        priorities: PrioritySet::ALL,
        subject: Some(format!("{prefix}.*")),
        limit: 50,
        ..LogQuery::default()
    };
    assert_eq!(all_logs(&*backend, base.clone()).len(), 600);
    let errors = all_logs(
        &*backend,
        LogQuery {
            priorities: PrioritySet::at_least(Priority::Error),
            ..base.clone()
        },
    );
    assert_eq!(errors.len(), 300);
    assert!(
        errors.windows(2).all(|w| w[0].time < w[1].time),
        "not in time order"
    );
    let mount_errors = all_logs(
        &*backend,
        LogQuery {
            priorities: PrioritySet::at_least(Priority::Error),
            subject: Some(format!("{prefix}.ANTENNA.*")),
            ..base.clone()
        },
    );
    assert_eq!(mount_errors.len(), 150);
    assert!(mount_errors
        .iter()
        .all(|r| r.subject == mount && r.priority == Priority::Error));
    let host = all_logs(
        &*backend,
        LogQuery {
            host: Some("ctl2".into()),
            ..base.clone()
        },
    );
    assert_eq!(host.len(), 300);
    let process = all_logs(
        &*backend,
        LogQuery {
            process: Some("ctl1-proc".into()),
            ..base.clone()
        },
    );
    assert_eq!(process.len(), 300);
    let text = all_logs(
        &*backend,
        LogQuery {
            text: Some("stuck=true".into()),
            ..base.clone()
        },
    );
    assert_eq!(text.len(), 120);
    let window = all_logs(
        &*backend,
        LogQuery {
            from: at + 10 * SECOND,
            to: at + 20 * SECOND,
            ..base
        },
    );
    assert_eq!(window.len(), 10);
}

/// Expiry drops whole days past their class's retention, and nothing else.
pub fn retention_drops_whole_expired_days(harness: &dyn Harness) {
    let backend = harness.open();
    let name = format!("{}.Old", unique("retention"));
    // Days in 1990, far from every other check's data.
    let old = 7_300 * DAY_NANOS;
    let short = Keep::days(1);
    let entries = vec![
        entry(Kind::Info, &name, old + SECOND, value(1), short),
        entry(
            Kind::Info,
            &name,
            old + 2 * SECOND,
            value(2),
            Keep::days(10),
        ),
        entry(Kind::Info, &name, old + DAY_NANOS + SECOND, value(3), short),
    ];
    backend.write(&entries).expect("write");
    let range = (old, old + 3 * DAY_NANOS);
    assert_eq!(
        all_samples(&*backend, &name, range.0, range.1, 100).len(),
        3
    );
    // Day 0 of the 1-day class ends at old + 1 day and expires one day later.
    let expired = backend.expire(old + 2 * DAY_NANOS).expect("expire");
    assert!(expired.slots >= 1, "nothing expired");
    assert_eq!(
        times(&all_samples(&*backend, &name, range.0, range.1, 100)),
        vec![old + 2 * SECOND, old + DAY_NANOS + SECOND]
    );
    backend.expire(old + 3 * DAY_NANOS).expect("expire");
    assert_eq!(
        times(&all_samples(&*backend, &name, range.0, range.1, 100)),
        vec![old + 2 * SECOND]
    );
    backend.expire(old + 11 * DAY_NANOS).expect("expire");
    assert!(all_samples(&*backend, &name, range.0, range.1, 100).is_empty());
}

/// What was written (and synced) is there after the store is opened again.
pub fn data_survives_a_restart(harness: &dyn Harness) {
    let name = format!("{}.Kept", unique("restart"));
    {
        let backend = harness.open();
        let entries: Vec<Entry> = (0..100)
            .map(|i| entry(Kind::Info, &name, BASE + i * SECOND, value(i), LONG))
            .collect();
        backend.write(&entries).expect("write");
        backend.sync().expect("sync");
    }
    let reopened = harness.open();
    let found = all_samples(&*reopened, &name, BASE, BASE + DAY_NANOS, 1000);
    assert_eq!(found.len(), 100);
    let at = values_at(
        &*reopened,
        &AtQuery {
            names: vec![name],
            time: BASE + DAY_NANOS,
        },
    )
    .0;
    assert_eq!(
        at[0].as_ref().unwrap().decode().unwrap().time,
        BASE + 99 * SECOND
    );
}

/// Writing a batch again (a retry after an error) does not duplicate it.
pub fn writing_the_same_entries_twice_stores_them_once(harness: &dyn Harness) {
    let backend = harness.open();
    let name = format!("{}.Twice", unique("twice"));
    let entries: Vec<Entry> = (0..10)
        .map(|i| entry(Kind::Info, &name, BASE + i * SECOND, value(i), LONG))
        .collect();
    backend.write(&entries).expect("write");
    backend.write(&entries).expect("write again");
    assert_eq!(
        all_samples(&*backend, &name, BASE, BASE + DAY_NANOS, 3).len(),
        10
    );
}

/// Records that arrive late, in later batches, interleave in time order with earlier ones —
/// for samples, logs and instant lookups — whatever the store groups them into.
pub fn records_arriving_out_of_order_read_back_in_order(harness: &dyn Harness) {
    let backend = harness.open();
    let prefix = unique("late");
    let name = format!("{prefix}.Signal");
    let at = BASE + 5 * 3_600 * SECOND;
    for parity in [0, 1] {
        let batch: Vec<Entry> = (0..300)
            .filter(|i| i % 2 == parity)
            .flat_map(|i| {
                let time = at + i * SECOND / 2;
                [
                    entry(Kind::Info, &name, time, value(i), LONG),
                    log(
                        &format!("{prefix}.Log"),
                        time,
                        Priority::Info,
                        "h",
                        &format!("{i}"),
                    ),
                ]
            })
            .collect();
        backend.write(&batch).expect("write");
    }
    let expected: Vec<i64> = (0..300).map(|i| at + i * SECOND / 2).collect();
    for limit in [7, 1_000] {
        let found = all_samples(&*backend, &name, at, at + 3_600 * SECOND, limit);
        assert_eq!(times(&found), expected, "samples in pages of {limit}");
    }
    let logs = all_logs(
        &*backend,
        LogQuery {
            from: at,
            to: at + 3_600 * SECOND,
            priorities: PrioritySet::ALL,
            subject: Some(format!("{prefix}.*")),
            limit: 13,
            ..LogQuery::default()
        },
    );
    assert_eq!(logs.iter().map(|r| r.time).collect::<Vec<_>>(), expected);
    let query = AtQuery {
        names: vec![name],
        time: at + 101 * SECOND / 2,
    };
    let found = values_at(&*backend, &query).0[0].clone().expect("a value");
    assert_eq!(found.decode().unwrap().time, at + 101 * SECOND / 2);
}

/// An answer larger than a part's bytes comes in parts that each stay within them (a part
/// runs over only when it holds one record or bucket), and the parts joined are the whole
/// answer; a page stops before the record that would take it over.
pub fn large_answers_come_in_parts_that_fit(harness: &dyn Harness) {
    let backend = harness.open();
    let prefix = unique("parts");
    let name = format!("{prefix}.Wide");
    // 40 fields per sample: one bucket is about 2.6 KB on the wire.
    let wide = |i: i64| -> Vec<(String, Value)> {
        (0..40)
            .map(|f| (format!("f{f}"), Value::Int(i * f)))
            .collect()
    };
    let entries: Vec<Entry> = (0..600)
        .map(|i| entry(Kind::Info, &name, BASE + i * SECOND, wide(i), LONG))
        .collect();
    backend.write(&entries).expect("write");
    let query = BucketQuery {
        name: name.clone(),
        from: BASE,
        to: BASE + 600 * SECOND,
        buckets: 300,
        field: None,
    };
    let (whole, _) = all_buckets(&*backend, &query);
    assert_eq!(whole.len(), 300);
    let max_bytes = 16 * 1024;
    let answers = parts(&*backend, &ArchiveRequest::Buckets(query), max_bytes);
    assert!(answers.len() > 30, "{} parts", answers.len());
    let mut joined = Vec::new();
    for answer in answers {
        let ArchiveReply::Buckets(part) = answer.reply else {
            panic!("a part of another kind")
        };
        let mut encoded = Vec::new();
        ArchiveReply::Buckets(part.clone()).encode(&mut encoded);
        assert!(
            encoded.len() <= max_bytes,
            "a part of {} bytes",
            encoded.len()
        );
        joined.extend(part);
    }
    assert_eq!(joined, whole);

    let names: Vec<String> = (0..50).map(|i| format!("{prefix}.N{i}")).collect();
    let mut entries: Vec<Entry> = names
        .iter()
        .map(|n| entry(Kind::Info, n, BASE, wide(1), LONG))
        .collect();
    entries.push(entry(Kind::Info, &names[7], BASE + SECOND, wide(2), LONG));
    backend.write(&entries).expect("write");
    let at = AtQuery {
        names: names.clone(),
        time: BASE + 2 * SECOND,
    };
    let (whole, _) = values_at(&*backend, &at);
    let record_bytes = whole[0].as_ref().expect("a value").record.len();
    let answers = parts(&*backend, &ArchiveRequest::At(at), 5 * record_bytes);
    assert_eq!(answers.len(), 13, "50 values, at most 4 of them per part");
    let joined: Vec<Option<StoredRecord>> = answers
        .into_iter()
        .flat_map(|answer| match answer.reply {
            ArchiveReply::At(found) => found,
            _ => panic!("a part of another kind"),
        })
        .collect();
    assert_eq!(joined, whole);

    // Pages: each within its bytes, none empty, every record once.
    let mut request = ArchiveRequest::Samples(samples_query(&name, BASE, BASE + 600 * SECOND));
    let page_bytes = 1_500;
    let (mut seen, mut pages) = (0, 0);
    loop {
        let mut answers = parts(&*backend, &request, page_bytes);
        assert_eq!(answers.len(), 1, "a page is one part");
        let ArchiveReply::Page(page) = answers.remove(0).reply else {
            panic!("not a page")
        };
        let bytes: usize = page.records.iter().map(|r| r.record.len() + 24).sum();
        assert!(!page.records.is_empty());
        assert!(bytes <= page_bytes, "a page of {bytes} bytes");
        seen += page.records.len();
        pages += 1;
        if !request.resume_after(page.next) {
            break;
        }
    }
    assert_eq!(seen, 600);
    assert!(pages >= 100, "{pages} pages");
}
