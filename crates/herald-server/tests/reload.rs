//! Live reload against a real server: limits, queue defaults, storm rule, archive rules and
//! the syslog listeners change while clients stay connected and records keep flowing; what
//! waits for a restart is named and keeps its value; a bad configuration is refused whole.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{connect, take_records, WAIT};
use herald_client::{ClientError, Event};
use herald_proto::frame::ErrorCode;
use herald_proto::storm::{REPEATED_FIELD, STORM_FIELD};
use herald_proto::{AckLevel, Filter, Kind, Priority, Record, Value};
use herald_server::config::Source;
use herald_server::{Config, Server};
use herald_testkit::{temp_dir, TempDirGuard, TestServer};

/// Loads a configuration from `toml`, written to a file in `dir`, with the test's own
/// addresses and data directory as flags (what `herald serve --listen …` would give).
fn source_of(dir: &Path, toml: &str) -> Source {
    let path = dir.join("herald.toml");
    std::fs::write(&path, toml).unwrap();
    let mut flags = toml::Table::new();
    for key in ["listen", "http"] {
        flags.insert(key.into(), toml::Value::String("127.0.0.1:0".into()));
    }
    let data = dir.join("data").to_string_lossy().into_owned();
    flags.insert("data_dir".into(), toml::Value::String(data));
    Source {
        path: Some(path),
        env: Vec::new(),
        flags,
    }
}

fn config_of(dir: &Path, toml: &str) -> Config {
    source_of(dir, toml).load().unwrap().config
}

fn log(subject: &str, text: &str, n: i64) -> Record {
    Record {
        priority: Priority::Error,
        text: text.to_string(),
        fields: vec![("n".into(), Value::Int(n))],
        ..Record::new(Kind::Log, subject)
    }
}

#[tokio::test]
async fn limits_and_queue_defaults_change_live_and_nothing_in_flight_is_lost() {
    let dir = TempDirGuard(temp_dir("reload"));
    let server = TestServer::start_with(config_of(&dir.0, "queue_records = 100000\n")).await;
    let watcher = connect(&server, "watcher").await;
    let mut all = watcher
        .subscribe(Filter::subject("LOAD.*").unwrap())
        .await
        .unwrap();
    let producer = connect(&server, "producer").await;
    // Records flow while the configuration changes under them.
    let sending = tokio::spawn(async move {
        for n in 0..20_000 {
            // Texts differ: identical ones would collapse as a log storm.
            producer
                .publish(&log("LOAD.a", &format!("tick {n}"), n))
                .await
                .unwrap();
            if n % 1_000 == 0 {
                tokio::task::yield_now().await;
            }
        }
        producer.flush(WAIT).await.unwrap();
    });
    let mut new = config_of(
        &dir.0,
        "queue_records = 7\nmax_subscriptions = 2\nname = \"renamed\"\n",
    );
    // The test server's own data directory, as its flags would give it.
    new.data_dir
        .clone_from(&server.server().config_in_force().data_dir);
    let outcome = server.server().reload_with(new).await.unwrap();
    assert_eq!(outcome.applied, vec!["max_subscriptions", "queue_records"]);
    assert_eq!(
        outcome.restart,
        vec!["name"],
        "the name waits for a restart"
    );
    sending.await.unwrap();
    // Every record reached the subscription made before the reload, in order.
    let records = take_records(&watcher, &mut all).await;
    let numbers: Vec<i64> = records
        .iter()
        .map(|r| match r.fields[0].1 {
            Value::Int(n) => n,
            _ => -1,
        })
        .collect();
    assert_eq!(numbers.len(), 20_000, "every record arrived");
    assert!(
        numbers.iter().enumerate().all(|(i, n)| *n == i as i64),
        "in order"
    );
    // New subscriptions get the new default, the old one keeps its own.
    let _second = watcher
        .subscribe(Filter::subject("X").unwrap())
        .await
        .unwrap();
    let bounds: Vec<usize> = server
        .monitor()
        .connections()
        .iter()
        .flat_map(|c| {
            c.subscriptions()
                .iter()
                .map(|s| s.queue.config().max_records)
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        bounds.contains(&100_000) && bounds.contains(&7),
        "{bounds:?}"
    );
    // The new limit of subscriptions per connection holds.
    let third = watcher.subscribe(Filter::subject("Y").unwrap()).await;
    assert!(
        matches!(
            &third,
            Err(ClientError::Server {
                code: ErrorCode::Limit,
                ..
            })
        ),
        "{third:?}"
    );
    assert_eq!(server.server().config_in_force().name, "herald");
    server.stop().await;
}

#[tokio::test]
async fn a_storm_rule_turned_off_sums_up_what_it_held_and_lets_all_pass() {
    let dir = TempDirGuard(temp_dir("reload"));
    let config = config_of(&dir.0, "storm_repeats = 3\nstorm_window = \"60s\"\n");
    let server = TestServer::start_with(config).await;
    let watcher = connect(&server, "watcher").await;
    let mut sub = watcher
        .subscribe(Filter::subject("PLC.*").unwrap())
        .await
        .unwrap();
    let device = connect(&server, "device").await;
    for n in 0..10 {
        device.publish(&log("PLC.valve", "stuck", n)).await.unwrap();
    }
    device.flush(WAIT).await.unwrap();
    let first = take_records(&watcher, &mut sub).await;
    assert_eq!(first.len(), 4, "3 pass, then the mark: {first:?}");
    let new = config_of(&dir.0, "storm_repeats = 0\nstorm_window = \"60s\"\n");
    let outcome = server.server().reload_with(new).await.unwrap();
    assert_eq!(outcome.applied, vec!["storm_repeats"]);
    // The old rule's storm ends at the next tick: its summary counts the 6 held back.
    let deadline = tokio::time::Instant::now() + WAIT;
    let summary = loop {
        let records = take_records(&watcher, &mut sub).await;
        if let Some(summary) = records
            .into_iter()
            .find(|r| r.fields.iter().any(|(name, _)| name == REPEATED_FIELD))
        {
            break summary;
        }
        assert!(tokio::time::Instant::now() < deadline, "no summary came");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let repeated = summary.fields.iter().find(|(n, _)| n == REPEATED_FIELD);
    assert_eq!(repeated.map(|f| &f.1), Some(&Value::Int(6)), "{summary:?}");
    assert!(summary.fields.iter().any(|(n, _)| n == STORM_FIELD));
    // Now every identical record passes.
    for n in 0..10 {
        device.publish(&log("PLC.valve", "stuck", n)).await.unwrap();
    }
    device.flush(WAIT).await.unwrap();
    assert_eq!(take_records(&watcher, &mut sub).await.len(), 10);
    server.stop().await;
}

#[tokio::test]
async fn archive_rules_change_live() {
    let dir = TempDirGuard(temp_dir("reload"));
    let only_a = "[[archive.rules]]\nsubject = \"A.*\"\nkeep = \"1d\"\n";
    let server = TestServer::start_with(config_of(&dir.0, only_a)).await;
    let client = connect(&server, "client").await;
    let stored = |subject: &str| {
        let record = log(subject, "keep me", 1);
        let client = &client;
        async move { client.sync_send(&record, AckLevel::Stored, WAIT).await }
    };
    stored("A.x").await.unwrap();
    let refused = stored("B.x").await;
    assert!(
        matches!(
            &refused,
            Err(ClientError::Server {
                code: ErrorCode::Archive,
                ..
            })
        ),
        "no rule keeps B.x yet: {refused:?}"
    );
    let both = format!("{only_a}[[archive.rules]]\nsubject = \"B.*\"\nkeep = \"1d\"\n");
    let outcome = server
        .server()
        .reload_with(config_of(&dir.0, &both))
        .await
        .unwrap();
    assert_eq!(outcome.applied, vec!["archive.rules"]);
    stored("B.x").await.unwrap();
    server.stop().await;
}

#[tokio::test]
async fn syslog_listeners_start_restart_and_stop_live() {
    let dir = TempDirGuard(temp_dir("reload"));
    let server = TestServer::start_with(config_of(&dir.0, "")).await;
    assert_eq!(server.syslog_addrs(), (None, None));
    let watcher = connect(&server, "watcher").await;
    let mut sub = watcher
        .subscribe(Filter::subject("syslog.*").unwrap())
        .await
        .unwrap();
    let udp_only = "[syslog]\nudp = \"127.0.0.1:0\"\n";
    let outcome = server
        .server()
        .reload_with(config_of(&dir.0, udp_only))
        .await
        .unwrap();
    assert_eq!(outcome.applied, vec!["syslog"]);
    let (Some(udp), None) = server.syslog_addrs() else {
        panic!("a UDP listener: {:?}", server.syslog_addrs());
    };
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.send_to(b"<14>1 - h app - - - first", udp).unwrap();
    assert_eq!(next_text(&mut sub).await, "first");
    // TCP added and the message size changed: UDP restarts on its own socket (same port).
    let both = "[syslog]\nudp = \"127.0.0.1:0\"\ntcp = \"127.0.0.1:0\"\nmax_message_bytes = 4096\n";
    server
        .server()
        .reload_with(config_of(&dir.0, both))
        .await
        .unwrap();
    let (Some(same_udp), Some(tcp)) = server.syslog_addrs() else {
        panic!("both listeners: {:?}", server.syslog_addrs());
    };
    assert_eq!(same_udp, udp, "the UDP socket is kept");
    socket.send_to(b"<14>1 - h app - - - second", udp).unwrap();
    assert_eq!(next_text(&mut sub).await, "second");
    use std::io::Write;
    let mut stream = std::net::TcpStream::connect(tcp).unwrap();
    stream.write_all(b"<14>1 - h app - - - third\n").unwrap();
    assert_eq!(next_text(&mut sub).await, "third");
    // Off again: the monitor has no syslog section, the counters stay.
    server
        .server()
        .reload_with(config_of(&dir.0, ""))
        .await
        .unwrap();
    assert_eq!(server.syslog_addrs(), (None, None));
    assert!(herald_client::monitor_value(&server.monitor_snapshot(), "syslog").is_none());
    // The open TCP connection goes on until it ends.
    stream.write_all(b"<14>1 - h app - - - fourth\n").unwrap();
    assert_eq!(next_text(&mut sub).await, "fourth");
    server.stop().await;
}

async fn next_text(sub: &mut herald_client::Subscription) -> String {
    match tokio::time::timeout(WAIT, sub.next()).await {
        Ok(Some(Event::Record(delivered))) => delivered.into_record().text,
        other => panic!("expected a record, got {other:?}"),
    }
}

#[tokio::test]
async fn reload_reads_the_file_again_and_a_bad_one_is_refused_whole() {
    let dir = TempDirGuard(temp_dir("reload"));
    let source = source_of(&dir.0, "queue_records = 100\n");
    let server = Server::start(source.load().unwrap().config).await.unwrap();
    let client = herald_client::Client::connect(&format!("herald://{}", server.local_addr()))
        .await
        .unwrap();
    // Without a source: the server says it has nothing to read again.
    let refused = client.reload().await;
    assert!(
        matches!(&refused, Err(ClientError::Server { code: ErrorCode::BadRequest, message }) if message.contains("no configuration file")),
        "{refused:?}"
    );
    server.set_config_source(source.clone());
    let fields = client.reload().await.unwrap();
    assert_eq!(list(&fields, "applied"), Vec::<String>::new());
    std::fs::write(
        source.path.as_ref().unwrap(),
        "queue_records = 50\nsource_quota = 9\n",
    )
    .unwrap();
    let fields = client.reload().await.unwrap();
    assert_eq!(
        list(&fields, "applied"),
        vec!["queue_records", "source_quota"]
    );
    assert_eq!(list(&fields, "restart"), Vec::<String>::new());
    // A bad value, then an unknown key: refused whole, with what is wrong; nothing changes.
    for (bad, names) in [
        (
            "queue_records = 10\nsource_quota = \"lots\"\n",
            "source_quota",
        ),
        ("queue_records = 10\nqueue_recods = 5\n", "queue_recods"),
    ] {
        std::fs::write(source.path.as_ref().unwrap(), bad).unwrap();
        match client.reload().await {
            Err(ClientError::Server {
                code: ErrorCode::BadConfig,
                message,
            }) => {
                assert!(message.contains(names), "{message}");
                assert!(message.contains("old one stays in force"), "{message}");
            }
            other => panic!("expected bad_config, got {other:?}"),
        }
        assert_eq!(server.config_in_force().queue.max_records, 50);
        assert_eq!(server.config_in_force().source_quota, 9);
    }
    // A syslog address that cannot be bound refuses the whole reload too.
    let taken = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let text = format!("queue_records = 10\n[syslog]\nudp = \"127.0.0.1:{port}\"\n");
    std::fs::write(source.path.as_ref().unwrap(), text).unwrap();
    match client.reload().await {
        Err(ClientError::Server {
            code: ErrorCode::BadConfig,
            message,
        }) => {
            assert!(message.contains(&port.to_string()), "{message}");
        }
        other => panic!("expected bad_config, got {other:?}"),
    }
    assert_eq!(server.config_in_force().queue.max_records, 50);
    assert_eq!(server.syslog_addrs(), (None, None));
    drop(client);
    server.shutdown().await;
}

fn list(fields: &[herald_proto::value::Field], name: &str) -> Vec<String> {
    match fields.iter().find(|(n, _)| n == name).map(|f| &f.1) {
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::Str(s) => s.clone(),
                other => panic!("{other:?}"),
            })
            .collect(),
        other => panic!("{name} is {other:?}"),
    }
}

#[tokio::test]
async fn connection_limits_and_the_queue_budget_change_live() {
    let dir = TempDirGuard(temp_dir("reload"));
    let server = TestServer::start_with(config_of(&dir.0, "")).await;
    let first = connect(&server, "first").await;
    let second = connect(&server, "second").await;
    let mut new = config_of(
        &dir.0,
        "max_connections = 2\nqueue_budget_bytes = \"8MiB\"\nheartbeat_interval = \"250ms\"\n",
    );
    new.data_dir
        .clone_from(&server.server().config_in_force().data_dir);
    let outcome = server.server().reload_with(new).await.unwrap();
    assert_eq!(
        outcome.applied,
        vec![
            "max_connections",
            "queue_budget_bytes",
            "heartbeat_interval"
        ]
    );
    // The two open connections stay; a third is turned away.
    let third = herald_client::Client::connect(&server.url()).await;
    assert!(third.is_err(), "a third connection is refused");
    first.flush(WAIT).await.unwrap();
    second.flush(WAIT).await.unwrap();
    let queues = common::map(&server.monitor_snapshot(), "queues").to_vec();
    assert_eq!(common::int(&queues, "budget_bytes"), 8 << 20);
    // Once one leaves, a new one comes in.
    drop(second);
    let deadline = tokio::time::Instant::now() + WAIT;
    let again = loop {
        match herald_client::Client::connect(&server.url()).await {
            Ok(client) => break client,
            Err(_) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(err) => panic!("no place freed: {err}"),
        }
    };
    again.flush(WAIT).await.unwrap();
    server.stop().await;
}
