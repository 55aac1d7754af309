//! The wire targets: frames out of a byte stream, records and `PUBLISH` bodies, request
//! bodies.

use std::fmt::Debug;

use bytes::Bytes;
use herald_proto::archive::ArchiveRequest;
use herald_proto::frame::{
    check_frame, write_publish_header, AckLevel, FrameType, RawRecord, LENGTH_BYTES,
};
use herald_proto::frame_buffer::FrameBuffer;
use herald_proto::info::{InfoRequest, SelectionData};
use herald_proto::msgpack::{self, Reader};
use herald_proto::request::{request_cid, CheckedPublish};
use herald_proto::{DecodeError, DeliveryOptions, Filter, Frame, FrameError, Record};

use super::{assert_same, selector};

/// Largest frame the buffer takes, chosen by the input's third byte: small limits make the
/// `TooLarge` path as common as the others.
const MAX_FRAME_BYTES: [u32; 4] = [16, 1024, 64 * 1024, 1024 * 1024];

/// Input: `cut: u16 (little-endian) | limit selector: u8 | stream`. The stream goes through
/// a [`FrameBuffer`] whole, then cut in two at `cut % (len + 1)`; both must give the same
/// frames and the same error. Every frame that decodes must re-encode to bytes that decode
/// to an equal frame and encode the same again.
pub fn frame_decode(data: &[u8]) {
    let Some((control, stream)) = data.split_first_chunk::<3>() else {
        return;
    };
    let cut = usize::from(u16::from_le_bytes([control[0], control[1]])) % (stream.len() + 1);
    let max = MAX_FRAME_BYTES[usize::from(control[2] % 4)];
    let whole = take_frames(&[stream], max);
    let (first, second) = stream.split_at(cut);
    let halves = take_frames(&[first, second], max);
    assert_eq!(whole, halves, "cut at {cut} changes what the buffer gives");
    for frame in whole.frames {
        assert!(!frame.is_empty() && frame.len() <= max as usize);
        check_frame_bytes(frame);
    }
}

/// What a [`FrameBuffer`] made of a stream.
#[derive(Debug, Default, PartialEq)]
struct Taken {
    frames: Vec<Bytes>,
    /// The error that would close the connection; nothing is taken after it.
    error: Option<FrameError>,
    /// Bytes waiting for the rest of their frame (when there was no error).
    pending: usize,
}

fn take_frames(parts: &[&[u8]], max_frame_bytes: u32) -> Taken {
    let mut buffer = FrameBuffer::new(max_frame_bytes);
    let mut taken = Taken::default();
    for part in parts {
        buffer.spare().extend_from_slice(part);
        loop {
            match buffer.next_frame() {
                Ok(Some(frame)) => taken.frames.push(frame),
                Ok(None) => break,
                Err(err) => {
                    taken.error = Some(err);
                    return taken;
                }
            }
        }
    }
    taken.pending = buffer.pending();
    taken
}

/// Checks one frame (type byte and body): `request_cid` agrees with the decoded frame, and a
/// frame that decodes survives encode → decode.
fn check_frame_bytes(frame: Bytes) {
    let cid = request_cid(&frame);
    let Ok(decoded) = Frame::decode(frame) else {
        return;
    };
    assert_eq!(cid, first_uint(&decoded), "request_cid of {decoded:?}");
    let bytes = decoded.to_bytes();
    let total = check_frame(&bytes, u32::MAX).expect("an encoded frame has a good prefix");
    assert_eq!(
        total,
        Some(bytes.len()),
        "the length prefix covers the frame"
    );
    let again = Frame::decode(Bytes::copy_from_slice(&bytes[LENGTH_BYTES..]))
        .unwrap_or_else(|err| panic!("re-encoded {decoded:?} does not decode: {err}"));
    assert_same(&decoded, &again, "frame after encode → decode");
    assert_eq!(
        again.to_bytes(),
        bytes,
        "encoding a decoded frame is stable"
    );
}

/// Returns what `request_cid` must read from a frame that decoded: the first element of its
/// body array when that is a non-zero integer.
fn first_uint(frame: &Frame) -> Option<u64> {
    let first = match frame {
        Frame::Publish(publish) => publish.ack_id,
        Frame::Ack(ack) => ack.ack_id,
        Frame::Gap(gap) => gap.subscription,
        Frame::Subscribe(subscribe) => subscribe.cid,
        Frame::Unsubscribe { cid, .. }
        | Frame::Ok { cid }
        | Frame::Monitor { cid }
        | Frame::MonitorReply { cid, .. }
        | Frame::Reload { cid }
        | Frame::ReloadReply { cid, .. }
        | Frame::Info { cid, .. }
        | Frame::InfoReply { cid, .. }
        | Frame::InfoSubscribe { cid, .. }
        | Frame::Query { cid, .. }
        | Frame::QueryReply { cid, .. } => *cid,
        Frame::Error(error) => error.cid,
        // Maps, an array of arrays, or no body at all.
        _ => 0,
    };
    (first != 0).then_some(first)
}

/// Input: `mode: u8 | rest`. Mode `% 4`: 0, one record; 1, a `PUBLISH` built from the
/// records in `rest` (each `len: u16 big-endian | bytes`, ack id and level from the mode's
/// high bits); 2, `rest` as a `PUBLISH` body; 3, `rest` as a frame (type byte and body).
pub fn record_decode(data: &[u8]) {
    let Some((mode, rest)) = selector(data) else {
        return;
    };
    match mode % 4 {
        0 => check_record(rest),
        1 => check_built_publish(mode, rest),
        2 => check_publish_body(rest),
        _ => check_frame_bytes(Bytes::copy_from_slice(rest)),
    }
}

/// `Record::from_bytes` and `RawRecord::new` (`RecordMeta::scan`) agree, and a record that
/// decodes round-trips.
fn check_record(bytes: &[u8]) {
    let full = Record::from_bytes(bytes);
    let raw = RawRecord::new(Bytes::copy_from_slice(bytes));
    let (record, raw) = match (full, raw) {
        (Ok(record), Ok(raw)) => (record, raw),
        (Err(full), Err(raw)) => return assert_eq!(full, raw, "decode and scan refuse alike"),
        (full, raw) => panic!("decode gives {full:?} but scan gives {raw:?}"),
    };
    assert_eq!(raw.meta.kind, record.kind);
    assert_eq!(raw.meta.priority, record.priority);
    assert_eq!(raw.meta.time, record.time);
    assert_eq!(raw.subject(), record.subject);
    assert_eq!(raw.type_name(), record.type_name);
    if !raw.audience().is_empty() {
        let mut reader = Reader::new(raw.audience());
        let count = reader
            .read_array_len()
            .expect("the audience range is an array");
        let names: Vec<&str> = (0..count)
            .map(|_| reader.read_str().expect("audience names are strings"))
            .collect();
        assert!(reader.is_empty(), "the audience range ends with the array");
        assert_eq!(names, record.audience, "audience names");
    } else {
        assert!(record.audience.is_empty(), "audience without a range");
    }
    let encoded = record.to_bytes();
    let again = Record::from_bytes(&encoded)
        .unwrap_or_else(|err| panic!("re-encoded {record:?} does not decode: {err}"));
    assert_same(&record, &again, "record after encode → decode");
    assert_eq!(
        again.to_bytes(),
        encoded,
        "encoding a decoded record is stable"
    );
    RawRecord::new(Bytes::from(encoded)).expect("scan accepts what decode accepts");
}

/// Splits `len: u16 big-endian | bytes` pieces; the last takes what is left.
fn pieces(mut data: &[u8]) -> Vec<&[u8]> {
    let mut pieces = Vec::new();
    while let Some((len, rest)) = data.split_first_chunk::<2>() {
        let len = usize::from(u16::from_be_bytes(*len)).min(rest.len());
        let (piece, after) = rest.split_at(len);
        pieces.push(piece);
        data = after;
    }
    pieces
}

/// Returns true if `piece` is one whole value that a `PUBLISH` can step over: a record, or
/// anything MessagePack `skip_value` ends exactly at its end.
fn is_one_value(piece: &[u8]) -> bool {
    if RawRecord::new(Bytes::copy_from_slice(piece)).is_ok() {
        return true;
    }
    let mut reader = Reader::new(piece);
    reader.skip_value(0).is_ok() && reader.is_empty()
}

/// A `PUBLISH` of whole values: exactly those `RawRecord::new` accepts are routed, in order.
fn check_built_publish(mode: u8, rest: &[u8]) {
    let pieces: Vec<&[u8]> = pieces(rest)
        .into_iter()
        .filter(|p| is_one_value(p))
        .collect();
    let ack = [AckLevel::None, AckLevel::Received, AckLevel::Stored][usize::from(mode >> 2) % 3];
    let ack_id = u64::from(mode >> 4);
    let mut body = Vec::new();
    write_publish_header(&mut body, ack_id, ack, msgpack::len_u32(pieces.len()));
    pieces
        .iter()
        .for_each(|piece| body.extend_from_slice(piece));
    let body = Bytes::from(body);
    let checked = match CheckedPublish::decode(&body) {
        Ok(checked) => checked,
        Err(err) => {
            assert!(ack != AckLevel::None && ack_id == 0, "refused: {err}");
            return;
        }
    };
    assert!(
        ack == AckLevel::None || ack_id != 0,
        "an ack without an ack_id"
    );
    let mut routed = Vec::new();
    let mut first_refused = None;
    for (index, piece) in pieces.iter().enumerate() {
        match RawRecord::new(Bytes::copy_from_slice(piece)) {
            Ok(record) => routed.push(record),
            Err(err) => {
                first_refused.get_or_insert((index as u32, err));
            }
        }
    }
    assert_eq!(checked.publish.records, routed, "routed records");
    assert_eq!(checked.total() as usize, pieces.len());
    assert_eq!(checked.refused as usize, pieces.len() - routed.len());
    let same_error =
        |a: &DecodeError, b: &DecodeError| std::mem::discriminant(a) == std::mem::discriminant(b);
    match (&checked.first_refused, &first_refused) {
        (None, None) => {}
        (Some((at, err)), Some((expected_at, expected))) => {
            assert_eq!(at, expected_at, "first refused record");
            assert!(same_error(err, expected), "{err} vs {expected}");
        }
        (got, expected) => panic!("first refused {got:?}, expected {expected:?}"),
    }
    check_publish_body(&body);
}

/// Any `PUBLISH` body: the counts add up, every routed record stands alone, and strict
/// decoding agrees.
fn check_publish_body(body: &[u8]) {
    let body = Bytes::copy_from_slice(body);
    let mut frame = vec![FrameType::Publish as u8];
    frame.extend_from_slice(&body);
    let strict = Frame::decode(Bytes::from(frame.clone()));
    let checked = match CheckedPublish::decode(&body) {
        Ok(checked) => checked,
        Err(err) => {
            let strict = strict.expect_err("strict decoding refuses what checking refuses");
            let expected = FrameError::Malformed {
                frame: "PUBLISH",
                source: err,
            };
            return assert_eq!(strict, expected);
        }
    };
    let routed = checked.publish.records.len();
    assert_eq!(
        routed as u64 + u64::from(checked.refused),
        u64::from(checked.total())
    );
    assert_eq!(checked.first_refused.is_some(), checked.refused > 0);
    assert_eq!(checked.refusal().is_some(), checked.refused > 0);
    for record in &checked.publish.records {
        let alone = RawRecord::new(record.bytes.clone()).expect("a routed record stands alone");
        assert_eq!(alone.meta, record.meta);
    }
    match strict {
        Ok(Frame::Publish(publish)) => {
            assert_eq!(checked.refused, 0, "strict decoding took a refused record");
            assert_eq!(publish, checked.publish);
        }
        Ok(other) => panic!("a PUBLISH decoded as {other:?}"),
        Err(_) => assert!(
            checked.refused > 0,
            "strict decoding refused a good PUBLISH"
        ),
    }
    check_frame_bytes(Bytes::from(frame));
}

/// Input: `mode: u8 | body`. Mode `% 6`: 0 an `INFO` request, 1 a `QUERY` request, 2
/// delivery options, 3 a filter, 4 a selection (`INFO_SUBSCRIBE`), 5 a whole request frame
/// whose type the body's first byte picks. Each that decodes must survive encode → decode.
pub fn request_decode(data: &[u8]) {
    let Some((mode, body)) = selector(data) else {
        return;
    };
    match mode % 6 {
        0 => round_trip(
            body,
            "info request",
            InfoRequest::decode,
            InfoRequest::encode,
        ),
        1 => round_trip(
            body,
            "query",
            ArchiveRequest::decode,
            ArchiveRequest::encode,
        ),
        2 => round_trip(
            body,
            "options",
            DeliveryOptions::decode,
            DeliveryOptions::encode,
        ),
        3 => round_trip(body, "filter", Filter::decode, Filter::encode),
        4 => round_trip(
            body,
            "selection",
            SelectionData::decode,
            SelectionData::encode,
        ),
        _ => {
            let Some((pick, rest)) = selector(body) else {
                return;
            };
            let types = [
                FrameType::Info,
                FrameType::Query,
                FrameType::Subscribe,
                FrameType::InfoSubscribe,
                FrameType::Unsubscribe,
                FrameType::Monitor,
                FrameType::Reload,
            ];
            let mut frame = vec![types[usize::from(pick) % types.len()] as u8];
            frame.extend_from_slice(rest);
            check_frame_bytes(Bytes::from(frame));
        }
    }
}

fn round_trip<T, E>(
    body: &[u8],
    what: &str,
    decode: impl Fn(&mut Reader<'_>) -> Result<T, E>,
    encode: impl Fn(&T, &mut Vec<u8>),
) where
    T: PartialEq + Debug,
    E: Debug,
{
    let Ok(value) = decode(&mut Reader::new(body)) else {
        return;
    };
    let mut encoded = Vec::new();
    encode(&value, &mut encoded);
    let mut reader = Reader::new(&encoded);
    let again = decode(&mut reader)
        .unwrap_or_else(|err| panic!("{what}: re-encoded {value:?} does not decode: {err:?}"));
    assert!(
        reader.is_empty(),
        "{what}: bytes left after decoding its encoding"
    );
    assert_same(&value, &again, what);
    let mut twice = Vec::new();
    encode(&again, &mut twice);
    assert_eq!(twice, encoded, "{what}: encoding a decoded value is stable");
}
