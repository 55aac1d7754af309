//! The syslog target: what the syslog listeners take from the network — one message (a UDP
//! datagram, a TCP frame) read, made a record and written, and a TCP stream cut into frames.

use bytes::BytesMut;
use herald_proto::frame::RawRecord;
use herald_proto::{Kind, Record};
use herald_server::syslog::listen::{Frame, Framer};
use herald_server::syslog::parse::parse;
use herald_server::syslog::record::{fill, Template};

use super::{assert_same, selector};

/// A day in nanoseconds.
const DAY: i64 = 86_400_000_000_000;
/// The templates a record's subject is made with: the default, and every placeholder.
const TEMPLATES: [&str; 2] = [
    "syslog.{host}.{app}",
    "{facility}.{severity}.{procid}.{msgid}",
];

/// Input: `mode: u8 | rest`. Mode even: `now: i64 (8 bytes, little-endian) | message` —
/// one message, read at `now` (kept within 1971–2261): when it reads, the record made of it
/// holds its text, time (or `now`) and message id under both templates, and either passes
/// the record checks with the routing fields `encode_meta` gave, decoding back to itself,
/// or is refused by both; a RFC 3164 time stamp falls in the year before `now` (or up to a
/// day ahead). Mode odd: `cut: u16 | max: u16 | stream` (little-endian) — a TCP stream
/// through the RFC 6587 framer with frames of at most `max` bytes, whole and cut in two at
/// `cut`: the same messages and the same bad-input reports, no message longer than `max`.
pub fn syslog_parse(data: &[u8]) {
    let Some((mode, rest)) = selector(data) else {
        return;
    };
    if mode % 2 == 0 {
        message(rest);
    } else {
        stream(rest);
    }
}

fn message(data: &[u8]) {
    let Some((now, bytes)) = data.split_first_chunk::<8>() else {
        return;
    };
    let now = i64::from_le_bytes(*now).rem_euclid(290 * 365 * DAY) + 365 * DAY;
    let Ok(message) = parse(bytes, now) else {
        return;
    };
    if let (Some(time), false) = (message.time, is_rfc5424(bytes)) {
        assert!(
            time > now - 367 * DAY && time <= now + DAY,
            "RFC 3164 time {time} is not in the year before {now}"
        );
    }
    let mut record = Record::new(Kind::Log, "");
    for template in TEMPLATES {
        fill(
            &mut record,
            message.clone(),
            &Template::new(template),
            now,
            "192.0.2.1",
        );
        assert_eq!(record.text, message.text, "the record's text");
        assert_eq!(
            record.time,
            message.time.unwrap_or(now),
            "the record's time"
        );
        assert_eq!(record.origin.log_id, message.msgid.unwrap_or_default());
        let mut bytes = Vec::new();
        match record.encode_meta(&mut bytes) {
            Ok(meta) => {
                let raw = RawRecord::new(bytes.clone().into())
                    .expect("a record encode_meta passed passes the record checks");
                assert_eq!(
                    raw.meta, meta,
                    "encode_meta's routing fields against the scan's"
                );
                let back = Record::from_bytes(&bytes).expect("a checked record decodes");
                assert_same(&back, &record, "the record decoded back");
            }
            Err(_) => {
                bytes.clear();
                record.encode(&mut bytes);
                assert!(
                    RawRecord::new(bytes.into()).is_err(),
                    "encode_meta refused a record the checks pass"
                );
            }
        }
    }
}

/// Whether `bytes` is read as RFC 5424: a version digit and a space after `<PRI>`.
fn is_rfc5424(bytes: &[u8]) -> bool {
    let Some(close) = bytes.iter().position(|b| *b == b'>') else {
        return false;
    };
    matches!(bytes.get(close + 1..close + 3), Some([digit, b' ']) if digit.is_ascii_digit())
}

fn stream(data: &[u8]) {
    let Some((head, stream)) = data.split_first_chunk::<4>() else {
        return;
    };
    let cut = usize::from(u16::from_le_bytes([head[0], head[1]])) % (stream.len() + 1);
    let max = usize::from(u16::from_le_bytes([head[2], head[3]])).max(1);
    let whole = frames(&[stream], max);
    let parts = frames(&[&stream[..cut], &stream[cut..]], max);
    assert_eq!(whole, parts, "the stream whole and cut at {cut}");
}

/// The frames of `pieces` read one after the other (the stream ends with the last), as the
/// listener's text: `M` and the message, or `B` and why it is bad.
fn frames(pieces: &[&[u8]], max: usize) -> Vec<String> {
    let mut framer = Framer::new(max);
    let mut buffer = BytesMut::new();
    let mut out = Vec::new();
    for (index, piece) in pieces.iter().enumerate() {
        buffer.extend_from_slice(piece);
        let ended = index + 1 == pieces.len();
        framer.frames(&mut buffer, ended, |frame| {
            out.push(match frame {
                Frame::Message(message) => {
                    assert!(message.len() <= max, "a message of {} bytes", message.len());
                    format!("M {message:?}")
                }
                Frame::Bad(why, _) => format!("B {why}"),
            });
        });
    }
    out
}
