//! The archive through a running server: `stored` acknowledgements, and samples, buckets,
//! instant values and filtered logs queried back over the native protocol.

mod common;

use common::{connect, int, map, WAIT};
use herald_client::{Client, ClientError};
use herald_proto::archive::{BucketQuery, LogQuery, SampleQuery};
use herald_proto::{AckLevel, ErrorCode, Kind, Priority, PrioritySet, Record, Value};
use herald_testkit::TestServer;

const SECOND: i64 = 1_000_000_000;
/// 2026-11-20T02:00:00Z.
const NIGHT: i64 = 1_795_140_000 * SECOND;

async fn archive_int(client: &Client, name: &str) -> i64 {
    int(map(&client.monitor().await.unwrap(), "archive"), name)
}

async fn wait_written(client: &Client, count: i64) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while archive_int(client, "written").await < count {
        assert!(
            tokio::time::Instant::now() < deadline,
            "archive never wrote {count}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

fn sample(name: &str, time: i64, value: f64) -> Record {
    Record {
        time,
        fields: vec![("value".into(), Value::Float(value))],
        ..Record::new(Kind::Info, name)
    }
}

fn mount_log(time: i64, priority: Priority, host: &str, text: &str) -> Record {
    let mut record = Record {
        time,
        priority,
        text: text.into(),
        ..Record::new(Kind::Log, "ANTENNA.DV01.Mount")
    };
    record.origin.host = host.into();
    record
}

#[tokio::test]
async fn a_stored_acknowledgement_means_the_record_can_be_queried_back() {
    let server = TestServer::start().await;
    let client = connect(&server, "producer").await;
    let record = sample("RunParams.Rate", NIGHT, 2.5);
    let ack = client
        .sync_send(&record, AckLevel::Stored, WAIT)
        .await
        .unwrap();
    assert_eq!((ack.level, ack.count), (AckLevel::Stored, 1));
    let found = client
        .samples("RunParams.Rate", NIGHT, NIGHT + SECOND)
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].decode().unwrap(), record);
    assert!(found[0].received > 0);
    let monitor = client.monitor().await.unwrap();
    let archive = map(&monitor, "archive");
    assert_eq!(int(archive, "written"), 1);
    assert_eq!(int(archive, "dropped"), 0);
    server.stop().await;
}

#[tokio::test]
async fn samples_page_buckets_and_values_at_an_instant() {
    let server = TestServer::start().await;
    let client = connect(&server, "producer").await;
    for i in 0..3_600 {
        let record = sample("Beam.Current", NIGHT + i * SECOND, (i % 100) as f64);
        client.publish(&record).await.unwrap();
    }
    client
        .publish(&sample("Beam.Energy", NIGHT - 3_600 * SECOND, 7.0))
        .await
        .unwrap();
    client.flush(WAIT).await.unwrap();
    wait_written(&client, 3_601).await;
    let hour = NIGHT + 3_600 * SECOND;
    let mut pages = client.sample_pages(SampleQuery {
        name: "Beam.Current".into(),
        from: NIGHT,
        to: hour,
        after: None,
        limit: 1_000,
    });
    let mut times = Vec::new();
    let mut page_count = 0;
    while let Some(page) = pages.next_page().await.unwrap() {
        page_count += 1;
        times.extend(page.records.iter().map(|s| s.decode().unwrap().time));
    }
    assert_eq!(page_count, 4);
    assert_eq!(
        times,
        (0..3_600).map(|i| NIGHT + i * SECOND).collect::<Vec<_>>()
    );
    let buckets = client
        .buckets(BucketQuery {
            name: "Beam.Current".into(),
            from: NIGHT,
            to: hour,
            buckets: 36,
            field: Some("value".into()),
        })
        .await
        .unwrap();
    assert_eq!(buckets.len(), 36);
    let stats = &buckets[0].fields[0];
    assert_eq!(
        (buckets[0].count, stats.min, stats.max, stats.mean),
        (100, 0.0, 99.0, 49.5)
    );
    let names = [
        "Beam.Current".to_string(),
        "Beam.Energy".into(),
        "Beam.None".into(),
    ];
    let values = client.values_at(&names, NIGHT + 90 * SECOND).await.unwrap();
    let times: Vec<Option<i64>> = values
        .iter()
        .map(|v| v.as_ref().map(|s| s.decode().unwrap().time))
        .collect();
    assert_eq!(
        times,
        vec![
            Some(NIGHT + 90 * SECOND),
            Some(NIGHT - 3_600 * SECOND),
            None
        ]
    );
    server.stop().await;
}

#[tokio::test]
async fn logs_are_queried_by_priority_subject_host_and_text() {
    let server = TestServer::start().await;
    let client = connect(&server, "mount").await;
    let plan = [
        (Priority::Error, "ctl1", "axis stuck"),
        (Priority::Info, "ctl1", "tracking"),
        (Priority::Critical, "ctl2", "axis stuck again"),
        (Priority::Debug, "ctl1", "not archived by default"),
        (Priority::Warning, "ctl2", "wind"),
    ];
    for (i, (priority, host, text)) in plan.iter().enumerate() {
        let record = mount_log(NIGHT + i as i64 * SECOND, *priority, host, text);
        client.publish(&record).await.unwrap();
    }
    client
        .publish(&Record {
            time: NIGHT,
            ..Record::new(Kind::Log, "DAQ.Run")
        })
        .await
        .unwrap();
    client.flush(WAIT).await.unwrap();
    wait_written(&client, 5).await;
    let query = LogQuery {
        from: NIGHT,
        to: NIGHT + 600 * SECOND,
        priorities: PrioritySet::at_least(Priority::Error),
        subject: Some("ANTENNA.*".into()),
        limit: 100,
        ..LogQuery::default()
    };
    let texts = |page: herald_proto::archive::Page| -> Vec<String> {
        page.records
            .iter()
            .map(|s| s.decode().unwrap().text)
            .collect()
    };
    let mut pages = client.log_pages(query.clone());
    let errors = texts(pages.next_page().await.unwrap().unwrap());
    assert_eq!(errors, ["axis stuck", "axis stuck again"]);
    assert!(pages.next_page().await.unwrap().is_none());
    let on_ctl2 = LogQuery {
        priorities: PrioritySet::ALL,
        host: Some("ctl2".into()),
        text: Some("wind".into()),
        ..query.clone()
    };
    let found = texts(
        client
            .log_pages(on_ctl2)
            .next_page()
            .await
            .unwrap()
            .unwrap(),
    );
    assert_eq!(found, ["wind"]);
    let empty = LogQuery { to: NIGHT, ..query };
    let err = client.log_pages(empty).next_page().await.unwrap_err();
    assert!(
        matches!(&err, ClientError::Server { code: ErrorCode::BadQuery, message }
            if message.starts_with("empty time range")),
        "{err}"
    );
    assert_eq!(client.error(), None, "a bad query closes nothing");
    server.stop().await;
}

/// What an older server let in: a stored record no reader can decode. Every query over it
/// answers the rest and says how many it skipped; it fails none.
#[tokio::test]
async fn a_stored_record_that_does_not_decode_fails_no_query() {
    use herald_archive::conformance::{entry_of, poisoned};
    use herald_archive::{Backend, BlockStore, Keep};

    let data_dir = herald_testkit::temp_dir("poisoned");

    let _removed_when_passed = herald_testkit::TempDirGuard(data_dir.clone());
    let name = "Beam.Poisoned";
    let now = herald_proto::time::now_nanos();
    let at = |i: i64| now - 60 * SECOND + i * SECOND;
    let record = |i: i64, value: i64| Record {
        time: at(i),
        fields: vec![("value".into(), Value::Int(value))],
        ..Record::new(Kind::Info, name)
    };
    let keep = Keep::days(30);
    let store = BlockStore::open(&herald_server::config::ArchiveConfig::embedded_dir(
        &data_dir,
    ))
    .unwrap();
    let entries = [
        entry_of(&record(0, 1), keep),
        poisoned(entry_of(&record(1, i64::MIN), keep)),
        entry_of(&record(2, 3), keep),
    ];
    store.write(&entries).unwrap();
    store.sync().unwrap();
    drop(store);

    let loopback = "127.0.0.1:0".parse().unwrap();
    let config = herald_server::Config {
        listen: loopback,
        http: loopback,
        data_dir,
        ..herald_server::Config::default()
    };
    let server = herald_server::Server::start(config).await.unwrap();
    let client = Client::connect(&format!("herald://{}?name=reader", server.local_addr()))
        .await
        .unwrap();
    let found = client.samples(name, at(0), now).await.unwrap();
    assert_eq!(found.len(), 2, "the readable records");
    assert_eq!(client.archive_skipped(), 1);
    assert_eq!(archive_int(&client, "skipped_unreadable").await, 1);

    let target = format!("/archive/samples/{name}?from=-2m");
    let answer = herald_testkit::http::request(server.http_addr(), "GET", &target, None).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let json = answer.json();
    assert_eq!(json["records"].as_array().unwrap().len(), 2);
    assert_eq!(json["skipped"], 1);
    assert_eq!(answer.header("herald-skipped"), Some("1"));
    let csv = format!("/archive/samples/{name}?from=-2m&format=csv");
    let answer = herald_testkit::http::request(server.http_addr(), "GET", &csv, None).await;
    assert!(
        answer
            .body
            .ends_with("# skipped: 1 stored records that do not decode\n"),
        "{}",
        answer.body
    );
    server.shutdown().await;
}

/// What the archive could not keep (its buffer and spill full) is in the server's totals:
/// the monitor's `dropped`, and `drops` under reason `archive`, beside the archive's own
/// counters.
#[tokio::test]
async fn archive_drops_count_in_the_servers_totals() {
    let mut config = herald_server::config::Config::default();
    config.archive.options.buffer_records = 10;
    config.archive.options.spill_bytes = 1;
    let server = TestServer::start_with(config).await;
    let client = connect(&server, "producer").await;
    for i in 0..5_000 {
        let record = Record {
            priority: Priority::Debug,
            ..sample("Flood.Value", NIGHT + i * SECOND, 1.0)
        };
        client.publish(&record).await.unwrap();
    }
    client.flush(WAIT).await.unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let settled = archive_int(&client, "written").await + archive_int(&client, "dropped").await;
        if settled >= 5_000 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "archive settled {settled} of 5000"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let monitor = client.monitor().await.unwrap();
    let archive_dropped = int(map(&monitor, "archive"), "dropped");
    assert!(
        archive_dropped > 0,
        "a buffer of 10 and no spill room drops records"
    );
    assert_eq!(
        int(&monitor, "dropped"),
        archive_dropped,
        "no subscriber lost any"
    );
    assert_eq!(int(map(&monitor, "drops"), "archive"), archive_dropped);
    server.stop().await;
}

/// A client's `stored` flush is an empty `PUBLISH` when its records went in earlier frames:
/// it is answered once those are durable — synced for it at once, not at the archive's next
/// timed sync (here a minute away; it used to wait for that).
#[tokio::test]
async fn a_stored_flush_after_its_records_is_synced_for_at_once() {
    let mut config = herald_server::config::Config::default();
    config.archive.options.fsync_interval = std::time::Duration::from_secs(60);
    let server = TestServer::start_with(config).await;
    let client = connect(&server, "producer").await;
    for i in 0..100 {
        client
            .publish(&sample("Flush.Value", NIGHT + i * SECOND, 1.0))
            .await
            .unwrap();
    }
    client.flush(WAIT).await.unwrap();
    wait_written(&client, 100).await;
    let started = tokio::time::Instant::now();
    client.flush_at(AckLevel::Stored, WAIT).await.unwrap();
    assert!(started.elapsed() < WAIT / 2, "{:?}", started.elapsed());
}
