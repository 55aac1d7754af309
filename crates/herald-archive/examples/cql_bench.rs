//! Measures the Cassandra store (feature `cql`) on a real node:
//! (a) ingest: 500,000 entries (a 60-byte value each) over 1,000 names through
//!     `Backend::write` in batches of 20,000;
//! (b) read: one day of one name (86,400 samples at 1 Hz) through `query::samples`, pages of
//!     100,000, median of 5 warm reads;
//! (c) the same day decimated to 1,000 buckets through `decimate::buckets`, median of 5.
//!
//! ```text
//! bash scripts/cassandra.sh start
//! cargo run --release -p herald-archive --features cql --example cql_bench
//! ```
//! `HERALD_CASSANDRA` names the node (default `127.0.0.1:9042`). The keyspace
//! `herald_bench` is dropped before and after.

use std::time::{Duration, Instant};

use herald_archive::conformance::{entry, LONG};
use herald_archive::entry::DAY_NANOS;
use herald_archive::query::{self, Budget};
use herald_archive::{Backend, CqlBackend, CqlOptions, Entry};
use herald_proto::archive::{BucketQuery, SampleQuery};
use herald_proto::{Kind, Value};

const KEYSPACE: &str = "herald_bench";
const SECOND: i64 = 1_000_000_000;
/// 2026-11-20T00:00:00Z.
const DAY0: i64 = 20_777 * DAY_NANOS;
const INGEST_ENTRIES: usize = 500_000;
const NAMES: usize = 1_000;
const WRITE_BATCH: usize = 20_000;
const VALUE_BYTES: usize = 60;
const DAY_SAMPLES: i64 = 86_400;
const RUNS: usize = 5;

/// Deterministic, incompressible bytes.
struct XorShift(u64);

impl XorShift {
    fn bytes(&mut self, len: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(len + 8);
        while out.len() < len {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            out.extend_from_slice(&x.to_le_bytes());
        }
        out.truncate(len);
        out
    }
}

fn drop_keyspace(node: &str) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let session = scylla::client::session_builder::SessionBuilder::new()
            .known_node(node)
            .build()
            .await
            .expect("cannot reach Cassandra; start it with `bash scripts/cassandra.sh start`");
        let mut drop =
            scylla::statement::Statement::new(format!("DROP KEYSPACE IF EXISTS {KEYSPACE}"));
        drop.set_request_timeout(Some(Duration::from_secs(120)));
        session
            .query_unpaged(drop, ())
            .await
            .expect("drop keyspace");
    });
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let node = std::env::var("HERALD_CASSANDRA").unwrap_or_else(|_| "127.0.0.1:9042".into());
    drop_keyspace(&node);
    let options = CqlOptions {
        contact_points: vec![node.clone()],
        keyspace: KEYSPACE.to_string(),
        ..CqlOptions::default()
    };
    let backend = CqlBackend::connect(options).expect("connect");
    println!("{}", backend.describe());
    let mut random = XorShift(0x9E37_79B9_7F4A_7C15);

    // (a) Ingest: names in turn at 1 Hz, so a batch of 20,000 holds 20 s of 1,000 names.
    let names: Vec<String> = (1..=NAMES)
        .map(|i| format!("bench.SIG.{i:04}.value"))
        .collect();
    let entries: Vec<Entry> = (0..INGEST_ENTRIES)
        .map(|i| {
            let name = &names[i % NAMES];
            let time = DAY0 + (i / NAMES) as i64 * SECOND;
            let fields = vec![("value".to_string(), Value::Bytes(random.bytes(VALUE_BYTES)))];
            entry(Kind::Info, name, time, fields, LONG)
        })
        .collect();
    let record_bytes = entries[0].record.bytes.len();
    let started = Instant::now();
    for batch in entries.chunks(WRITE_BATCH) {
        backend.write(batch).expect("write");
    }
    let ingest = started.elapsed();
    println!(
        "(a) ingest: {INGEST_ENTRIES} entries ({record_bytes}-byte records), {NAMES} names, \
         write batches of {WRITE_BATCH}: {:.2} s, {:.0} entries/s",
        ingest.as_secs_f64(),
        INGEST_ENTRIES as f64 / ingest.as_secs_f64()
    );
    drop(entries);

    // (b) One day of one name at 1 Hz, on the next day.
    let day = DAY0 + DAY_NANOS;
    let name = "bench.DAY.value";
    let day_entries: Vec<Entry> = (0..DAY_SAMPLES)
        .map(|i| {
            let fields = vec![
                ("value".to_string(), Value::Float((i as f64 / 600.0).sin())),
                ("raw".to_string(), Value::Bytes(random.bytes(VALUE_BYTES))),
            ];
            entry(Kind::Info, name, day + i * SECOND, fields, LONG)
        })
        .collect();
    let day_record_bytes = day_entries[0].record.bytes.len();
    let started = Instant::now();
    for batch in day_entries.chunks(WRITE_BATCH) {
        backend.write(batch).expect("write");
    }
    println!(
        "    (writing the day of {DAY_SAMPLES} {day_record_bytes}-byte records of one name: \
         {:.2} s)",
        started.elapsed().as_secs_f64()
    );
    drop(day_entries);
    let read_day = || {
        let mut query = SampleQuery {
            name: name.to_string(),
            from: day,
            to: day + DAY_NANOS,
            after: None,
            limit: 100_000,
        };
        let started = Instant::now();
        let mut count = 0;
        loop {
            let (page, _) =
                query::samples(&backend, &query, Budget::records(usize::MAX)).expect("samples");
            count += page.records.len();
            match page.next {
                Some(next) => query.after = Some(next),
                None => break,
            }
        }
        assert_eq!(count, DAY_SAMPLES as usize);
        started.elapsed()
    };
    let cold = read_day();
    let reads: Vec<Duration> = (0..RUNS).map(|_| read_day()).collect();
    println!(
        "(b) read one day ({DAY_SAMPLES} samples), pages of 100,000: median {:.1} ms \
         of {RUNS} warm reads (first read {:.1} ms; all: {:?})",
        ms(median(reads.clone())),
        ms(cold),
        reads
            .iter()
            .map(|d| format!("{:.1}", ms(*d)))
            .collect::<Vec<_>>()
    );

    // (c) The same day in 1,000 buckets.
    let bucket_query = BucketQuery {
        name: name.to_string(),
        from: day,
        to: day + DAY_NANOS,
        buckets: 1_000,
        field: None,
    };
    let fold = || {
        let started = Instant::now();
        let mut buckets = 0;
        herald_archive::decimate::buckets(&backend, &bucket_query, usize::MAX, |part, _| {
            buckets += part.len();
            true
        })
        .expect("buckets");
        assert_eq!(buckets, 1_000);
        started.elapsed()
    };
    let folds: Vec<Duration> = (0..RUNS).map(|_| fold()).collect();
    println!(
        "(c) decimate the day to 1,000 buckets: median {:.1} ms of {RUNS} (all: {:?})",
        ms(median(folds.clone())),
        folds
            .iter()
            .map(|d| format!("{:.1}", ms(*d)))
            .collect::<Vec<_>>()
    );
    drop(backend);
    drop_keyspace(&node);
}
