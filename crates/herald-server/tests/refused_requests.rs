//! Bad requests are answered alone: each gets an `ERROR` carrying the request's cid (a
//! `PUBLISH`'s `ack_id`), a code and a message naming the problem, and the connection goes
//! on — its other subscriptions keep receiving. A `PUBLISH` with bad records routes the
//! good ones. Everything here goes over the raw protocol.

mod common;

use std::time::Instant;

use common::{log, publish_frame_of_bytes, raw_frame, WAIT};
use herald_proto::frame::{Ack, FrameType, Subscribe};
use herald_proto::record::key;
use herald_proto::{
    msgpack, AckLevel, DeliveryOptions, ErrorCode, ErrorFrame, Filter, Frame, Priority, Record,
    Value,
};
use herald_server::Config;
use herald_testkit::{RawConnection, TestServer};

/// Returns a connection subscribed to `good.*` as subscription 1.
async fn subscribed(server: &TestServer) -> RawConnection {
    let mut raw = RawConnection::handshake(server.addr(), "offender").await;
    raw.send(&Frame::Subscribe(Subscribe {
        cid: 1,
        subscription: 1,
        filter: Filter::subject("good.*").unwrap(),
        options: DeliveryOptions::default(),
    }))
    .await;
    assert_eq!(raw.next_frame().await, Some(Frame::Ok { cid: 1 }));
    raw
}

/// Checks that `raw` still works: a `MONITOR` is answered, and a good record published on
/// it reaches its own subscription 1.
async fn still_serves(raw: &mut RawConnection) {
    raw.send(&Frame::Monitor { cid: 77 }).await;
    let reply = raw.next_frame().await;
    assert!(
        matches!(reply, Some(Frame::MonitorReply { cid: 77, .. })),
        "{reply:?}"
    );
    let record = log("good.after", Priority::Info, "after the refusal");
    raw.send_bytes(&common::publish_frame(&[record], 78, AckLevel::Received))
        .await;
    let frames = frames_until(raw, |frames| {
        delivered(frames).len() == 1 && acks(frames) == 1
    })
    .await;
    assert_eq!(delivered(&frames)[0].subject, "good.after");
}

/// Reads frames until `done` holds for what was read.
async fn frames_until(raw: &mut RawConnection, done: impl Fn(&[Frame]) -> bool) -> Vec<Frame> {
    let mut frames = Vec::new();
    while !done(&frames) {
        let frame = raw.next_frame().await.expect("the connection stays open");
        frames.push(frame);
    }
    frames
}

fn delivered(frames: &[Frame]) -> Vec<Record> {
    frames
        .iter()
        .filter_map(|f| match f {
            Frame::Deliver(entries) => Some(entries),
            _ => None,
        })
        .flatten()
        .map(|entry| Record::from_bytes(&entry.record.bytes).unwrap())
        .collect()
}

fn acks(frames: &[Frame]) -> usize {
    frames.iter().filter(|f| matches!(f, Frame::Ack(_))).count()
}

/// Sends `bytes` and expects exactly `expected` back, then that the connection still works.
async fn answered_alone(bytes: Vec<u8>, expected: ErrorFrame) {
    let server = TestServer::start().await;
    let mut raw = subscribed(&server).await;
    raw.send_bytes(&bytes).await;
    assert_eq!(raw.next_frame().await, Some(Frame::Error(expected)));
    still_serves(&mut raw).await;
    assert_eq!(common::server_int(&server, "refused_requests"), 1);
    assert_eq!(common::server_int(&server, "rejected_frames"), 0);
    assert_eq!(common::server_int(&server, "connections"), 1);
    server.stop().await;
}

fn subscribe_with_filter(filter: &[u8]) -> Vec<u8> {
    let mut body = vec![0x94, 0x05, 0x02];
    body.extend_from_slice(filter);
    body.push(0x80); // default delivery options
    raw_frame(FrameType::Subscribe as u8, &body)
}

fn bad_filter(message: &str) -> ErrorFrame {
    ErrorFrame {
        cid: 5,
        code: ErrorCode::BadFilter,
        message: format!("malformed SUBSCRIBE frame: invalid filter: {message}"),
    }
}

#[tokio::test]
async fn a_bad_filter_is_refused_alone() {
    let cases: [(&[u8], &str); 5] = [
        (
            &[0x81, 0x00, 0xa0],
            "bad subject pattern: empty pattern (use `*` to match everything)",
        ),
        (
            &[0x81, 0x01, 0xa2, b'a', 0x01],
            "bad type pattern: pattern `a\\u{1}` contains control character U+0001",
        ),
        (
            &[0x81, 0x02, 0x00],
            "priority set `bits 0x0` selects no priority",
        ),
        (
            &[0x81, 0x02, 0xcc, 0x80],
            "priority 7 is not defined (expected 1..11 without 7)",
        ),
        (
            &[0x81, 0x02, 0xcd, 0x40, 0x02],
            "priority 14 is not defined (expected 1..11 without 7)",
        ),
    ];
    for (filter, message) in cases {
        answered_alone(subscribe_with_filter(filter), bad_filter(message)).await;
    }
}

fn good(subject: &str) -> Vec<u8> {
    log(subject, Priority::Info, "good").to_bytes()
}

/// A record of the three required keys plus `extra` (key, value) pairs written by hand.
fn record_with(extra: &[(u64, u64)]) -> Vec<u8> {
    let mut record = Vec::new();
    msgpack::write_map_len(&mut record, 3 + extra.len() as u32);
    msgpack::write_uint(&mut record, key::KIND);
    msgpack::write_uint(&mut record, 0);
    msgpack::write_uint(&mut record, key::TIME);
    msgpack::write_uint(&mut record, 1);
    for (field, value) in extra {
        msgpack::write_uint(&mut record, *field);
        msgpack::write_uint(&mut record, *value);
    }
    msgpack::write_uint(&mut record, key::SUBJECT);
    msgpack::write_str(&mut record, "good.hand-made");
    record
}

/// A record whose field `counter` holds the MessagePack value `value`.
fn record_with_counter(value: &[u8]) -> Vec<u8> {
    let mut record = record_with(&[]);
    record[0] += 1;
    msgpack::write_uint(&mut record, key::FIELDS);
    msgpack::write_map_len(&mut record, 1);
    msgpack::write_str(&mut record, "counter");
    record.extend_from_slice(value);
    record
}

/// Publishes good.one, `bad`, good.two with an acknowledgement and checks: one `ERROR
/// bad_record` naming record 1 and holding `reason`, an `ACK` counting the 2 routed records, and
/// both good records delivered.
async fn bad_record_among_good(bad: Vec<u8>, reason: &str) {
    let server = TestServer::start().await;
    let mut raw = subscribed(&server).await;
    let records = [good("good.one"), bad, good("good.two")];
    raw.send_bytes(&publish_frame_of_bytes(&records, 9, AckLevel::Received))
        .await;
    let frames = frames_until(&mut raw, |frames| {
        acks(frames) == 1 && delivered(frames).len() == 2
    })
    .await;
    let errors: Vec<&ErrorFrame> = frames
        .iter()
        .filter_map(|f| match f {
            Frame::Error(error) => Some(error),
            _ => None,
        })
        .collect();
    let [error] = errors[..] else {
        panic!("one ERROR expected: {frames:?}");
    };
    assert_eq!((error.cid, error.code), (9, ErrorCode::BadRecord));
    let message = &error.message;
    assert!(
        message.starts_with("refused 1 of 3 records; record 1: "),
        "{message}"
    );
    assert!(message.contains(reason), "{message}");
    assert!(
        message.ends_with("; the other 2 records were taken"),
        "{message}"
    );
    let ack = Ack {
        ack_id: 9,
        level: AckLevel::Received,
        count: 2,
    };
    assert!(frames.contains(&Frame::Ack(ack)), "{frames:?}");
    let error_at = frames.iter().position(|f| matches!(f, Frame::Error(_)));
    let ack_at = frames.iter().position(|f| matches!(f, Frame::Ack(_)));
    assert!(error_at < ack_at, "the ERROR comes before the ACK");
    let subjects: Vec<String> = delivered(&frames).into_iter().map(|r| r.subject).collect();
    assert_eq!(subjects, ["good.one", "good.two"]);
    still_serves(&mut raw).await;
    assert_eq!(common::server_int(&server, "refused_records"), 1);
    assert_eq!(
        common::server_int(&server, "records_in"),
        3,
        "2 + the check"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_wildcard_subject_is_refused_and_the_rest_of_the_batch_routed() {
    let bad = log("good.*", Priority::Warning, "which one?").to_bytes();
    let reason = "invalid subject: subject `good.*` contains `*` (subjects may not hold \
                  wildcards or control characters)";
    bad_record_among_good(bad, reason).await;
}

#[tokio::test]
async fn an_unknown_record_field_is_refused_alone() {
    bad_record_among_good(record_with(&[(11, 7)]), "unknown field 11 in record").await;
}

#[tokio::test]
async fn an_undefined_priority_is_refused_alone() {
    let reason = "invalid priority: priority 7 is not defined (expected 1..11 without 7)";
    bad_record_among_good(record_with(&[(key::PRIORITY, 7)]), reason).await;
}

#[tokio::test]
async fn a_value_of_a_type_herald_does_not_have_is_refused_alone_by_name() {
    // MessagePack's own timestamp (extension -1), not Herald's time (extension 1).
    let timestamp = [0xd6, 0xff, 0, 0, 0, 1];
    let reason = "invalid fields: `counter` holds MessagePack extension type -1 at byte";
    bad_record_among_good(record_with_counter(&timestamp), reason).await;
    let other = [0xd7, 0x05, 0, 0, 0, 0, 0, 0, 0, 1];
    let reason = "invalid fields: `counter` holds MessagePack extension type 5 at byte";
    bad_record_among_good(record_with_counter(&other), reason).await;
}

#[tokio::test]
async fn an_unsigned_value_above_i64_travels_unchanged() {
    let server = TestServer::start().await;
    let mut raw = subscribed(&server).await;
    let mut value = Vec::new();
    msgpack::write_uint(&mut value, u64::MAX);
    let record = record_with_counter(&value);
    // record_with names the subject good.hand-made.
    raw.send_bytes(&publish_frame_of_bytes(&[record], 3, AckLevel::Received))
        .await;
    let frames = frames_until(&mut raw, |f| acks(f) == 1 && delivered(f).len() == 1).await;
    assert!(
        !frames.iter().any(|f| matches!(f, Frame::Error(_))),
        "{frames:?}"
    );
    let got = delivered(&frames).remove(0);
    assert_eq!(got.fields, vec![("counter".into(), Value::UInt(u64::MAX))]);
    assert_eq!(common::server_int(&server, "refused_records"), 0);
}

#[tokio::test]
async fn a_record_cut_short_refuses_itself_and_what_follows_it() {
    let server = TestServer::start().await;
    let mut raw = subscribed(&server).await;
    let mut cut = good("good.cut");
    cut.truncate(cut.len() - 3);
    raw.send_bytes(&publish_frame_of_bytes(
        &[good("good.first"), cut],
        4,
        AckLevel::Received,
    ))
    .await;
    let frames = frames_until(&mut raw, |f| acks(f) == 1 && delivered(f).len() == 1).await;
    let Some(Frame::Error(error)) = frames.iter().find(|f| matches!(f, Frame::Error(_))) else {
        panic!("no ERROR in {frames:?}");
    };
    assert_eq!((error.cid, error.code), (4, ErrorCode::BadRecord));
    assert!(
        error
            .message
            .starts_with("refused 1 of 2 records; record 1: truncated value"),
        "{}",
        error.message
    );
    still_serves(&mut raw).await;
    server.stop().await;
}

#[tokio::test]
async fn bad_records_without_an_acknowledgement_are_counted_and_the_rest_routed() {
    let server = TestServer::start().await;
    let mut raw = subscribed(&server).await;
    let records = [
        good("good.one"),
        record_with(&[(11, 7)]),
        record_with(&[(12, 0)]),
    ];
    raw.send_bytes(&publish_frame_of_bytes(&records, 0, AckLevel::None))
        .await;
    let frames = frames_until(&mut raw, |f| !delivered(f).is_empty()).await;
    assert_eq!(delivered(&frames)[0].subject, "good.one");
    assert!(!frames.iter().any(|f| matches!(f, Frame::Error(_))));
    still_serves(&mut raw).await;
    assert_eq!(common::server_int(&server, "refused_records"), 2);
    server.stop().await;
}

#[tokio::test]
async fn an_unknown_ack_level_is_refused_alone() {
    answered_alone(
        raw_frame(FrameType::Publish as u8, &[0x93, 0x03, 0x05, 0x90]),
        ErrorFrame {
            cid: 3,
            code: ErrorCode::BadRequest,
            message: "malformed PUBLISH frame: invalid ack level: unknown level 5 (expected 0 \
                      none, 1 received, 2 stored)"
                .into(),
        },
    )
    .await;
}

#[tokio::test]
async fn an_unknown_frame_type_with_a_cid_is_refused_alone() {
    answered_alone(
        raw_frame(0x55, &[0x92, 0x09, 0xa2, b'h', b'i']),
        ErrorFrame {
            cid: 9,
            code: ErrorCode::BadRequest,
            message: "unknown frame type 0x55".into(),
        },
    )
    .await;
}

#[tokio::test]
async fn an_unknown_info_operation_is_refused_alone() {
    // INFO [cid 6, [op 99, nil]]
    answered_alone(
        raw_frame(FrameType::Info as u8, &[0x92, 0x06, 0x92, 0x63, 0xc0]),
        ErrorFrame {
            cid: 6,
            code: ErrorCode::BadInfo,
            message: "malformed INFO frame: invalid info operation: unknown operation 99 \
                      (expected 0..5)"
                .into(),
        },
    )
    .await;
}

#[tokio::test]
async fn an_unknown_query_operation_is_refused_alone() {
    // QUERY [cid 8, [op 42, nil]]
    let bytes = raw_frame(FrameType::Query as u8, &[0x92, 0x08, 0x92, 0x2a, 0xc0]);
    let server = TestServer::start().await;
    let mut raw = subscribed(&server).await;
    raw.send_bytes(&bytes).await;
    let Some(Frame::Error(error)) = raw.next_frame().await else {
        panic!("expected an ERROR");
    };
    assert_eq!((error.cid, error.code), (8, ErrorCode::BadQuery));
    assert!(
        error.message.contains("unknown operation 42"),
        "{}",
        error.message
    );
    still_serves(&mut raw).await;
    server.stop().await;
}

#[tokio::test]
async fn a_monitor_request_of_the_wrong_shape_is_refused_alone() {
    answered_alone(
        raw_frame(FrameType::Monitor as u8, &[0x92, 0x04, 0x04]),
        ErrorFrame {
            cid: 4,
            code: ErrorCode::BadRequest,
            message: "malformed MONITOR frame: MONITOR must be an array of 1 elements, found 2"
                .into(),
        },
    )
    .await;
}

#[tokio::test]
async fn a_record_of_170000_distinct_field_names_is_checked_in_linear_time() {
    let server = TestServer::start_with(Config {
        max_frame_bytes: 8 * 1024 * 1024,
        ..Config::default()
    })
    .await;
    let mut raw = subscribed(&server).await;
    let names = 170_000u32;
    let mut record = record_with(&[]);
    record[0] += 1;
    msgpack::write_uint(&mut record, key::FIELDS);
    msgpack::write_map_len(&mut record, names);
    for index in 0..names {
        msgpack::write_str(&mut record, &format!("field{index}"));
        msgpack::write_bool(&mut record, true);
    }
    let started = Instant::now();
    raw.send_bytes(&publish_frame_of_bytes(&[record], 2, AckLevel::Received))
        .await;
    // A quadratic check took 96 s of a core; a linear one takes milliseconds even in a
    // debug build. The bound is the test kit's usual wait, far above either.
    let frames = frames_until(&mut raw, |f| acks(f) == 1).await;
    assert!(started.elapsed() < WAIT);
    let ack = Ack {
        ack_id: 2,
        level: AckLevel::Received,
        count: 1,
    };
    assert!(frames.contains(&Frame::Ack(ack)), "{frames:?}");
    server.stop().await;
}
