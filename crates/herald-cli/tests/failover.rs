//! Failover between two real `herald serve` processes: the first is killed with SIGKILL
//! while a client streams acknowledged records; the client moves to the second server and
//! resends what the first had not acknowledged, so every record the second server
//! acknowledges reaches a subscriber there — none lost, duplicates counted.

use std::collections::BTreeMap;
use std::time::Duration;

use herald_client::{Client, ClientOptions, Event, Subscription};
use herald_proto::{AckLevel, Filter, Kind, Record, Value};
use herald_testkit::ServeProcess;

const HERALD: &str = env!("CARGO_BIN_EXE_herald");
const RECORDS: i64 = 2_000;
/// Acknowledged records after which the first server is killed.
const KILL_AFTER: i64 = 700;

fn start(name: &str) -> ServeProcess {
    ServeProcess::start(HERALD, &["--name", name])
}

/// Starts two servers and subscribes to `stream.*` on the second; returns the servers, the
/// subscribing client (keep it alive) and its subscription.
async fn two_servers() -> (ServeProcess, ServeProcess, Client, Subscription) {
    let (first, second) = (start("first"), start("second"));
    let subscriber = Client::connect(&second.url()).await.unwrap();
    let subscription = subscriber
        .subscribe(Filter::subject("stream.*").unwrap())
        .await
        .unwrap();
    (first, second, subscriber, subscription)
}

fn numbered(n: i64) -> Record {
    Record {
        fields: vec![("n".to_string(), Value::Int(n))],
        text: format!("record {n}"),
        ..Record::new(Kind::Message, "stream.numbers")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_records_survive_the_first_server_being_killed() {
    let (mut first, second, _subscriber, mut subscription) = two_servers().await;

    let url = format!("herald://{},{}", first.addr, second.addr);
    let options = ClientOptions {
        reconnect_timeout: Duration::from_secs(10),
        ..ClientOptions::default()
    };
    let publisher = Client::connect_with(&url, options).await.unwrap();
    assert_eq!(publisher.server(), first.addr);

    // Stream with a `received` acknowledgement for each record; note which server acked it.
    let mut acked_by_second = Vec::new();
    let mut acked_by_first = 0;
    for n in 0..RECORDS {
        if n == KILL_AFTER {
            first.kill();
        }
        publisher
            .sync_send(&numbered(n), AckLevel::Received, Duration::from_secs(15))
            .await
            .unwrap();
        if publisher.server() == second.addr {
            acked_by_second.push(n);
        } else {
            acked_by_first += 1;
        }
    }
    assert_eq!(publisher.failovers(), 1);
    assert_eq!(
        acked_by_first, KILL_AFTER,
        "the first server acknowledged what came before the kill"
    );
    assert_eq!(acked_by_second.len() as i64, RECORDS - KILL_AFTER);

    // Every record the second server acknowledged reaches its subscriber; count duplicates.
    let mut seen: BTreeMap<i64, u32> = BTreeMap::new();
    while acked_by_second.iter().any(|n| !seen.contains_key(n)) {
        let event = tokio::time::timeout(Duration::from_secs(10), subscription.next())
            .await
            .expect("records keep arriving")
            .expect("subscription open");
        let Event::Record(delivered) = event else {
            panic!("no loss expected: {event:?}")
        };
        let record = delivered.into_record();
        let Some((_, Value::Int(n))) = record.fields.first() else {
            panic!("numbered record")
        };
        *seen.entry(*n).or_default() += 1;
    }
    let duplicates: u32 = seen.values().map(|count| count - 1).sum();
    eprintln!(
        "{} records at the second server, {duplicates} duplicates",
        seen.len()
    );
    assert!(
        seen.keys().all(|n| *n >= KILL_AFTER - 1),
        "only records from around the kill on"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fast_stream_is_resent_from_what_the_dead_server_had_not_acknowledged() {
    let (mut first, second, _subscriber, mut subscription) = two_servers().await;
    let url = format!("herald://{},{}", first.addr, second.addr);
    let publisher = Client::connect(&url).await.unwrap();

    // Fire-and-forget publishing; the client keeps each batch until the server acks it.
    for n in 0..RECORDS {
        if n == RECORDS / 2 {
            first.kill();
        }
        publisher.publish(&numbered(n)).await.unwrap();
    }
    publisher.flush(Duration::from_secs(15)).await.unwrap();
    assert_eq!(publisher.server(), second.addr);

    // The second server got the tail of the stream, from the oldest batch the first one had
    // not acknowledged, without a hole.
    let mut numbers = Vec::new();
    while numbers.last() != Some(&(RECORDS - 1)) {
        let event = tokio::time::timeout(Duration::from_secs(10), subscription.next())
            .await
            .unwrap()
            .unwrap();
        let Event::Record(delivered) = event else {
            panic!("no loss expected")
        };
        let Some((_, Value::Int(n))) = delivered.record().fields.first().cloned() else {
            panic!("numbered")
        };
        numbers.push(n);
    }
    let first_resent = numbers[0];
    numbers.sort_unstable();
    numbers.dedup();
    assert_eq!(
        numbers,
        (first_resent..RECORDS).collect::<Vec<_>>(),
        "a contiguous tail"
    );
    assert!(
        first_resent <= RECORDS / 2,
        "resent from before the kill: {first_resent}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_are_restored_on_the_next_server() {
    let mut first = start("first");
    let second = start("second");
    let url = format!("herald://{},{}", first.addr, second.addr);
    let subscriber = Client::connect(&url).await.unwrap();
    let mut subscription = subscriber
        .subscribe(Filter::subject("stream.*").unwrap())
        .await
        .unwrap();
    first.kill();
    let publisher = Client::connect(&format!("herald://{}", second.addr))
        .await
        .unwrap();
    // Publish until the subscriber, restored on the second server, sees a record.
    let mut n = 0;
    let mut events = Vec::new();
    while !events.iter().any(|e| matches!(e, Event::Record(_))) {
        publisher
            .sync_send(&numbered(n), AckLevel::Received, Duration::from_secs(5))
            .await
            .unwrap();
        n += 1;
        if let Ok(Some(event)) =
            tokio::time::timeout(Duration::from_millis(100), subscription.next()).await
        {
            events.push(event);
        }
        assert!(n < 100, "the subscription was not restored");
    }
    // First the notice of the time it went unserved, then the records.
    match &events[0] {
        Event::Interrupted(notice) => {
            assert_eq!(notice.resumed, second.addr);
            assert!(notice.down < Duration::from_secs(5), "{notice:?}");
        }
        other => panic!("expected the failover notice first, got {other:?}"),
    }
    assert_eq!(subscriber.server(), second.addr);
    assert_eq!(subscriber.failovers(), 1);
    assert_eq!(subscriber.error(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_dead_server_had_not_acknowledged_is_resent_at_once_with_nothing_published_after()
{
    // Pings a minute apart both ways: a ping (or the pong it asks for) must not be what
    // sends the records again.
    let quiet = [
        ("HERALD_HEARTBEAT_INTERVAL", "60s"),
        ("HERALD_HEARTBEAT_TIMEOUT", "120s"),
    ];
    let mut first = ServeProcess::start_with_env(HERALD, &["--name", "first"], &quiet);
    let second = ServeProcess::start_with_env(HERALD, &["--name", "second"], &quiet);
    let subscriber = Client::connect(&second.url()).await.unwrap();
    let mut subscription = subscriber
        .subscribe(Filter::subject("stream.*").unwrap())
        .await
        .unwrap();
    let url = format!("herald://{},{}", first.addr, second.addr);
    let options = ClientOptions {
        heartbeat_interval: Duration::from_secs(60),
        heartbeat_timeout: Duration::from_secs(120),
        reconnect_timeout: Duration::from_secs(10),
        ..ClientOptions::default()
    };
    let publisher = Client::connect_with(&url, options).await.unwrap();
    // The first server is frozen, so it acknowledges none of them; then it dies.
    first.freeze();
    const HELD: i64 = 100;
    for n in 0..HELD {
        publisher.publish(&numbered(n)).await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    first.kill();

    // Nothing is published or flushed after the failover: the writer of the new connection
    // sends what it found in the outbox without being woken.
    let mut seen = std::collections::BTreeSet::new();
    while seen.len() < HELD as usize {
        let event = tokio::time::timeout(Duration::from_secs(5), subscription.next())
            .await
            .expect("the records held come at once from the second server")
            .unwrap();
        if let Event::Record(delivered) = event {
            let Some((_, Value::Int(n))) = delivered.record().fields.first().cloned() else {
                panic!("numbered")
            };
            seen.insert(n);
        }
    }
    assert_eq!(publisher.server(), second.addr);
    assert_eq!(publisher.failovers(), 1);
}
