//! Bad input that ends a connection — lost framing, a broken handshake, frames that are no
//! request: each gets an `ERROR` frame naming the problem and the value, closes only the
//! offending connection (counted by reason in the monitor), and a client that was already
//! connected keeps publishing and receiving. Also the client's own typed errors. Bad
//! requests that are answered alone are in `refused_requests.rs`.

mod common;

use common::{good_hello, hello_frame, log, publish_frame, raw_frame, wait_until, Bystander, WAIT};
use herald_client::{Client, ClientError, ConnectError, UrlError};
use herald_proto::frame::{FrameType, GapNotice};
use herald_proto::{AckLevel, ErrorCode, ErrorFrame, Filter, Frame, Priority, Record};
use herald_server::events::CloseReason;
use herald_server::Config;
use herald_testkit::{RawConnection, TestServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// One bad input and what the server must answer.
struct Case {
    /// Whether the bytes follow a completed handshake.
    after_handshake: bool,
    bytes: Vec<u8>,
    code: ErrorCode,
    message: String,
    reason: CloseReason,
}

impl Case {
    fn new(bytes: Vec<u8>, code: ErrorCode, message: &str) -> Case {
        Case {
            after_handshake: true,
            bytes,
            code,
            message: message.to_string(),
            reason: CloseReason::ProtocolError,
        }
    }

    fn before_handshake(self) -> Case {
        Case {
            after_handshake: false,
            ..self
        }
    }
}

/// The largest frame the test servers accept, small so an oversized prefix is cheap.
const MAX_FRAME_BYTES: u32 = 4096;

async fn start_server() -> TestServer {
    TestServer::start_with(Config {
        max_frame_bytes: MAX_FRAME_BYTES,
        ..Config::default()
    })
    .await
}

/// Runs `case` against its own server with a bystander connected throughout.
async fn rejects(case: Case) {
    let server = start_server().await;
    let mut bystander = Bystander::connect(&server).await;
    bystander.round_trip().await;
    check(&server, &case, 1).await;
    bystander.round_trip().await;
    assert_eq!(
        common::server_int(&server, "records_in"),
        2,
        "only the bystander's records were routed"
    );
    server.stop().await;
}

/// Sends `case` on a new connection and checks the answer, the close, and that this is the
/// `nth` close and rejected frame of this server.
async fn check(server: &TestServer, case: &Case, nth: u64) {
    let mut raw = if case.after_handshake {
        RawConnection::handshake(server.addr(), "offender").await
    } else {
        RawConnection::connect(server.addr()).await
    };
    let closes_before = server.monitor().closes(case.reason);
    raw.send_bytes(&case.bytes).await;
    let errors = raw.errors_until_close().await;
    let expected = ErrorFrame {
        cid: 0,
        code: case.code,
        message: case.message.clone(),
    };
    assert_eq!(errors, [expected], "one ERROR, then the server closed");
    wait_until("the close is counted", || {
        server.monitor().closes(case.reason) == closes_before + 1
    })
    .await;
    let total_closes: u64 = CloseReason::ALL
        .iter()
        .map(|reason| server.monitor().closes(*reason))
        .sum();
    assert_eq!(total_closes, nth, "only the offending connection closed");
    let rejected = common::server_int(server, "rejected_frames");
    assert_eq!(rejected, nth as i64);
}

fn good_record() -> Record {
    log("bystander.smuggled", Priority::Info, "must not be routed")
}

fn malformed_publish_body() -> Case {
    Case::new(
        raw_frame(FrameType::Publish as u8, b"not msgpack"),
        ErrorCode::BadFrame,
        "malformed PUBLISH frame: expected an array at byte 0, found an integer",
    )
}

fn oversized_frame() -> Case {
    Case {
        reason: CloseReason::FrameTooLarge,
        ..Case::new(
            (MAX_FRAME_BYTES + 1).to_be_bytes().to_vec(),
            ErrorCode::FrameTooLarge,
            "frame of 4097 bytes exceeds the maximum of 4096 bytes",
        )
    }
}

fn oversized_first_frame() -> Case {
    Case {
        reason: CloseReason::FrameTooLarge,
        ..Case::new(
            u32::MAX.to_be_bytes().to_vec(),
            ErrorCode::FrameTooLarge,
            "frame of 4294967295 bytes exceeds the maximum of 4096 bytes",
        )
        .before_handshake()
    }
}

fn empty_frame() -> Case {
    Case::new(
        vec![0, 0, 0, 0],
        ErrorCode::BadFrame,
        "empty frame: a frame has at least its type byte",
    )
}

/// An unknown type with no body: there is no cid to answer, so it closes.
fn unknown_frame_type() -> Case {
    Case::new(
        raw_frame(0x55, &[]),
        ErrorCode::BadFrame,
        "unknown frame type 0x55",
    )
}

fn publish_before_hello() -> Case {
    Case::new(
        publish_frame(&[good_record()], 0, AckLevel::None),
        ErrorCode::Handshake,
        "expected HELLO as the first frame, got PUBLISH",
    )
    .before_handshake()
}

fn wrong_protocol_version() -> Case {
    Case::new(
        hello_frame(2, "from the future"),
        ErrorCode::Version,
        "unsupported protocol version 2 (this server speaks 1)",
    )
    .before_handshake()
}

fn bytes_after_a_ping() -> Case {
    Case::new(
        raw_frame(FrameType::Ping as u8, &[0xc0]),
        ErrorCode::BadFrame,
        "malformed PING frame: 1 unexpected bytes after the end of the PING frame",
    )
}

fn hello_twice() -> Case {
    Case::new(
        good_hello("again"),
        ErrorCode::Handshake,
        "HELLO sent twice",
    )
}

fn deliver_from_the_client() -> Case {
    Case::new(
        Frame::Deliver(Vec::new()).to_bytes(),
        ErrorCode::BadFrame,
        "DELIVER frames go from server to client, not back",
    )
}

fn gap_from_the_client() -> Case {
    Case::new(
        Frame::Gap(GapNotice::default()).to_bytes(),
        ErrorCode::BadFrame,
        "GAP frames go from server to client, not back",
    )
}

fn members_from_a_client() -> Case {
    Case::new(
        Frame::Members(herald_proto::route::Members::default()).to_bytes(),
        ErrorCode::BadFrame,
        "MEMBERS is spoken between cluster members on the route port, not by clients",
    )
}

fn route_auth_from_a_client() -> Case {
    Case::new(
        Frame::RouteAuth(vec![0; 32]).to_bytes(),
        ErrorCode::BadFrame,
        "ROUTE_AUTH is spoken between cluster members on the route port, not by clients",
    )
}

fn ack_from_the_client() -> Case {
    let ack = herald_proto::frame::Ack {
        ack_id: 1,
        level: AckLevel::Received,
        count: 1,
    };
    Case::new(
        Frame::Ack(ack).to_bytes(),
        ErrorCode::BadFrame,
        "ACK frames go from server to client, not back",
    )
}

#[tokio::test]
async fn malformed_frame_body() {
    rejects(malformed_publish_body()).await;
}

#[tokio::test]
async fn oversized_frame_after_handshake() {
    rejects(oversized_frame()).await;
}

#[tokio::test]
async fn oversized_frame_before_handshake() {
    rejects(oversized_first_frame()).await;
}

#[tokio::test]
async fn zero_length_frame() {
    rejects(empty_frame()).await;
}

#[tokio::test]
async fn unknown_frame_type_byte() {
    rejects(unknown_frame_type()).await;
}

#[tokio::test]
async fn frame_before_the_handshake() {
    rejects(publish_before_hello()).await;
}

#[tokio::test]
async fn http_request_on_the_native_port_gets_an_http_answer() {
    let server = start_server().await;
    let mut bystander = Bystander::connect(&server).await;
    let mut stream = TcpStream::connect(server.addr()).await.unwrap();
    stream
        .write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1:7400\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(WAIT, stream.read_to_end(&mut answer))
        .await
        .expect("the server answers and closes")
        .unwrap();
    let answer = String::from_utf8(answer).expect("a text answer");
    let body = "this is Herald's native protocol port; it received an HTTP request; \
                connect with a Herald client (herald://host:port)\n";
    assert_eq!(
        answer,
        format!(
            "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    );
    wait_until("the close is counted", || {
        server.monitor().closes(CloseReason::ProtocolError) == 1
    })
    .await;
    bystander.round_trip().await;
    server.stop().await;
}

#[tokio::test]
async fn hello_with_another_protocol_version() {
    rejects(wrong_protocol_version()).await;
}

#[tokio::test]
async fn ping_with_a_body() {
    rejects(bytes_after_a_ping()).await;
}

#[tokio::test]
async fn second_hello() {
    rejects(hello_twice()).await;
}

#[tokio::test]
async fn deliver_sent_by_the_client() {
    rejects(deliver_from_the_client()).await;
}

#[tokio::test]
async fn gap_sent_by_the_client() {
    rejects(gap_from_the_client()).await;
}

#[tokio::test]
async fn ack_sent_by_the_client() {
    rejects(ack_from_the_client()).await;
}

#[tokio::test]
async fn one_server_survives_every_bad_input_in_turn() {
    let server = start_server().await;
    let mut bystander = Bystander::connect(&server).await;
    let cases = [
        malformed_publish_body(),
        oversized_frame(),
        oversized_first_frame(),
        empty_frame(),
        unknown_frame_type(),
        publish_before_hello(),
        wrong_protocol_version(),
        bytes_after_a_ping(),
        hello_twice(),
        deliver_from_the_client(),
        gap_from_the_client(),
        ack_from_the_client(),
        members_from_a_client(),
        route_auth_from_a_client(),
    ];
    for (index, case) in cases.iter().enumerate() {
        check(&server, case, index as u64 + 1).await;
        bystander.round_trip().await;
    }
    let closes = |reason| server.monitor().closes(reason);
    assert_eq!(closes(CloseReason::FrameTooLarge), 2);
    assert_eq!(closes(CloseReason::ProtocolError), cases.len() as u64 - 2);
    assert_eq!(closes(CloseReason::ClientClosed), 0);
    let snapshot = server.monitor().snapshot();
    assert_eq!(common::int(&snapshot, "connections"), 1, "the bystander");
    assert_eq!(common::int(&snapshot, "subscriptions"), 1);
    assert_eq!(
        common::int(&snapshot, "records_in"),
        cases.len() as i64,
        "one per bystander round trip, none from the offenders"
    );
    assert_eq!(
        common::int(common::map(&snapshot, "closes"), "protocol_error"),
        cases.len() as i64 - 2
    );
    server.stop().await;
}

#[tokio::test]
async fn a_frame_cut_short_by_the_client_closing_is_a_counted_protocol_error() {
    let server = start_server().await;
    let mut bystander = Bystander::connect(&server).await;
    let mut stream = TcpStream::connect(server.addr()).await.unwrap();
    stream.write_all(&good_hello("cut-short")).await.unwrap();
    let mut welcome = [0u8; 4];
    stream.read_exact(&mut welcome).await.unwrap();
    let length = u32::from_be_bytes(welcome) as usize;
    let mut rest = vec![0u8; length];
    stream.read_exact(&mut rest).await.unwrap();
    assert_eq!(rest[0], FrameType::Welcome as u8);
    // The prefix promises 100 bytes; 3 come, then the client stops sending.
    stream
        .write_all(&[0, 0, 0, 100, 0x10, 0x93, 0x00])
        .await
        .unwrap();
    stream.shutdown().await.unwrap();
    let mut after = Vec::new();
    tokio::time::timeout(WAIT, stream.read_to_end(&mut after))
        .await
        .expect("the server closes")
        .unwrap();
    // The client only shut its sending side, so it still hears why (after any heartbeats).
    let error = Frame::Error(ErrorFrame {
        cid: 0,
        code: ErrorCode::BadFrame,
        message: "connection closed in the middle of a frame (7 bytes pending)".into(),
    })
    .to_bytes();
    assert!(after.ends_with(&error), "{after:?}");
    wait_until("the close is counted", || {
        server.monitor().closes(CloseReason::ProtocolError) == 1
    })
    .await;
    assert_eq!(common::server_int(&server, "rejected_frames"), 1);
    bystander.round_trip().await;
    server.stop().await;
}

#[tokio::test]
async fn an_error_frame_from_the_client_closes_its_connection_quietly() {
    let server = start_server().await;
    let mut bystander = Bystander::connect(&server).await;
    let mut raw = RawConnection::handshake(server.addr(), "giving-up").await;
    raw.send(&Frame::Error(ErrorFrame {
        cid: 0,
        code: ErrorCode::Other,
        message: "client is leaving".into(),
    }))
    .await;
    assert!(raw.errors_until_close().await.is_empty());
    wait_until("the close is counted", || {
        server.monitor().closes(CloseReason::ClientClosed) == 1
    })
    .await;
    bystander.round_trip().await;
    server.stop().await;
}

#[tokio::test]
async fn connections_over_the_per_address_limit_are_refused_naming_the_address() {
    let server = TestServer::start_with(Config {
        max_connections_per_address: 2,
        ..Config::default()
    })
    .await;
    let mut bystander = Bystander::connect(&server).await;
    let second = Client::connect(&server.url()).await.unwrap();
    let err = Client::connect(&server.url()).await.unwrap_err();
    let ConnectError::Refused { code, message, .. } = &err else {
        panic!("expected a refusal, got {err}");
    };
    assert_eq!(*code, ErrorCode::Limit);
    assert_eq!(
        message,
        "too many connections from 127.0.0.1 (limit 2 per address)"
    );
    wait_until("the refusal is counted", || {
        server.monitor().closes(CloseReason::TooManyConnections) == 1
    })
    .await;
    second.close(WAIT).await.unwrap();
    // Its place is free again once the server has seen it go.
    let deadline = tokio::time::Instant::now() + WAIT;
    let third = loop {
        match Client::connect(&server.url()).await {
            Ok(client) => break client,
            Err(err) if tokio::time::Instant::now() < deadline => {
                assert!(err.to_string().contains("per address"), "{err}");
                tokio::time::sleep(common::ms(20)).await;
            }
            Err(err) => panic!("the place never came free: {err}"),
        }
    };
    bystander.round_trip().await;
    drop(third);
    server.stop().await;
}

#[tokio::test]
async fn connections_over_the_limit_are_refused_with_the_limit() {
    let server = TestServer::start_with(Config {
        max_connections: 1,
        ..Config::default()
    })
    .await;
    let mut bystander = Bystander::connect(&server).await;
    for attempt in 1..=3 {
        let err = Client::connect(&server.url()).await.unwrap_err();
        let ConnectError::Refused {
            server: refused_by,
            code,
            message,
        } = &err
        else {
            panic!("attempt {attempt}: expected a refusal, got {err}");
        };
        assert_eq!(refused_by, &server.addr().to_string());
        assert_eq!(*code, ErrorCode::Limit);
        assert_eq!(message, "too many connections (limit 1)");
        assert_eq!(
            err.to_string(),
            format!(
                "server {} refused the connection: too many connections (limit 1) (limit)",
                server.addr()
            )
        );
        wait_until("the refusal is counted", || {
            server.monitor().closes(CloseReason::TooManyConnections) == attempt
        })
        .await;
        bystander.round_trip().await;
    }
    server.stop().await;
}

#[tokio::test]
async fn bad_urls_are_connect_errors_naming_the_url() {
    for (url, reason) in [
        (
            "http://x",
            "scheme `http` is not herald:// or herald+tls://",
        ),
        ("herald://x:port", "bad port `port` in `x:port`"),
        ("herald://x:0", "bad port `0` in `x:0`"),
        ("herald://", "no server named (expected herald://host:port)"),
        ("herald://a,,b", "empty server between commas"),
        (
            "herald://x?nmae=me",
            "unknown option `nmae` (expected name, token, ca, cert or key)",
        ),
        (
            "herald://::1:7400",
            "IPv6 address `::1:7400` needs brackets, as in [::1]:7400",
        ),
    ] {
        let err = Client::connect(url).await.unwrap_err();
        let ConnectError::Url(url_error) = &err else {
            panic!("{url}: expected a URL error, got {err}");
        };
        assert_eq!(
            url_error,
            &UrlError {
                url: url.into(),
                reason: reason.into(),
            }
        );
        assert_eq!(err.to_string(), format!("bad server URL `{url}`: {reason}"));
    }
}

#[tokio::test]
async fn an_address_nobody_listens_on_is_unreachable() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let err = Client::connect(&format!("herald://{addr}"))
        .await
        .unwrap_err();
    let ConnectError::Unreachable { attempts } = &err else {
        panic!("expected unreachable, got {err}");
    };
    assert_eq!(attempts.len(), 1, "{attempts:?}");
    assert!(
        attempts[0].starts_with(&format!("{addr}: ")),
        "{attempts:?}"
    );
    assert!(
        err.to_string()
            .starts_with(&format!("no server could be reached: {addr}: ")),
        "{err}"
    );
}

#[test]
fn a_bad_priority_set_names_the_value() {
    let err = Filter::parse(None, None, Some(">=WARN"), &[], None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown priority `WARN` (expected one of TRACE, DELOUSE, DEBUG, INFO, NOTICE, WARNING, \
         ERROR, CRITICAL, ALERT, EMERGENCY or 1..11 without 7)"
    );
    let err = Filter::parse(None, None, Some("ERROR..DEBUG"), &[], None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "priority set `ERROR..DEBUG` selects no priority"
    );
    let err = Filter::parse(None, None, None, &[], Some("logs")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown kind `logs` (expected log, message or info)"
    );
}

#[tokio::test]
async fn publishing_an_unroutable_record_fails_locally_and_sends_nothing() {
    let server = start_server().await;
    let mut bystander = Bystander::connect(&server).await;
    let client = &bystander.client;
    let cases = [
        (
            log("ANTENNA.*", Priority::Error, "which antenna?"),
            "subject `ANTENNA.*` contains `*` (subjects may not hold wildcards or control \
             characters)",
        ),
        (
            log("ANTENNA.DV0?", Priority::Error, "which antenna?"),
            "subject `ANTENNA.DV0?` contains `?` (subjects may not hold wildcards or control \
             characters)",
        ),
        (
            log("", Priority::Error, "about nothing"),
            "subject is empty",
        ),
        (
            Record {
                reply_to: Some("_INBOX.*".into()),
                ..log("runcontrol.cmd", Priority::Info, "reply to whom?")
            },
            "reply_to: subject `_INBOX.*` contains `*` (subjects may not hold wildcards or \
             control characters)",
        ),
    ];
    for (record, reason) in &cases {
        let expected = ClientError::InvalidRecord(reason.to_string());
        assert_eq!(client.publish(record).await, Err(expected.clone()));
        assert_eq!(client.try_publish(record), Err(expected.clone()));
        assert_eq!(
            client.sync_send(record, AckLevel::Received, WAIT).await,
            Err(expected.clone())
        );
        assert_eq!(expected.to_string(), format!("invalid record: {reason}"));
    }
    client.flush(WAIT).await.unwrap();
    assert_eq!(client.error(), None);
    let snapshot = server.monitor().snapshot();
    assert_eq!(common::int(&snapshot, "records_in"), 0, "nothing was sent");
    assert_eq!(common::int(&snapshot, "rejected_frames"), 0);
    bystander.round_trip().await;
    server.stop().await;
}

#[tokio::test]
async fn a_refused_subscribe_answers_the_request_and_keeps_the_connection() {
    let server = TestServer::start_with(Config {
        max_subscriptions: 1,
        ..Config::default()
    })
    .await;
    let client = common::connect(&server, "greedy").await;
    let mut first = client
        .subscribe(Filter::subject("limit.*").unwrap())
        .await
        .unwrap();
    let err = client
        .subscribe(Filter::subject("more.*").unwrap())
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ClientError::Server {
            code: ErrorCode::Limit,
            message: "too many subscriptions on this connection (limit 1)".into(),
        }
    );
    // The refused subscription handle is gone; the connection must have survived that too.
    common::settle(&client).await;
    assert_eq!(client.error(), None);
    client
        .publish(&log("limit.check", Priority::Info, "still subscribed"))
        .await
        .unwrap();
    let delivered = first.next_record_timeout(WAIT).await.unwrap();
    assert_eq!(delivered.record().text, "still subscribed");
    assert_eq!(common::server_int(&server, "subscriptions"), 1);
    assert_eq!(common::server_int(&server, "rejected_frames"), 0);
    server.stop().await;
}

#[tokio::test]
async fn a_subscription_id_used_twice_is_refused_for_that_request_only() {
    let server = start_server().await;
    let mut raw = RawConnection::handshake(server.addr(), "reuser").await;
    let subscribe = |cid| {
        Frame::Subscribe(herald_proto::frame::Subscribe {
            cid,
            subscription: 1,
            filter: Filter::subject("reuse.*").unwrap(),
            options: Default::default(),
        })
    };
    raw.send(&subscribe(1)).await;
    assert_eq!(raw.next_frame().await, Some(Frame::Ok { cid: 1 }));
    raw.send(&subscribe(2)).await;
    assert_eq!(
        raw.next_frame().await,
        Some(Frame::Error(ErrorFrame {
            cid: 2,
            code: ErrorCode::BadSubscription,
            message: "subscription id 1 is already in use on this connection".into(),
        }))
    );
    raw.send(&Frame::Ping).await;
    assert_eq!(raw.next_frame().await, Some(Frame::Pong));
    assert_eq!(common::server_int(&server, "subscriptions"), 1);
    let total_closes: u64 = CloseReason::ALL
        .iter()
        .map(|reason| server.monitor().closes(*reason))
        .sum();
    assert_eq!(total_closes, 0);
    server.stop().await;
}
