//! The frames behind `testdata/vectors/*.json`, with fixed values only (no clock, no
//! randomness), so that generating twice gives the same files.
//!
//! Every map of named values here lists its names in ascending order. serde_json (built
//! without `preserve_order`, which would change key order for every crate in the
//! workspace) writes object keys sorted, so this keeps the JSON files in wire order; the
//! vector tests check it.

use bytes::Bytes;
use herald_proto::frame::{
    Ack, DeliverEntry, GapNotice, Hello, Publish, RawRecord, Subscribe, Welcome, PROTOCOL_VERSION,
};
use herald_proto::msgpack::Reader;
use herald_proto::{
    AckLevel, ErrorCode, ErrorFrame, Filter, Frame, Kind, Origin, Priority, Record, RecordMeta,
    Value,
};
use herald_proto::{DeliveryOptions, Policy};
use serde_json::{json, Value as Json};

use super::{frame_to_json, to_hex};

/// 2025-11-20T02:00:00.123456789Z, the producer time most records carry.
const TIME: i64 = 1_763_604_000_123_456_789;
/// The server's receive time in the `DELIVER` vectors.
const RECEIVED: i64 = 1_763_604_000_200_000_000;
/// 2025-11-20T02:00:00Z: the start of the hour the archive queries ask about.
const HOUR_START: i64 = 1_763_604_000_000_000_000;
/// One hour in ns.
const HOUR: i64 = 3_600_000_000_000;
/// One second in ns.
const SECOND: i64 = 1_000_000_000;
/// The inbox subject prefix of the request/reply vectors.
const INBOX: &str = "_INBOX.5f3a9c";

/// Returns every vector file: its name and its JSON (`{"cases": [...]}`).
pub fn generate() -> Vec<(&'static str, Json)> {
    vec![
        ("handshake.json", file(handshake())),
        ("publish.json", file(publish())),
        ("deliver.json", file(deliver())),
        ("subscribe.json", file(subscribe())),
        ("control.json", file(control())),
        ("errors.json", file(errors())),
        ("info.json", file(info())),
        ("archive.json", file(archive())),
    ]
}

fn info() -> Vec<Json> {
    use herald_proto::info::{
        AttributeData, InfoReply, InfoRequest, ObjectData, SelectionData, TypeData, UpdateMode,
    };
    let attribute = |name: &str, attr_type: &str, description: &str| AttributeData {
        name: name.into(),
        attr_type: attr_type.into(),
        description: description.into(),
    };
    let run_info = TypeData {
        name: "RunInfo".into(),
        base: Some("Info".into()),
        description: "the run in progress".into(),
        attributes: vec![
            attribute("run", "u32", "run number"),
            attribute("started", "time", "start of the run"),
            attribute("detectors", "array<string>", "detectors taking data"),
        ],
    };
    let attributes = vec![
        ("run".to_string(), Value::Int(42)),
        ("started".to_string(), Value::Time(TIME)),
        (
            "detectors".to_string(),
            Value::Array(vec![Value::from("pixel"), Value::from("calo")]),
        ),
    ];
    let object = ObjectData {
        name: "RunParams.RunInfo".into(),
        type_name: "RunInfo".into(),
        time: TIME,
        version: 3,
        attributes: attributes.clone(),
    };
    let request = |cid, request| Frame::Info { cid, request };
    vec![
        case("info_declare", "INFO declare type RunInfo (base Info) with three attributes", &request(1, InfoRequest::Declare(run_info.clone()))),
        case(
            "info_update",
            "INFO upsert RunParams.RunInfo of type RunInfo with every attribute",
            &request(2, InfoRequest::Update {
                mode: UpdateMode::Upsert,
                name: "RunParams.RunInfo".into(),
                type_name: Some("RunInfo".into()),
                time: TIME,
                attributes,
            }),
        ),
        case("info_delete", "INFO delete RunParams.RunInfo", &request(3, InfoRequest::Delete { name: "RunParams.RunInfo".into(), time: TIME })),
        case("info_get", "INFO get two objects at one instant", &request(4, InfoRequest::Get(vec!["RunParams.RunInfo".into(), "RunParams.Missing".into()]))),
        case(
            "info_list",
            "INFO list objects whose name matches RunParams\\..* and whose type is Info or a subtype",
            &request(5, InfoRequest::List(SelectionData { name_regex: Some("RunParams\\..*".into()), types: Some("Info+".into()), any: false })),
        ),
        case("info_types", "INFO list every declared type", &request(6, InfoRequest::Types)),
        case(
            "info_reply",
            "INFO_REPLY to the get: the object, then nil for the missing one",
            &Frame::InfoReply { cid: 4, reply: InfoReply { objects: vec![Some(object.clone()), None], types: vec![] }, more: false },
        ),
        case(
            "info_reply_types",
            "INFO_REPLY to the types request",
            &Frame::InfoReply { cid: 6, reply: InfoReply { objects: vec![], types: vec![run_info] }, more: false },
        ),
        case(
            "info_reply_part",
            "INFO_REPLY that is one part of a larger answer (a list longer than a frame): the \
             third body element `true` says more parts follow under the same cid; the last \
             part has no third element",
            &Frame::InfoReply { cid: 7, reply: InfoReply { objects: vec![Some(object)], types: vec![] }, more: true },
        ),
        case(
            "info_subscribe",
            "INFO_SUBSCRIBE 7: objects of type Info or a subtype, or named SR.*",
            &Frame::InfoSubscribe {
                cid: 7,
                subscription: 7,
                selection: SelectionData { name_regex: Some("SR\\..*".into()), types: Some("Info+".into()), any: true },
            },
        ),
    ]
}

fn archive() -> Vec<Json> {
    use herald_proto::archive::{
        ArchiveReply, ArchiveRequest, AtQuery, Bucket, BucketQuery, Cursor, FieldStats, LogQuery,
        Page, SampleQuery, StoredRecord,
    };
    let stored = |n: i64, value: f64| StoredRecord {
        seq: 1001 + n.unsigned_abs(),
        received: RECEIVED + n * SECOND,
        record: Bytes::from(beam_current_record(TIME + n * SECOND, n + 7, value).to_bytes()),
    };
    let samples = SampleQuery {
        name: "Beam.Current".into(),
        from: HOUR_START,
        to: HOUR_START + HOUR,
        after: None,
        limit: 1000,
    };
    // Where the first page (query_reply_page) stopped: after its second record.
    let cursor = Cursor {
        time: TIME + SECOND,
        seq: 1002,
    };
    let query = |cid, request| Frame::Query { cid, request };
    let reply = |cid, reply| Frame::QueryReply {
        cid,
        reply,
        skipped: 0,
        more: false,
    };
    let stats = |count, min, max, mean, first, last| FieldStats {
        name: "value".into(),
        count,
        min,
        max,
        mean,
        first,
        last,
    };
    // 500 buckets of an hour are 7.2 s wide; the second bucket had no samples.
    let width = HOUR / 500;
    let buckets = vec![
        Bucket {
            start: HOUR_START,
            end: HOUR_START + width,
            count: 3,
            fields: vec![stats(3, 200.5, 201.5, 201.0, 201.5, 200.5)],
        },
        Bucket {
            start: HOUR_START + 2 * width,
            end: HOUR_START + 3 * width,
            count: 1,
            fields: vec![stats(1, 199.25, 199.25, 199.25, 199.25, 199.25)],
        },
    ];
    vec![
        case(
            "query_samples",
            "QUERY samples of Beam.Current in the hour from 2025-11-20T02:00:00Z, at most 1000 \
             records, from the start (no cursor)",
            &query(1, ArchiveRequest::Samples(samples.clone())),
        ),
        case(
            "query_samples_after",
            "QUERY the next page of the same samples: after the cursor that query_reply_page \
             returned",
            &query(
                2,
                ArchiveRequest::Samples(SampleQuery {
                    after: Some(cursor),
                    ..samples
                }),
            ),
        ),
        case(
            "query_buckets",
            "QUERY Beam.Current over the hour in 500 buckets, statistics of the field `value` only",
            &query(
                3,
                ArchiveRequest::Buckets(BucketQuery {
                    name: "Beam.Current".into(),
                    from: HOUR_START,
                    to: HOUR_START + HOUR,
                    buckets: 500,
                    field: Some("value".into()),
                }),
            ),
        ),
        case(
            "query_logs",
            "QUERY log records of the hour: priority ERROR and above, subject ANTENNA.*, host \
             dv01-lcu, any process, text containing `encoder`, at most 100",
            &query(
                4,
                ArchiveRequest::Logs(LogQuery {
                    from: HOUR_START,
                    to: HOUR_START + HOUR,
                    priorities: herald_proto::PrioritySet::at_least(Priority::Error),
                    subject: Some("ANTENNA.*".into()),
                    host: Some("dv01-lcu".into()),
                    process: None,
                    text: Some("encoder".into()),
                    after: None,
                    limit: 100,
                }),
            ),
        ),
        case(
            "query_at",
            "QUERY the values of Beam.Current and Beam.Energy at 2025-11-20T02:00:30Z",
            &query(
                5,
                ArchiveRequest::At(AtQuery {
                    names: vec!["Beam.Current".into(), "Beam.Energy".into()],
                    time: HOUR_START + 30 * SECOND,
                }),
            ),
        ),
        case(
            "query_reply_page",
            "QUERY_REPLY to query_samples: two stored records and the cursor after the second \
             (the server stopped early; ask again with it)",
            &reply(
                1,
                ArchiveReply::Page(Page {
                    records: vec![stored(0, 201.5), stored(1, 201.0)],
                    next: Some(cursor),
                }),
            ),
        ),
        case(
            "query_reply_last_page",
            "QUERY_REPLY to query_samples_after: one stored record and no cursor (nil), the \
             range is exhausted",
            &reply(
                2,
                ArchiveReply::Page(Page {
                    records: vec![stored(2, 200.5)],
                    next: None,
                }),
            ),
        ),
        case(
            "query_reply_buckets",
            "QUERY_REPLY to query_buckets: two buckets with statistics of `value`; the empty \
             bucket between them is left out",
            &reply(3, ArchiveReply::Buckets(buckets)),
        ),
        case(
            "query_reply_at",
            "QUERY_REPLY to query_at: the last sample of Beam.Current, nil for Beam.Energy \
             (nothing archived)",
            &reply(5, ArchiveReply::At(vec![Some(stored(2, 200.5)), None])),
        ),
        case(
            "query_reply_skipped",
            "QUERY_REPLY to query_samples_after when the archive held 2 stored records in the \
             range that do not decode: the page leaves them out and the third element of the \
             body counts them",
            &Frame::QueryReply {
                cid: 2,
                reply: ArchiveReply::Page(Page {
                    records: vec![stored(2, 200.5)],
                    next: None,
                }),
                skipped: 2,
                more: false,
            },
        ),
        case(
            "query_reply_part",
            "QUERY_REPLY that is one part of a larger answer (buckets or values at an instant \
             too many for a frame): the fourth body element `true` says more parts follow under \
             the same cid, so the third (skipped) is written even when 0; the last part has \
             neither or only the third",
            &Frame::QueryReply {
                cid: 3,
                reply: ArchiveReply::At(vec![Some(stored(0, 100.0))]),
                skipped: 0,
                more: true,
            },
        ),
    ]
}

fn file(cases: Vec<Json>) -> Json {
    json!({ "cases": cases })
}

fn case(name: &str, description: &str, frame: &Frame) -> Json {
    json!({
        "name": name,
        "description": description,
        "hex": to_hex(&frame.to_bytes()),
        "frame": frame_to_json(frame),
    })
}

fn handshake() -> Vec<Json> {
    let hello_minimal = Hello {
        version: PROTOCOL_VERSION,
        name: "mountd".into(),
        ..Hello::default()
    };
    let hello_full = Hello {
        version: PROTOCOL_VERSION,
        name: "runcontrol@ctl01".into(),
        token: "s3cret-token".into(),
        capabilities: vec!["x-example-a".into(), "x-example-b".into()],
        heartbeat_ms: 2000,
        producer: 0,
    };
    let hello_producer = Hello {
        version: PROTOCOL_VERSION,
        name: "daq@ctl02".into(),
        producer: 0x5eed_cafe_f00d,
        ..Hello::default()
    };
    let welcome = Welcome {
        version: PROTOCOL_VERSION,
        server: "herald".into(),
        heartbeat_ms: 1000,
        max_frame_bytes: 1024 * 1024,
        connection: 7,
    };
    vec![
        case(
            "hello_minimal",
            "HELLO with no token, no capabilities and heartbeat_ms 0 (server default); all five \
             keys are still required",
            &Frame::Hello(hello_minimal),
        ),
        case(
            "hello_full",
            "HELLO with a token, two capabilities and a 2 s heartbeat",
            &Frame::Hello(hello_full),
        ),
        case(
            "hello_producer",
            "HELLO of a producer that numbers its records: the optional key 5 carries its id \
             (kept across reconnections, so that cluster members can drop records resent \
             after a failover)",
            &Frame::Hello(hello_producer),
        ),
        case(
            "welcome",
            "WELCOME with the server defaults: 1 s heartbeat, 1 MiB (uint32 form) frames",
            &Frame::Welcome(welcome),
        ),
    ]
}

fn publish() -> Vec<Json> {
    let three = [log_record(), command_record(), info_record()];
    let text = "0123456789".repeat(30);
    let long_text = Record {
        text,
        ..Record {
            priority: Priority::Debug,
            ..minimal_record()
        }
    };
    vec![
        case(
            "publish_one_record_no_ack",
            "PUBLISH of one log record, fire and forget (ack_id 0, ack 0 none)",
            &publish_frame(0, AckLevel::None, &[log_record()]),
        ),
        case(
            "publish_three_records_ack_received",
            "PUBLISH of a log, a message and an info record, acknowledgement `received` asked \
             with ack_id 42",
            &publish_frame(42, AckLevel::Received, &three),
        ),
        case(
            "publish_every_record_field",
            "a request message using every record field: all 11 origin parts, non-ASCII text, \
             fields of every value type, reply_to and id",
            &publish_frame(0, AckLevel::None, &[every_field_record()]),
        ),
        case(
            "publish_unsigned_64",
            "fields holding unsigned 64-bit integers above 2^63-1 (uint64 `cf`): 2^64-1 and \
             2^63, read back as integers of that value; 1 in the same field type is an \
             ordinary positive fixint",
            &publish_frame(
                0,
                AckLevel::None,
                &[Record {
                    fields: vec![
                        ("counter".into(), Value::UInt(u64::MAX)),
                        ("mask".into(), Value::UInt(1 << 63)),
                        ("one".into(), Value::UInt(1)),
                    ],
                    ..minimal_record()
                }],
            ),
        ),
        case(
            "publish_minimal_record",
            "a record with only the keys always written: kind, subject, time, priority",
            &publish_frame(0, AckLevel::None, &[minimal_record()]),
        ),
        case(
            "publish_text_str16",
            "a 300-byte text, which needs the str16 form (0xda 0x01 0x2c)",
            &publish_frame(0, AckLevel::None, &[long_text]),
        ),
        case(
            "publish_numbered",
            "a numbered PUBLISH: the fourth element, after the records, is the producer's \
             number of the first record (1001); the second is number 1002",
            &Frame::Publish(Publish {
                first_seq: 1001,
                seqs: vec![1001, 1002],
                ..publish_batch(46, AckLevel::Received, &[log_record(), minimal_record()])
            }),
        ),
        case(
            "publish_flush",
            "an empty batch asking for `received`: what a client's flush sends",
            &publish_frame(44, AckLevel::Received, &[]),
        ),
        case(
            "publish_ack_stored",
            "a record asking for `stored`: answered with ACK level 2 once the archive holds it \
             durably, or, by a server without archive, with ERROR (see errors.json, \
             error_ack_stored)",
            &publish_frame(45, AckLevel::Stored, &[log_record()]),
        ),
        case(
            "ack_received",
            "ACK of the three-record PUBLISH: ack_id 42, level 1 received, count 3",
            &Frame::Ack(Ack {
                ack_id: 42,
                level: AckLevel::Received,
                count: 3,
            }),
        ),
        case(
            "ack_flush",
            "ACK of the flush: count 0",
            &Frame::Ack(Ack {
                ack_id: 44,
                level: AckLevel::Received,
                count: 0,
            }),
        ),
    ]
}

fn deliver() -> Vec<Json> {
    let entries = vec![
        DeliverEntry {
            subscription: 1,
            seq: 1001,
            received: RECEIVED,
            record: RawRecord::new(Bytes::from(log_record().to_bytes())).expect("a valid record"),
            producer: 0,
            pseq: 0,
            groups: Vec::new(),
        },
        DeliverEntry {
            subscription: 3,
            seq: 1002,
            received: RECEIVED + 5_000,
            record: RawRecord::new(Bytes::from(reply_record().to_bytes())).expect("a valid record"),
            producer: 0,
            pseq: 0,
            groups: Vec::new(),
        },
    ];
    let route_entry = DeliverEntry {
        subscription: 0,
        seq: 77,
        received: RECEIVED,
        record: RawRecord::new(Bytes::from(minimal_record().to_bytes())).expect("a valid record"),
        producer: 0x5eed_cafe_f00d,
        pseq: 1001,
        groups: Vec::new(),
    };
    let grouped_entry = DeliverEntry {
        seq: 78,
        pseq: 1002,
        groups: vec!["archivers".into(), "alarm-handlers".into()],
        ..route_entry.clone()
    };
    let gap = GapNotice {
        subscription: 1,
        count: 5,
        first_seq: 2000,
        last_seq: 2010,
        by_priority: vec![(Priority::Debug, 3), (Priority::Info, 2)],
        member: None,
    };
    vec![
        case(
            "deliver_two_entries",
            "DELIVER of a log record for subscription 1 and a reply (on the inbox subject, with \
             the request's id) for the inbox subscription 3",
            &Frame::Deliver(entries),
        ),
        case(
            "deliver_route_numbered",
            "DELIVER between cluster members (on the route port only): subscription 0, the \
             route's seq 77, and two more elements, the producer's id and its number of the \
             record, by which the receiving member drops a record it already has",
            &Frame::Deliver(vec![route_entry]),
        ),
        case(
            "deliver_route_groups",
            "DELIVER between cluster members for members of queue groups: a seventh element \
             names the groups the receiving member gives the record to (one member each); \
             its members of other groups do not get it",
            &Frame::Deliver(vec![grouped_entry]),
        ),
        case(
            "gap_by_priority",
            "GAP: subscription 1 lost 5 records between seq 2000 and 2010, 3 DEBUG and 2 INFO",
            &Frame::Gap(gap),
        ),
    ]
}

fn subscribe() -> Vec<Json> {
    let every = Filter::parse(
        Some("ANTENNA.*.Mount"),
        Some("Encoder?ault"),
        Some("=DEBUG,>=ERROR"),
        &["operator".into(), "science".into()],
        Some("log,info"),
    )
    .expect("the vector's filter parses");
    let inbox = Filter::subject(&format!("{INBOX}.*")).expect("the inbox pattern parses");
    let subscribe = |cid, subscription, filter| {
        Frame::Subscribe(Subscribe {
            cid,
            subscription,
            filter,
            options: DeliveryOptions::default(),
        })
    };
    let display = DeliveryOptions {
        policy: Policy::DropOld,
        max_records: Some(1000),
        max_bytes: Some(1 << 20),
        block_timeout_ms: Some(50),
        protected: Some(Priority::Alert),
        latest_per_second: Some(2.5),
        // Not in this vector: the group came later than the clients that read it.
        group: None,
    };
    vec![
        case(
            "subscribe_open",
            "SUBSCRIBE to everything: every dimension open, so the filter is the empty map 0x80",
            &subscribe(1, 1, Filter::default()),
        ),
        case(
            "subscribe_every_dimension",
            "SUBSCRIBE with subject and type globs, priorities =DEBUG,>=ERROR, two audiences and \
             kinds log,info",
            &subscribe(2, 2, every),
        ),
        case(
            "subscribe_every_option",
            "SUBSCRIBE with every delivery option: drop-old, 1000 records, 1 MiB, 50 ms block \
             timeout, ALERT and above protected, latest-only at 2.5 per second per subject",
            &Frame::Subscribe(Subscribe {
                cid: 5,
                subscription: 5,
                filter: Filter::subject("SR.*").expect("the vector's filter parses"),
                options: display,
            }),
        ),
        case(
            "subscribe_group",
            "SUBSCRIBE as a member of queue group `workers`: each record the group's members \
             match goes to one of them",
            &Frame::Subscribe(Subscribe {
                cid: 6,
                subscription: 6,
                filter: Filter::subject("job.*").expect("the vector's filter parses"),
                options: DeliveryOptions {
                    group: Some("workers".into()),
                    ..DeliveryOptions::default()
                },
            }),
        ),
        case(
            "subscribe_inbox",
            "SUBSCRIBE to a client's inbox, where replies to its requests arrive",
            &subscribe(3, 3, inbox),
        ),
        case("ok", "OK: request cid 2 succeeded", &Frame::Ok { cid: 2 }),
        case(
            "unsubscribe",
            "UNSUBSCRIBE subscription 2, answered with OK or ERROR under cid 4",
            &Frame::Unsubscribe {
                cid: 4,
                subscription: 2,
            },
        ),
        case(
            "unsubscribe_no_answer",
            "UNSUBSCRIBE with cid 0: no answer wanted (a dropped subscription handle)",
            &Frame::Unsubscribe {
                cid: 0,
                subscription: 1,
            },
        ),
    ]
}

fn control() -> Vec<Json> {
    let data = vec![
        ("connections".into(), Value::Int(2)),
        ("dropped".into(), Value::Int(0)),
        ("rate_in".into(), Value::Float(1523.5)),
        ("records_in".into(), Value::Int(123_456)),
        ("server".into(), Value::from("herald")),
    ];
    vec![
        case(
            "monitor",
            "MONITOR request, cid 5",
            &Frame::Monitor { cid: 5 },
        ),
        case(
            "monitor_reply",
            "MONITOR_REPLY with a small map of counters (a real reply holds more names)",
            &Frame::MonitorReply { cid: 5, data },
        ),
        case("reload", "RELOAD request, cid 6", &Frame::Reload { cid: 6 }),
        case(
            "reload_reply",
            "RELOAD_REPLY: the settings applied, and those that wait for a restart",
            &Frame::ReloadReply {
                cid: 6,
                data: vec![
                    (
                        "applied".into(),
                        Value::Array(vec![Value::from("queue_records")]),
                    ),
                    ("restart".into(), Value::Array(vec![Value::from("listen")])),
                ],
            },
        ),
        case("ping", "PING: a type byte and no body", &Frame::Ping),
        case("pong", "PONG: a type byte and no body", &Frame::Pong),
    ]
}

fn errors() -> Vec<Json> {
    let error = |cid, code, message: &str| {
        Frame::Error(ErrorFrame {
            cid,
            code,
            message: message.to_string(),
        })
    };
    vec![
        case(
            "error_handshake",
            "ERROR for the connection as a whole (cid 0): the first frame was not HELLO; the \
             server closes after sending it",
            &error(
                0,
                ErrorCode::Handshake,
                "expected HELLO as the first frame, got PUBLISH",
            ),
        ),
        case(
            "error_version",
            "ERROR refusing an unknown protocol version during the handshake",
            &error(
                0,
                ErrorCode::Version,
                "unsupported protocol version 2 (this server speaks 1)",
            ),
        ),
        case(
            "error_frame_too_large",
            "ERROR for a length prefix over the limit; the connection closes",
            &error(
                0,
                ErrorCode::FrameTooLarge,
                "frame of 2097152 bytes exceeds the maximum of 1048576 bytes",
            ),
        ),
        case(
            "error_bad_subscription",
            "ERROR answering request cid 4 (an UNSUBSCRIBE); the connection stays open",
            &error(
                4,
                ErrorCode::BadSubscription,
                "no subscription with id 2 on this connection",
            ),
        ),
        case(
            "error_ack_stored",
            "ERROR answering the PUBLISH with ack_id 45 that asked for `stored` from a server \
             without archive: code `archive`, nothing was routed",
            &error(
                45,
                ErrorCode::Archive,
                "acknowledgement level `stored` needs an archive, and this server has none \
                 (archive.backend = \"none\"); nothing was routed",
            ),
        ),
    ]
}

/// Builds a `PUBLISH` frame the way a client does: records encoded once, then sliced.
fn publish_frame(ack_id: u64, ack: AckLevel, records: &[Record]) -> Frame {
    Frame::Publish(publish_batch(ack_id, ack, records))
}

fn publish_batch(ack_id: u64, ack: AckLevel, records: &[Record]) -> Publish {
    Publish {
        ack_id,
        ack,
        records: records.iter().map(raw_record).collect(),
        first_seq: 0,
        seqs: Vec::new(),
    }
}

fn raw_record(record: &Record) -> RawRecord {
    let bytes = Bytes::from(record.to_bytes());
    let meta = RecordMeta::scan(&mut Reader::new(&bytes), 0).expect("vector records are valid");
    RawRecord { bytes, meta }
}

fn minimal_record() -> Record {
    Record {
        kind: Kind::Log,
        subject: "x".into(),
        time: 1_700_000_000_000_000_000,
        priority: Priority::Info,
        ..Record::default()
    }
}

fn log_record() -> Record {
    Record {
        kind: Kind::Log,
        subject: "ANTENNA.DV01.Mount".into(),
        time: TIME,
        priority: Priority::Warning,
        origin: Origin {
            host: "dv01-lcu".into(),
            process: "mountd".into(),
            ..Origin::default()
        },
        text: "encoder fault".into(),
        ..Record::default()
    }
}

fn command_record() -> Record {
    Record {
        kind: Kind::Message,
        subject: "runcontrol.cmd".into(),
        type_name: "StartRun".into(),
        time: TIME + 1_000,
        fields: vec![("run".into(), Value::Int(42))],
        ..Record::default()
    }
}

fn info_record() -> Record {
    Record {
        kind: Kind::Info,
        subject: "RunParams.RunInfo".into(),
        type_name: "RunInfo".into(),
        time: TIME + 2_000,
        fields: vec![
            ("run".into(), Value::Int(42)),
            ("state".into(), Value::from("running")),
        ],
        ..Record::default()
    }
}

fn every_field_record() -> Record {
    Record {
        kind: Kind::Message,
        subject: "runcontrol.cmd".into(),
        type_name: "StartRun".into(),
        time: TIME,
        priority: Priority::Notice,
        audience: vec!["operator".into(), "developer".into()],
        origin: every_origin(),
        text: "Start Lauf 42: Δt = 0.5 µs, −12 °C, 望遠鏡 🔭".into(),
        fields: every_value(),
        reply_to: Some(format!("{INBOX}.17")),
        id: Some(17),
    }
}

fn every_origin() -> Origin {
    Origin {
        host: "ctl01".into(),
        process: "runcontrol".into(),
        thread: "main".into(),
        file: "src/run.rs".into(),
        line: Some(4242),
        routine: "RunControl::start".into(),
        context: "daq/partition-1".into(),
        stack_id: "c0ffee".into(),
        stack_level: Some(2),
        log_id: "RC-0042".into(),
        uri: "https://wiki.example.org/RC-0042".into(),
    }
}

/// One field of each value type, names ascending.
fn every_value() -> Vec<(String, Value)> {
    let nested = Value::Map(vec![
        ("depth".into(), Value::Int(2)),
        (
            "inner".into(),
            Value::Map(vec![("since".into(), Value::Time(-1_000_000_000))]),
        ),
    ]);
    vec![
        (
            "array".into(),
            Value::Array(vec![
                Value::Int(1),
                Value::from("two"),
                Value::Float(3.5),
                Value::Bool(false),
            ]),
        ),
        ("big".into(), Value::Int(5_000_000_000)),
        (
            "bytes".into(),
            Value::Bytes(vec![0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff]),
        ),
        ("flag".into(), Value::Bool(true)),
        ("float".into(), Value::Float(-273.15)),
        ("negative".into(), Value::Int(-70_000)),
        ("nested".into(), nested),
        ("small".into(), Value::Int(-5)),
        ("text".into(), Value::from("Az")),
        ("when".into(), Value::Time(TIME)),
    ]
}

/// The change record of the information object `Beam.Current` as the archive keeps it.
fn beam_current_record(time: i64, version: i64, value: f64) -> Record {
    Record {
        kind: Kind::Info,
        subject: "Beam.Current".into(),
        type_name: "Analog".into(),
        time,
        text: "updated".into(),
        fields: vec![("value".into(), Value::Float(value))],
        id: Some(version.unsigned_abs()),
        ..Record::default()
    }
}

fn reply_record() -> Record {
    Record {
        kind: Kind::Message,
        subject: format!("{INBOX}.17"),
        type_name: "StartRun.reply".into(),
        time: TIME + 50_000_000,
        text: "run 42 started".into(),
        fields: vec![("ok".into(), Value::Bool(true))],
        id: Some(17),
        ..Record::default()
    }
}
