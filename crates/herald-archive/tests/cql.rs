//! The conformance suite on a real Cassandra / ScyllaDB node (feature `cql`).
//!
//! The node is `HERALD_CASSANDRA` (`host:port`, default `127.0.0.1:9042`); start a local one
//! with `bash scripts/cassandra.sh start`. Every test process uses a keyspace of its own,
//! `herald_test_<pid>`, and drops those left by processes that are gone. Without a node the
//! tests fail, saying how to start one.

#![cfg(feature = "cql")]

use std::sync::{Arc, Once};
use std::time::Duration;

use herald_archive::conformance::{self, entry, Harness, BASE, LONG, SECOND};
use herald_archive::{ArchiveErrorKind, Backend, CqlBackend, CqlOptions, RowRange, Slot, Source};
use herald_proto::{Kind, Priority, PrioritySet, Record, Value};

const DEFAULT_NODE: &str = "127.0.0.1:9042";
const KEYSPACE_PREFIX: &str = "herald_test_";

struct Cql {
    options: CqlOptions,
}

impl Harness for Cql {
    fn open(&self) -> Arc<dyn Backend> {
        match CqlBackend::connect(self.options.clone()) {
            Ok(backend) => Arc::new(backend),
            Err(err) => panic!(
                "cannot use the Cassandra node at {} ({:?}: {err}).\n\
                 Start a local node with `bash scripts/cassandra.sh start`, or set \
                 HERALD_CASSANDRA=host:port to use another one.",
                self.options.contact_points.join(", "),
                err.kind,
            ),
        }
    }
}

fn node() -> String {
    std::env::var("HERALD_CASSANDRA").unwrap_or_else(|_| DEFAULT_NODE.to_string())
}

fn harness() -> Cql {
    static CLEAN: Once = Once::new();
    CLEAN.call_once(|| drop_stale_keyspaces(&node()));
    Cql {
        options: CqlOptions {
            contact_points: vec![node()],
            keyspace: format!("{KEYSPACE_PREFIX}{}", std::process::id()),
            ..CqlOptions::default()
        },
    }
}

/// Drops the keyspaces of earlier test processes that no longer run, so test runs do not
/// pile up tables on the node. Does nothing if the node cannot be reached (the tests then
/// fail when they open the store).
fn drop_stale_keyspaces(node: &str) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let Ok(session) = scylla::client::session_builder::SessionBuilder::new()
            .known_node(node)
            .fetch_schema_metadata(false)
            .build()
            .await
        else {
            return;
        };
        let Ok(result) = session
            .query_unpaged("SELECT keyspace_name FROM system_schema.keyspaces", ())
            .await
        else {
            return;
        };
        let Ok(rows) = result.into_rows_result() else {
            return;
        };
        let Ok(names) = rows.rows::<(String,)>() else {
            return;
        };
        for (name,) in names.flatten() {
            let Some(pid) = name.strip_prefix(KEYSPACE_PREFIX) else {
                continue;
            };
            let pid = pid.split('_').next().unwrap_or_default();
            let gone = pid.parse::<u32>().is_ok_and(|pid| {
                pid != std::process::id() && !std::path::Path::new(&format!("/proc/{pid}")).exists()
            });
            if gone {
                let mut drop =
                    scylla::statement::Statement::new(format!("DROP KEYSPACE IF EXISTS {name}"));
                drop.set_request_timeout(Some(Duration::from_secs(60)));
                let _ = session.query_unpaged(drop, ()).await;
            }
        }
    });
}

herald_archive::conformance_tests!(harness());

/// The store works from `spawn_blocking` threads of another runtime (as in the server), and
/// may be dropped inside an async task.
#[test]
fn serves_blocking_threads_of_another_runtime_and_drops_in_async_code() {
    let backend = harness().open();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async move {
        let name = format!("{}.Blocking", conformance::unique("blocking"));
        let shared = Arc::clone(&backend);
        let slots = tokio::task::spawn_blocking(move || {
            let entries = vec![entry(Kind::Info, &name, BASE, vec![], LONG)];
            shared.write(&entries)?;
            shared.slots(Source::Samples(&name), i32::MIN, i32::MAX)
        })
        .await
        .expect("the blocking task")
        .expect("write and slots");
        assert_eq!(slots.len(), 1);
        drop(backend);
    });
}

/// A node that does not answer is `Unavailable`, so the archive's writer retries.
#[test]
fn an_unreachable_node_is_unavailable() {
    let options = CqlOptions {
        contact_points: vec!["127.0.0.1:1".to_string()],
        keyspace: "herald_unreachable".to_string(),
        request_timeout: Duration::from_secs(2),
        ..CqlOptions::default()
    };
    let err = CqlBackend::connect(options).expect_err("nothing listens on port 1");
    assert_eq!(err.kind, ArchiveErrorKind::Unavailable, "{err}");
}

/// Batches of one partition are exempt from Cassandra's batch size thresholds: a day of one
/// name with large records goes in and comes back whole.
#[test]
fn large_records_fill_batches_of_one_partition() {
    let backend = harness().open();
    let name = format!("{}.Large", conformance::unique("large"));
    let text = Value::Str("x".repeat(4_000));
    let entries: Vec<_> = (0..600)
        .map(|i| {
            let fields = vec![("text".to_string(), text.clone())];
            entry(Kind::Info, &name, BASE + i * SECOND, fields, LONG)
        })
        .collect();
    backend.write(&entries).expect("write");
    let range = RowRange {
        from: BASE,
        to: BASE + 600 * SECOND,
        after: None,
        priorities: PrioritySet::ALL,
    };
    let slot = Slot {
        day: herald_archive::entry::day_of(BASE),
        keep: LONG,
    };
    let rows = backend
        .read(Source::Samples(&name), slot, &range, 4096)
        .expect("read");
    assert_eq!(rows.len(), 600);
    assert!(rows.windows(2).all(|w| w[0].time < w[1].time));
}

/// Every row of `source` in `slot`, read `limit` at a time through the cursor.
fn read_all(
    backend: &dyn Backend,
    source: Source<'_>,
    slot: Slot,
    limit: usize,
) -> Vec<(i64, u64)> {
    let mut range = RowRange {
        from: i64::MIN,
        to: i64::MAX,
        after: None,
        priorities: PrioritySet::ALL,
    };
    let mut rows = Vec::new();
    loop {
        let page = backend.read(source, slot, &range, limit).expect("read");
        rows.extend(page.iter().map(|r| (r.time, r.stored.seq)));
        match page.last() {
            Some(last) if page.len() == limit => range.after = Some(last.cursor()),
            _ => return rows,
        }
    }
}

/// Records reach the store in block rows: written out of order over many calls (blocks of
/// one partition overlapping in time), some twice, they read back in order and once, page
/// by page, within a range, by priority, and as the value at an instant.
#[test]
fn overlapping_blocks_read_back_in_order_and_once() {
    let backend = harness().open();
    let name = format!("{}.Blocks", conformance::unique("blocks"));
    // 50 minutes of one sample a second, and of one log record a second on a day no other
    // test writes logs to.
    let log_base = BASE - 1_000 * 86_400 * SECOND;
    let priority = |i: i64| {
        if i % 3 == 0 {
            Priority::Error
        } else {
            Priority::Info
        }
    };
    let samples: Vec<_> = (0..3_000)
        .map(|i| entry(Kind::Info, &name, BASE + i * SECOND, vec![], LONG))
        .collect();
    let logs: Vec<_> = (0..3_000)
        .map(|i| {
            let record = Record {
                time: log_base + i * SECOND,
                priority: priority(i),
                ..Record::new(Kind::Log, &name)
            };
            conformance::entry_of(&record, LONG)
        })
        .collect();
    // Forty calls, each with every fortieth record: each call's blocks span the whole
    // range; the calls 5 to 9 again, as a retried write would.
    for call in (0..40).chain(5..10) {
        let batch: Vec<_> = samples
            .iter()
            .chain(&logs)
            .skip(call)
            .step_by(40)
            .cloned()
            .collect();
        backend.write(&batch).expect("write");
    }
    let key = |e: &herald_archive::Entry| (e.record.meta.time, e.seq);
    let expected: Vec<_> = samples.iter().map(key).collect();
    let slot = Slot {
        day: herald_archive::entry::day_of(BASE),
        keep: LONG,
    };
    let source = Source::Samples(&name);
    for limit in [7, 1_000, 100_000] {
        assert_eq!(
            read_all(&*backend, source, slot, limit),
            expected,
            "limit {limit}"
        );
    }
    let middle = RowRange {
        from: BASE + 1_000 * SECOND,
        to: BASE + 1_100 * SECOND,
        after: None,
        priorities: PrioritySet::ALL,
    };
    let rows = backend.read(source, slot, &middle, 1_000).expect("read");
    let got: Vec<_> = rows.iter().map(|r| (r.time, r.stored.seq)).collect();
    assert_eq!(got, expected[1_000..1_100]);
    for (at, want) in [
        (1_500 * SECOND + 1, 1_500),
        (0, 0),
        (10_000 * SECOND, 2_999),
    ] {
        let row = backend.last_at(&name, slot, BASE + at).expect("last_at");
        assert_eq!(
            row.map(|r| (r.time, r.stored.seq)),
            Some(expected[want]),
            "at {at}"
        );
    }
    assert!(backend
        .last_at(&name, slot, BASE - 1)
        .expect("last_at")
        .is_none());

    let log_slot = Slot {
        day: herald_archive::entry::day_of(log_base),
        keep: LONG,
    };
    let errors: Vec<_> = logs
        .iter()
        .enumerate()
        .filter(|(i, _)| priority(*i as i64) == Priority::Error)
        .map(|(_, e)| key(e))
        .collect();
    let mut range = RowRange {
        from: i64::MIN,
        to: i64::MAX,
        after: None,
        priorities: PrioritySet::at_least(Priority::Error),
    };
    let mut got = Vec::new();
    loop {
        let page = backend
            .read(Source::Logs, log_slot, &range, 50)
            .expect("read");
        got.extend(page.iter().map(|r| (r.time, r.stored.seq)));
        match page.last() {
            Some(last) if page.len() == 50 => range.after = Some(last.cursor()),
            _ => break,
        }
    }
    assert_eq!(got, errors);
    let all_logs: Vec<_> = logs.iter().map(key).collect();
    assert_eq!(read_all(&*backend, Source::Logs, log_slot, 333), all_logs);
}

/// Runs `statements` on the node, in order.
fn run_cql(statements: &[String]) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let session = scylla::client::session_builder::SessionBuilder::new()
            .known_node(node())
            .build()
            .await
            .expect("a session");
        for cql in statements {
            let mut statement = scylla::statement::Statement::new(cql.clone());
            statement.set_request_timeout(Some(Duration::from_secs(60)));
            session.query_unpaged(statement, ()).await.expect(cql);
        }
    });
}

/// A keyspace written before block rows (a row per record in `samples` and `logs`) keeps
/// its records readable: reads merge them with the blocks written since, the value at an
/// instant comes from whichever is later, and expiry removes both.
#[test]
fn rows_of_a_keyspace_written_before_blocks_stay_readable() {
    // Named as harness() names them, so that a failed run's keyspace is dropped later.
    let ks = format!("{KEYSPACE_PREFIX}{}_legacy", std::process::id());
    let name = "LEGACY.Signal";
    let old: Vec<_> = (0..10)
        .map(|i| entry(Kind::Info, name, BASE + 2 * i * SECOND, vec![], LONG))
        .collect();
    let old_log = {
        let record = Record {
            time: BASE + 5 * SECOND,
            priority: Priority::Error,
            ..Record::new(Kind::Log, name)
        };
        conformance::entry_of(&record, LONG)
    };
    let keep = LONG.as_secs();
    let day = herald_archive::entry::day_of(BASE);
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let mut setup = vec![
        format!("DROP KEYSPACE IF EXISTS {ks}"),
        format!(
            "CREATE KEYSPACE {ks} WITH replication = \
             {{'class': 'SimpleStrategy', 'replication_factor': 1}}"
        ),
        format!(
            "CREATE TABLE {ks}.samples (name text, day int, keep bigint, time bigint, \
             seq bigint, received bigint, record blob, \
             PRIMARY KEY ((name, day, keep), time, seq))"
        ),
        format!(
            "CREATE TABLE {ks}.logs (day int, hour int, keep bigint, time bigint, seq bigint, \
             priority int, received bigint, record blob, \
             PRIMARY KEY ((day, hour, keep), time, seq))"
        ),
        format!("CREATE TABLE {ks}.name_slots (name text, day int, keep bigint, PRIMARY KEY ((name), day, keep))"),
        format!("CREATE TABLE {ks}.slots (keep bigint, day int, source text, PRIMARY KEY ((keep), day, source))"),
        format!("CREATE TABLE {ks}.slot_names (keep bigint, day int, name text, PRIMARY KEY ((keep, day), name))"),
        format!("CREATE TABLE {ks}.classes (part int, keep bigint, PRIMARY KEY ((part), keep))"),
        format!("INSERT INTO {ks}.name_slots (name, day, keep) VALUES ('{name}', {day}, {keep})"),
        format!("INSERT INTO {ks}.slot_names (keep, day, name) VALUES ({keep}, {day}, '{name}')"),
        format!("INSERT INTO {ks}.slots (keep, day, source) VALUES ({keep}, {day}, 'samples')"),
        format!("INSERT INTO {ks}.slots (keep, day, source) VALUES ({keep}, {day}, 'logs')"),
        format!("INSERT INTO {ks}.classes (part, keep) VALUES (0, {keep})"),
        format!(
            "INSERT INTO {ks}.logs (day, hour, keep, time, seq, priority, received, record) \
             VALUES ({day}, 0, {keep}, {}, {}, 8, {}, 0x{})",
            old_log.record.meta.time,
            old_log.seq,
            old_log.received,
            hex(&old_log.record.bytes)
        ),
    ];
    setup.extend(old.iter().map(|e| {
        format!(
            "INSERT INTO {ks}.samples (name, day, keep, time, seq, received, record) \
             VALUES ('{name}', {day}, {keep}, {}, {}, {}, 0x{})",
            e.record.meta.time,
            e.seq,
            e.received,
            hex(&e.record.bytes)
        )
    }));
    run_cql(&setup);
    let backend = CqlBackend::connect(CqlOptions {
        contact_points: vec![node()],
        keyspace: ks.clone(),
        ..CqlOptions::default()
    })
    .expect("connect");
    // New records between and after the old ones.
    let new: Vec<_> = (0..10)
        .map(|i| entry(Kind::Info, name, BASE + (2 * i + 1) * SECOND, vec![], LONG))
        .collect();
    backend.write(&new).expect("write");
    let slot = Slot { day, keep: LONG };
    let mut expected: Vec<_> = old
        .iter()
        .chain(&new)
        .map(|e| (e.record.meta.time, e.seq))
        .collect();
    expected.sort_unstable();
    for limit in [3, 100] {
        assert_eq!(
            read_all(&backend, Source::Samples(name), slot, limit),
            expected
        );
    }
    let at = |time: i64| {
        let row = backend.last_at(name, slot, BASE + time).expect("last_at");
        row.map(|r| r.time - BASE)
    };
    assert_eq!(at(4 * SECOND), Some(4 * SECOND), "an old row");
    assert_eq!(at(5 * SECOND), Some(5 * SECOND), "a new row");
    assert_eq!(at(100 * SECOND), Some(19 * SECOND), "the last new row");
    let logs = read_all(&backend, Source::Logs, slot, 10);
    assert_eq!(logs, vec![(old_log.record.meta.time, old_log.seq)]);
    let expired = backend
        .expire(BASE + LONG.as_nanos() + 2 * 86_400 * SECOND)
        .expect("expire");
    assert_eq!(expired.slots, 1);
    assert!(read_all(&backend, Source::Samples(name), slot, 100).is_empty());
    assert!(read_all(&backend, Source::Logs, slot, 100).is_empty());
    drop(backend);
    run_cql(&[format!("DROP KEYSPACE IF EXISTS {ks}")]);
}
