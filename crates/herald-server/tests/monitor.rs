//! The monitor through `client.monitor()`: connections, subscriptions, record counts, and each
//! client's subscriptions with their queue depth, deliveries and drops.

mod common;

use common::{
    client_entry, connect, int, log, map, publish_frame, subscriptions_of, take_events,
    take_records, wait_until, Bystander, WAIT,
};
use herald_client::{monitor_value, Event};
use herald_proto::frame::{Ack, GapNotice, Subscribe};
use herald_proto::value::Field;
use herald_proto::{AckLevel, Filter, Frame, Priority, Record, Value};
use herald_router::QueueConfig;
use herald_server::events::CloseReason;
use herald_server::Config;
use herald_testkit::{RawConnection, TestServer};

fn text(data: &[Field], name: &str) -> String {
    match monitor_value(data, name) {
        Some(Value::Str(text)) => text.clone(),
        other => panic!("monitor value `{name}` is {other:?}, not a string"),
    }
}

/// Returns (id, filter, depth, delivered, dropped) of each subscription of a client entry.
fn subscription_rows(entry: &[Field]) -> Vec<(i64, String, i64, i64, i64)> {
    subscriptions_of(entry)
        .into_iter()
        .map(|s| {
            (
                int(s, "id"),
                text(s, "filter"),
                int(s, "depth"),
                int(s, "delivered"),
                int(s, "dropped"),
            )
        })
        .collect()
}

#[tokio::test]
async fn monitor_counts_connections_subscriptions_and_records() {
    let server = TestServer::start().await;
    let sub_a = connect(&server, "sub-a").await;
    let warnings = Filter::parse(Some("ANTENNA.*"), None, Some(">=WARNING"), &[], None).unwrap();
    let mut a = sub_a.subscribe(warnings).await.unwrap();
    let sub_b = connect(&server, "sub-b").await;
    let faults = Filter::parse(
        None,
        Some("fault*"),
        None,
        &["operator".to_string()],
        Some("log"),
    )
    .unwrap();
    let mut b = sub_b.subscribe(faults).await.unwrap();
    let publisher = connect(&server, "pub").await;
    let fault = |subject: &str, priority, text: &str| Record {
        type_name: "fault.encoder".into(),
        ..log(subject, priority, text)
    };
    let records = [
        log("ANTENNA.DV01.Mount", Priority::Warning, "a1"),
        log("ANTENNA.DV01.Mount", Priority::Info, "none"),
        fault("ANTENNA.DV02.Mount", Priority::Error, "a2 b1"),
        fault("WEATHER.Station", Priority::Debug, "b2"),
        Record {
            audience: vec!["science".into()],
            ..fault("WEATHER.Station", Priority::Debug, "none")
        },
        log("ANTENNA.DV03.Mount", Priority::Emergency, "a3"),
        log("RunParams.RunInfo", Priority::Info, "none"),
    ];
    for record in &records {
        publisher.publish(record).await.unwrap();
    }
    publisher.flush(WAIT).await.unwrap();
    let received_a = take_records(&sub_a, &mut a).await;
    let received_b = take_records(&sub_b, &mut b).await;
    assert_eq!(common::texts(&received_a), ["a1", "a2 b1", "a3"]);
    assert_eq!(common::texts(&received_b), ["a2 b1", "b2"]);

    let monitor = connect(&server, "mon").await;
    let data = monitor.monitor().await.unwrap();
    assert_eq!(text(&data, "server"), "herald");
    assert_eq!(text(&data, "version"), env!("CARGO_PKG_VERSION"));
    assert_eq!(int(&data, "connections"), 4);
    assert_eq!(int(&data, "connections_total"), 4);
    assert_eq!(int(&data, "subscriptions"), 2);
    assert_eq!(int(&data, "records_in"), 7);
    let bytes: usize = records.iter().map(|r| r.to_bytes().len()).sum();
    assert_eq!(int(&data, "bytes_in"), bytes as i64);
    assert_eq!(int(&data, "deliveries"), 5);
    assert_eq!(int(&data, "dropped"), 0);
    assert_eq!(int(&data, "rejected_frames"), 0);
    let closes = map(&data, "closes");
    assert_eq!(closes.len(), CloseReason::ALL.len());
    for reason in CloseReason::ALL {
        assert_eq!(int(closes, reason.name()), 0, "{}", reason.name());
    }

    let entry = client_entry(&data, "pub");
    assert_eq!(int(entry, "id"), publisher.welcome().connection as i64);
    assert_eq!(int(entry, "records_in"), 7);
    assert!(text(entry, "peer").starts_with("127.0.0.1:"));
    assert!(subscriptions_of(entry).is_empty());
    let entry = client_entry(&data, "sub-a");
    assert_eq!(int(entry, "records_in"), 0);
    assert_eq!(
        subscription_rows(entry),
        [(
            a.id() as i64,
            "subject=ANTENNA.* priority=WARNING,ERROR,CRITICAL,ALERT,EMERGENCY policy=drop-new"
                .to_string(),
            0,
            3,
            0
        )]
    );
    assert_eq!(
        subscription_rows(client_entry(&data, "sub-b")),
        [(
            b.id() as i64,
            "subject=* type=fault* priority=* audience=operator kind=log policy=drop-new"
                .to_string(),
            0,
            2,
            0
        )]
    );
    assert!(subscriptions_of(client_entry(&data, "mon")).is_empty());

    drop((b, sub_b));
    wait_until("sub-b's close is counted", || {
        server.monitor().closes(CloseReason::ClientClosed) == 1
    })
    .await;
    let data = monitor.monitor().await.unwrap();
    assert_eq!(int(&data, "connections"), 3);
    assert_eq!(int(&data, "connections_total"), 4);
    assert_eq!(int(&data, "subscriptions"), 1);
    assert_eq!(int(map(&data, "closes"), "client_closed"), 1);
    server.stop().await;
}

#[tokio::test]
async fn a_full_queue_drops_counts_and_sends_a_gap_notice() {
    let config = Config {
        queue: QueueConfig {
            max_records: 2,
            ..QueueConfig::default()
        },
        ..Config::default()
    };
    let server = TestServer::start_with(config).await;
    let subscriber = connect(&server, "slow").await;
    let mut subscription = subscriber
        .subscribe(Filter::subject("burst.*").unwrap())
        .await
        .unwrap();
    let priorities = [
        Priority::Info,
        Priority::Info,
        Priority::Warning,
        Priority::Info,
        Priority::Error,
        Priority::Warning,
        Priority::Debug,
        Priority::Emergency,
        Priority::Info,
        Priority::Error,
    ];
    let records: Vec<Record> = priorities
        .iter()
        .enumerate()
        .map(|(n, p)| log("burst.test", *p, &format!("{n}")))
        .collect();
    // One PUBLISH frame: the router queues the whole batch at once, so exactly two fit.
    let mut raw = RawConnection::handshake(server.addr(), "bursty").await;
    raw.send_bytes(&publish_frame(&records, 9, AckLevel::Received))
        .await;
    assert_eq!(
        raw.next_frame().await,
        Some(Frame::Ack(Ack {
            ack_id: 9,
            level: AckLevel::Received,
            count: 10,
        }))
    );

    let events = take_events(&subscriber, &mut subscription).await;
    // Queue of 2, drop-new, EMERGENCY protected. WARNING 3 sheds INFO 2; INFO 4 is refused;
    // ERROR 5 sheds INFO 1; WARNING 6, DEBUG 7 and INFO 9 are refused (nothing lower to
    // shed); EMERGENCY 8 is protected and kept over the limit; ERROR 10 is refused because
    // shedding WARNING 3 would not make room next to ERROR 5 and EMERGENCY 8.
    let expected_gap = GapNotice {
        subscription: subscription.id(),
        count: 7,
        first_seq: 1,
        last_seq: 10,
        by_priority: vec![
            (Priority::Debug, 1),
            (Priority::Info, 4),
            (Priority::Warning, 1),
            (Priority::Error, 1),
        ],
        member: None,
    };
    let summary: Vec<String> = events
        .iter()
        .map(|event| match event {
            Event::Gap(gap) => {
                assert_eq!(gap, &expected_gap);
                "gap".to_string()
            }
            Event::Record(delivered) => {
                format!("{}:{}", delivered.seq, delivered.record().text)
            }
            Event::Interrupted(notice) => panic!("unexpected failover {notice:?}"),
        })
        .collect();
    assert_eq!(
        summary,
        ["gap", "3:2", "5:4", "8:7"],
        "the gap comes first: the loss happened before the writer sent the queued records"
    );
    assert_eq!(subscription.lost(), 7);
    assert_eq!(subscription.received(), 3);
    assert_eq!(subscriber.error(), None, "a gap notice is not an error");

    let data = subscriber.monitor().await.unwrap();
    assert_eq!(int(&data, "records_in"), 10);
    assert_eq!(
        int(&data, "deliveries"),
        3,
        "deliveries counts records queued for subscribers, net of those shed"
    );
    assert_eq!(int(&data, "dropped"), 7);
    let rows = subscription_rows(client_entry(&data, "slow"));
    assert_eq!(
        rows,
        [(
            subscription.id() as i64,
            "subject=burst.* priority=* policy=drop-new".to_string(),
            0,
            3,
            7
        )]
    );
    assert_eq!(int(client_entry(&data, "bursty"), "records_in"), 10);
    server.stop().await;
}

#[tokio::test]
async fn a_stuck_subscriber_shows_queue_depth_and_does_not_slow_the_publisher() {
    const RECORDS: usize = 256;
    let server = TestServer::start().await;
    let mut stuck = RawConnection::handshake(server.addr(), "stuck").await;
    stuck
        .send(&Frame::Subscribe(Subscribe {
            cid: 1,
            subscription: 5,
            filter: Filter::subject("bulk.*").unwrap(),
            options: Default::default(),
        }))
        .await;
    assert_eq!(stuck.next_frame().await, Some(Frame::Ok { cid: 1 }));
    // From here on `stuck` reads nothing. 16 MiB is far more than the socket buffers hold.
    let publisher = connect(&server, "bulk-publisher").await;
    let payload = "x".repeat(64 * 1024);
    for n in 0..RECORDS {
        let record = log("bulk.data", Priority::Info, &format!("{n} {payload}"));
        publisher.publish(&record).await.unwrap();
    }
    publisher.flush(WAIT).await.unwrap();
    let mut bystander = Bystander::connect(&server).await;
    bystander.round_trip().await;

    let data = bystander.client.monitor().await.unwrap();
    assert_eq!(int(&data, "records_in"), RECORDS as i64 + 1);
    let rows = subscription_rows(client_entry(&data, "stuck"));
    let [(id, filter, depth, delivered, dropped)] = rows.as_slice() else {
        panic!("one subscription: {rows:?}");
    };
    assert_eq!(
        (*id, filter.as_str()),
        (5, "subject=bulk.* priority=* policy=drop-new")
    );
    assert_eq!(*dropped, 0, "the queue's byte limit was not reached");
    assert_eq!(
        depth + delivered,
        RECORDS as i64,
        "every record is queued or taken by the writer"
    );
    assert!(*depth > 0, "the writer is stuck, records wait: {rows:?}");
    drop(stuck);
    wait_until("the stuck connection is gone", || {
        common::server_int(&server, "connections") == 2
    })
    .await;
    bystander.round_trip().await;
    server.stop().await;
}

#[tokio::test]
async fn monitor_answers_the_raw_frame_with_its_cid() {
    let server = TestServer::start().await;
    let mut raw = RawConnection::handshake(server.addr(), "raw-monitor").await;
    raw.send(&Frame::Monitor { cid: 77 }).await;
    let Some(Frame::MonitorReply { cid, data }) = raw.next_frame().await else {
        panic!("expected MONITOR_REPLY");
    };
    assert_eq!(cid, 77);
    assert_eq!(int(&data, "connections"), 1);
    let names: Vec<&str> = data.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "server",
            "version",
            "uptime_ms",
            "connections",
            "connections_total",
            "subscriptions",
            "records_in",
            "bytes_in",
            "deliveries",
            "dropped",
            "drops",
            "rejected_frames",
            "refused_requests",
            "refused_records",
            "duplicates",
            "denied",
            "rate_in",
            "rate_out",
            "closes",
            "clients",
            "archive",
            "storms",
            "http",
            "queues",
        ]
    );
    let archive: Vec<&str> = common::map(&data, "archive")
        .iter()
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(
        archive,
        [
            "backend",
            "backlog",
            "backlog_bytes",
            "written",
            "dropped",
            "spilled",
            "spill_bytes",
            "expired_on_arrival",
            "write_errors",
            "days_expired",
            "skipped_unreadable",
            "unclean_start",
            "repaired_files",
            "repaired_bytes"
        ]
    );
    let entry = client_entry(&data, "raw-monitor");
    let keys: Vec<&str> = entry.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(keys, ["id", "name", "peer", "records_in", "subscriptions"]);
    server.stop().await;
}
