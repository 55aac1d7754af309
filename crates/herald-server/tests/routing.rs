//! Routing through the real server: every filter dimension, several subscribers on one
//! publisher, one delivery per matching subscription, unsubscribe, and the match cache.

mod common;

use common::{buffered_records, connect, log, settle, take_records, texts, WAIT};
use herald_client::{Client, Subscription};
use herald_proto::frame::{DeliverEntry, Subscribe};
use herald_proto::priority::ALL_PRIORITIES;
use herald_proto::{AckLevel, Filter, Frame, Kind, Priority, Record};
use herald_server::Config;
use herald_testkit::{RawConnection, TestServer};

/// One subscriber client per filter; all subscribed before anything is published.
async fn subscribers(server: &TestServer, filters: &[Filter]) -> Vec<(Client, Subscription)> {
    let mut subscribers = Vec::new();
    for (index, filter) in filters.iter().enumerate() {
        let client = connect(server, &format!("subscriber-{index}")).await;
        let subscription = client.subscribe(filter.clone()).await.unwrap();
        subscribers.push((client, subscription));
    }
    subscribers
}

/// Publishes `records` from one client and returns, per subscriber, the texts it received
/// in order.
async fn route(filters: &[Filter], records: &[Record]) -> Vec<Vec<String>> {
    let server = TestServer::start().await;
    let mut subscribers = subscribers(&server, filters).await;
    let publisher = connect(&server, "publisher").await;
    for record in records {
        publisher.publish(record).await.unwrap();
    }
    publisher.flush(WAIT).await.unwrap();
    let mut received = Vec::new();
    for (client, subscription) in &mut subscribers {
        received.push(texts(&take_records(client, subscription).await));
    }
    server.stop().await;
    received
}

fn subject(pattern: &str) -> Filter {
    Filter::subject(pattern).unwrap()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn subject_globs_select_exactly_their_subjects() {
    let subjects = [
        "ANTENNA.DV01.Mount",
        "ANTENNA.DV02.Mount",
        "ANTENNA.DV1.Mount",
        "ANTENNA",
        "ANTENNA.PM03.Mount",
        "WEATHER.Station",
        "ANTENNA.DV01.Mount.Axis",
    ];
    // The text of each record is its subject, so the received texts name the subjects.
    let records: Vec<Record> = subjects.iter().map(|s| log(s, Priority::Info, s)).collect();
    let filters = [
        subject("*"),
        subject("ANTENNA.*"),
        subject("ANTENNA.DV??.Mount"),
        subject("ANTENNA.DV?.Mount"),
        subject("*.Mount"),
        subject("ANTENNA.DV01.Mount"),
        subject("A*DV0?.*t"),
        subject("NOTHING.*"),
    ];
    let received = route(&filters, &records).await;
    assert_eq!(received[0], strings(&subjects), "`*`");
    assert_eq!(
        received[1],
        strings(&[
            "ANTENNA.DV01.Mount",
            "ANTENNA.DV02.Mount",
            "ANTENNA.DV1.Mount",
            "ANTENNA.PM03.Mount",
            "ANTENNA.DV01.Mount.Axis",
        ]),
        "prefix `ANTENNA.*` needs the dot, so bare `ANTENNA` is out"
    );
    assert_eq!(
        received[2],
        strings(&["ANTENNA.DV01.Mount", "ANTENNA.DV02.Mount"]),
        "`??` is exactly two characters"
    );
    assert_eq!(
        received[3],
        strings(&["ANTENNA.DV1.Mount"]),
        "`?` is exactly one character"
    );
    assert_eq!(
        received[4],
        strings(&[
            "ANTENNA.DV01.Mount",
            "ANTENNA.DV02.Mount",
            "ANTENNA.DV1.Mount",
            "ANTENNA.PM03.Mount",
        ]),
        "suffix `*.Mount` must end the subject"
    );
    assert_eq!(
        received[5],
        strings(&["ANTENNA.DV01.Mount"]),
        "exact subject"
    );
    assert_eq!(
        received[6],
        strings(&["ANTENNA.DV01.Mount", "ANTENNA.DV02.Mount"]),
        "general glob `A*DV0?.*t` must match up to the last character"
    );
    assert!(received[7].is_empty(), "{:?}", received[7]);
}

#[tokio::test]
async fn type_globs_select_exactly_their_types() {
    let types = ["fault", "fault.encoder", "vault", "", "Fault"];
    let records: Vec<Record> = types
        .iter()
        .enumerate()
        .map(|(index, type_name)| Record {
            type_name: type_name.to_string(),
            ..log(
                "ANTENNA.DV01",
                Priority::Info,
                &format!("{index}:{type_name}"),
            )
        })
        .collect();
    let by_type = |pattern: &str| Filter::parse(None, Some(pattern), None, &[], None).unwrap();
    let filters = [
        by_type("*"),
        by_type("fault"),
        by_type("fault*"),
        by_type("?ault"),
        by_type("*t"),
    ];
    let received = route(&filters, &records).await;
    assert_eq!(
        received[0],
        strings(&["0:fault", "1:fault.encoder", "2:vault", "3:", "4:Fault"]),
        "`*` also matches a record without a type"
    );
    assert_eq!(
        received[1],
        strings(&["0:fault"]),
        "exact type, case-sensitive"
    );
    assert_eq!(received[2], strings(&["0:fault", "1:fault.encoder"]));
    assert_eq!(received[3], strings(&["0:fault", "2:vault", "4:Fault"]));
    assert_eq!(received[4], strings(&["0:fault", "2:vault", "4:Fault"]));
}

#[tokio::test]
async fn priority_sets_select_exactly_their_channels() {
    let records: Vec<Record> = ALL_PRIORITIES
        .iter()
        .map(|p| log("PLANT.Cryo", *p, p.name()))
        .collect();
    let by_priority =
        |set: &str| Filter::parse(Some("PLANT.*"), None, Some(set), &[], None).unwrap();
    let filters = [
        by_priority(">=WARNING"),
        by_priority("=DEBUG"),
        by_priority("INFO..WARNING"),
        by_priority("<INFO"),
        by_priority("=DEBUG,>=CRITICAL"),
        by_priority(">ALERT"),
        by_priority("*"),
    ];
    let received = route(&filters, &records).await;
    assert_eq!(
        received[0],
        strings(&["WARNING", "ERROR", "CRITICAL", "ALERT", "EMERGENCY"])
    );
    assert_eq!(received[1], strings(&["DEBUG"]), "just the debug channel");
    assert_eq!(received[2], strings(&["INFO", "NOTICE", "WARNING"]));
    assert_eq!(received[3], strings(&["TRACE", "DELOUSE", "DEBUG"]));
    assert_eq!(
        received[4],
        strings(&["DEBUG", "CRITICAL", "ALERT", "EMERGENCY"])
    );
    assert_eq!(received[5], strings(&["EMERGENCY"]));
    let all: Vec<String> = ALL_PRIORITIES
        .iter()
        .map(|p| p.name().to_string())
        .collect();
    assert_eq!(received[6], all);
}

#[tokio::test]
async fn audiences_match_by_any_shared_name_and_empty_means_everyone() {
    let audiences: [&[&str]; 6] = [
        &[],
        &["operator"],
        &["science"],
        &["operator", "science"],
        &["developer"],
        &["engineering"],
    ];
    let records: Vec<Record> = audiences
        .iter()
        .map(|audience| Record {
            audience: strings(audience),
            ..log(
                "OBS.Schedule",
                Priority::Info,
                &format!("[{}]", audience.join(",")),
            )
        })
        .collect();
    let for_audience =
        |names: &[&str]| Filter::parse(Some("OBS.*"), None, None, &strings(names), None).unwrap();
    let filters = [
        for_audience(&[]),
        for_audience(&["operator"]),
        for_audience(&["developer", "science"]),
        for_audience(&["nobody"]),
    ];
    let received = route(&filters, &records).await;
    assert_eq!(
        received[0],
        strings(&[
            "[]",
            "[operator]",
            "[science]",
            "[operator,science]",
            "[developer]",
            "[engineering]",
        ]),
        "a subscriber without audiences receives every record"
    );
    assert_eq!(
        received[1],
        strings(&["[]", "[operator]", "[operator,science]"])
    );
    assert_eq!(
        received[2],
        strings(&["[]", "[science]", "[operator,science]", "[developer]"])
    );
    assert_eq!(
        received[3],
        strings(&["[]"]),
        "a record without audience is for everyone"
    );
}

#[tokio::test]
async fn kind_sets_select_exactly_their_kinds() {
    let records: Vec<Record> = [Kind::Log, Kind::Message, Kind::Info]
        .into_iter()
        .map(|kind| Record {
            text: kind.name().to_string(),
            ..Record::new(kind, "RunParams.RunInfo")
        })
        .collect();
    let of_kinds = |kinds: &str| Filter::parse(None, None, None, &[], Some(kinds)).unwrap();
    let filters = [
        of_kinds("log"),
        of_kinds("message,info"),
        of_kinds("info"),
        of_kinds("*"),
    ];
    let received = route(&filters, &records).await;
    assert_eq!(received[0], strings(&["log"]));
    assert_eq!(received[1], strings(&["message", "info"]));
    assert_eq!(received[2], strings(&["info"]));
    assert_eq!(received[3], strings(&["log", "message", "info"]));
}

#[tokio::test]
async fn every_dimension_must_match() {
    let base = Record {
        type_name: "fault.encoder".into(),
        audience: strings(&["operator"]),
        ..log("ANTENNA.DV01.Mount", Priority::Error, "base")
    };
    let records = [
        base.clone(),
        Record {
            subject: "WEATHER.Station".into(),
            text: "other subject".into(),
            ..base.clone()
        },
        Record {
            type_name: "status".into(),
            text: "other type".into(),
            ..base.clone()
        },
        Record {
            priority: Priority::Notice,
            text: "lower priority".into(),
            ..base.clone()
        },
        Record {
            audience: strings(&["science"]),
            text: "other audience".into(),
            ..base.clone()
        },
        Record {
            kind: Kind::Message,
            text: "other kind".into(),
            ..base.clone()
        },
        Record {
            audience: Vec::new(),
            text: "no audience".into(),
            ..base.clone()
        },
    ];
    let filter = Filter::parse(
        Some("ANTENNA.*"),
        Some("fault*"),
        Some(">=WARNING"),
        &strings(&["operator"]),
        Some("log"),
    )
    .unwrap();
    let received = route(&[filter, Filter::default()], &records).await;
    assert_eq!(received[0], strings(&["base", "no audience"]));
    assert_eq!(received[1].len(), records.len(), "the open filter gets all");
}

#[tokio::test]
async fn a_record_is_delivered_once_per_matching_subscription() {
    let server = TestServer::start().await;
    let subscriber = connect(&server, "subscriber").await;
    let mut subscriptions = Vec::new();
    for filter in [
        subject("dup.*"),
        subject("dup.*"),
        subject("dup.x"),
        Filter::default(),
        Filter::parse(Some("d?p.x"), None, Some(">=TRACE"), &[], None).unwrap(),
        subject("other.*"),
    ] {
        subscriptions.push(subscriber.subscribe(filter).await.unwrap());
    }
    let other = connect(&server, "other").await;
    let mut other_subscription = other.subscribe(subject("dup.x")).await.unwrap();
    let publisher = connect(&server, "publisher").await;
    publisher
        .publish(&log("dup.x", Priority::Warning, "once"))
        .await
        .unwrap();
    publisher.flush(WAIT).await.unwrap();

    settle(&subscriber).await;
    let mut seqs = Vec::new();
    for (index, subscription) in subscriptions.iter_mut().enumerate() {
        let delivered = buffered_records(subscription).await;
        if index == 5 {
            assert!(delivered.is_empty(), "`other.*` matched: {delivered:?}");
            continue;
        }
        assert_eq!(delivered.len(), 1, "subscription {index}: {delivered:?}");
        assert_eq!(delivered[0].record().text, "once");
        seqs.push(delivered[0].seq);
    }
    let from_other = take_records(&other, &mut other_subscription).await;
    assert_eq!(texts(&from_other), strings(&["once"]));
    assert!(
        seqs.iter().all(|seq| *seq == seqs[0]),
        "one record, one sequence number: {seqs:?}"
    );
    let snapshot = server.monitor().snapshot();
    assert_eq!(common::int(&snapshot, "records_in"), 1);
    assert_eq!(common::int(&snapshot, "deliveries"), 6);
    server.stop().await;
}

#[tokio::test]
async fn records_from_one_publisher_arrive_in_order_with_rising_sequence_numbers() {
    let server = TestServer::start().await;
    let subscriber = connect(&server, "subscriber").await;
    let mut subscription = subscriber.subscribe(subject("seq.*")).await.unwrap();
    let publisher = connect(&server, "publisher").await;
    let expected: Vec<String> = (0..500).map(|n| format!("record {n}")).collect();
    for text in &expected {
        publisher
            .publish(&log("seq.test", Priority::Info, text))
            .await
            .unwrap();
    }
    publisher.flush(WAIT).await.unwrap();
    let mut seqs = Vec::new();
    let mut received = Vec::new();
    while received.len() < expected.len() {
        let delivered = subscription.next_record_timeout(WAIT).await.unwrap();
        seqs.push(delivered.seq);
        received.push(delivered.record().text.clone());
    }
    assert_eq!(received, expected);
    assert!(
        seqs.windows(2).all(|pair| pair[1] == pair[0] + 1),
        "{seqs:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn unsubscribe_stops_delivery_on_the_wire() {
    let server = TestServer::start().await;
    let mut raw = RawConnection::handshake(server.addr(), "raw-subscriber").await;
    for (cid, id) in [(1, 10), (2, 20)] {
        raw.send(&Frame::Subscribe(Subscribe {
            cid,
            subscription: id,
            filter: subject("unsub.*"),
            options: Default::default(),
        }))
        .await;
        assert_eq!(raw.next_frame().await, Some(Frame::Ok { cid }));
    }
    let publisher = connect(&server, "publisher").await;
    publisher
        .publish(&log("unsub.a", Priority::Info, "before"))
        .await
        .unwrap();
    publisher.flush(WAIT).await.unwrap();
    let before = deliveries_until_pong(&mut raw).await;
    assert_eq!(
        before,
        [(10, "before".to_string()), (20, "before".to_string())]
    );

    raw.send(&Frame::Unsubscribe {
        cid: 3,
        subscription: 20,
    })
    .await;
    assert_eq!(raw.next_frame().await, Some(Frame::Ok { cid: 3 }));
    for text in ["after", "marker"] {
        publisher
            .publish(&log("unsub.b", Priority::Info, text))
            .await
            .unwrap();
    }
    publisher.flush(WAIT).await.unwrap();
    let after = deliveries_until_pong(&mut raw).await;
    assert_eq!(
        after,
        [(10, "after".to_string()), (10, "marker".to_string())],
        "subscription 20 got nothing after UNSUBSCRIBE"
    );

    raw.send(&Frame::Unsubscribe {
        cid: 4,
        subscription: 20,
    })
    .await;
    let Some(Frame::Error(error)) = raw.next_frame().await else {
        panic!("a second UNSUBSCRIBE of 20 is refused");
    };
    assert_eq!(error.cid, 4);
    assert_eq!(error.code, herald_proto::ErrorCode::BadSubscription);
    assert_eq!(
        error.message,
        "no subscription with id 20 on this connection"
    );
    raw.send(&Frame::Ping).await;
    assert_eq!(
        raw.next_frame().await,
        Some(Frame::Pong),
        "a refused UNSUBSCRIBE keeps the connection open"
    );
    server.stop().await;
}

/// Returns the (subscription, text) of every record delivered until the second of two
/// `PING`/`PONG` round trips. The writer drains every queue after encoding a `PONG`, so records
/// routed before the first `PING` arrive before or right after the first `PONG`, and all of
/// them before the second.
async fn deliveries_until_pong(raw: &mut RawConnection) -> Vec<(u64, String)> {
    let mut delivered = Vec::new();
    for _ in 0..2 {
        raw.send(&Frame::Ping).await;
        loop {
            match raw.next_frame().await {
                Some(Frame::Pong) => break,
                Some(Frame::Deliver(entries)) => delivered.extend(entries.iter().map(entry_text)),
                other => panic!("unexpected {other:?}"),
            }
        }
    }
    delivered
}

fn entry_text(entry: &DeliverEntry) -> (u64, String) {
    let record = Record::from_bytes(&entry.record.bytes).unwrap();
    (entry.subscription, record.text)
}

#[tokio::test]
async fn unsubscribed_and_dropped_subscriptions_leave_the_server() {
    let server = TestServer::start().await;
    let subscriber = connect(&server, "subscriber").await;
    let mut keep = subscriber.subscribe(subject("unsub.*")).await.unwrap();
    let gone = subscriber.subscribe(subject("unsub.*")).await.unwrap();
    let dropped = subscriber.subscribe(subject("unsub.*")).await.unwrap();
    let publisher = connect(&server, "publisher").await;
    publisher
        .publish(&log("unsub.a", Priority::Info, "before"))
        .await
        .unwrap();
    publisher.flush(WAIT).await.unwrap();
    assert_eq!(common::server_int(&server, "deliveries"), 3);

    gone.unsubscribe().await.unwrap();
    drop(dropped);
    settle(&subscriber).await;
    assert_eq!(common::server_int(&server, "subscriptions"), 1);
    publisher
        .publish(&log("unsub.b", Priority::Info, "after"))
        .await
        .unwrap();
    publisher.flush(WAIT).await.unwrap();
    assert_eq!(
        common::server_int(&server, "deliveries"),
        4,
        "only `keep` was routed the second record"
    );
    let received = take_records(&subscriber, &mut keep).await;
    assert_eq!(texts(&received), strings(&["before", "after"]));
    assert_eq!(subscriber.error(), None);
    server.stop().await;
}

#[tokio::test]
async fn a_new_subscription_sees_subjects_the_publisher_already_cached() {
    let server = TestServer::start().await;
    let publisher = connect(&server, "publisher").await;
    let first = connect(&server, "first").await;
    let mut first_subscription = first.subscribe(subject("cache.*")).await.unwrap();
    publisher
        .publish(&log("cache.hit", Priority::Info, "one"))
        .await
        .unwrap();
    publisher.flush(WAIT).await.unwrap();

    let late = connect(&server, "late").await;
    let mut late_subscription = late.subscribe(subject("cache.hit")).await.unwrap();
    publisher
        .publish(&log("cache.hit", Priority::Info, "two"))
        .await
        .unwrap();
    publisher.flush(WAIT).await.unwrap();
    assert_eq!(
        texts(&take_records(&late, &mut late_subscription).await),
        strings(&["two"])
    );
    assert_eq!(
        texts(&take_records(&first, &mut first_subscription).await),
        strings(&["one", "two"])
    );

    drop(first_subscription);
    settle(&first).await;
    publisher
        .publish(&log("cache.hit", Priority::Info, "three"))
        .await
        .unwrap();
    publisher.flush(WAIT).await.unwrap();
    assert_eq!(
        texts(&take_records(&late, &mut late_subscription).await),
        strings(&["three"])
    );
    assert_eq!(
        common::server_int(&server, "deliveries"),
        4,
        "one, two twice, three once"
    );
    server.stop().await;
}

#[tokio::test]
async fn deliver_frames_respect_a_small_max_frame() {
    let config = Config {
        max_frame_bytes: 4096,
        ..Config::default()
    };
    let server = TestServer::start_with(config).await;
    let subscriber = connect(&server, "subscriber").await;
    let mut subscription = subscriber.subscribe(subject("small.*")).await.unwrap();
    // Three PUBLISH frames in one write: the server routes them before the subscriber's
    // writer runs, so its queue holds far more than one frame's worth of records.
    let records: Vec<Record> = (0..180)
        .map(|n| log("small.frames", Priority::Info, &format!("{n:03}")))
        .collect();
    let mut bytes = Vec::new();
    for (index, chunk) in records.chunks(60).enumerate() {
        let ack = if index == 2 {
            AckLevel::Received
        } else {
            AckLevel::None
        };
        let frame = common::publish_frame(chunk, index as u64 + 1, ack);
        assert!(frame.len() < 4096, "each PUBLISH fits: {}", frame.len());
        bytes.extend(frame);
    }
    let mut raw = RawConnection::handshake(server.addr(), "raw-publisher").await;
    raw.send_bytes(&bytes).await;
    assert!(matches!(raw.next_frame().await, Some(Frame::Ack(_))));
    let received = take_records(&subscriber, &mut subscription).await;
    assert_eq!(texts(&received), texts(&records));
    assert_eq!(subscriber.error(), None);
    server.stop().await;
}
