//! The archive of a real `herald serve`: rules from its config file, `stored`
//! acknowledgements that survive SIGKILL (and the restart reports the repair), and
//! `herald query` reading them back; `herald archive migrate` moving an SQLite archive into
//! the block store.

use std::collections::BTreeSet;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use herald_client::{Client, ClientOptions};
use herald_proto::time::{format_iso8601, now_nanos};
use herald_proto::{AckLevel, Kind, Record, Value};
use herald_testkit::{temp_dir, ServeProcess};

const HERALD: &str = env!("CARGO_BIN_EXE_herald");
const SENDERS: i64 = 4;
/// Acknowledged records after which the server is killed.
const KILL_AFTER: usize = 400;

const CONFIG: &str = r#"
[archive]
fsync = "stored"

[[archive.rules]]
kinds = "message"
subject = "plant.*"
keep = "1d"
"#;

fn reading(n: i64) -> Record {
    Record {
        fields: vec![("n".to_string(), Value::Int(n))],
        ..Record::new(Kind::Message, "plant.pump")
    }
}

fn n_of(record: &Record) -> i64 {
    match record.fields.first() {
        Some((_, Value::Int(n))) => *n,
        other => panic!("unexpected fields {other:?}"),
    }
}

async fn connect(url: &str) -> Client {
    let options = ClientOptions {
        reconnect_timeout: Duration::from_millis(300),
        ..ClientOptions::default()
    };
    Client::connect_with(url, options).await.unwrap()
}

fn herald_query(args: &[&str]) -> String {
    let output = Command::new(HERALD)
        .arg("query")
        .args(args)
        .env_remove("HERALD_SERVER")
        .output()
        .expect("herald query runs");
    assert!(
        output.status.success(),
        "herald query failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8 output")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_stored_acknowledgement_survives_sigkill_and_herald_query_reads_it() {
    let dir = temp_dir("archive-kill");
    let _removed_when_passed = herald_testkit::TempDirGuard(dir.clone());
    let config = dir.join("herald.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let config_arg = config.to_str().unwrap();
    let data = dir.join("data");
    let started = now_nanos();
    let mut server = ServeProcess::start_in(HERALD, &data, &["--config", config_arg], &[]);
    let acked = Arc::new(Mutex::new(Vec::new()));
    let mut senders = Vec::new();
    for sender in 0..SENDERS {
        let client = connect(&server.url()).await;
        let acked = Arc::clone(&acked);
        senders.push(tokio::spawn(async move {
            for i in 0.. {
                let n = i * SENDERS + sender;
                let record = reading(n);
                let sent = client.sync_send(&record, AckLevel::Stored, Duration::from_secs(5));
                match sent.await {
                    Ok(ack) => {
                        assert_eq!(ack.level, AckLevel::Stored);
                        acked.lock().unwrap().push(n);
                    }
                    Err(_) => return,
                }
            }
        }));
    }
    while acked.lock().unwrap().len() < KILL_AFTER {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    server.kill();
    for sender in senders {
        tokio::time::timeout(Duration::from_secs(30), sender)
            .await
            .expect("senders notice the kill")
            .unwrap();
    }
    let acked: BTreeSet<i64> = acked.lock().unwrap().iter().copied().collect();

    let server = ServeProcess::start_in(HERALD, &data, &["--config", config_arg], &[]);
    let client = connect(&server.url()).await;
    let to = now_nanos() + 1_000_000_000;
    let found = client.samples("plant.pump", started - 1, to).await.unwrap();
    let found: BTreeSet<i64> = found.iter().map(|s| n_of(&s.decode().unwrap())).collect();
    let missing: Vec<&i64> = acked.difference(&found).collect();
    eprintln!(
        "acknowledged as stored before SIGKILL: {}; archived after restart: {}",
        acked.len(),
        found.len()
    );
    assert!(missing.is_empty(), "acknowledged but lost: {missing:?}");
    // The restarted server says it found the store not closed, and what it cut.
    let monitor = client.monitor().await.unwrap();
    let archive = monitor
        .iter()
        .find(|(name, _)| name == "archive")
        .map(|(_, value)| value)
        .expect("the monitor has an archive section");
    let Value::Map(archive) = archive else {
        panic!("archive section {archive:?}")
    };
    let field = |name: &str| archive.iter().find(|(n, _)| n == name).map(|(_, v)| v);
    assert_eq!(field("unclean_start"), Some(&Value::Bool(true)));
    assert!(
        matches!(field("repaired_bytes"), Some(Value::Int(n)) if *n >= 0),
        "{archive:?}"
    );

    let (from, to) = (format_iso8601(started - 1_000_000), format_iso8601(to));
    let url = server.url();
    let common = ["--server", &url, "--from", &from, "--to", &to];
    let json = herald_query(&[&["plant.pump", "--json"], &common[..]].concat());
    assert_eq!(json.lines().count(), found.len());
    let first: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(first["subject"], "plant.pump");
    let csv = herald_query(&[&["plant.pump", "--csv"], &common[..]].concat());
    assert_eq!(
        csv.lines().next(),
        Some("time,time_ns,seq,name,field,value")
    );
    assert_eq!(csv.lines().count(), found.len() + 1);
    let buckets =
        herald_query(&[&["plant.pump", "--buckets", "1", "--json"], &common[..]].concat());
    let bucket: serde_json::Value = serde_json::from_str(buckets.trim()).unwrap();
    assert_eq!(bucket["count"], found.len() as u64);
    assert_eq!(bucket["fields"]["n"]["count"], found.len() as u64);
}

/// An archive an earlier version kept in SQLite: `herald archive migrate` moves it into the
/// block store, puts the old files aside, and the server then answers from the new store;
/// a second run finds nothing to migrate and says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn herald_archive_migrate_moves_an_sqlite_archive_into_the_block_store() {
    use herald_archive::conformance::entry_of;
    use herald_archive::{Backend, EmbeddedBackend, Keep};

    let dir = temp_dir("archive-migrate");
    let _removed_when_passed = herald_testkit::TempDirGuard(dir.clone());
    let data = dir.join("data");
    let started = now_nanos() - 3_600_000_000_000;
    {
        std::fs::create_dir_all(data.join("archive")).unwrap();
        let old = EmbeddedBackend::open(&data.join("archive"));
        let entries: Vec<_> = (0..500)
            .map(|n| {
                let record = Record {
                    time: started + n * 1_000_000_000,
                    ..reading(n)
                };
                entry_of(&record, Keep::days(30))
            })
            .collect();
        old.write(&entries).unwrap();
        old.sync().unwrap();
    }
    let migrate = |extra: &[&str]| {
        Command::new(HERALD)
            .args(["archive", "migrate", "--data-dir", data.to_str().unwrap()])
            .args(extra)
            .env_remove("HERALD_CONFIG")
            .output()
            .expect("herald archive migrate runs")
    };
    let output = migrate(&["--json"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["records"], 500);
    assert!(String::from_utf8_lossy(&output.stderr).contains("[1/1]"));
    assert!(data.join("archive-sqlite-migrated").exists());
    assert!(!data.join("archive").exists());
    let again = migrate(&[]);
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("nothing to migrate"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );

    let server = ServeProcess::start_in(HERALD, &data, &[], &[]);
    let client = connect(&server.url()).await;
    let found = client
        .samples("plant.pump", started - 1, now_nanos())
        .await
        .unwrap();
    let found: Vec<i64> = found.iter().map(|s| n_of(&s.decode().unwrap())).collect();
    assert_eq!(found, (0..500).collect::<Vec<_>>());
    // With the server running, the store is in use: migrating refuses and says why.
    std::fs::rename(data.join("archive-sqlite-migrated"), data.join("archive")).unwrap();
    let busy = migrate(&[]);
    assert!(!busy.status.success());
    assert!(
        String::from_utf8_lossy(&busy.stderr).contains("in use by another process"),
        "{}",
        String::from_utf8_lossy(&busy.stderr)
    );
}
