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
use herald_proto::{Kind, PrioritySet, Value};

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
