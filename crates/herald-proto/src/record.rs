//! The record: the one envelope for logs, messages and information-object changes.
//!
//! On the wire a record is a MessagePack map with small integer keys (see docs/protocol.md).
//! Encoding writes keys in ascending order and leaves out empty optional fields, so the
//! encoding of a decoded record is byte-for-byte the original.

use crate::error::DecodeError;
use crate::glob::MAX_PATTERN_BYTES;
use crate::kind::Kind;
use crate::msgpack::Reader;
use crate::origin::Origin;
use crate::priority::Priority;
use crate::value::{self, Field};

pub use crate::record_meta::{key, RecordMeta};

/// A record, owned.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Record {
    /// Log, message or info.
    pub kind: Kind,
    /// What it is about (`ANTENNA.DV01.Mount`).
    pub subject: String,
    /// The message type, info type name or log type.
    pub type_name: String,
    /// Producer's timestamp, ns since the Unix epoch.
    pub time: i64,
    /// Priority (INFO unless set).
    pub priority: Priority,
    /// Audiences; empty means everyone.
    pub audience: Vec<String>,
    /// Where the record came from.
    pub origin: Origin,
    /// Human-readable text.
    pub text: String,
    /// Named, typed values.
    pub fields: Vec<Field>,
    /// Subject to send a reply to (requests).
    pub reply_to: Option<String>,
    /// Correlation id (requests and replies).
    pub id: Option<u64>,
}

impl Record {
    /// Returns a record of `kind` about `subject`, stamped with the current time.
    pub fn new(kind: Kind, subject: impl Into<String>) -> Self {
        Record {
            kind,
            subject: subject.into(),
            time: crate::time::now_nanos(),
            ..Record::default()
        }
    }

    /// Returns the wire encoding as a new vector.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.text.len());
        self.encode(&mut out);
        out
    }

    /// Decodes one record from the start of `reader`.
    ///
    /// # Errors
    /// [`DecodeError`] naming the field for anything malformed, unknown or missing.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Record, DecodeError> {
        let mut record = Record::default();
        let mut seen = 0u16;
        for _ in 0..reader.read_map_len()? {
            let field = read_key(reader, &mut seen)?;
            match field {
                key::KIND => record.kind = read_kind(reader)?,
                key::SUBJECT => record.subject = read_subject(reader, "subject")?.to_string(),
                key::TYPE => record.type_name = reader.read_str()?.to_string(),
                key::TIME => record.time = reader.read_int()?,
                key::PRIORITY => record.priority = read_priority(reader)?,
                key::AUDIENCE => {
                    for _ in 0..reader.read_array_len()? {
                        record.audience.push(reader.read_str()?.to_string());
                    }
                }
                key::ORIGIN => record.origin = Origin::decode(reader)?,
                key::TEXT => record.text = reader.read_str()?.to_string(),
                key::FIELDS => record.fields = value::decode_fields(reader, 1)?,
                key::REPLY_TO => {
                    record.reply_to = Some(read_subject(reader, "reply_to")?.to_string())
                }
                _ => record.id = Some(reader.read_uint()?),
            }
        }
        check_required(seen)?;
        Ok(record)
    }

    /// Decodes a record that fills all of `bytes`.
    ///
    /// # Errors
    /// As [`Record::decode`], and [`DecodeError::TrailingBytes`] if bytes remain.
    pub fn from_bytes(bytes: &[u8]) -> Result<Record, DecodeError> {
        let mut reader = Reader::new(bytes);
        let record = Record::decode(&mut reader)?;
        if !reader.is_empty() {
            return Err(DecodeError::TrailingBytes {
                count: reader.remaining().len(),
                message: "record",
            });
        }
        Ok(record)
    }
}

/// Reads a record key, refusing unknown and repeated keys.
fn read_key(reader: &mut Reader<'_>, seen: &mut u16) -> Result<u64, DecodeError> {
    let offset = reader.position();
    let key = reader.read_uint().map_err(|_| DecodeError::UnknownField {
        key: format!("at byte {offset} (keys are integers 0..10)"),
        message: "record",
    })?;
    if key > key::ID {
        return Err(DecodeError::UnknownField {
            key: key.to_string(),
            message: "record",
        });
    }
    let bit = 1u16 << key;
    if *seen & bit != 0 {
        return Err(DecodeError::DuplicateField {
            field: KEY_NAMES[key as usize],
            message: "record",
        });
    }
    *seen |= bit;
    Ok(key)
}

/// Field names by wire key, for error messages.
pub const KEY_NAMES: [&str; 11] = [
    "kind", "subject", "type", "time", "priority", "audience", "origin", "text", "fields",
    "reply_to", "id",
];

fn check_required(seen: u16) -> Result<(), DecodeError> {
    for required in [key::KIND, key::SUBJECT, key::TIME] {
        if seen & (1 << required) == 0 {
            return Err(DecodeError::MissingField {
                field: KEY_NAMES[required as usize],
                message: "record",
            });
        }
    }
    Ok(())
}

fn read_kind(reader: &mut Reader<'_>) -> Result<Kind, DecodeError> {
    let value = reader.read_uint()?;
    u8::try_from(value)
        .ok()
        .and_then(Kind::from_u8)
        .ok_or_else(|| DecodeError::InvalidField {
            field: "kind",
            reason: format!("unknown kind {value} (expected 0 log, 1 message or 2 info)"),
        })
}

fn read_priority(reader: &mut Reader<'_>) -> Result<Priority, DecodeError> {
    let value = reader.read_uint()?;
    u8::try_from(value)
        .ok()
        .and_then(|v| Priority::from_u8(v).ok())
        .ok_or_else(|| DecodeError::InvalidField {
            field: "priority",
            reason: format!("priority {value} is not defined (expected 1..11 without 7)"),
        })
}

/// Reads a subject and checks it can be routed: non-empty, not too long, no wildcards
/// and no control characters.
fn read_subject<'a>(reader: &mut Reader<'a>, field: &'static str) -> Result<&'a str, DecodeError> {
    let subject = reader.read_str()?;
    check_subject(subject).map_err(|reason| DecodeError::InvalidField { field, reason })?;
    Ok(subject)
}

/// Checks that `subject` can be published to.
///
/// # Errors
/// A sentence naming what is wrong with it.
pub fn check_subject(subject: &str) -> Result<(), String> {
    // Fast path: printable ASCII without wildcards, which is nearly every subject.
    if !subject.is_empty()
        && subject.len() <= MAX_PATTERN_BYTES
        && subject
            .bytes()
            .all(|b| (0x20..0x7f).contains(&b) && b != b'*' && b != b'?')
    {
        return Ok(());
    }
    if subject.is_empty() {
        return Err("subject is empty".to_string());
    }
    if subject.len() > MAX_PATTERN_BYTES {
        return Err(format!(
            "subject of {} bytes is longer than 1024",
            subject.len()
        ));
    }
    if let Some(c) = subject
        .chars()
        .find(|c| c.is_control() || *c == '*' || *c == '?')
    {
        return Err(format!(
            "subject `{}` contains {} (subjects may not hold wildcards or control characters)",
            subject.escape_debug(),
            if c.is_control() {
                format!("U+{:04X}", u32::from(c))
            } else {
                format!("`{c}`")
            }
        ));
    }
    Ok(())
}

/// The edition of the checks [`RecordMeta::scan`] (and so every decoder of records, and
/// [`RawRecord::new`](crate::frame::RawRecord::new)) makes. Raise it whenever a record that
/// passed them before no longer does: stores that remember which records passed (the
/// archive's block store notes it per block) check those of an older edition again.
pub const RECORD_CHECKS: u8 = 1;

impl RecordMeta {
    /// Validates one record at the start of `reader` without allocating and returns where
    /// its routing fields are. Offsets are relative to `base`, the reader position at which
    /// the record's bytes start.
    ///
    /// # Errors
    /// The same errors as [`Record::decode`] for the same bytes.
    pub fn scan(reader: &mut Reader<'_>, base: usize) -> Result<RecordMeta, DecodeError> {
        // The records clients write pass here; the rest, and every error, below.
        if let Some((meta, end)) = crate::record_scan::scan(reader.bytes(), reader.position(), base)
        {
            reader.skip_to(end);
            return Ok(meta);
        }
        Self::scan_general(reader, base)
    }

    /// [`RecordMeta::scan`] for every record: each value read through [`Reader`], each
    /// error named.
    pub(crate) fn scan_general(
        reader: &mut Reader<'_>,
        base: usize,
    ) -> Result<RecordMeta, DecodeError> {
        let mut meta = RecordMeta::START;
        let span = |start: usize, end: usize| ((start - base) as u32, (end - base) as u32);
        let mut seen = 0u16;
        for _ in 0..reader.read_map_len()? {
            match read_key(reader, &mut seen)? {
                key::KIND => meta.kind = read_kind(reader)?,
                key::SUBJECT => {
                    let subject = read_subject(reader, "subject")?;
                    meta.subject = span(reader.position() - subject.len(), reader.position());
                }
                key::TYPE => {
                    let range = reader.skip_str()?;
                    meta.type_name = span(range.start, range.end);
                }
                key::TIME => meta.time = reader.read_int()?,
                key::PRIORITY => meta.priority = read_priority(reader)?,
                key::AUDIENCE => {
                    let start = reader.position();
                    for _ in 0..reader.read_array_len()? {
                        reader.skip_str()?;
                    }
                    meta.audience = span(start, reader.position());
                }
                key::ORIGIN => {
                    let parts = Origin::check(reader)?;
                    // An absent part is `0..0`, which no string in a record can be.
                    meta.source = parts.map(|p| match p.end {
                        0 => (0, 0),
                        _ => span(p.start, p.end),
                    });
                }
                key::TEXT => {
                    let range = reader.skip_str()?;
                    meta.text = span(range.start, range.end);
                }
                key::FIELDS => value::check_fields(reader, 1)?,
                key::REPLY_TO => {
                    read_subject(reader, "reply_to")?;
                }
                _ => {
                    reader.read_uint()?;
                }
            }
        }
        check_required(seen)?;
        Ok(meta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msgpack;
    use crate::value::Value;

    fn sample() -> Record {
        Record {
            kind: Kind::Log,
            subject: "ANTENNA.DV01.Mount".into(),
            type_name: "fault".into(),
            time: 1_763_604_000_123_456_789,
            priority: Priority::Warning,
            audience: vec!["operator".into()],
            origin: Origin {
                host: "dv01".into(),
                line: Some(42),
                ..Origin::default()
            },
            text: "encoder fault".into(),
            fields: vec![("axis".into(), Value::from("az"))],
            reply_to: None,
            id: None,
        }
    }

    #[test]
    fn round_trips_byte_for_byte() {
        let bytes = sample().to_bytes();
        let decoded = Record::from_bytes(&bytes).unwrap();
        assert_eq!(decoded, sample());
        assert_eq!(decoded.to_bytes(), bytes);
    }

    #[test]
    fn scan_agrees_with_decode() {
        let bytes = sample().to_bytes();
        let meta = RecordMeta::scan(&mut Reader::new(&bytes), 0).unwrap();
        let text =
            |(a, b): (u32, u32)| std::str::from_utf8(&bytes[a as usize..b as usize]).unwrap();
        assert_eq!(text(meta.subject), "ANTENNA.DV01.Mount");
        assert_eq!(text(meta.type_name), "fault");
        assert_eq!(meta.priority, Priority::Warning);
    }

    #[test]
    fn names_missing_unknown_and_bad_fields() {
        let mut out = Vec::new();
        msgpack::write_map_len(&mut out, 1);
        msgpack::write_uint(&mut out, key::KIND);
        msgpack::write_uint(&mut out, 0);
        let err = Record::from_bytes(&out).unwrap_err();
        assert_eq!(
            err.to_string(),
            "record is missing required field `subject`"
        );

        let mut bad = sample();
        bad.subject = "A.*".into();
        let err = Record::from_bytes(&bad.to_bytes()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid subject: subject `A.*` contains `*` (subjects may not hold wildcards or \
             control characters)"
        );
        let scan_err = RecordMeta::scan(&mut Reader::new(&bad.to_bytes()), 0).unwrap_err();
        assert_eq!(scan_err, err);

        let mut out = Vec::new();
        msgpack::write_map_len(&mut out, 1);
        msgpack::write_uint(&mut out, 11);
        msgpack::write_uint(&mut out, 0);
        assert_eq!(
            Record::from_bytes(&out).unwrap_err().to_string(),
            "unknown field 11 in record"
        );
    }
}
