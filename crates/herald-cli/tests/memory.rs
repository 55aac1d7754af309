//! A hung subscriber costs the server at most its queue bound in memory: a real `herald
//! serve` process, a subscriber that never reads, and a publisher sending far more than
//! the bound.

use std::time::Duration;

use herald_client::Client;
use herald_proto::frame::Subscribe;
use herald_proto::{DeliveryOptions, Filter, Frame, Kind, Record};
use herald_testkit::{RawConnection, ServeProcess};

const HERALD: &str = env!("CARGO_BIN_EXE_herald");
const QUEUE_MIB: u64 = 8;
/// What the test publishes: 16 times the queue bound.
const RECORDS: usize = 128 * 1024;
const TEXT_BYTES: usize = 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_subscriber_keeps_the_server_within_its_queue_bound() {
    let queue_bytes = format!("{QUEUE_MIB}MiB");
    // The archive (which keeps these INFO logs by default) has a memory bound of its own,
    // `archive.buffer_bytes`; it is turned off here to measure the subscriber queue alone.
    let env = [
        ("HERALD_QUEUE_BYTES", queue_bytes.as_str()),
        ("HERALD_QUEUE_HARD_BYTES", queue_bytes.as_str()),
        ("HERALD_ARCHIVE_BACKEND", "none"),
    ];
    let server = ServeProcess::start_with_env(HERALD, &[], &env);
    let addr = server.addr.parse().unwrap();
    // Subscribes, then never reads; its small receive buffer fills at once.
    let raw = RawConnection::connect_with_receive_buffer(addr, 16 * 1024).await;
    let mut hung = raw.complete_handshake("hung").await;
    let filter = Filter::subject("flood.*").unwrap();
    let subscribe = Subscribe {
        cid: 1,
        subscription: 1,
        filter,
        options: DeliveryOptions::default(),
    };
    hung.send(&Frame::Subscribe(subscribe)).await;
    assert_eq!(hung.next_frame().await, Some(Frame::Ok { cid: 1 }));

    let publisher = Client::connect(&server.url()).await.unwrap();
    let before = server.rss_kib();
    let mut record = Record {
        text: "x".repeat(TEXT_BYTES),
        ..Record::new(Kind::Log, "flood.test")
    };
    for n in 0..RECORDS {
        // Distinct records: identical ones would collapse as a log storm, not fill a queue.
        record.text.replace_range(..8, &format!("{n:08}"));
        publisher.publish(&record).await.unwrap();
    }
    publisher.flush(Duration::from_secs(60)).await.unwrap();
    let after = server.rss_kib();

    let published_mib = (RECORDS * TEXT_BYTES) as u64 >> 20;
    let grown_mib = after.saturating_sub(before) / 1024;
    eprintln!(
        "published {published_mib} MiB; server RSS {before} → {after} KiB (+{grown_mib} MiB)"
    );
    // The queue holds at most QUEUE_MIB of records; the rest is the server's own buffers
    // (the read buffer, the writer's batch, allocator slack), bounded and independent of
    // how much was published.
    assert!(
        grown_mib <= QUEUE_MIB * 2 + 16,
        "server grew {grown_mib} MiB for a {QUEUE_MIB} MiB queue"
    );
    let data = publisher.monitor().await.unwrap();
    let dropped = match herald_client::monitor_value(&data, "dropped") {
        Some(herald_proto::Value::Int(n)) => *n,
        other => panic!("dropped: {other:?}"),
    };
    assert!(
        dropped > (RECORDS / 2) as i64,
        "most records were shed, and counted: {dropped}"
    );
}
