//! Delivery under pressure, through the real server: a slow subscriber only hurts itself,
//! every loss is reported, and each policy does what it says.

mod common;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::{connect, log, publish_frame, wait_until, WAIT};
use herald_client::{Client, ClientOptions, Event, Subscription};
use herald_proto::frame::Subscribe;
use herald_proto::{AckLevel, DeliveryOptions, ErrorCode, Filter, Frame, Policy, Priority, Record};
use herald_server::events::CloseReason;
use herald_testkit::{RawConnection, TestServer};

/// Records the slow-subscriber scenario publishes.
const RECORDS: u64 = 3_000;

/// Reads `subscription` until `expected` records were received or reported lost; returns
/// (received sequence numbers, records reported lost).
async fn consume(
    subscription: &mut Subscription,
    expected: u64,
    pause_every: Option<(u64, Duration)>,
) -> (Vec<u64>, u64) {
    let mut seqs = Vec::new();
    let mut lost = 0;
    while (seqs.len() as u64) + lost < expected {
        let event = tokio::time::timeout(Duration::from_secs(10), subscription.next())
            .await
            .expect("records keep coming")
            .expect("subscription open");
        match event {
            Event::Record(delivered) => {
                seqs.push(delivered.seq);
                if let Some((every, pause)) = pause_every {
                    if (seqs.len() as u64).is_multiple_of(every) {
                        tokio::time::sleep(pause).await;
                    }
                }
            }
            Event::Gap(gap) => {
                assert!(gap.first_seq <= gap.last_seq);
                assert_eq!(
                    gap.by_priority.iter().map(|(_, n)| n).sum::<u64>(),
                    gap.count
                );
                lost += gap.count;
            }
            Event::Interrupted(notice) => panic!("unexpected failover {notice:?}"),
        }
    }
    (seqs, lost)
}

#[tokio::test]
async fn five_fast_subscribers_lose_nothing_while_a_slow_one_loses_only_what_it_is_told() {
    let server = TestServer::start().await;
    let mut fast = Vec::new();
    for n in 0..5 {
        let client = connect(&server, &format!("fast-{n}")).await;
        let subscription = client
            .subscribe(Filter::subject("plant.*").unwrap())
            .await
            .unwrap();
        fast.push((client, subscription));
    }
    // The slow one reads at about 1/5 of the publishing rate; small buffers on both sides
    // make it fall behind within the run.
    let options = ClientOptions {
        subscription_buffer: 64,
        ..ClientOptions::default()
    };
    let slow_client = Client::connect_with(&server.url(), options).await.unwrap();
    let delivery = DeliveryOptions {
        max_records: Some(64),
        ..DeliveryOptions::default()
    };
    let mut slow = slow_client
        .subscribe_with_options(Filter::subject("plant.*").unwrap(), delivery)
        .await
        .unwrap();

    let fast_tasks: Vec<_> = fast
        .into_iter()
        .map(|(client, mut subscription)| {
            tokio::spawn(async move {
                let result = consume(&mut subscription, RECORDS, None).await;
                drop(client);
                result
            })
        })
        .collect();
    // Published at ~10,000/s in steps of 50 every 5 ms; the slow one takes 10 every 5 ms.
    let slow_task = tokio::spawn(async move {
        let result = consume(&mut slow, RECORDS, Some((10, Duration::from_millis(5)))).await;
        (result, slow.lost())
    });
    let publisher = connect(&server, "publisher").await;
    // 4 KiB per record: 12 MB in all, more than the socket buffers can hide.
    let padding = "x".repeat(4096);
    let started = Instant::now();
    for step in 0..RECORDS / 50 {
        for n in 0..50 {
            let priority = if n % 10 == 0 {
                Priority::Warning
            } else {
                Priority::Info
            };
            let text = format!("{} {padding}", step * 50 + n);
            publisher
                .publish(&log("plant.pump", priority, &text))
                .await
                .unwrap();
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    publisher.flush(WAIT).await.unwrap();
    let publish_time = started.elapsed();

    for task in fast_tasks {
        let (seqs, lost) = task.await.unwrap();
        assert_eq!(lost, 0, "a fast subscriber loses nothing");
        assert_eq!(seqs.len() as u64, RECORDS);
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "in order");
    }
    let ((seqs, lost), counted) = slow_task.await.unwrap();
    assert!(
        lost > 0,
        "the slow subscriber fell behind (publishing took {publish_time:?})"
    );
    assert_eq!(
        seqs.len() as u64 + lost,
        RECORDS,
        "received + reported lost = published"
    );
    assert_eq!(counted, lost);
    assert!(seqs.windows(2).all(|w| w[0] < w[1]));
    server.stop().await;
}

/// Subscribes a raw connection that will not read, with `options`. Its receive buffer is
/// small, so that once it stops reading, the server's queue fills after a known amount.
async fn stuck_subscriber(server: &TestServer, options: DeliveryOptions) -> RawConnection {
    let raw = RawConnection::connect_with_receive_buffer(server.addr(), 64 * 1024).await;
    let mut raw = raw.complete_handshake("stuck").await;
    let filter = Filter::subject("burst.*").unwrap();
    raw.send(&Frame::Subscribe(Subscribe {
        cid: 1,
        subscription: 1,
        filter,
        options,
    }))
    .await;
    assert_eq!(raw.next_frame().await, Some(Frame::Ok { cid: 1 }));
    raw
}

/// Publishes `count` records of 512 KiB on `burst.big` (big enough to fill socket buffers
/// fast), flushing after each when `flush_each`, else once at the end; returns how long the
/// publisher took.
async fn publish_big(publisher: &Client, count: usize, flush_each: bool) -> Duration {
    let big = "x".repeat(512 * 1024);
    let started = Instant::now();
    for n in 0..count {
        publisher
            .publish(&log("burst.big", Priority::Info, &format!("{n}{big}")))
            .await
            .unwrap();
        if flush_each {
            publisher.flush(Duration::from_secs(60)).await.unwrap();
        }
    }
    publisher.flush(Duration::from_secs(60)).await.unwrap();
    started.elapsed()
}

/// Publishes `priorities` as one `PUBLISH` frame, so the router queues them at once.
async fn burst(server: &TestServer, priorities: &[Priority]) {
    let records: Vec<Record> = priorities
        .iter()
        .enumerate()
        .map(|(n, p)| log("burst.test", *p, &n.to_string()))
        .collect();
    let mut publisher = RawConnection::handshake(server.addr(), "burst").await;
    publisher
        .send_bytes(&publish_frame(&records, 1, AckLevel::Received))
        .await;
    assert!(matches!(publisher.next_frame().await, Some(Frame::Ack(_))));
}

/// Reads what a raw subscriber receives until `count` records arrived; returns (texts, gap
/// notices).
async fn read_deliveries(
    raw: &mut RawConnection,
    count: usize,
) -> (Vec<String>, Vec<herald_proto::frame::GapNotice>) {
    let (mut texts, mut gaps) = (Vec::new(), Vec::new());
    while texts.len() < count {
        match raw.next_frame().await.expect("connection open") {
            Frame::Deliver(entries) => {
                for entry in entries {
                    texts.push(Record::from_bytes(&entry.record.bytes).unwrap().text);
                }
            }
            Frame::Gap(gap) => gaps.push(gap),
            other => panic!("unexpected {other:?}"),
        }
    }
    (texts, gaps)
}

#[tokio::test]
async fn drop_old_keeps_the_newest_and_drop_new_the_oldest() {
    use Priority::Info;
    let server = TestServer::start().await;
    let old = DeliveryOptions {
        policy: Policy::DropOld,
        max_records: Some(3),
        ..DeliveryOptions::default()
    };
    let mut drop_old = stuck_subscriber(&server, old).await;
    let new = DeliveryOptions {
        max_records: Some(3),
        ..DeliveryOptions::default()
    };
    let mut drop_new = stuck_subscriber(&server, new).await;
    burst(&server, &[Info; 8]).await;

    let (texts, gaps) = read_deliveries(&mut drop_old, 3).await;
    assert_eq!(texts, ["5", "6", "7"]);
    assert_eq!(
        (gaps[0].count, gaps[0].first_seq, gaps[0].last_seq),
        (5, 1, 5)
    );
    let (texts, gaps) = read_deliveries(&mut drop_new, 3).await;
    assert_eq!(texts, ["0", "1", "2"]);
    assert_eq!(
        (gaps[0].count, gaps[0].first_seq, gaps[0].last_seq),
        (5, 4, 8)
    );
    assert_eq!(gaps[0].by_priority, [(Info, 5)]);
    server.stop().await;
}

#[tokio::test]
async fn shedding_takes_lower_priorities_first_and_keeps_protected_ones() {
    use Priority::{Alert, Debug, Emergency, Info, Warning};
    let server = TestServer::start().await;
    let options = DeliveryOptions {
        max_records: Some(3),
        protected: Some(Alert),
        ..DeliveryOptions::default()
    };
    let mut raw = stuck_subscriber(&server, options).await;
    burst(
        &server,
        &[Debug, Info, Debug, Warning, Warning, Alert, Emergency, Info],
    )
    .await;
    let (texts, gaps) = read_deliveries(&mut raw, 5).await;
    // WARNING 3 sheds DEBUG 2, WARNING 4 sheds DEBUG 0; ALERT and EMERGENCY are protected and
    // kept over the limit; INFO 7 finds nothing lower and is refused.
    assert_eq!(texts, ["1", "3", "4", "5", "6"]);
    assert_eq!(gaps.len(), 1);
    assert_eq!(gaps[0].by_priority, [(Debug, 2), (Info, 1)]);
    server.stop().await;
}

#[tokio::test]
async fn disconnect_closes_only_the_slow_subscriber_and_says_why() {
    let server = TestServer::start().await;
    let options = DeliveryOptions {
        policy: Policy::Disconnect,
        max_records: Some(2),
        ..DeliveryOptions::default()
    };
    let mut raw = stuck_subscriber(&server, options).await;
    let bystander = connect(&server, "bystander").await;
    let mut fine = bystander
        .subscribe(Filter::subject("burst.*").unwrap())
        .await
        .unwrap();
    burst(&server, &[Priority::Info; 5]).await;
    let errors = raw.errors_until_close().await;
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].code, ErrorCode::SlowConsumer);
    assert_eq!(
        errors[0].message,
        "subscription 1 fell behind: its queue (2 records, 67108864 bytes) is full and its policy is disconnect"
    );
    wait_until("the close is counted", || {
        server.monitor().closes(CloseReason::SlowConsumer) == 1
    })
    .await;
    let (seqs, lost) = consume(&mut fine, 5, None).await;
    assert_eq!(
        (seqs.len(), lost),
        (5, 0),
        "the other subscriber got everything"
    );
    let data = bystander.monitor().await.unwrap();
    let drops = common::map(&data, "drops");
    assert_eq!(
        common::int(drops, "slow_consumer"),
        5,
        "3 refused + 2 queued when it closed"
    );
    server.stop().await;
}

#[tokio::test]
async fn five_subscribers_that_never_read_are_held_by_the_server_wide_budget() {
    let budget = 16 * 1024 * 1024;
    let server = TestServer::start_with(herald_server::Config {
        queue_budget_bytes: budget,
        ..herald_server::Config::default()
    })
    .await;
    let mut stuck = Vec::new();
    for _ in 0..5 {
        stuck.push(stuck_subscriber(&server, DeliveryOptions::default()).await);
    }
    // A subscriber that reads, to show the budget does not starve the small queues.
    let reader = connect(&server, "reader").await;
    let mut reading = reader
        .subscribe(Filter::subject("burst.*").unwrap())
        .await
        .unwrap();
    // The reader keeps up: the publisher stays at most 20 records ahead of it.
    let count = 400u64;
    let progress = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let seen = std::sync::Arc::clone(&progress);
    let consumer = tokio::spawn(async move {
        let mut lost = 0;
        while seen.load(Ordering::Relaxed) + lost < count {
            match reading.next().await.expect("subscription open") {
                Event::Record(_) => seen.fetch_add(1, Ordering::Relaxed),
                Event::Gap(gap) => {
                    lost += gap.count;
                    0
                }
                Event::Interrupted(notice) => panic!("unexpected failover {notice:?}"),
            };
        }
        lost
    });
    let publisher = connect(&server, "publisher").await;
    let record = "x".repeat(64 * 1024);
    for n in 0..count {
        while n >= progress.load(Ordering::Relaxed) + 20 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        publisher
            .publish(&log("burst.big", Priority::Info, &format!("{n}{record}")))
            .await
            .unwrap();
    }
    publisher.flush(WAIT).await.unwrap();
    let lost = tokio::time::timeout(WAIT, consumer).await.unwrap().unwrap();
    assert_eq!(lost, 0, "the reader that keeps up lost nothing");
    let data = publisher.monitor().await.unwrap();
    let queued = common::int(common::map(&data, "queues"), "bytes") as usize;
    let shed = common::int(common::map(&data, "drops"), "server_budget");
    eprintln!("queued {queued} bytes of a {budget}-byte budget; {shed} records shed");
    // 5 x 400 x 64 KiB = 125 MiB offered; the queues hold the budget, give or take the
    // batch that crossed it.
    assert!(queued <= budget + 70 * 1024, "{queued} bytes queued");
    assert!(shed > 0, "the stuck queues shed");
    server.stop().await;
}

#[tokio::test]
async fn a_stuck_block_subscriber_costs_a_publisher_one_wait_per_episode() {
    let server = TestServer::start().await;
    let timeout = Duration::from_millis(300);
    let options = DeliveryOptions {
        policy: Policy::Block,
        max_records: Some(1),
        block_timeout_ms: Some(300),
        ..DeliveryOptions::default()
    };
    let _stuck = stuck_subscriber(&server, options).await;
    let publisher = connect(&server, "publisher").await;
    // Each record its own acknowledged batch: before, each one past the full buffers
    // waited out the block timeout again (40 x 300 ms); now only the first does.
    let elapsed = publish_big(&publisher, 40, true).await;
    let data = publisher.monitor().await.unwrap();
    let drops = common::map(&data, "drops");
    let (timed_out, full) = (
        common::int(drops, "block_timeout"),
        common::int(drops, "queue_full"),
    );
    eprintln!("{timed_out} timed out, {full} dropped while stalled; publishing took {elapsed:?}");
    assert!(timed_out >= 1, "the first wait timed out");
    assert!(
        full > 0,
        "later records were dropped at once while it stayed stalled"
    );
    assert!(
        elapsed < timeout * 4,
        "the publisher waited {elapsed:?}: more than one block timeout of {timeout:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn block_makes_the_publisher_wait_for_room_but_never_longer_than_the_timeout() {
    let server = TestServer::start().await;
    let options = DeliveryOptions {
        policy: Policy::Block,
        max_records: Some(1),
        block_timeout_ms: Some(300),
        ..DeliveryOptions::default()
    };
    // A subscriber that reads: blocked records get in as its queue drains, none is lost.
    let reader = connect(&server, "reader").await;
    let mut reading = reader
        .subscribe_with_options(Filter::subject("burst.*").unwrap(), options.clone())
        .await
        .unwrap();
    burst(&server, &[Priority::Info; 20]).await;
    let (seqs, lost) = consume(&mut reading, 20, None).await;
    assert_eq!((seqs.len(), lost), (20, 0));
    drop(reading);

    // A subscriber that never reads, with records big enough to fill the socket buffers:
    // once they are full, a batch waits the block timeout, then sheds (and later batches
    // drop at once while the queue stays stalled).
    let timeout = Duration::from_millis(100);
    let options = DeliveryOptions {
        block_timeout_ms: Some(100),
        ..options
    };
    let _stuck = stuck_subscriber(&server, options).await;
    let publisher = connect(&server, "publisher").await;
    let elapsed = publish_big(&publisher, 24, false).await;
    let data = publisher.monitor().await.unwrap();
    let timed_out = common::int(common::map(&data, "drops"), "block_timeout");
    assert!(
        timed_out > 0,
        "the stuck subscriber's queue timed out ({elapsed:?})"
    );
    // Each timed-out record cost the publisher at most one block timeout (plus slack).
    eprintln!("{timed_out} records timed out; publishing took {elapsed:?}");
    assert!(
        elapsed < timeout * (timed_out as u32 + 10),
        "publisher waited {elapsed:?} for {timed_out} timed-out records"
    );
    server.stop().await;
}

#[tokio::test]
async fn latest_only_delivers_the_newest_value_per_subject_at_the_asked_rate() {
    let server = TestServer::start().await;
    let display = connect(&server, "display").await;
    let options = DeliveryOptions {
        latest_per_second: Some(10.0),
        ..DeliveryOptions::default()
    };
    let mut subscription = display
        .subscribe_with_options(Filter::subject("SR.*").unwrap(), options)
        .await
        .unwrap();
    let publisher = connect(&server, "magnets").await;
    let started = Instant::now();
    for n in 0..100 {
        for subject in ["SR.current", "SR.voltage"] {
            publisher
                .publish(&log(subject, Priority::Info, &n.to_string()))
                .await
                .unwrap();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    publisher.flush(WAIT).await.unwrap();
    let window = started.elapsed();
    let mut last = std::collections::HashMap::new();
    let mut counts = std::collections::HashMap::new();
    // The last values arrive within one interval after publishing stops.
    while last.get("SR.current") != Some(&"99".to_string())
        || last.get("SR.voltage") != Some(&"99".to_string())
    {
        let event = tokio::time::timeout(WAIT, subscription.next())
            .await
            .unwrap()
            .unwrap();
        let Event::Record(delivered) = event else {
            panic!("latest-only reports no gaps")
        };
        let record = delivered.into_record();
        *counts.entry(record.subject.clone()).or_insert(0u32) += 1;
        last.insert(record.subject, record.text);
    }
    let allowed = (window.as_secs_f64() * 10.0).ceil() as u32 + 2;
    for subject in ["SR.current", "SR.voltage"] {
        let count = counts[subject];
        assert!(
            (3..=allowed).contains(&count),
            "{subject}: {count} records in {window:?}, at most {allowed}"
        );
    }
    assert_eq!(subscription.lost(), 0);
    let data = display.monitor().await.unwrap();
    assert!(common::int(common::map(&data, "drops"), "superseded") > 100);
    assert_eq!(
        common::int(&data, "dropped"),
        0,
        "superseded records are not losses"
    );
    server.stop().await;
}
