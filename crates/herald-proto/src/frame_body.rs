//! Encoding and decoding of frames: [`Frame::encode`] and [`Frame::decode`] over one pair of
//! functions per frame type. Above the frame types (`frame.rs`) and `request.rs`, which
//! do not use it.

use bytes::Bytes;

use crate::archive::{ArchiveReply, ArchiveRequest};
use crate::delivery_options::DeliveryOptions;
use crate::error::{DecodeError, FrameError};
use crate::filter::Filter;
use crate::frame::{
    self, write_entry, Ack, DeliverEntry, ErrorCode, ErrorFrame, Frame, FrameType, GapNotice,
    Hello, Publish, RawRecord, Subscribe, Welcome,
};
use crate::info::{InfoReply, InfoRequest, SelectionData};
use crate::msgpack::{self, Reader};
use crate::priority::Priority;
use crate::record::RecordMeta;
use crate::value;
use crate::wire::expect_array;

impl Frame {
    /// Appends the whole frame, length prefix included.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = frame::begin_frame(out, self.frame_type());
        encode_body(self, out);
        frame::end_frame(out, start);
    }

    /// Returns the whole frame as a new vector.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }

    /// Decodes a frame from `frame`: the bytes after the length prefix (type byte and body).
    /// Records in a `PUBLISH` or `DELIVER` are slices of `frame`, not copies.
    ///
    /// # Errors
    /// [`FrameError`] naming the frame type and what was wrong.
    pub fn decode(frame: Bytes) -> Result<Frame, FrameError> {
        let Some(&type_byte) = frame.first() else {
            return Err(FrameError::Empty);
        };
        let frame_type = FrameType::from_u8(type_byte)?;
        let body = frame.slice(1..);
        decode_body(frame_type, &body).map_err(|source| FrameError::Malformed {
            frame: frame_type.name(),
            source,
        })
    }
}

fn encode_body(frame: &Frame, out: &mut Vec<u8>) {
    match frame {
        Frame::Hello(hello) => encode_hello(hello, out),
        Frame::Welcome(welcome) => encode_welcome(welcome, out),
        Frame::Publish(publish) => {
            let count = msgpack::len_u32(publish.records.len());
            if publish.first_seq == 0 {
                frame::write_publish_header(out, publish.ack_id, publish.ack, count);
            } else {
                frame::write_numbered_publish_header(out, publish.ack_id, publish.ack, count);
            }
            for record in &publish.records {
                out.extend_from_slice(&record.bytes);
            }
            if publish.first_seq != 0 {
                frame::write_publish_first_seq(out, publish.first_seq);
            }
        }
        Frame::Ack(ack) => {
            msgpack::write_array_len(out, 3);
            msgpack::write_uint(out, ack.ack_id);
            msgpack::write_uint(out, ack.level as u64);
            msgpack::write_uint(out, ack.count);
        }
        Frame::Deliver(entries) => {
            msgpack::write_array_len(out, msgpack::len_u32(entries.len()));
            for entry in entries {
                write_entry(
                    out,
                    entry.subscription,
                    entry.seq,
                    entry.received,
                    &entry.record.bytes,
                    (entry.producer, entry.pseq),
                    &entry.groups,
                );
            }
        }
        Frame::Gap(gap) => {
            let len = if gap.member.is_some() { 6 } else { 5 };
            msgpack::write_array_len(out, len);
            msgpack::write_uint(out, gap.subscription);
            msgpack::write_uint(out, gap.count);
            msgpack::write_uint(out, gap.first_seq);
            msgpack::write_uint(out, gap.last_seq);
            msgpack::write_map_len(out, msgpack::len_u32(gap.by_priority.len()));
            for (priority, count) in &gap.by_priority {
                msgpack::write_uint(out, *priority as u64);
                msgpack::write_uint(out, *count);
            }
            if let Some(member) = &gap.member {
                msgpack::write_str(out, member);
            }
        }
        Frame::Subscribe(subscribe) => {
            msgpack::write_array_len(out, 4);
            msgpack::write_uint(out, subscribe.cid);
            msgpack::write_uint(out, subscribe.subscription);
            subscribe.filter.encode(out);
            subscribe.options.encode(out);
        }
        Frame::Unsubscribe { cid, subscription } => {
            msgpack::write_array_len(out, 2);
            msgpack::write_uint(out, *cid);
            msgpack::write_uint(out, *subscription);
        }
        Frame::Ok { cid } | Frame::Monitor { cid } | Frame::Reload { cid } => {
            msgpack::write_array_len(out, 1);
            msgpack::write_uint(out, *cid);
        }
        Frame::MonitorReply { cid, data } | Frame::ReloadReply { cid, data } => {
            msgpack::write_array_len(out, 2);
            msgpack::write_uint(out, *cid);
            value::encode_fields(out, data);
        }
        Frame::Info { cid, request } => {
            msgpack::write_array_len(out, 2);
            msgpack::write_uint(out, *cid);
            request.encode(out);
        }
        Frame::InfoReply { cid, reply, more } => {
            msgpack::write_array_len(out, if *more { 3 } else { 2 });
            msgpack::write_uint(out, *cid);
            reply.encode(out);
            if *more {
                msgpack::write_bool(out, true);
            }
        }
        Frame::Query { cid, request } => {
            msgpack::write_array_len(out, 2);
            msgpack::write_uint(out, *cid);
            request.encode(out);
        }
        Frame::QueryReply {
            cid,
            reply,
            skipped,
            more,
        } => {
            let len = match (*skipped, *more) {
                (_, true) => 4,
                (0, false) => 2,
                _ => 3,
            };
            msgpack::write_array_len(out, len);
            msgpack::write_uint(out, *cid);
            reply.encode(out);
            if len > 2 {
                msgpack::write_uint(out, *skipped);
            }
            if *more {
                msgpack::write_bool(out, true);
            }
        }
        Frame::InfoSubscribe {
            cid,
            subscription,
            selection,
        } => {
            msgpack::write_array_len(out, 3);
            msgpack::write_uint(out, *cid);
            msgpack::write_uint(out, *subscription);
            selection.encode(out);
        }
        Frame::Ping | Frame::Pong => {}
        Frame::Members(members) => members.encode(out),
        Frame::InfoChange(change) => change.encode(out),
        Frame::Mirror(feed) => feed.encode(out),
        Frame::RouteAuth(proof) => {
            msgpack::write_array_len(out, 1);
            msgpack::write_bin(out, proof);
        }
        Frame::Error(error) => {
            msgpack::write_array_len(out, 3);
            msgpack::write_uint(out, error.cid);
            msgpack::write_str(out, error.code.as_str());
            msgpack::write_str(out, &error.message);
        }
    }
}

fn decode_body(frame_type: FrameType, body: &Bytes) -> Result<Frame, DecodeError> {
    let mut reader = Reader::new(body);
    let frame = match frame_type {
        FrameType::Hello => Frame::Hello(decode_hello(&mut reader)?),
        FrameType::Welcome => Frame::Welcome(decode_welcome(&mut reader)?),
        FrameType::Publish => {
            // Checked as a whole, so nothing is left for the reader below.
            return Ok(Frame::Publish(decode_publish(body)?));
        }
        FrameType::Ack => {
            expect_array(&mut reader, "ACK", 3)?;
            let ack_id = reader.read_uint()?;
            let level = frame::read_ack_level(&mut reader)?;
            Frame::Ack(Ack {
                ack_id,
                level,
                count: reader.read_uint()?,
            })
        }
        FrameType::Deliver => Frame::Deliver(decode_deliver(&mut reader, body)?),
        FrameType::Gap => Frame::Gap(decode_gap(&mut reader)?),
        FrameType::Subscribe => {
            expect_array(&mut reader, "SUBSCRIBE", 4)?;
            let cid = read_request_cid(&mut reader)?;
            let subscription = reader.read_uint()?;
            let filter = Filter::decode(&mut reader).map_err(|err| DecodeError::InvalidField {
                field: "filter",
                reason: err.to_string(),
            })?;
            let options = DeliveryOptions::decode(&mut reader)?;
            Frame::Subscribe(Subscribe {
                cid,
                subscription,
                filter,
                options,
            })
        }
        FrameType::Unsubscribe => {
            expect_array(&mut reader, "UNSUBSCRIBE", 2)?;
            Frame::Unsubscribe {
                cid: reader.read_uint()?,
                subscription: reader.read_uint()?,
            }
        }
        FrameType::Ok => {
            expect_array(&mut reader, "OK", 1)?;
            Frame::Ok {
                cid: reader.read_uint()?,
            }
        }
        FrameType::Monitor => {
            expect_array(&mut reader, "MONITOR", 1)?;
            Frame::Monitor {
                cid: read_request_cid(&mut reader)?,
            }
        }
        FrameType::MonitorReply => {
            expect_array(&mut reader, "MONITOR_REPLY", 2)?;
            Frame::MonitorReply {
                cid: reader.read_uint()?,
                data: frame::read_fields(&mut reader)?,
            }
        }
        FrameType::Reload => {
            expect_array(&mut reader, "RELOAD", 1)?;
            Frame::Reload {
                cid: read_request_cid(&mut reader)?,
            }
        }
        FrameType::ReloadReply => {
            expect_array(&mut reader, "RELOAD_REPLY", 2)?;
            Frame::ReloadReply {
                cid: reader.read_uint()?,
                data: frame::read_fields(&mut reader)?,
            }
        }
        FrameType::Info => {
            expect_array(&mut reader, "INFO", 2)?;
            let cid = read_request_cid(&mut reader)?;
            Frame::Info {
                cid,
                request: InfoRequest::decode(&mut reader)?,
            }
        }
        FrameType::InfoReply => {
            let len = read_array_of(&mut reader, "INFO_REPLY", 2..=3)?;
            Frame::InfoReply {
                cid: reader.read_uint()?,
                reply: InfoReply::decode(&mut reader)?,
                more: len == 3 && reader.read_bool()?,
            }
        }
        FrameType::Query => {
            expect_array(&mut reader, "QUERY", 2)?;
            let cid = read_request_cid(&mut reader)?;
            Frame::Query {
                cid,
                request: ArchiveRequest::decode(&mut reader)?,
            }
        }
        FrameType::QueryReply => {
            let len = read_array_of(&mut reader, "QUERY_REPLY", 2..=4)?;
            Frame::QueryReply {
                cid: reader.read_uint()?,
                reply: ArchiveReply::decode(&mut reader, body)?,
                skipped: if len >= 3 { reader.read_uint()? } else { 0 },
                more: len == 4 && reader.read_bool()?,
            }
        }
        FrameType::InfoSubscribe => {
            expect_array(&mut reader, "INFO_SUBSCRIBE", 3)?;
            let cid = read_request_cid(&mut reader)?;
            let subscription = reader.read_uint()?;
            Frame::InfoSubscribe {
                cid,
                subscription,
                selection: SelectionData::decode(&mut reader)?,
            }
        }
        FrameType::Ping => Frame::Ping,
        FrameType::Members => Frame::Members(crate::route::Members::decode(&mut reader)?),
        FrameType::InfoChange => Frame::InfoChange(crate::route::InfoChange::decode(&mut reader)?),
        FrameType::Mirror => Frame::Mirror(crate::route::MirrorFeed::decode(&mut reader)?),
        FrameType::RouteAuth => {
            expect_array(&mut reader, "ROUTE_AUTH", 1)?;
            Frame::RouteAuth(reader.read_bin()?.to_vec())
        }
        FrameType::Pong => Frame::Pong,
        FrameType::Error => {
            expect_array(&mut reader, "ERROR", 3)?;
            let cid = reader.read_uint()?;
            let code = ErrorCode::from_wire(reader.read_str()?);
            Frame::Error(ErrorFrame {
                cid,
                code,
                message: reader.read_str()?.to_string(),
            })
        }
    };
    if !reader.is_empty() {
        return Err(DecodeError::TrailingBytes {
            count: reader.remaining().len(),
            message: frame_type.name(),
        });
    }
    Ok(frame)
}

/// Reads an array header whose length must lie in `lengths` (a frame with optional trailing
/// elements); returns the length.
fn read_array_of(
    reader: &mut Reader<'_>,
    message: &'static str,
    lengths: std::ops::RangeInclusive<u32>,
) -> Result<u32, DecodeError> {
    let found = reader.read_array_len()?;
    if !lengths.contains(&found) {
        return Err(DecodeError::WrongLength {
            message,
            expected: *lengths.start(),
            found,
        });
    }
    Ok(found)
}

/// Reads the correlation id of a request that is always answered. 0 is refused: an `ERROR`
/// with cid 0 means "the connection as a whole", so no answer may carry it.
fn read_request_cid(reader: &mut Reader<'_>) -> Result<u64, DecodeError> {
    match reader.read_uint()? {
        0 => Err(DecodeError::InvalidField {
            field: "cid",
            reason: "0 is reserved for errors of the whole connection; use 1 or more".to_string(),
        }),
        cid => Ok(cid),
    }
}

fn decode_publish(body: &Bytes) -> Result<Publish, DecodeError> {
    crate::request::CheckedPublish::decode(body)?.into_strict()
}

fn decode_deliver(reader: &mut Reader<'_>, body: &Bytes) -> Result<Vec<DeliverEntry>, DecodeError> {
    let count = reader.read_array_len()?;
    let mut entries = Vec::with_capacity((count as usize).min(body.len()));
    for _ in 0..count {
        // Four elements, or on a route six (with the producer's id and number) or seven
        // (and the queue groups the receiver is to serve).
        let found = reader.read_array_len()?;
        if found != 4 && found != 6 && found != 7 {
            return Err(DecodeError::WrongLength {
                message: "DELIVER entry",
                expected: 4,
                found,
            });
        }
        let subscription = reader.read_uint()?;
        let seq = reader.read_uint()?;
        let received = reader.read_int()?;
        let start = reader.position();
        let meta = RecordMeta::scan(reader, start)?;
        let record = RawRecord {
            bytes: body.slice(start..reader.position()),
            meta,
        };
        let (producer, pseq) = if found >= 6 {
            (reader.read_uint()?, reader.read_uint()?)
        } else {
            (0, 0)
        };
        let mut groups = Vec::new();
        if found == 7 {
            let count = reader.read_array_len()?;
            for _ in 0..count {
                groups.push(reader.read_str()?.to_string());
            }
        }
        entries.push(DeliverEntry {
            subscription,
            seq,
            received,
            record,
            producer,
            pseq,
            groups,
        });
    }
    Ok(entries)
}

fn decode_gap(reader: &mut Reader<'_>) -> Result<GapNotice, DecodeError> {
    // Five elements, or six with the member whose route lost the records.
    let found = reader.read_array_len()?;
    if found != 5 && found != 6 {
        return Err(DecodeError::WrongLength {
            message: "GAP",
            expected: 5,
            found,
        });
    }
    let mut gap = GapNotice {
        subscription: reader.read_uint()?,
        count: reader.read_uint()?,
        first_seq: reader.read_uint()?,
        last_seq: reader.read_uint()?,
        by_priority: Vec::new(),
        member: None,
    };
    for _ in 0..reader.read_map_len()? {
        let number = reader.read_uint()?;
        let priority = u8::try_from(number)
            .ok()
            .and_then(|n| Priority::from_u8(n).ok())
            .ok_or_else(|| DecodeError::InvalidField {
                field: "gap priority",
                reason: format!("priority {number} is not defined"),
            })?;
        gap.by_priority.push((priority, reader.read_uint()?));
    }
    if found == 6 {
        gap.member = Some(reader.read_str()?.to_string());
    }
    Ok(gap)
}

fn encode_hello(hello: &Hello, out: &mut Vec<u8>) {
    msgpack::write_map_len(out, if hello.producer == 0 { 5 } else { 6 });
    msgpack::write_uint(out, 0);
    msgpack::write_uint(out, hello.version);
    msgpack::write_uint(out, 1);
    msgpack::write_str(out, &hello.name);
    msgpack::write_uint(out, 2);
    msgpack::write_str(out, &hello.token);
    msgpack::write_uint(out, 3);
    msgpack::write_array_len(out, msgpack::len_u32(hello.capabilities.len()));
    for capability in &hello.capabilities {
        msgpack::write_str(out, capability);
    }
    msgpack::write_uint(out, 4);
    msgpack::write_uint(out, hello.heartbeat_ms);
    if hello.producer != 0 {
        msgpack::write_uint(out, 5);
        msgpack::write_uint(out, hello.producer);
    }
}

/// Walks a map with integer keys `0..names.len()`, refusing unknown, repeated and missing
/// keys.
fn walk_map<'a>(
    reader: &mut Reader<'a>,
    message: &'static str,
    names: &[&'static str],
    visit: impl FnMut(usize, &mut Reader<'a>) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    walk_map_optional(reader, message, names, names.len(), visit)
}

/// As [`walk_map`], where only the first `required` keys must be present.
fn walk_map_optional<'a>(
    reader: &mut Reader<'a>,
    message: &'static str,
    names: &[&'static str],
    required: usize,
    mut visit: impl FnMut(usize, &mut Reader<'a>) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    let mut seen = 0u32;
    for _ in 0..reader.read_map_len()? {
        let key = reader.read_uint()?;
        let Some(index) = usize::try_from(key).ok().filter(|k| *k < names.len()) else {
            return Err(DecodeError::UnknownField {
                key: key.to_string(),
                message,
            });
        };
        if seen & (1 << index) != 0 {
            return Err(DecodeError::DuplicateField {
                field: names[index],
                message,
            });
        }
        seen |= 1 << index;
        visit(index, reader)?;
    }
    if let Some(missing) = (0..required).find(|i| seen & (1 << i) == 0) {
        return Err(DecodeError::MissingField {
            field: names[missing],
            message,
        });
    }
    Ok(())
}

fn decode_hello(reader: &mut Reader<'_>) -> Result<Hello, DecodeError> {
    let mut hello = Hello::default();
    let names = [
        "version",
        "name",
        "token",
        "capabilities",
        "heartbeat_ms",
        "producer",
    ];
    walk_map_optional(reader, "HELLO", &names, 5, |key, reader| {
        match key {
            0 => hello.version = reader.read_uint()?,
            1 => hello.name = reader.read_str()?.to_string(),
            2 => hello.token = reader.read_str()?.to_string(),
            3 => {
                for _ in 0..reader.read_array_len()? {
                    hello.capabilities.push(reader.read_str()?.to_string());
                }
            }
            4 => hello.heartbeat_ms = reader.read_uint()?,
            _ => hello.producer = reader.read_uint()?,
        }
        Ok(())
    })?;
    Ok(hello)
}

fn encode_welcome(welcome: &Welcome, out: &mut Vec<u8>) {
    msgpack::write_map_len(out, 5);
    msgpack::write_uint(out, 0);
    msgpack::write_uint(out, welcome.version);
    msgpack::write_uint(out, 1);
    msgpack::write_str(out, &welcome.server);
    msgpack::write_uint(out, 2);
    msgpack::write_uint(out, welcome.heartbeat_ms);
    msgpack::write_uint(out, 3);
    msgpack::write_uint(out, welcome.max_frame_bytes);
    msgpack::write_uint(out, 4);
    msgpack::write_uint(out, welcome.connection);
}

fn decode_welcome(reader: &mut Reader<'_>) -> Result<Welcome, DecodeError> {
    let mut welcome = Welcome::default();
    let names = [
        "version",
        "server",
        "heartbeat_ms",
        "max_frame_bytes",
        "connection",
    ];
    walk_map(reader, "WELCOME", &names, |key, reader| {
        match key {
            0 => welcome.version = reader.read_uint()?,
            1 => welcome.server = reader.read_str()?.to_string(),
            2 => welcome.heartbeat_ms = reader.read_uint()?,
            3 => welcome.max_frame_bytes = reader.read_uint()?,
            _ => welcome.connection = reader.read_uint()?,
        }
        Ok(())
    })?;
    Ok(welcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::FrameError;
    use crate::frame::AckLevel;
    use crate::kind::Kind;
    use crate::record::Record;

    fn round_trip(frame: &Frame) {
        let bytes = frame.to_bytes();
        let total = frame::check_frame(&bytes, frame::DEFAULT_MAX_FRAME_BYTES)
            .unwrap()
            .unwrap();
        assert_eq!(total, bytes.len());
        let decoded = Frame::decode(Bytes::copy_from_slice(&bytes[4..])).unwrap();
        assert_eq!(&decoded, frame);
        assert_eq!(decoded.to_bytes(), bytes);
    }

    fn publish_of(records: &[Record]) -> Frame {
        let mut body = Vec::new();
        frame::write_publish_header(&mut body, 7, AckLevel::Received, records.len() as u32);
        for record in records {
            record.encode(&mut body);
        }
        let mut bytes = vec![FrameType::Publish as u8];
        bytes.extend_from_slice(&body);
        Frame::decode(Bytes::from(bytes)).unwrap()
    }

    #[test]
    fn every_frame_round_trips() {
        let record = Record {
            text: "hi".into(),
            ..Record::new(Kind::Message, "a.b")
        };
        let frames = [
            Frame::Hello(Hello {
                version: 1,
                name: "x".into(),
                heartbeat_ms: 2000,
                ..Hello::default()
            }),
            Frame::Hello(Hello {
                version: 1,
                name: "numbered".into(),
                producer: u64::MAX,
                ..Hello::default()
            }),
            match publish_of(&[record.clone(), record.clone()]) {
                Frame::Publish(publish) => Frame::Publish(Publish {
                    first_seq: 41,
                    seqs: vec![41, 42],
                    ..publish
                }),
                _ => unreachable!("publish_of makes a PUBLISH"),
            },
            Frame::Welcome(Welcome {
                version: 1,
                server: "s".into(),
                heartbeat_ms: 2000,
                max_frame_bytes: 1 << 20,
                connection: 3,
            }),
            publish_of(&[record.clone(), record.clone()]),
            Frame::Ack(Ack {
                ack_id: 7,
                level: AckLevel::Received,
                count: 2,
            }),
            Frame::Deliver(vec![DeliverEntry {
                subscription: 1,
                seq: 99,
                received: 5,
                record: RawRecord::new(record.to_bytes().into()).unwrap(),
                producer: 0,
                pseq: 0,
                groups: Vec::new(),
            }]),
            Frame::Deliver(vec![DeliverEntry {
                subscription: 0,
                seq: 13,
                received: 5,
                record: RawRecord::new(record.to_bytes().into()).unwrap(),
                producer: 0,
                pseq: 0,
                groups: vec!["workers".into(), "archivers".into()],
            }]),
            Frame::Deliver(vec![DeliverEntry {
                subscription: 0,
                seq: 12,
                received: 5,
                record: RawRecord::new(record.to_bytes().into()).unwrap(),
                producer: 77,
                pseq: 3,
                groups: vec!["workers".into()],
            }]),
            Frame::Gap(GapNotice {
                subscription: 1,
                count: 3,
                first_seq: 100,
                last_seq: 102,
                by_priority: vec![(Priority::Debug, 2), (Priority::Error, 1)],
                member: None,
            }),
            Frame::Gap(GapNotice {
                subscription: 1,
                count: 1,
                first_seq: 7,
                last_seq: 7,
                by_priority: vec![(Priority::Info, 1)],
                member: Some("b".into()),
            }),
            Frame::Subscribe(Subscribe {
                cid: 1,
                subscription: 2,
                filter: Filter::subject("a.*").unwrap(),
                options: DeliveryOptions {
                    policy: crate::Policy::DropOld,
                    latest_per_second: Some(4.0),
                    ..DeliveryOptions::default()
                },
            }),
            Frame::Unsubscribe {
                cid: 3,
                subscription: 2,
            },
            Frame::Ok { cid: 3 },
            Frame::Monitor { cid: 4 },
            Frame::MonitorReply {
                cid: 4,
                data: vec![("clients".into(), value::Value::Int(2))],
            },
            Frame::Reload { cid: 5 },
            Frame::ReloadReply {
                cid: 5,
                data: vec![("applied".into(), value::Value::Array(vec![]))],
            },
            Frame::Ping,
            Frame::Pong,
            Frame::Members(crate::route::Members {
                cluster: "site".into(),
                me: crate::route::Member {
                    id: 9,
                    name: "a".into(),
                    address: "10.0.0.1:7401".into(),
                },
                known: Vec::new(),
                nonce: None,
            }),
            Frame::Members(crate::route::Members {
                cluster: "site".into(),
                nonce: Some(vec![7; 32]),
                ..crate::route::Members::default()
            }),
            Frame::RouteAuth(vec![1; 32]),
            Frame::Error(ErrorFrame {
                cid: 0,
                code: ErrorCode::BadFrame,
                message: "x".into(),
            }),
        ];
        for frame in &frames {
            round_trip(frame);
        }
    }

    #[test]
    fn partial_frames_are_not_errors() {
        let bytes = Frame::Ping.to_bytes();
        assert_eq!(frame::check_frame(&bytes[..3], 100), Ok(None));
        let long = Frame::Ok { cid: 1 }.to_bytes();
        assert_eq!(frame::check_frame(&long[..5], 100), Ok(None));
    }

    #[test]
    fn bad_frames_name_the_problem() {
        assert_eq!(
            frame::check_frame(&[0, 0x20, 0, 0, 1], 1024)
                .unwrap_err()
                .to_string(),
            "frame of 2097152 bytes exceeds the maximum of 1024 bytes"
        );
        assert_eq!(
            frame::check_frame(b"GET / HTTP/1.1", 1024),
            Err(FrameError::Http)
        );
        let err = Frame::decode(Bytes::from_static(&[0x55])).unwrap_err();
        assert_eq!(err.to_string(), "unknown frame type 0x55");
        let err = Frame::decode(Bytes::from_static(&[0x22, 0x92, 1, 2])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "malformed OK frame: OK must be an array of 1 elements, found 2"
        );
        let err = Frame::decode(Bytes::from_static(&[0x40, 0x01])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "malformed PING frame: 1 unexpected bytes after the end of the PING frame"
        );
    }

    #[test]
    fn answered_requests_need_a_nonzero_correlation_id() {
        let monitor = Frame::Monitor { cid: 0 }.to_bytes();
        let err = Frame::decode(Bytes::copy_from_slice(&monitor[4..])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "malformed MONITOR frame: invalid cid: 0 is reserved for errors of the whole connection; use 1 or more"
        );
        let mut publish = vec![FrameType::Publish as u8];
        frame::write_publish_header(&mut publish, 0, AckLevel::Received, 0);
        let err = Frame::decode(Bytes::from(publish)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "malformed PUBLISH frame: invalid ack_id: an acknowledgement needs an ack_id of 1 or more"
        );
    }
}
