//! Where a record came from: host, process, thread, and optional source location.

use std::ops::Range;

use crate::error::DecodeError;
use crate::msgpack::{self, Reader};

/// The origin of a record. Empty strings and `None` are left out on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Origin {
    /// Host name.
    pub host: String,
    /// Process name.
    pub process: String,
    /// Thread name or id.
    pub thread: String,
    /// Source file.
    pub file: String,
    /// Source line.
    pub line: Option<u64>,
    /// Function or method.
    pub routine: String,
    /// Free context (component, container, …).
    pub context: String,
    /// Stack id of a chain of errors.
    pub stack_id: String,
    /// Level within that stack.
    pub stack_level: Option<u64>,
    /// Identifier of the log statement or message catalogue entry.
    pub log_id: String,
    /// A URI for more information.
    pub uri: String,
}

/// Origin field names by wire key.
pub(crate) const NAMES: [&str; 11] = [
    "host",
    "process",
    "thread",
    "file",
    "line",
    "routine",
    "context",
    "stack_id",
    "stack_level",
    "log_id",
    "uri",
];
/// Wire keys of the origin's parts that the record checks and storm keys look for.
pub(crate) const HOST: u64 = 0;
pub(crate) const PROCESS: u64 = 1;
pub(crate) const LINE: u64 = 4;
pub(crate) const STACK_LEVEL: u64 = 8;
pub(crate) const LOG_ID: u64 = 9;

impl Origin {
    /// Returns true when every part is empty.
    pub fn is_empty(&self) -> bool {
        self.named_texts().iter().all(|(_, text)| text.is_empty())
            && self.line.is_none()
            && self.stack_level.is_none()
    }

    /// Returns the text parts with their names, in wire-key order (empty ones included).
    pub fn named_texts(&self) -> [(&'static str, &str); 9] {
        [
            ("host", &self.host),
            ("process", &self.process),
            ("thread", &self.thread),
            ("file", &self.file),
            ("routine", &self.routine),
            ("context", &self.context),
            ("stack_id", &self.stack_id),
            ("log_id", &self.log_id),
            ("uri", &self.uri),
        ]
    }

    fn string_mut(&mut self, key: u64) -> &mut String {
        match key {
            0 => &mut self.host,
            1 => &mut self.process,
            2 => &mut self.thread,
            3 => &mut self.file,
            5 => &mut self.routine,
            6 => &mut self.context,
            7 => &mut self.stack_id,
            9 => &mut self.log_id,
            _ => &mut self.uri,
        }
    }

    /// Appends the wire encoding: a map from key to value, keys ascending.
    ///
    /// Written out field by field (no table of entries to walk): it is part of every log
    /// record a client encodes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        self.encode_located::<false>(out);
    }

    /// [`Origin::encode`]; with `NOTE`, returns where in `out` the host, process and log id
    /// strings went (`(0, 0)` for one left out; all `(0, 0)` without `NOTE`, whose code
    /// notes nothing: it is on every client's path).
    #[inline(always)]
    pub(crate) fn encode_located<const NOTE: bool>(
        &self,
        out: &mut Vec<u8>,
    ) -> [(usize, usize); 3] {
        let texts = [
            &self.host,
            &self.process,
            &self.thread,
            &self.file,
            &self.routine,
            &self.context,
            &self.stack_id,
            &self.log_id,
            &self.uri,
        ];
        let count = texts.iter().filter(|t| !t.is_empty()).count()
            + usize::from(self.line.is_some())
            + usize::from(self.stack_level.is_some());
        // At most 11: one byte.
        out.push(0x80 | count as u8);
        let text = |out: &mut Vec<u8>, key: u8, text: &str| {
            if !text.is_empty() {
                out.push(key);
                msgpack::write_str(out, text);
            }
        };
        let number = |out: &mut Vec<u8>, key: u8, number: Option<u64>| {
            if let Some(number) = number {
                out.push(key);
                msgpack::write_uint(out, number);
            }
        };
        // Where `text` just wrote its string, if it did.
        let noted = |out: &Vec<u8>, text: &str| match NOTE && !text.is_empty() {
            true => (out.len() - text.len(), out.len()),
            false => (0, 0),
        };
        // In key order, the keys being the indexes of `NAMES` (each one byte on the wire).
        text(out, 0, &self.host);
        let host = noted(out, &self.host);
        text(out, 1, &self.process);
        let process = noted(out, &self.process);
        text(out, 2, &self.thread);
        text(out, 3, &self.file);
        number(out, 4, self.line);
        text(out, 5, &self.routine);
        text(out, 6, &self.context);
        text(out, 7, &self.stack_id);
        number(out, 8, self.stack_level);
        text(out, 9, &self.log_id);
        let log_id = noted(out, &self.log_id);
        text(out, 10, &self.uri);
        [host, process, log_id]
    }

    /// Decodes an origin map.
    ///
    /// # Errors
    /// [`DecodeError`] for unknown or repeated keys and values of the wrong type.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Origin, DecodeError> {
        let mut origin = Origin::default();
        walk(reader, |key, reader| {
            match key {
                LINE => origin.line = Some(reader.read_uint()?),
                STACK_LEVEL => origin.stack_level = Some(reader.read_uint()?),
                _ => *origin.string_mut(key) = reader.read_str()?.to_string(),
            }
            Ok(())
        })?;
        Ok(origin)
    }

    /// Reads the host, process and log id of an origin map already checked, as bytes (not
    /// checked as UTF-8 again), borrowed.
    ///
    /// # Errors
    /// A [`DecodeError`] for bytes that are not an origin map.
    pub fn source_parts<'a>(reader: &mut Reader<'a>) -> Result<[&'a [u8]; 3], DecodeError> {
        let mut parts: [&[u8]; 3] = [b""; 3];
        walk(reader, |key, reader| {
            match key {
                LINE | STACK_LEVEL => {
                    reader.read_uint()?;
                }
                HOST | PROCESS => parts[key as usize] = reader.read_str_bytes()?,
                LOG_ID => parts[2] = reader.read_str_bytes()?,
                _ => {
                    reader.read_str_bytes()?;
                }
            }
            Ok(())
        })?;
        Ok(parts)
    }

    /// Validates an origin map as [`Origin::decode`] would, without allocating, and returns
    /// where its host, process and log id are in the reader's bytes (empty ranges when
    /// absent): what makes a record's source and storm keys.
    ///
    /// # Errors
    /// The same errors as [`Origin::decode`].
    pub fn check(reader: &mut Reader<'_>) -> Result<[Range<usize>; 3], DecodeError> {
        let mut parts = [0..0, 0..0, 0..0];
        walk(reader, |key, reader| {
            match key {
                LINE | STACK_LEVEL => {
                    reader.read_uint()?;
                }
                HOST | PROCESS => parts[key as usize] = reader.skip_str()?,
                LOG_ID => parts[2] = reader.skip_str()?,
                _ => {
                    reader.skip_str()?;
                }
            }
            Ok(())
        })?;
        Ok(parts)
    }
}

fn walk<'a>(
    reader: &mut Reader<'a>,
    mut visit: impl FnMut(u64, &mut Reader<'a>) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    let mut seen = 0u16;
    for _ in 0..reader.read_map_len()? {
        let key = reader.read_uint()?;
        let Some(name) = NAMES.get(key as usize) else {
            return Err(DecodeError::UnknownField {
                key: key.to_string(),
                message: "origin",
            });
        };
        if seen & (1 << key) != 0 {
            return Err(DecodeError::DuplicateField {
                field: name,
                message: "origin",
            });
        }
        seen |= 1 << key;
        visit(key, reader)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_leaves_out_empty_parts() {
        let origin = Origin {
            host: "dv01".into(),
            process: "mountd".into(),
            line: Some(12),
            uri: "http://x".into(),
            ..Origin::default()
        };
        let mut out = Vec::new();
        origin.encode(&mut out);
        assert_eq!(out[0], 0x84);
        assert_eq!(Origin::decode(&mut Reader::new(&out)).unwrap(), origin);
        Origin::check(&mut Reader::new(&out)).unwrap();
    }
}
