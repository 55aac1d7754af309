//! Reads of one signal's day on the SQLite store and the block store, on the same data:
//! `cargo run --release -p herald-archive --example day_read [ROUNDS [blocks]]`.
//!
//! Writes one day of `DAY.Signal` at 1 Hz interleaved with 9 other signals (864,000 samples
//! of a float and a 52-byte blob, as `herald bench archive` publishes them) into a fresh
//! store of each kind, twice: in batches of 10,000 (as the archive's writer takes a busy
//! stream) and one batch per second (a 1 Hz system). Syncs, closes and opens each store
//! again, then times through `herald_archive::query` and `decimate` (the code the server
//! runs), medians of ROUNDS (default 5): the day's 86,400 samples, and the day in 1,000
//! buckets. Checks that both stores answer alike. With `blocks`, only the block store,
//! written in batches (for a profiler).

use std::path::Path;
use std::time::Instant;

use bytes::Bytes;
use herald_archive::query::{self, Budget};
use herald_archive::{decimate, Backend, BlockStore, EmbeddedBackend, Entry, Keep};
use herald_proto::archive::{BucketQuery, SampleQuery};
use herald_proto::frame::RawRecord;
use herald_proto::{Kind, Record, Value};

const SECOND: i64 = 1_000_000_000;
const DAY_POINTS: i64 = 86_400;
const DAY: i64 = DAY_POINTS * SECOND;
/// 2026-01-01T00:00:00Z: a whole day, hours aligned.
const START: i64 = 1_767_225_600 * SECOND;

/// The day's entries, second by second: `DAY.Signal` and its 9 neighbours.
fn seconds() -> Vec<Vec<Entry>> {
    let mut seq = 0;
    (0..DAY_POINTS)
        .map(|second| {
            let time = START + second * SECOND;
            (0..10)
                .map(|k| {
                    let (subject, value) = match k {
                        0 => ("DAY.Signal".to_string(), (second % 3_600) as f64),
                        k => (format!("DAY.Other{k}"), f64::from(k)),
                    };
                    let record = Record {
                        time,
                        fields: vec![
                            ("value".into(), Value::Float(value)),
                            ("pad".into(), Value::Bytes(vec![0x5a; 52])),
                        ],
                        ..Record::new(Kind::Info, subject)
                    };
                    seq += 1;
                    Entry {
                        seq,
                        received: time,
                        keep: Keep::days(30),
                        record: RawRecord::new(Bytes::from(record.to_bytes())).expect("a record"),
                    }
                })
                .collect()
        })
        .collect()
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Times the day's samples and buckets on `store`; returns (ms, ms, rows, buckets).
fn reads(store: &dyn Backend, rounds: usize) -> (f64, f64, Vec<Bytes>, String) {
    let samples = SampleQuery {
        name: "DAY.Signal".into(),
        from: START,
        to: START + DAY,
        after: None,
        limit: 100_000,
    };
    let buckets = BucketQuery {
        name: "DAY.Signal".into(),
        from: START,
        to: START + DAY,
        buckets: 1_000,
        field: None,
    };
    let (mut read, mut folded) = (Vec::new(), Vec::new());
    let (mut rows, mut answer) = (Vec::new(), String::new());
    for _ in 0..rounds {
        let start = Instant::now();
        let (page, _) = query::samples(store, &samples, Budget::records(usize::MAX)).expect("read");
        read.push(start.elapsed().as_secs_f64() * 1e3);
        assert_eq!(page.records.len() as i64, DAY_POINTS, "the day's samples");
        rows = page.records.into_iter().map(|r| r.record).collect();
        let start = Instant::now();
        let mut all = Vec::new();
        decimate::buckets(store, &buckets, 4 << 20, |part, _| {
            all.extend(part);
            true
        })
        .expect("buckets");
        folded.push(start.elapsed().as_secs_f64() * 1e3);
        answer = format!("{all:?}");
    }
    (median(read), median(folded), rows, answer)
}

fn write(store: &dyn Backend, seconds: &[Vec<Entry>], per_second: bool) {
    if per_second {
        for second in seconds {
            store.write_checked(second).expect("written");
        }
    } else {
        let all: Vec<Entry> = seconds.iter().flatten().cloned().collect();
        for batch in all.chunks(10_000) {
            store.write_checked(batch).expect("written");
        }
    }
    store.sync().expect("synced");
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args
        .next()
        .map_or(5, |n| n.parse().expect("a number of rounds"));
    let seconds = seconds();
    if args.next().as_deref() == Some("blocks") {
        let dir = tempfile::tempdir().expect("a dir");
        write(
            &BlockStore::open(dir.path()).expect("the block store"),
            &seconds,
            false,
        );
        let (read, buckets, _, _) = reads(&BlockStore::open(dir.path()).expect("again"), rounds);
        println!("block store: the day {read:.1} ms, in 1,000 buckets {buckets:.1} ms");
        return;
    }
    println!("| written | read | SQLite store, ms | block store, ms |\n|---|---|---|---|");
    for (label, per_second) in [
        ("in batches of 10,000", false),
        ("one batch per second", true),
    ] {
        let dirs = (
            tempfile::tempdir().expect("a dir"),
            tempfile::tempdir().expect("a dir"),
        );
        let open = |sqlite: bool, dir: &Path| -> Box<dyn Backend> {
            if sqlite {
                Box::new(EmbeddedBackend::open(dir))
            } else {
                Box::new(BlockStore::open(dir).expect("the block store"))
            }
        };
        write(open(true, dirs.0.path()).as_ref(), &seconds, per_second);
        write(open(false, dirs.1.path()).as_ref(), &seconds, per_second);
        let (old_read, old_buckets, old_rows, old_answer) =
            reads(open(true, dirs.0.path()).as_ref(), rounds);
        let (new_read, new_buckets, new_rows, new_answer) =
            reads(open(false, dirs.1.path()).as_ref(), rounds);
        assert!(
            old_rows == new_rows,
            "{label}: the stores read different samples"
        );
        assert!(
            old_answer == new_answer,
            "{label}: the stores fold differently"
        );
        println!("| {label} | the day's 86,400 samples | {old_read:.1} | {new_read:.1} |");
        println!("| {label} | the day in 1,000 buckets | {old_buckets:.1} | {new_buckets:.1} |");
    }
}
