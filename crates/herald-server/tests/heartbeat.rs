//! Heartbeats both ways: the server closes a client that went silent, and the client gives up
//! on a server that went silent. Short intervals keep every test well under a second or two.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::{ms, wait_until, Bystander};
use herald_client::{Client, ClientError, ClientOptions};
use herald_proto::frame::{Welcome, PROTOCOL_VERSION};
use herald_proto::frame_buffer::FrameBuffer;
use herald_proto::{ErrorCode, ErrorFrame, Filter, Frame, Kind, Record};
use herald_server::events::CloseReason;
use herald_server::Config;
use herald_testkit::{RawConnection, TestServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio::time::Instant;

fn fast_heartbeats() -> Config {
    Config {
        heartbeat_interval: ms(100),
        heartbeat_timeout: ms(400),
        ..Config::default()
    }
}

#[tokio::test]
async fn the_server_closes_a_client_that_sends_nothing() {
    let server = TestServer::start_with(fast_heartbeats()).await;
    let mut bystander = Bystander::connect(&server).await;
    let mut silent = RawConnection::handshake(server.addr(), "silent").await;
    let started = Instant::now();
    let mut pings = 0;
    let mut errors = Vec::new();
    // Read everything, answer nothing: not even the server's PINGs.
    while let Some(frame) = silent.next_raw().await.unwrap() {
        match Frame::decode(frame).unwrap() {
            Frame::Ping => pings += 1,
            Frame::Error(error) => errors.push(error),
            other => panic!("unexpected {other:?}"),
        }
    }
    let elapsed = started.elapsed();
    assert_eq!(
        errors,
        [ErrorFrame {
            cid: 0,
            code: ErrorCode::HeartbeatTimeout,
            message: "no frame from the client for 400 ms".into(),
        }]
    );
    assert!(
        elapsed >= ms(400) && elapsed < ms(1000),
        "closed after {elapsed:?}"
    );
    assert!(pings >= 2, "the server pinged every 100 ms, got {pings}");
    wait_until("the close is counted", || {
        server.monitor().closes(CloseReason::HeartbeatTimeout) == 1
    })
    .await;
    // The bystander pings only every second, but answers the server's PINGs, so it is alive.
    bystander.round_trip().await;
    assert_eq!(server.monitor().closes(CloseReason::HeartbeatTimeout), 1);
    server.stop().await;
}

#[tokio::test]
async fn a_client_that_answers_pings_stays_connected() {
    let server = TestServer::start_with(fast_heartbeats()).await;
    let mut raw = RawConnection::handshake(server.addr(), "polite").await;
    let until = Instant::now() + ms(900);
    let mut pongs = 0;
    while Instant::now() < until {
        let Ok(frame) = tokio::time::timeout_at(until, raw.next_raw()).await else {
            break;
        };
        let frame = frame
            .unwrap()
            .expect("the server keeps the connection open");
        assert_eq!(Frame::decode(frame).unwrap(), Frame::Ping);
        raw.send(&Frame::Pong).await;
        pongs += 1;
    }
    assert!(pongs >= 4, "answered {pongs} PINGs in 900 ms");
    raw.send(&Frame::Ping).await;
    assert_eq!(raw.next_frame().await, Some(Frame::Pong));
    assert_eq!(server.monitor().closes(CloseReason::HeartbeatTimeout), 0);
    server.stop().await;
}

#[tokio::test]
async fn the_server_closes_a_connection_that_never_says_hello() {
    let config = Config {
        handshake_timeout: ms(200),
        ..Config::default()
    };
    let server = TestServer::start_with(config).await;
    let mut raw = RawConnection::connect(server.addr()).await;
    let started = Instant::now();
    let errors = raw.errors_until_close().await;
    assert_eq!(
        errors,
        [ErrorFrame {
            cid: 0,
            code: ErrorCode::Handshake,
            message: "no HELLO within 200 ms".into(),
        }]
    );
    assert!(started.elapsed() < ms(1000), "{:?}", started.elapsed());
    wait_until("the close is counted", || {
        server.monitor().closes(CloseReason::HandshakeTimeout) == 1
    })
    .await;
    server.stop().await;
}

/// How the fake server behaves after `WELCOME`.
#[derive(Clone, Copy)]
struct Fake {
    /// Answer `SUBSCRIBE` with `OK`, so the client gets a subscription.
    answer_subscribe: bool,
    /// Answer `PING` with `PONG`.
    answer_ping: bool,
}

/// A fake server on a free loopback port: it answers `HELLO` with `WELCOME`, then only what
/// `fake` allows. It keeps reading, so the client's writes never fail.
async fn fake_server(fake: Fake) -> (SocketAddr, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut buffer = FrameBuffer::new(1 << 20);
        loop {
            while let Some(frame) = buffer.next_frame().unwrap() {
                let answer = match Frame::decode(frame).unwrap() {
                    Frame::Hello(_) => Some(Frame::Welcome(Welcome {
                        version: PROTOCOL_VERSION,
                        server: "fake".into(),
                        heartbeat_ms: 100,
                        max_frame_bytes: 1 << 20,
                        connection: 1,
                    })),
                    Frame::Subscribe(subscribe) if fake.answer_subscribe => {
                        Some(Frame::Ok { cid: subscribe.cid })
                    }
                    Frame::Ping if fake.answer_ping => Some(Frame::Pong),
                    _ => None,
                };
                if let Some(answer) = answer {
                    stream.write_all(&answer.to_bytes()).await.unwrap();
                }
            }
            match stream.read_buf(buffer.spare()).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    });
    (addr, task)
}

/// A client that detects silence fast and, to see the error itself, does not fail over
/// (failover after heartbeat loss is tested in the client's failover tests).
fn fast_client() -> ClientOptions {
    ClientOptions {
        name: "heartbeat-test".into(),
        heartbeat_interval: ms(100),
        heartbeat_timeout: ms(400),
        reconnect_timeout: Duration::ZERO,
        ..ClientOptions::default()
    }
}

async fn connect_fast(addr: SocketAddr) -> Client {
    Client::connect_with(&format!("herald://{addr}"), fast_client())
        .await
        .unwrap()
}

#[tokio::test]
async fn the_client_gives_up_on_a_silent_server() {
    let (addr, fake) = fake_server(Fake {
        answer_subscribe: true,
        answer_ping: false,
    })
    .await;
    let client = connect_fast(addr).await;
    let started = Instant::now();
    let mut subscription = client
        .subscribe(Filter::subject("anything.*").unwrap())
        .await
        .unwrap();
    let flushing = {
        let client = client.clone();
        tokio::spawn(async move { client.flush(common::WAIT).await })
    };
    let end = tokio::time::timeout(ms(1000), subscription.next())
        .await
        .expect("the subscription ends within a second");
    assert_eq!(end, None, "the stream ends instead of delivering");
    let elapsed = started.elapsed();
    assert!(elapsed >= ms(400), "gave up after only {elapsed:?}");
    let expected = ClientError::HeartbeatTimeout(ms(400));
    assert_eq!(client.error(), Some(expected.clone()));
    assert_eq!(
        expected.to_string(),
        "server silent for 400 ms (heartbeat timeout); connection closed"
    );
    assert_eq!(
        flushing.await.unwrap(),
        Err(expected.clone()),
        "the pending flush fails with the same error"
    );
    let record = Record::new(Kind::Log, "after.timeout");
    assert_eq!(client.publish(&record).await, Err(expected.clone()));
    assert_eq!(client.flush(ms(100)).await, Err(expected));
    drop((client, subscription));
    tokio::time::timeout(ms(1000), fake)
        .await
        .expect("the client closed its socket")
        .unwrap();
}

#[tokio::test]
async fn a_pending_subscribe_fails_when_the_server_goes_silent() {
    let (addr, _fake) = fake_server(Fake {
        answer_subscribe: false,
        answer_ping: false,
    })
    .await;
    let client = connect_fast(addr).await;
    let result = tokio::time::timeout(
        ms(1000),
        client.subscribe(Filter::subject("anything.*").unwrap()),
    )
    .await
    .expect("the subscribe ends within a second");
    assert_eq!(result.unwrap_err(), ClientError::HeartbeatTimeout(ms(400)));
}

#[tokio::test]
async fn the_client_stays_connected_to_a_server_that_answers_pings() {
    let (addr, _fake) = fake_server(Fake {
        answer_subscribe: true,
        answer_ping: true,
    })
    .await;
    let client = connect_fast(addr).await;
    let mut subscription = client
        .subscribe(Filter::subject("anything.*").unwrap())
        .await
        .unwrap();
    let waited = tokio::time::timeout(ms(900), subscription.next()).await;
    assert!(waited.is_err(), "still open, nothing delivered: {waited:?}");
    assert_eq!(client.error(), None);
}

#[tokio::test]
async fn a_client_with_fast_heartbeats_keeps_a_real_server_connection() {
    let server = TestServer::start_with(fast_heartbeats()).await;
    let client = Client::connect_with(&server.url(), fast_client())
        .await
        .unwrap();
    let mut subscription = client
        .subscribe(Filter::subject("hb.*").unwrap())
        .await
        .unwrap();
    tokio::time::sleep(ms(900)).await;
    assert_eq!(client.error(), None);
    client
        .publish(&Record::new(Kind::Log, "hb.alive"))
        .await
        .unwrap();
    let delivered = subscription
        .next_record_timeout(common::WAIT)
        .await
        .unwrap();
    assert_eq!(delivered.subject(), "hb.alive");
    assert_eq!(server.monitor().closes(CloseReason::HeartbeatTimeout), 0);
    server.stop().await;
}
