//! Helpers shared by the server's integration tests: hand-built frames, bounded waits,
//! monitor look-ups, and a way to know that every record routed so far has reached a
//! subscriber without sleeping.
// Each test file uses a different subset of these helpers.
#![allow(dead_code)]

use std::time::Duration;

use herald_client::{monitor_value, Client, Delivered, Event, Subscription};
use herald_proto::frame::{self, Hello, PROTOCOL_VERSION};
use herald_proto::value::Field;
use herald_proto::{AckLevel, Filter, FrameType, Kind, Priority, Record, Value};

/// Upper bound for anything a test waits for; tests finish far sooner unless they fail.
pub const WAIT: Duration = Duration::from_secs(5);

/// Returns `n` milliseconds.
pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Returns a log record about `subject` at `priority` with `text`, at a fixed time.
pub fn log(subject: &str, priority: Priority, text: &str) -> Record {
    Record {
        priority,
        text: text.to_string(),
        time: 1_763_604_000_000_000_000,
        ..Record::new(Kind::Log, subject)
    }
}

/// Returns a whole `PUBLISH` frame (length prefix included) carrying `records`.
pub fn publish_frame(records: &[Record], ack_id: u64, ack: AckLevel) -> Vec<u8> {
    let encoded: Vec<Vec<u8>> = records.iter().map(Record::to_bytes).collect();
    publish_frame_of_bytes(&encoded, ack_id, ack)
}

/// Returns a whole `PUBLISH` frame carrying already encoded (possibly bad) records.
pub fn publish_frame_of_bytes(records: &[Vec<u8>], ack_id: u64, ack: AckLevel) -> Vec<u8> {
    let mut out = Vec::new();
    let start = frame::begin_frame(&mut out, FrameType::Publish);
    frame::write_publish_header(&mut out, ack_id, ack, records.len() as u32);
    for record in records {
        out.extend_from_slice(record);
    }
    frame::end_frame(&mut out, start);
    out
}

/// Returns a whole frame of `frame_type` with `body` as its body, as-is.
pub fn raw_frame(frame_type: u8, body: &[u8]) -> Vec<u8> {
    let length = u32::try_from(body.len() + 1).unwrap();
    let mut out = length.to_be_bytes().to_vec();
    out.push(frame_type);
    out.extend_from_slice(body);
    out
}

/// Returns a `HELLO` frame speaking protocol `version`.
pub fn hello_frame(version: u64, name: &str) -> Vec<u8> {
    herald_proto::Frame::Hello(Hello {
        version,
        name: name.to_string(),
        ..Hello::default()
    })
    .to_bytes()
}

/// Returns a `HELLO` frame for this protocol version.
pub fn good_hello(name: &str) -> Vec<u8> {
    hello_frame(PROTOCOL_VERSION, name)
}

/// Polls `condition` every 10 ms until it holds; fails the test after [`WAIT`].
pub async fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !condition() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting until {what}"
        );
        tokio::time::sleep(ms(10)).await;
    }
}

/// Returns the integer monitor value `name`.
pub fn int(data: &[Field], name: &str) -> i64 {
    match monitor_value(data, name) {
        Some(Value::Int(n)) => *n,
        other => panic!("monitor value `{name}` is {other:?}, not an integer"),
    }
}

/// Returns the map monitor value `name`.
pub fn map<'a>(data: &'a [Field], name: &str) -> &'a [Field] {
    match monitor_value(data, name) {
        Some(Value::Map(fields)) => fields,
        other => panic!("monitor value `{name}` is {other:?}, not a map"),
    }
}

/// Returns the entry of the monitor's `clients` array whose `name` is `client`.
pub fn client_entry<'a>(data: &'a [Field], client: &str) -> &'a [Field] {
    let Some(Value::Array(clients)) = monitor_value(data, "clients") else {
        panic!("monitor data has no `clients` array: {data:?}");
    };
    let mut found = clients.iter().filter_map(|entry| match entry {
        Value::Map(fields) if monitor_value(fields, "name") == Some(&Value::from(client)) => {
            Some(fields.as_slice())
        }
        _ => None,
    });
    let entry = found
        .next()
        .unwrap_or_else(|| panic!("no client named `{client}` in {clients:?}"));
    assert!(found.next().is_none(), "two clients named `{client}`");
    entry
}

/// Returns the `subscriptions` array of a client entry, each a list of fields.
pub fn subscriptions_of(entry: &[Field]) -> Vec<&[Field]> {
    let Some(Value::Array(subscriptions)) = monitor_value(entry, "subscriptions") else {
        panic!("client entry has no `subscriptions` array: {entry:?}");
    };
    subscriptions
        .iter()
        .map(|s| match s {
            Value::Map(fields) => fields.as_slice(),
            other => panic!("subscription entry is {other:?}"),
        })
        .collect()
}

/// Returns the server-wide monitor counter `name` from the server's own monitor.
pub fn server_int(server: &herald_testkit::TestServer, name: &str) -> i64 {
    int(&server.monitor().snapshot(), name)
}

/// Connects a client named `name` to `server`.
pub async fn connect(server: &herald_testkit::TestServer, name: &str) -> Client {
    Client::connect(&format!("{}?name={name}", server.url()))
        .await
        .unwrap_or_else(|err| panic!("client `{name}` connects: {err}"))
}

/// Waits until every record routed to `client`'s subscriptions before this call has been
/// handed to them.
///
/// Why two flushes: the server's writer encodes the first `ACK` and then drains every queue of
/// the connection into the same write, so records routed earlier arrive before or right after
/// that `ACK`. The second `ACK` goes out in a later write, after all of them, and the client
/// handles frames in order. Records are routed before the publisher's own flush returns, so
/// call this after the publisher flushed.
pub async fn settle(client: &Client) {
    client.flush(WAIT).await.unwrap();
    client.flush(WAIT).await.unwrap();
}

/// Returns every event already buffered for `subscription`, without waiting for more.
pub async fn buffered_events(subscription: &mut Subscription) -> Vec<Event> {
    let mut events = Vec::new();
    // Callers settle first, so everything is buffered; the short timeout only ends the loop.
    while let Ok(Some(event)) = tokio::time::timeout(ms(50), subscription.next()).await {
        events.push(event);
    }
    events
}

/// Settles `client`, then returns every event already delivered to `subscription`.
pub async fn take_events(client: &Client, subscription: &mut Subscription) -> Vec<Event> {
    settle(client).await;
    buffered_events(subscription).await
}

/// Returns the records already buffered for `subscription`; fails on a gap notice.
pub async fn buffered_records(subscription: &mut Subscription) -> Vec<Delivered> {
    buffered_events(subscription)
        .await
        .into_iter()
        .map(|event| match event {
            Event::Record(delivered) => {
                assert_eq!(delivered.subscription, subscription.id());
                delivered
            }
            Event::Gap(gap) => panic!("unexpected gap notice {gap:?}"),
            Event::Interrupted(notice) => panic!("unexpected failover {notice:?}"),
        })
        .collect()
}

/// Settles `client`, then returns the records already delivered to `subscription`; fails on
/// a gap notice.
pub async fn take_records(client: &Client, subscription: &mut Subscription) -> Vec<Record> {
    settle(client).await;
    buffered_records(subscription)
        .await
        .into_iter()
        .map(herald_client::Delivered::into_record)
        .collect()
}

/// Returns the texts of `records`, in order.
pub fn texts(records: &[Record]) -> Vec<String> {
    records.iter().map(|r| r.text.clone()).collect()
}

/// A client with a subscription to its own subject, proving that a server still serves
/// well-behaved clients while another connection misbehaves.
pub struct Bystander {
    pub client: Client,
    subscription: Subscription,
    sent: u64,
}

impl Bystander {
    /// Connects and subscribes to `bystander.*`.
    pub async fn connect(server: &herald_testkit::TestServer) -> Bystander {
        let client = connect(server, "bystander").await;
        let subscription = client
            .subscribe(Filter::subject("bystander.*").unwrap())
            .await
            .unwrap();
        Bystander {
            client,
            subscription,
            sent: 0,
        }
    }

    /// Publishes one record to itself and checks that exactly it comes back.
    pub async fn round_trip(&mut self) {
        self.sent += 1;
        let text = format!("still here {}", self.sent);
        self.client
            .publish(&log("bystander.check", Priority::Info, &text))
            .await
            .unwrap();
        let delivered = self.subscription.next_record_timeout(WAIT).await.unwrap();
        assert_eq!(delivered.record().text, text);
        assert_eq!(self.client.error(), None);
    }
}
