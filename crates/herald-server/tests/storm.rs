//! Log storms and source quotas against a real server: a storm of identical records
//! collapses into its first records, a `collapsing` mark and `repeated` summaries that
//! count every record held back, then `ended`; other sources and other records pass
//! untouched; a source over its quota has the rest refused (the producer hears of it), the
//! loss is counted, and a `herald.quota` record reports it.

mod common;

use common::{connect, settle, take_records, wait_until, WAIT};
use herald_client::{Client, Subscription};
use herald_proto::storm::{StormRule, REPEATED_FIELD, STORM_FIELD, TOTAL_FIELD};
use herald_proto::{Filter, Kind, Priority, Record, Value};
use herald_server::Config;
use herald_testkit::TestServer;

const SECOND: i64 = 1_000_000_000;

fn record(host: &str, text: &str, n: i64) -> Record {
    let mut record = Record {
        priority: Priority::Error,
        text: text.to_string(),
        fields: vec![("n".into(), Value::Int(n))],
        ..Record::new(Kind::Log, "PLC.valve")
    };
    record.origin.host = host.into();
    record.origin.process = "plcgw".into();
    record
}

fn field<'a>(record: &'a Record, name: &str) -> Option<&'a Value> {
    record
        .fields
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
}

fn storm(record: &Record) -> Option<String> {
    match field(record, STORM_FIELD) {
        Some(Value::Str(state)) => Some(state.clone()),
        _ => None,
    }
}

fn int(record: &Record, name: &str) -> i64 {
    match field(record, name) {
        Some(Value::Int(n)) => *n,
        other => panic!("{name} is {other:?} in {record:?}"),
    }
}

/// A server collapsing after 3 repeats within `window_ns`, a watcher subscribed to `PLC.*`
/// and a device to publish.
async fn storm_server(window_ns: i64) -> (TestServer, Client, Subscription, Client) {
    let config = Config {
        storm: StormRule {
            window_ns,
            repeats: 3,
        },
        ..Config::default()
    };
    let server = TestServer::start_with(config).await;
    let watcher = connect(&server, "watcher").await;
    let sub = watcher
        .subscribe(Filter::subject("PLC.*").unwrap())
        .await
        .unwrap();
    let device = connect(&server, "device").await;
    (server, watcher, sub, device)
}

#[tokio::test]
async fn a_storm_collapses_into_summaries_that_count_every_record() {
    let (server, watcher, mut sub, device) = storm_server(SECOND).await;
    for n in 0..1_000 {
        device
            .publish(&record("plc7", "valve stuck", n))
            .await
            .unwrap();
        if n % 100 == 0 {
            // Other texts of the same source, and another source, are not the storm.
            device
                .publish(&record("plc7", &format!("pressure {n}"), n))
                .await
                .unwrap();
        }
        if n == 500 {
            device
                .publish(&record("plc8", "valve stuck", n))
                .await
                .unwrap();
        }
    }
    device.flush(WAIT).await.unwrap();
    let first = take_records(&watcher, &mut sub).await;
    let storm_records: Vec<&Record> = first
        .iter()
        .filter(|r| r.origin.host == "plc7" && r.text == "valve stuck")
        .collect();
    assert_eq!(
        storm_records.len(),
        4,
        "3 pass, then the mark: {storm_records:?}"
    );
    assert!(storm_records[..3].iter().all(|r| storm(r).is_none()));
    assert_eq!(storm(storm_records[3]).as_deref(), Some("collapsing"));
    assert_eq!(
        int(storm_records[3], "n"),
        3,
        "the fourth record is the mark"
    );
    let others = first.len() - storm_records.len();
    assert_eq!(others, 11, "plc8 and the other texts pass: {}", first.len());
    // The windows end: one summary of the 996 held back, then the storm ends.
    wait_until("the storm ended", || {
        common::int(common::map(&server.monitor_snapshot(), "storms"), "storms") == 0
            && common::int(
                common::map(&server.monitor_snapshot(), "storms"),
                "summaries",
            ) > 0
    })
    .await;
    let summaries = take_records(&watcher, &mut sub).await;
    let held: i64 = summaries.iter().map(|r| int(r, REPEATED_FIELD)).sum();
    assert_eq!(held, 996, "{summaries:?}");
    let last = summaries.last().unwrap();
    assert_eq!(storm(last).as_deref(), Some("ended"));
    assert_eq!(int(last, TOTAL_FIELD), 996);
    assert_eq!(last.text, "valve stuck");
    assert_eq!(last.priority, Priority::Error);
    let storms = server.monitor_snapshot();
    let storms = common::map(&storms, "storms");
    assert_eq!(common::int(storms, "started"), 1);
    assert_eq!(common::int(storms, "held"), 996);
    // After the storm, the record passes again.
    device
        .publish(&record("plc7", "valve stuck", 5000))
        .await
        .unwrap();
    device.flush(WAIT).await.unwrap();
    let after = take_records(&watcher, &mut sub).await;
    assert_eq!(after.len(), 1);
    assert!(storm(&after[0]).is_none());
    server.stop().await;
}

#[tokio::test]
async fn a_source_over_its_quota_is_refused_counted_and_reported() {
    let config = Config {
        source_quota: 100,
        storm: StormRule {
            window_ns: SECOND,
            repeats: 0,
        },
        ..Config::default()
    };
    let server = TestServer::start_with(config).await;
    let watcher = connect(&server, "watcher").await;
    let mut reports = watcher
        .subscribe(Filter::subject("herald.quota").unwrap())
        .await
        .unwrap();
    let mut plc = watcher
        .subscribe(Filter::subject("PLC.*").unwrap())
        .await
        .unwrap();
    settle(&watcher).await;
    let device = connect(&server, "device").await;
    for n in 0..500 {
        device
            .publish(&record("plc7", &format!("reading {n}"), n))
            .await
            .unwrap();
    }
    // The server refuses the rest and says why; the client reports it as an error.
    let flushed = device.flush(WAIT).await;
    let err = flushed.expect_err("records were refused");
    assert!(
        err.to_string()
            .contains("source plc7/plcgw is over its quota of 100 records/s"),
        "{err}"
    );
    // Protected records pass whatever the quota.
    let mut alarm = record("plc7", "tank empty", 0);
    alarm.priority = Priority::Emergency;
    device.publish(&alarm).await.unwrap();
    let _ = device.flush(WAIT).await;
    let passed = take_records(&watcher, &mut plc).await;
    assert!(
        passed.len() > 100 && passed.len() < 150,
        "{} passed",
        passed.len()
    );
    assert_eq!(passed.last().unwrap().text, "tank empty");
    let refused = 500 - (passed.len() as i64 - 1);
    let snapshot = server.monitor_snapshot();
    assert_eq!(
        common::int(common::map(&snapshot, "storms"), "quota_refused"),
        refused
    );
    assert_eq!(
        common::int(common::map(&snapshot, "drops"), "quota"),
        refused
    );
    assert!(common::int(&snapshot, "dropped") >= refused);
    wait_until("a quota report", || {
        common::int(
            common::map(&server.monitor_snapshot(), "storms"),
            "quota_reports",
        ) > 0
    })
    .await;
    let report = take_records(&watcher, &mut reports).await;
    let report = report.first().expect("a herald.quota record");
    assert_eq!(report.priority, Priority::Warning);
    assert!(
        report.text.contains(&format!("{refused} records refused")),
        "{}",
        report.text
    );
    assert_eq!(field(report, "source_host"), Some(&Value::from("plc7")));
    server.stop().await;
}

#[tokio::test]
async fn a_clients_storm_summary_passes_with_its_count_and_stored_batches_never_collapse() {
    let (server, watcher, mut sub, device) = storm_server(60 * SECOND).await;
    for n in 0..10 {
        device
            .publish(&record("plc7", "valve stuck", n))
            .await
            .unwrap();
    }
    // What a client's logger sends after collapsing the same storm itself.
    let mut summary = record("plc7", "valve stuck", 99);
    summary
        .fields
        .push((STORM_FIELD.into(), Value::from("repeated")));
    summary
        .fields
        .push((REPEATED_FIELD.into(), Value::Int(500)));
    device.publish(&summary).await.unwrap();
    device.flush(WAIT).await.unwrap();
    let got = take_records(&watcher, &mut sub).await;
    let passed = got
        .iter()
        .find(|r| field(r, REPEATED_FIELD) == Some(&Value::Int(500)));
    assert!(
        passed.is_some(),
        "the client's summary arrives as sent: {got:?}"
    );
    // A producer waiting for `stored` has every record stored: none is held back.
    for n in 0..10 {
        device
            .publish(&record("plc9", "valve stuck", n))
            .await
            .unwrap();
    }
    device
        .flush_at(herald_proto::AckLevel::Stored, WAIT)
        .await
        .unwrap();
    let stored = take_records(&watcher, &mut sub).await;
    assert_eq!(stored.len(), 10, "{stored:?}");
    assert!(stored.iter().all(|r| storm(r).is_none()));
    server.stop().await;
}
