//! Log queries on the SQLite store and the block store, on the same data:
//! `cargo run --release -p herald-archive --example log_query [RECORDS]`.
//!
//! Writes RECORDS (default 1,000,000) log records shaped like the demo facility's, spread
//! evenly over one day, into a fresh store of each kind in batches of 10,000 (as the
//! archive's writer hands them over), syncs and closes it, opens it again, and times four
//! log queries through `herald_archive::query::logs` (the code the server runs), medians of
//! five: a page of 1,000 from mid-day, WARNING and above over the day (1,000), a subject glob
//! over the day (1,000), and a text search over the day (100). Checks that both stores answer
//! alike.

use std::time::Instant;

use herald_archive::query::{self, Budget};
use herald_archive::{Backend, BlockStore, EmbeddedBackend};
use herald_proto::archive::{LogQuery, Page};
use herald_proto::{Priority, PrioritySet};

#[path = "common/demo_logs.rs"]
mod demo_logs;

const DAY: i64 = 86_400_000_000_000;

fn queries() -> Vec<(&'static str, LogQuery)> {
    let day = LogQuery {
        from: demo_logs::START,
        to: demo_logs::START + DAY,
        priorities: PrioritySet::ALL,
        limit: 1_000,
        ..LogQuery::default()
    };
    vec![
        (
            "a page of 1,000 from mid-day",
            LogQuery {
                from: demo_logs::START + DAY / 2,
                ..day.clone()
            },
        ),
        (
            "WARNING and above over the day, 1,000",
            LogQuery {
                priorities: PrioritySet::at_least(Priority::Warning),
                ..day.clone()
            },
        ),
        (
            "subject ANTENNA.DV0*.Cryo over the day, 1,000",
            LogQuery {
                subject: Some("ANTENNA.DV0*.Cryo".into()),
                ..day.clone()
            },
        ),
        (
            "text \"stage 2\" over the day, 100",
            LogQuery {
                text: Some("stage 2".into()),
                limit: 100,
                ..day
            },
        ),
    ]
}

fn timed(store: &dyn Backend, query: &LogQuery) -> (f64, Page) {
    let mut times = Vec::new();
    let mut page = None;
    for _ in 0..5 {
        let start = Instant::now();
        let (answer, _) = query::logs(store, query, Budget::records(usize::MAX)).expect("answers");
        times.push(start.elapsed().as_secs_f64() * 1e3);
        page = Some(answer);
    }
    times.sort_by(f64::total_cmp);
    (times[2], page.expect("five runs"))
}

fn main() {
    let count: usize = std::env::args()
        .nth(1)
        .map_or(1_000_000, |n| n.parse().expect("a count"));
    let entries = demo_logs::records(count, DAY / count as i64);
    let dirs = (
        tempfile::tempdir().expect("a temporary directory"),
        tempfile::tempdir().expect("a temporary directory"),
    );
    {
        let sqlite = EmbeddedBackend::open(dirs.0.path());
        let blocks = BlockStore::open(dirs.1.path()).expect("the block store");
        for (name, store) in [("SQLite", &sqlite as &dyn Backend), ("blocks", &blocks)] {
            let start = Instant::now();
            for batch in entries.chunks(10_000) {
                store.write(batch).expect("written");
            }
            store.sync().expect("synced");
            let seconds = start.elapsed().as_secs_f64();
            println!("{name}: wrote {count} records in {seconds:.2} s");
        }
    }
    let sqlite = EmbeddedBackend::open(dirs.0.path());
    let blocks = BlockStore::open(dirs.1.path()).expect("the block store");
    println!("| query | SQLite store, ms | block store, ms |\n|---|---|---|");
    for (label, query) in queries() {
        let (old_ms, old) = timed(&sqlite, &query);
        let (new_ms, new) = timed(&blocks, &query);
        assert_eq!(old, new, "{label}: the stores answer differently");
        assert!(!old.records.is_empty(), "{label}: nothing found");
        println!("| {label} | {old_ms:.1} | {new_ms:.1} |");
    }
}
