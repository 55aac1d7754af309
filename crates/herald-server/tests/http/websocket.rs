//! The browser's WebSockets over real loopback connections: `/ws/records` (filters applied
//! by the router and by the server, bad parameters refused before the upgrade, a browser
//! that does not read losing only its own records, with gap messages) and `/ws/info`
//! (snapshot, then changes).

use futures_util::StreamExt;
use herald_proto::{Origin, Priority, Record};
use herald_router::QueueConfig;
use herald_server::Config;
use serde_json::Value as Json;
use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::*;

pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Opens a WebSocket to `target` and reads its `hello`: once it has come, the server has
/// registered the subscription.
pub async fn open(server: &TestServer, target: &str) -> Ws {
    let url = format!("ws://{}{target}", server.http_addr());
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let hello = next_json(&mut ws).await;
    assert_eq!(hello["type"], "hello", "{hello}");
    assert_eq!(hello["server"], "herald");
    assert!(hello["time_ns"].as_i64().unwrap() > 0);
    ws
}

/// Returns the next text message as JSON, skipping pings.
pub async fn next_json(ws: &mut Ws) -> Json {
    loop {
        let message = tokio::time::timeout(WAIT, ws.next())
            .await
            .expect("a message in time")
            .expect("the socket is open")
            .unwrap();
        match message {
            Message::Text(text) => return serde_json::from_str(&text).unwrap(),
            Message::Ping(_) | Message::Pong(_) => continue,
            other => panic!("unexpected message {other:?}"),
        }
    }
}

/// Reads `records` messages until one holds a record with text `last`; returns the records.
async fn records_until(ws: &mut Ws, last: &str) -> Vec<Json> {
    let mut records = Vec::new();
    loop {
        let message = next_json(ws).await;
        assert_eq!(message["type"], "records", "{message}");
        records.extend(message["records"].as_array().unwrap().iter().cloned());
        if records.last().is_some_and(|r| r["text"] == last) {
            return records;
        }
    }
}

fn log(subject: &str, priority: Priority, text: &str) -> Record {
    Record {
        priority,
        text: text.into(),
        ..Record::new(Kind::Log, subject)
    }
}

fn from(host: &str, process: &str, text: &str) -> Record {
    Record {
        origin: Origin {
            host: host.into(),
            process: process.into(),
            ..Origin::default()
        },
        ..log("PLANT.pump", Priority::Info, text)
    }
}

async fn publish_all(client: &Client, records: &[Record]) {
    for record in records {
        client.publish(record).await.unwrap();
    }
    client.flush(WAIT).await.unwrap();
}

fn texts(records: &[Json]) -> Vec<&str> {
    records
        .iter()
        .map(|r| r["text"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn ws_tail_applies_the_subject_glob_and_priority_set() {
    let server = TestServer::start().await;
    let client = Client::connect(&server.url()).await.unwrap();
    let mut ws = open(
        &server,
        "/ws/records?subject=ANTENNA.*&priority=%3E%3DWARNING",
    )
    .await;
    let mut exact = open(&server, "/ws/records?subject=ANTENNA.*&priority=%7BINFO%7D").await;
    let records = [
        log("ANTENNA.DV01.Mount", Priority::Warning, "a"),
        log("ANTENNA.DV01.Mount", Priority::Info, "too low"),
        log("PLANT.pump", Priority::Error, "other subject"),
        log("ANTENNA.DV02.Mount", Priority::Error, "d"),
        log("ANTENNA.END", Priority::Emergency, "end"),
    ];
    publish_all(&client, &records).await;
    let received = records_until(&mut ws, "end").await;
    assert_eq!(texts(&received), ["a", "d", "end"]);
    let exactly_info = records_until(&mut exact, "too low").await;
    assert_eq!(texts(&exactly_info), ["too low"]);
    let first = &received[0];
    assert_eq!(first["kind"], "log");
    assert_eq!(first["subject"], "ANTENNA.DV01.Mount");
    assert_eq!(first["priority"], "WARNING");
    assert!(first["seq"].as_u64().unwrap() > 0);
    assert!(first["received"].as_str().unwrap().ends_with('Z'));
    assert!(received[1]["seq"].as_u64() > first["seq"].as_u64());
    server.stop().await;
}

#[tokio::test]
async fn ws_tail_applies_host_process_and_text_and_counts_what_they_hold_back() {
    let server = TestServer::start().await;
    let client = Client::connect(&server.url()).await.unwrap();
    let mut ws = open(
        &server,
        "/ws/records?host=vm1&process=pump%5B1%5D&text=fault",
    )
    .await;
    let records = [
        from("vm1", "pump[1]", "valve fault"),
        from("vm2", "pump[1]", "fault elsewhere"),
        from("vm1", "pump[2]", "fault in another process"),
        from("vm1", "pump[1]", "all fine"),
        from("vm1", "pump[1]", "last fault"),
    ];
    publish_all(&client, &records).await;
    let received = records_until(&mut ws, "last fault").await;
    assert_eq!(texts(&received), ["valve fault", "last fault"]);
    assert_eq!(
        received[0]["origin"],
        json!({"host": "vm1", "process": "pump[1]"})
    );

    let monitor = get(&server, "/monitor").await.json();
    let browser = browser_entry(&monitor);
    assert_eq!(browser["filtered"], 3, "{browser}");
    let subscription = &browser["subscriptions"][0];
    assert_eq!(subscription["dropped"], 0);
    assert!(
        subscription["filter"]
            .as_str()
            .unwrap()
            .ends_with("host=vm1 process=pump[1] text=fault"),
        "{subscription}"
    );
    server.stop().await;
}

/// Returns the one browser entry of `/monitor`'s clients.
pub fn browser_entry(monitor: &Json) -> &Json {
    let browsers: Vec<&Json> = monitor["clients"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"].as_str().unwrap().starts_with("browser "))
        .collect();
    assert_eq!(browsers.len(), 1, "{monitor}");
    browsers[0]
}

#[tokio::test]
async fn bad_websocket_parameters_are_refused_before_the_upgrade() {
    let server = TestServer::start().await;
    let cases = [
        ("/ws/records?priority=%3E%3DWARN", "bad_query", "`priority`"),
        ("/ws/records?subject=", "bad_query", "`subject`"),
        ("/ws/records?kinds=logs", "bad_query", "`kinds`"),
        ("/ws/records?colour=red", "bad_query", "`colour`"),
        ("/ws/info?match=%28", "bad_regex", "("),
        ("/ws/info?type=Base%2B%2B", "bad_type_selection", "Base++"),
        ("/ws/info?combine=xor", "bad_query", "xor"),
    ];
    for (target, code, named) in cases {
        let response = get(&server, target).await;
        assert_eq!(response.status, 400, "{target}: {}", response.body);
        let body = response.json();
        assert_eq!(body["code"], code, "{target}: {body}");
        let message = body["error"].as_str().unwrap();
        assert!(message.contains(named), "{target}: {message}");
    }
    // A real WebSocket handshake gets the same answer, not an upgrade.
    let url = format!("ws://{}/ws/records?priority=%3E%3DWARN", server.http_addr());
    let refused = tokio_tungstenite::connect_async(url).await.unwrap_err();
    let tokio_tungstenite::tungstenite::Error::Http(response) = refused else {
        panic!("expected an HTTP answer, got {refused:?}");
    };
    assert_eq!(response.status(), 400);
    let body: Json = serde_json::from_slice(response.body().as_deref().unwrap()).unwrap();
    assert_eq!(body["code"], "bad_query");
    // A good query without the upgrade is refused too.
    let plain = get(&server, "/ws/records?subject=A.*").await;
    assert_eq!(plain.status, 400, "{}", plain.body);
    assert_eq!(plain.json()["code"], "not_websocket");
    server.stop().await;
}

/// Opens `/ws/records` over a socket with a tiny receive buffer, so a test that stops
/// reading fills it (and the server's queue) quickly.
async fn open_small(server: &TestServer, target: &str) -> Ws {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4 * 1024).unwrap();
    let stream = socket.connect(server.http_addr()).await.unwrap();
    let url = format!("ws://{}{target}", server.http_addr());
    let (mut ws, _) = tokio_tungstenite::client_async(url, MaybeTlsStream::Plain(stream))
        .await
        .unwrap();
    assert_eq!(next_json(&mut ws).await["type"], "hello");
    ws
}

#[tokio::test]
async fn a_browser_that_does_not_read_loses_only_its_own_records() {
    const TOTAL: usize = 2_000;
    const CHUNK: usize = 40;
    let config = Config {
        queue: QueueConfig {
            max_records: 64,
            ..Config::default().queue
        },
        ..Config::default()
    };
    let server = TestServer::start_with(config).await;
    let client = Client::connect(&server.url()).await.unwrap();
    let mut native = client
        .subscribe(Filter::subject("LOAD.*").unwrap())
        .await
        .unwrap();
    let mut ws = open_small(&server, "/ws/records?subject=LOAD.*").await;

    // The browser reads nothing meanwhile; the native subscriber keeps up, chunk by chunk.
    let text = "x".repeat(8_000);
    let mut seqs = Vec::new();
    for chunk in 0..TOTAL / CHUNK {
        let records: Vec<Record> = (0..CHUNK)
            .map(|n| {
                log(
                    &format!("LOAD.{}", chunk * CHUNK + n),
                    Priority::Info,
                    &text,
                )
            })
            .collect();
        publish_all(&client, &records).await;
        for _ in 0..CHUNK {
            seqs.push(native.next_record_timeout(WAIT).await.unwrap().seq);
        }
    }
    assert_eq!(seqs.len(), TOTAL);
    assert!(seqs.windows(2).all(|pair| pair[0] < pair[1]));

    let monitor = get(&server, "/monitor").await.json();
    let subscription = &browser_entry(&monitor)["subscriptions"][0];
    let dropped = subscription["dropped"].as_u64().unwrap();
    assert!(dropped > 0, "{subscription}");
    assert_eq!(subscription["drops"]["queue_full"], dropped);
    assert!(
        subscription["depth"].as_u64().unwrap() <= 64,
        "{subscription}"
    );
    assert_eq!(subscription["policy"], "drop-new");

    // Reading again: every record is either delivered or counted in a gap message.
    let (mut delivered, mut lost, mut gaps) = (0, 0, 0);
    while delivered + lost < TOTAL as u64 {
        let message = next_json(&mut ws).await;
        match message["type"].as_str().unwrap() {
            "records" => delivered += message["records"].as_array().unwrap().len() as u64,
            "gap" => {
                gaps += 1;
                let count = message["count"].as_u64().unwrap();
                assert_eq!(message["priorities"], json!({ "INFO": count }));
                assert!(
                    message["first_seq"].as_u64().unwrap() <= message["last_seq"].as_u64().unwrap()
                );
                lost += count;
            }
            other => panic!("unexpected message type {other}"),
        }
    }
    assert!(gaps > 0);
    assert_eq!(lost, dropped);
    assert_eq!(delivered + lost, TOTAL as u64);
    server.stop().await;
}

#[tokio::test]
async fn ws_info_sends_the_snapshot_then_every_change() {
    let (server, _client) = with_types().await;
    assert_eq!(
        put(&server, "RunParams.RunInfo", RUN_INFO).await.status,
        200
    );
    let mut ws = open(&server, "/ws/info?match=RunParams%5C..*&type=Base%2B").await;

    let snapshot = next_json(&mut ws).await;
    let expected: Json = serde_json::from_str(RUN_INFO_JSON).unwrap();
    assert_eq!(
        snapshot,
        json!({"type": "info", "changes": [{"reason": "snapshot", "object": expected}]})
    );
    let update = r#"{"attributes": {"run": 43}}"#;
    assert_eq!(put(&server, "RunParams.RunInfo", update).await.status, 200);
    assert_eq!(
        put(
            &server,
            "Other.Thing",
            r#"{"type": "Other", "attributes": {"x": 1}}"#
        )
        .await
        .status,
        200
    );
    assert_eq!(delete(&server, "RunParams.RunInfo").await.status, 200);

    let mut changes = Vec::new();
    while changes.len() < 2 {
        let message = next_json(&mut ws).await;
        assert_eq!(message["type"], "info", "{message}");
        changes.extend(message["changes"].as_array().unwrap().iter().cloned());
    }
    assert_eq!(changes.len(), 2, "{changes:?}");
    assert_eq!(changes[0]["reason"], "updated");
    assert_eq!(changes[0]["object"]["version"], 2);
    assert_eq!(changes[0]["object"]["attributes"]["run"], 43);
    assert_eq!(changes[1]["reason"], "deleted");
    assert_eq!(changes[1]["object"]["version"], 3);

    let monitor = get(&server, "/monitor").await.json();
    let subscription = &browser_entry(&monitor)["subscriptions"][0];
    assert_eq!(
        subscription["filter"],
        r"info match=RunParams\..* type=Base+"
    );
    server.stop().await;
}
