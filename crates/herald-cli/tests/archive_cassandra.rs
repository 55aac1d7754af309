//! A real `herald serve` archiving into a real Apache Cassandra node that is down when the
//! server starts, then killed in the middle of a stream of `stored` sends and started again:
//! the sends wait (the archive buffers and retries, and the monitor shows it), then go on;
//! every record acknowledged as stored is in Cassandra at the end.
//!
//! The test runs a node of its own (port 19044) through `scripts/cassandra.sh`, so it never
//! disturbs the node other tests use; the script installs Cassandra if needed.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use herald_client::{monitor_value, Client, ClientOptions};
use herald_proto::time::now_nanos;
use herald_proto::{AckLevel, Kind, Record, Value};
use herald_testkit::{temp_dir, ServeProcess};

const HERALD: &str = env!("CARGO_BIN_EXE_herald");
const PORT: &str = "19044";
const STORAGE_PORT: &str = "17044";
const SENDERS: i64 = 4;

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `scripts/cassandra.sh COMMAND` for this test's own node.
fn node(command: &str) {
    let root = repository();
    let status = Command::new("bash")
        .arg(root.join("scripts/cassandra.sh"))
        .arg(command)
        .env(
            "HERALD_CASSANDRA_DIR",
            root.join("target/cassandra-outage-test"),
        )
        .env("HERALD_CASSANDRA_PORT", PORT)
        .env("HERALD_CASSANDRA_STORAGE_PORT", STORAGE_PORT)
        .status()
        .expect("bash runs scripts/cassandra.sh");
    assert!(status.success(), "scripts/cassandra.sh {command} failed");
}

/// Stops the node however the test ends.
struct NodeGuard;

impl Drop for NodeGuard {
    fn drop(&mut self) {
        node("stop");
    }
}

fn reading(n: i64) -> Record {
    Record {
        fields: vec![("n".to_string(), Value::Int(n))],
        ..Record::new(Kind::Message, "plant.pump")
    }
}

async fn archive_int(client: &Client, name: &str) -> i64 {
    let data = client.monitor().await.unwrap();
    let Some(Value::Map(archive)) = monitor_value(&data, "archive") else {
        panic!("no archive in the monitor");
    };
    match monitor_value(archive, name) {
        Some(Value::Int(n)) => *n,
        other => panic!("archive.{name}: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_sends_wait_out_a_cassandra_outage_and_nothing_acknowledged_is_lost() {
    // The node is down when the server starts: the server starts anyway and the first sends
    // wait until the node answers.
    node("stop");
    let _guard = NodeGuard;
    let dir = temp_dir("archive-cassandra");
    let _removed_when_passed = herald_testkit::TempDirGuard(dir.clone());
    let config = dir.join("herald.toml");
    let keyspace = format!("herald_outage_{}", std::process::id());
    std::fs::write(
        &config,
        format!(
            "[archive]\nbackend = \"cassandra\"\ncontact_points = [\"127.0.0.1:{PORT}\"]\n\
             keyspace = \"{keyspace}\"\n\n[[archive.rules]]\nkinds = \"message\"\n\
             subject = \"plant.*\"\nkeep = \"1d\"\n"
        ),
    )
    .unwrap();
    let server = ServeProcess::start(HERALD, &["--config", config.to_str().unwrap()]);
    let started = now_nanos();
    let options = ClientOptions {
        reconnect_timeout: Duration::from_secs(1),
        ..ClientOptions::default()
    };
    let acked = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let mut senders = Vec::new();
    for sender in 0..SENDERS {
        let client = Client::connect_with(&server.url(), options.clone())
            .await
            .unwrap();
        let (acked, stop) = (Arc::clone(&acked), Arc::clone(&stop));
        senders.push(tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                let n = i * SENDERS + sender;
                let record = reading(n);
                // Long enough to wait out the node's restart.
                let sent = client.sync_send(&record, AckLevel::Stored, Duration::from_secs(120));
                sent.await.expect("a stored send waits out the outage");
                acked.lock().unwrap().push(n);
                i += 1;
            }
        }));
    }
    let count = || acked.lock().unwrap().len();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(count(), 0, "nothing is stored before the node runs");
    node("start");
    let deadline = Instant::now() + Duration::from_secs(60);
    while count() < 200 {
        assert!(
            Instant::now() < deadline,
            "no stored acknowledgements from Cassandra"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    node("kill");
    let monitor = Client::connect(&server.url()).await.unwrap();
    let during = count();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let errors = archive_int(&monitor, "write_errors").await;
    let stalled = count();
    eprintln!("node killed at {during} acknowledged; 3 s later {stalled}, write errors {errors}");
    assert!(errors > 0, "the archive noticed the node was gone");
    assert!(
        stalled <= during + SENDERS as usize,
        "nothing is acknowledged as stored meanwhile"
    );
    node("start");
    let deadline = Instant::now() + Duration::from_secs(120);
    while count() < stalled + 200 {
        assert!(
            Instant::now() < deadline,
            "sends did not resume after the restart"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    stop.store(true, Ordering::SeqCst);
    for sender in senders {
        tokio::time::timeout(Duration::from_secs(60), sender)
            .await
            .expect("senders finish")
            .unwrap();
    }
    let acked: BTreeSet<i64> = acked.lock().unwrap().iter().copied().collect();
    let reader = Client::connect(&server.url()).await.unwrap();
    let found = reader
        .samples("plant.pump", started - 1, now_nanos() + 1_000_000_000)
        .await
        .unwrap();
    let found: BTreeSet<i64> = found
        .iter()
        .map(|s| match s.decode().unwrap().fields.first() {
            Some((_, Value::Int(n))) => *n,
            other => panic!("unexpected fields {other:?}"),
        })
        .collect();
    let missing: Vec<&i64> = acked.difference(&found).collect();
    eprintln!(
        "acknowledged as stored: {}; in Cassandra: {}",
        acked.len(),
        found.len()
    );
    assert!(
        missing.is_empty(),
        "acknowledged but not in Cassandra: {missing:?}"
    );
    assert_eq!(archive_int(&reader, "backlog").await, 0);
}
