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
    pub fn encode(&self, out: &mut Vec<u8>) {
        // In key order, which is the order of the fields here (the numbers at 4 and 8).
        let entries = [
            Entry::Text(&self.host),
            Entry::Text(&self.process),
            Entry::Text(&self.thread),
            Entry::Text(&self.file),
            Entry::Number(self.line),
            Entry::Text(&self.routine),
            Entry::Text(&self.context),
            Entry::Text(&self.stack_id),
            Entry::Number(self.stack_level),
            Entry::Text(&self.log_id),
            Entry::Text(&self.uri),
        ];
        let present = |entry: &Entry<'_>| match entry {
            Entry::Text(text) => !text.is_empty(),
            Entry::Number(n) => n.is_some(),
        };
        let count = entries.iter().filter(|e| present(e)).count();
        msgpack::write_map_len(out, count as u32);
        for (key, entry) in (0u64..).zip(&entries) {
            match entry {
                Entry::Text(text) if !text.is_empty() => {
                    msgpack::write_uint(out, key);
                    msgpack::write_str(out, text);
                }
                Entry::Number(Some(n)) => {
                    msgpack::write_uint(out, key);
                    msgpack::write_uint(out, *n);
                }
                _ => {}
            }
        }
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

enum Entry<'a> {
    Text(&'a str),
    Number(Option<u64>),
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
