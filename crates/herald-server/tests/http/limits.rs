//! The HTTP front door's limits: a deadline for each request's head (silent, slow and idle
//! connections are closed) and connections in all and per address, each counted in the
//! monitor.

use super::*;

use std::time::Instant;

use herald_server::config::HttpLimits;
use herald_server::Config;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A server with `limits`, and a native client to read its monitor without opening an HTTP
/// connection.
async fn server_with(limits: HttpLimits) -> (TestServer, Client) {
    let server = TestServer::start_with(Config {
        http_limits: limits,
        ..Config::default()
    })
    .await;
    let client = Client::connect(&server.url()).await.unwrap();
    (server, client)
}

fn short_deadline() -> HttpLimits {
    HttpLimits {
        header_timeout: Duration::from_millis(300),
        ..HttpLimits::default()
    }
}

async fn http_counter(client: &Client, name: &str) -> i64 {
    let snapshot = client.monitor().await.unwrap();
    let Some((_, Value::Map(http))) = snapshot.iter().find(|(n, _)| n == "http") else {
        panic!("no `http` in the monitor");
    };
    match http.iter().find(|(n, _)| n == name) {
        Some((_, Value::Int(value))) => *value,
        other => panic!("no `http.{name}`: {other:?}"),
    }
}

/// Reads until the server closes; returns what it sent and how long that took.
async fn until_closed(stream: &mut TcpStream) -> (String, Duration) {
    let started = Instant::now();
    let mut answer = Vec::new();
    tokio::time::timeout(WAIT, stream.read_to_end(&mut answer))
        .await
        .expect("the server closes the connection")
        .ok();
    (
        String::from_utf8_lossy(&answer).into_owned(),
        started.elapsed(),
    )
}

#[tokio::test]
async fn a_connection_that_never_sends_is_closed_after_the_deadline() {
    let (server, client) = server_with(short_deadline()).await;
    let mut silent = TcpStream::connect(server.http_addr()).await.unwrap();
    let (answer, took) = until_closed(&mut silent).await;
    assert!(took >= Duration::from_millis(250), "closed after {took:?}");
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "{answer}"
    );
    assert_eq!(http_counter(&client, "header_timeouts").await, 1);
    assert_eq!(
        get(&server, "/monitor").await.status,
        200,
        "others are served"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_head_sent_a_byte_at_a_time_is_cut_off_at_the_deadline() {
    let (server, client) = server_with(short_deadline()).await;
    let mut slow = TcpStream::connect(server.http_addr()).await.unwrap();
    let started = Instant::now();
    let head =
        b"GET /monitor HTTP/1.1\r\nHost: x\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
    let mut closed = false;
    for byte in head {
        if slow.write_all(&[*byte]).await.is_err() {
            closed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        if started.elapsed() > Duration::from_secs(3) {
            break;
        }
    }
    if !closed {
        let (answer, _) = until_closed(&mut slow).await;
        assert!(!answer.contains("200 OK"), "{answer}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "cut off in time"
    );
    wait_for(&client, "header_timeouts", 1).await;
    server.stop().await;
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed_after_the_deadline() {
    let (server, client) = server_with(short_deadline()).await;
    let mut stream = TcpStream::connect(server.http_addr()).await.unwrap();
    stream
        .write_all(b"GET /monitor HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let (answer, _) = until_closed(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    wait_for(&client, "header_timeouts", 1).await;
    server.stop().await;
}

#[tokio::test]
async fn connections_over_the_per_address_limit_get_a_503_naming_it() {
    let (server, client) = server_with(HttpLimits {
        max_connections_per_address: 2,
        ..HttpLimits::default()
    })
    .await;
    let first = TcpStream::connect(server.http_addr()).await.unwrap();
    let _second = TcpStream::connect(server.http_addr()).await.unwrap();
    wait_for(&client, "connections", 2).await;
    let mut third = TcpStream::connect(server.http_addr()).await.unwrap();
    let (answer, _) = until_closed(&mut third).await;
    assert!(
        answer.starts_with("HTTP/1.1 503 Service Unavailable"),
        "{answer}"
    );
    assert!(
        answer.ends_with(
            r#"{"code":"limit","error":"too many connections from 127.0.0.1 (limit 2 per address)"}"#
        ),
        "{answer}"
    );
    assert_eq!(http_counter(&client, "refused").await, 1);
    drop(first);
    wait_for(&client, "connections", 1).await;
    assert_eq!(
        get(&server, "/monitor").await.status,
        200,
        "a place came free"
    );
    server.stop().await;
}

/// Waits until the monitor's `http.{name}` is `value`.
async fn wait_for(client: &Client, name: &str, value: i64) {
    let deadline = Instant::now() + WAIT;
    while http_counter(client, name).await != value {
        assert!(
            Instant::now() < deadline,
            "http.{name} never became {value}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
