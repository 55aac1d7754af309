//! Writing a record, and knowing as it is written what the record checks would read of it.
//!
//! A server that makes records itself (the syslog and OpenTelemetry front doors) would
//! otherwise encode each one and then check it with [`RecordMeta::scan`], as it checks what
//! producers publish: a fifth of the syslog listener's time (docs/benchmarks.md).
//! [`Record::encode_meta`] notes where the routing fields go while writing them, and checks
//! the record as it is held in memory: what a `Record` can hold that the checks refuse is
//! little (a subject or `reply_to` that is not one, a field name twice in one map, values
//! nested too deep). Whatever it cannot vouch for goes to the scan, which names the error.
//! A test holds the two to the same answer over records of every shape.

use crate::error::DecodeError;
use crate::msgpack::{self, Reader, MAX_DEPTH};
use crate::record::{check_subject, key, Record, RecordMeta};
use crate::value::{self, Field, Value};

/// Where a record's located parts went in the buffer it was written to.
struct Located {
    subject: (usize, usize),
    type_name: (usize, usize),
    audience: (usize, usize),
    source: [(usize, usize); 3],
    text: (usize, usize),
}

impl Record {
    /// Appends the wire encoding.
    pub fn encode(&self, out: &mut Vec<u8>) {
        self.encode_located::<false>(out);
    }

    /// Appends the wire encoding and returns what [`RecordMeta::scan`] reads from it (its
    /// offsets from the record's first byte), or the error the scan gives (the bytes are
    /// appended either way).
    ///
    /// # Errors
    /// The scan's [`DecodeError`] for a record the checks refuse.
    pub fn encode_meta(&self, out: &mut Vec<u8>) -> Result<RecordMeta, DecodeError> {
        let start = out.len();
        let located = self.encode_located::<true>(out);
        if !self.passes_checks() {
            return RecordMeta::scan(&mut Reader::new(&out[start..]), 0);
        }
        let at = |(from, to): (usize, usize)| match to {
            0 => (0, 0),
            _ => ((from - start) as u32, (to - start) as u32),
        };
        Ok(RecordMeta {
            kind: self.kind,
            priority: self.priority,
            time: self.time,
            subject: at(located.subject),
            type_name: at(located.type_name),
            audience: at(located.audience),
            source: located.source.map(at),
            text: at(located.text),
        })
    }

    /// Returns true only if the checks pass this record; false also where it would take
    /// more than a glance to tell (the scan then decides).
    fn passes_checks(&self) -> bool {
        check_subject(&self.subject).is_ok()
            && self
                .reply_to
                .as_deref()
                .is_none_or(|to| check_subject(to).is_ok())
            && fields_pass(&self.fields, 1)
    }

    /// Writes the record; with `NOTE`, notes where its located parts go (without it, as
    /// [`Record::encode`] calls it, the code notes nothing: it is on every client's path).
    #[inline(always)]
    fn encode_located<const NOTE: bool>(&self, out: &mut Vec<u8>) -> Located {
        let optional = [
            !self.type_name.is_empty(),
            !self.audience.is_empty(),
            !self.origin.is_empty(),
            !self.text.is_empty(),
            !self.fields.is_empty(),
            self.reply_to.is_some(),
            self.id.is_some(),
        ];
        let count = 4 + optional.iter().filter(|present| **present).count();
        let mut located = Located {
            subject: (0, 0),
            type_name: (0, 0),
            audience: (0, 0),
            source: [(0, 0); 3],
            text: (0, 0),
        };
        msgpack::write_map_len(out, count as u32);
        write_key(out, key::KIND);
        msgpack::write_uint(out, self.kind as u64);
        write_key(out, key::SUBJECT);
        msgpack::write_str(out, &self.subject);
        if NOTE {
            located.subject = just_written(out, &self.subject);
        }
        if !self.type_name.is_empty() {
            write_key(out, key::TYPE);
            msgpack::write_str(out, &self.type_name);
            if NOTE {
                located.type_name = just_written(out, &self.type_name);
            }
        }
        write_key(out, key::TIME);
        msgpack::write_int(out, self.time);
        write_key(out, key::PRIORITY);
        msgpack::write_uint(out, self.priority as u64);
        if !self.audience.is_empty() {
            write_key(out, key::AUDIENCE);
            let from = if NOTE { out.len() } else { 0 };
            msgpack::write_array_len(out, msgpack::len_u32(self.audience.len()));
            for name in &self.audience {
                msgpack::write_str(out, name);
            }
            if NOTE {
                located.audience = (from, out.len());
            }
        }
        if !self.origin.is_empty() {
            write_key(out, key::ORIGIN);
            // Not inlined without `NOTE` (a call, as before there was noting: 5 % faster).
            match NOTE {
                true => located.source = self.origin.encode_located::<true>(out),
                false => self.origin.encode(out),
            }
        }
        if !self.text.is_empty() {
            write_key(out, key::TEXT);
            msgpack::write_str(out, &self.text);
            if NOTE {
                located.text = just_written(out, &self.text);
            }
        }
        if !self.fields.is_empty() {
            write_key(out, key::FIELDS);
            value::encode_fields(out, &self.fields);
        }
        if let Some(reply_to) = &self.reply_to {
            write_key(out, key::REPLY_TO);
            msgpack::write_str(out, reply_to);
        }
        if let Some(id) = self.id {
            write_key(out, key::ID);
            msgpack::write_uint(out, id);
        }
        located
    }
}

#[inline(always)]
fn write_key(out: &mut Vec<u8>, key: u64) {
    msgpack::write_uint(out, key);
}

/// Where `text`, just written to `out`, is.
fn just_written(out: &[u8], text: &str) -> (usize, usize) {
    (out.len() - text.len(), out.len())
}

/// Maps of more names than this go to the scan (names are compared pairwise here).
const FEW_NAMES: usize = 16;

/// Returns true only if the checks pass `fields` at nesting `depth` (1 for a record's):
/// no name twice, nothing nested deeper than the checks allow.
fn fields_pass(fields: &[Field], depth: u32) -> bool {
    if fields.len() > FEW_NAMES {
        return false;
    }
    fields.iter().enumerate().all(|(index, (name, value))| {
        !fields[..index].iter().any(|(other, _)| other == name) && value_passes(value, depth)
    })
}

fn value_passes(value: &Value, depth: u32) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match value {
        Value::Array(items) => items.iter().all(|item| value_passes(item, depth + 1)),
        Value::Map(fields) => fields_pass(fields, depth + 1),
        _ => true,
    }
}
