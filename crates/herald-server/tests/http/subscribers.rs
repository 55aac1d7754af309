//! Changes made over HTTP reach subscribers of the native protocol, and the HTTP server
//! stops with the server.

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;

#[tokio::test]
async fn a_put_over_http_reaches_info_and_ordinary_subscribers() {
    let (server, client) = with_types().await;
    let selection = SelectionData {
        name_regex: Some(r"RunParams\..*".into()),
        types: Some("Base+".into()),
        any: false,
    };
    let mut info = client.subscribe_info(selection).await.unwrap();
    let mut records = client
        .subscribe(Filter::subject("RunParams.RunInfo").unwrap())
        .await
        .unwrap();

    assert_eq!(
        put(&server, "RunParams.RunInfo", RUN_INFO).await.status,
        200
    );
    let update = r#"{"attributes": {"run": 43}}"#;
    assert_eq!(put(&server, "RunParams.RunInfo", update).await.status, 200);
    assert_eq!(delete(&server, "RunParams.RunInfo").await.status, 200);

    let mut changes = Vec::new();
    for _ in 0..3 {
        let delivered = info.next_record_timeout(WAIT).await.unwrap();
        let change = InfoChange::from_delivered(&delivered).expect("an info record");
        let run = change.object.attributes[1].1.clone();
        changes.push((change.reason, change.object.version, run));
    }
    assert_eq!(
        changes,
        [
            ("created".to_string(), 1, Value::Int(42)),
            ("updated".to_string(), 2, Value::Int(43)),
            ("deleted".to_string(), 3, Value::Int(43)),
        ]
    );
    let first = records.next_record_timeout(WAIT).await.unwrap();
    assert_eq!(first.kind(), Kind::Info);
    assert_eq!(first.record().subject, "RunParams.RunInfo");
    assert_eq!(first.record().text, "created");
    assert_eq!(first.record().time, 1_763_604_000_123_000_000);
    server.stop().await;
}

#[tokio::test]
async fn shutdown_closes_idle_and_half_sent_http_connections() {
    let server = TestServer::start().await;
    // A kept-alive connection after one answer, and one that never finishes its request.
    let mut idle = tokio::net::TcpStream::connect(server.http_addr())
        .await
        .unwrap();
    idle.write_all(b"GET /info HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut answer = [0; 1024];
    let read = idle.read(&mut answer).await.unwrap();
    assert!(answer[..read].starts_with(b"HTTP/1.1 200 OK"));
    let mut half = tokio::net::TcpStream::connect(server.http_addr())
        .await
        .unwrap();
    half.write_all(b"GET /info HTTP/1.1\r\nHo").await.unwrap();
    // Let the server read the half request, so shutdown has a request in flight that never
    // ends: it waits the grace period (5 s), then cuts the connection.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let http = server.http_addr();

    let started = std::time::Instant::now();
    tokio::time::timeout(Duration::from_secs(7), server.stop())
        .await
        .expect("shutdown is bounded");
    assert!(started.elapsed() < Duration::from_secs(7));
    assert_eq!(
        idle.read(&mut answer).await.unwrap_or(0),
        0,
        "idle connection closed"
    );
    let cut = tokio::time::timeout(WAIT, half.read(&mut answer)).await;
    assert_eq!(
        cut.expect("cut").unwrap_or(0),
        0,
        "the stuck request is cut"
    );
    assert!(
        tokio::net::TcpStream::connect(http).await.is_err(),
        "no longer accepting"
    );
}
