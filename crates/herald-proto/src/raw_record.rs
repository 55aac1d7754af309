//! [`RawRecord`]: one encoded record and where its routing fields are, as a `PUBLISH`
//! frame carries it and as the router, the subscribers' queues and the archive pass it on
//! without decoding it. Below the frame modules (re-exported as `frame::RawRecord`); it
//! uses only the record's own modules.

use bytes::Bytes;

use crate::error::DecodeError;
use crate::msgpack::Reader;
use crate::record::RecordMeta;

/// One record inside a `PUBLISH`: its bytes (a slice of the frame) and routing fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawRecord {
    /// The encoded record, shared with the frame it came in.
    pub bytes: Bytes,
    /// Where its routing fields are.
    pub meta: RecordMeta,
}

impl RawRecord {
    /// Checks `bytes` as one whole record and reads where its routing fields are.
    ///
    /// # Errors
    /// The [`DecodeError`] `Record::decode` would give for the same bytes.
    pub fn new(bytes: Bytes) -> Result<RawRecord, DecodeError> {
        let mut reader = Reader::new(&bytes);
        let meta = RecordMeta::scan(&mut reader, 0)?;
        if !reader.is_empty() {
            return Err(DecodeError::TrailingBytes {
                count: reader.remaining().len(),
                message: "record",
            });
        }
        Ok(RawRecord { bytes, meta })
    }

    /// Encodes `record`, checked as [`RawRecord::new`] checks bytes (while it is written:
    /// [`crate::Record::encode_meta`]).
    ///
    /// # Errors
    /// The [`DecodeError`] `RawRecord::new` would give for its bytes.
    pub fn from_record(record: &crate::Record) -> Result<RawRecord, DecodeError> {
        let mut bytes = Vec::with_capacity(64 + record.text.len());
        let meta = record.encode_meta(&mut bytes)?;
        Ok(RawRecord {
            bytes: bytes.into(),
            meta,
        })
    }

    /// Returns the subject.
    pub fn subject(&self) -> &str {
        self.str_at(self.meta.subject)
    }

    /// Returns the subject's bytes (UTF-8, checked when the record was read): for sorting
    /// and grouping without checking them again.
    pub fn subject_bytes(&self) -> &[u8] {
        let (start, end) = self.meta.subject;
        &self.bytes[start as usize..end as usize]
    }

    /// Returns the type (empty when absent).
    pub fn type_name(&self) -> &str {
        self.str_at(self.meta.type_name)
    }

    /// Returns the encoded audience array (empty when absent).
    pub fn audience(&self) -> &[u8] {
        &self.bytes[self.meta.audience.0 as usize..self.meta.audience.1 as usize]
    }

    fn str_at(&self, (start, end): (u32, u32)) -> &str {
        // The range was checked as UTF-8 by RecordMeta::scan.
        std::str::from_utf8(&self.bytes[start as usize..end as usize]).unwrap_or_default()
    }
}
