//! The archive of a real `herald serve`: rules from its config file, `stored`
//! acknowledgements that survive SIGKILL, and `herald query` reading them back.

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
