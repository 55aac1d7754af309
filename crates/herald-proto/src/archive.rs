//! Archive queries on the wire, as the `QUERY` and `QUERY_REPLY` frames carry them. The
//! stores and their rules live in `herald-archive`; this module encodes, decodes and says
//! what a log query matches.

use bytes::Bytes;

use crate::error::DecodeError;
use crate::glob::Glob;
use crate::msgpack::{self, Reader};
use crate::priority::PrioritySet;
use crate::record::Record;
use crate::wire::{expect_array, read_opt_str, write_opt_str};

/// Most records one page may hold; larger limits are refused.
pub const MAX_PAGE_RECORDS: u32 = 100_000;
/// Most buckets a decimated query may ask for.
pub const MAX_BUCKETS: u32 = 100_000;
/// Most names one instant lookup may ask for.
pub const MAX_AT_NAMES: usize = 10_000;

/// Where a page ended: the next page starts strictly after this `(time, seq)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Cursor {
    /// Producer's time of the last record returned (or scanned).
    pub time: i64,
    /// The server's sequence number of that record.
    pub seq: u64,
}

/// The samples of one name (an information object or any subject) in `[from, to)`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SampleQuery {
    /// Object name or subject, exactly.
    pub name: String,
    /// Start, ns since the epoch, inclusive.
    pub from: i64,
    /// End, exclusive.
    pub to: i64,
    /// Continue after this record (the previous page's `next`).
    pub after: Option<Cursor>,
    /// Most records to return.
    pub limit: u32,
}

/// The samples of one name in `[from, to)` folded into `buckets` equal time buckets.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BucketQuery {
    /// Object name or subject, exactly.
    pub name: String,
    /// Start, inclusive.
    pub from: i64,
    /// End, exclusive.
    pub to: i64,
    /// How many buckets to divide `[from, to)` into.
    pub buckets: u32,
    /// Only this numeric field; every numeric field when `None`.
    pub field: Option<String>,
}

/// Log records in `[from, to)` that pass every filter given.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LogQuery {
    /// Start, inclusive.
    pub from: i64,
    /// End, exclusive.
    pub to: i64,
    /// Priorities wanted.
    pub priorities: PrioritySet,
    /// Subject glob (`ANTENNA.*`).
    pub subject: Option<String>,
    /// Origin host, exactly.
    pub host: Option<String>,
    /// Origin process, exactly.
    pub process: Option<String>,
    /// Text containing this string (case-sensitive).
    pub text: Option<String>,
    /// Continue after this record.
    pub after: Option<Cursor>,
    /// Most records to return.
    pub limit: u32,
}

/// The value of each name at one instant: its last sample at or before `time`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AtQuery {
    /// Names, answered in this order.
    pub names: Vec<String>,
    /// The instant, ns since the epoch.
    pub time: i64,
}

/// A query of the archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArchiveRequest {
    /// See [`SampleQuery`].
    Samples(SampleQuery),
    /// See [`BucketQuery`].
    Buckets(BucketQuery),
    /// See [`LogQuery`].
    Logs(LogQuery),
    /// See [`AtQuery`].
    At(AtQuery),
}

/// A record as the archive keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRecord {
    /// The server's sequence number.
    pub seq: u64,
    /// The server's clock when it arrived, ns.
    pub received: i64,
    /// The record's encoding, as the producer sent it.
    pub record: Bytes,
}

impl StoredRecord {
    /// Decodes the record.
    ///
    /// # Errors
    /// [`DecodeError`] if the stored bytes are not a record.
    pub fn decode(&self) -> Result<Record, DecodeError> {
        Record::from_bytes(&self.record)
    }
}

/// One page of records in time order, and where the next page starts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Page {
    /// The records.
    pub records: Vec<StoredRecord>,
    /// `None` when the range is exhausted; else pass it as the next query's `after`.
    pub next: Option<Cursor>,
}

/// Statistics of one numeric field within one bucket.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FieldStats {
    /// Field name.
    pub name: String,
    /// Samples that had the field.
    pub count: u64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// The earliest sample's value.
    pub first: f64,
    /// The latest sample's value.
    pub last: f64,
}

/// One time bucket of a decimated query; buckets without samples are left out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Bucket {
    /// Start, inclusive.
    pub start: i64,
    /// End, exclusive.
    pub end: i64,
    /// Samples in the bucket.
    pub count: u64,
    /// Per numeric field, in the order first seen.
    pub fields: Vec<FieldStats>,
}

/// The answer to an [`ArchiveRequest`].
#[derive(Debug, Clone, PartialEq)]
pub enum ArchiveReply {
    /// Answers `Samples` and `Logs`.
    Page(Page),
    /// Answers `Buckets`.
    Buckets(Vec<Bucket>),
    /// Answers `At`: one entry per name asked, `None` where nothing is archived.
    At(Vec<Option<StoredRecord>>),
}

impl ArchiveReply {
    /// Appends the next part of an answer that came in parts (buckets and values at an
    /// instant; a page is never split). A part of another kind is ignored: a server sends
    /// the parts of one answer in one kind.
    pub fn extend(&mut self, part: ArchiveReply) {
        match (self, part) {
            (ArchiveReply::Buckets(all), ArchiveReply::Buckets(more)) => all.extend(more),
            (ArchiveReply::At(all), ArchiveReply::At(more)) => all.extend(more),
            (ArchiveReply::Page(all), ArchiveReply::Page(more)) => {
                all.records.extend(more.records);
                all.next = more.next;
            }
            _ => {}
        }
    }
}

impl ArchiveRequest {
    /// Points a paged query (samples or logs) at the page after `next`, the previous page's
    /// cursor. Returns false when there is no next page: `next` is `None`, or the query is
    /// not paged.
    pub fn resume_after(&mut self, next: Option<Cursor>) -> bool {
        let after = match self {
            ArchiveRequest::Samples(query) => &mut query.after,
            ArchiveRequest::Logs(query) => &mut query.after,
            ArchiveRequest::Buckets(_) | ArchiveRequest::At(_) => return false,
        };
        match next {
            Some(next) => {
                *after = Some(next);
                true
            }
            None => false,
        }
    }
}

impl LogQuery {
    /// Checks the subject glob.
    ///
    /// # Errors
    /// A sentence naming the bad pattern.
    pub fn subject_glob(&self) -> Result<Option<Glob>, String> {
        self.subject
            .as_deref()
            .map(|pattern| Glob::new(pattern).map_err(|err| err.to_string()))
            .transpose()
    }

    /// Returns whether `record` passes every filter but the time range and the priorities
    /// (which stores apply while they read).
    pub fn matches(&self, subject: Option<&Glob>, record: &Record) -> bool {
        subject.is_none_or(|glob| glob.matches(&record.subject))
            && self.host.as_ref().is_none_or(|h| *h == record.origin.host)
            && self
                .process
                .as_ref()
                .is_none_or(|p| *p == record.origin.process)
            && self
                .text
                .as_ref()
                .is_none_or(|t| record.text.contains(t.as_str()))
    }
}

fn write_cursor(out: &mut Vec<u8>, cursor: Option<Cursor>) {
    match cursor {
        Some(cursor) => {
            msgpack::write_array_len(out, 2);
            msgpack::write_int(out, cursor.time);
            msgpack::write_uint(out, cursor.seq);
        }
        None => msgpack::write_nil(out),
    }
}

fn read_cursor(reader: &mut Reader<'_>) -> Result<Option<Cursor>, DecodeError> {
    if reader.read_nil()? {
        return Ok(None);
    }
    expect_array(reader, "cursor", 2)?;
    Ok(Some(Cursor {
        time: reader.read_int()?,
        seq: reader.read_uint()?,
    }))
}

fn read_u32(reader: &mut Reader<'_>, field: &'static str) -> Result<u32, DecodeError> {
    let value = reader.read_uint()?;
    u32::try_from(value).map_err(|_| DecodeError::InvalidField {
        field,
        reason: format!("{value} is too large"),
    })
}

impl ArchiveRequest {
    /// Appends `[op, arguments]`: 0 samples, 1 buckets, 2 logs, 3 at.
    pub fn encode(&self, out: &mut Vec<u8>) {
        msgpack::write_array_len(out, 2);
        match self {
            ArchiveRequest::Samples(q) => {
                msgpack::write_uint(out, 0);
                msgpack::write_array_len(out, 5);
                msgpack::write_str(out, &q.name);
                msgpack::write_int(out, q.from);
                msgpack::write_int(out, q.to);
                write_cursor(out, q.after);
                msgpack::write_uint(out, u64::from(q.limit));
            }
            ArchiveRequest::Buckets(q) => {
                msgpack::write_uint(out, 1);
                msgpack::write_array_len(out, 5);
                msgpack::write_str(out, &q.name);
                msgpack::write_int(out, q.from);
                msgpack::write_int(out, q.to);
                msgpack::write_uint(out, u64::from(q.buckets));
                write_opt_str(out, q.field.as_deref());
            }
            ArchiveRequest::Logs(q) => {
                msgpack::write_uint(out, 2);
                msgpack::write_array_len(out, 9);
                msgpack::write_int(out, q.from);
                msgpack::write_int(out, q.to);
                msgpack::write_uint(out, u64::from(q.priorities.bits()));
                write_opt_str(out, q.subject.as_deref());
                write_opt_str(out, q.host.as_deref());
                write_opt_str(out, q.process.as_deref());
                write_opt_str(out, q.text.as_deref());
                write_cursor(out, q.after);
                msgpack::write_uint(out, u64::from(q.limit));
            }
            ArchiveRequest::At(q) => {
                msgpack::write_uint(out, 3);
                msgpack::write_array_len(out, 2);
                msgpack::write_array_len(out, msgpack::len_u32(q.names.len()));
                for name in &q.names {
                    msgpack::write_str(out, name);
                }
                msgpack::write_int(out, q.time);
            }
        }
    }

    /// Decodes what [`ArchiveRequest::encode`] wrote.
    ///
    /// # Errors
    /// [`DecodeError`] for malformed bytes or an unknown operation.
    pub fn decode(reader: &mut Reader<'_>) -> Result<ArchiveRequest, DecodeError> {
        expect_array(reader, "archive query", 2)?;
        Ok(match reader.read_uint()? {
            0 => {
                expect_array(reader, "samples query", 5)?;
                ArchiveRequest::Samples(SampleQuery {
                    name: reader.read_str()?.to_string(),
                    from: reader.read_int()?,
                    to: reader.read_int()?,
                    after: read_cursor(reader)?,
                    limit: read_u32(reader, "limit")?,
                })
            }
            1 => {
                expect_array(reader, "buckets query", 5)?;
                ArchiveRequest::Buckets(BucketQuery {
                    name: reader.read_str()?.to_string(),
                    from: reader.read_int()?,
                    to: reader.read_int()?,
                    buckets: read_u32(reader, "buckets")?,
                    field: read_opt_str(reader)?,
                })
            }
            2 => {
                expect_array(reader, "logs query", 9)?;
                let from = reader.read_int()?;
                let to = reader.read_int()?;
                let mask = reader.read_uint()?;
                let bits = u16::try_from(mask).map_err(|_| DecodeError::InvalidField {
                    field: "priorities",
                    reason: format!("{mask} is not a priority mask"),
                })?;
                ArchiveRequest::Logs(LogQuery {
                    from,
                    to,
                    priorities: PrioritySet::from_bits(bits),
                    subject: read_opt_str(reader)?,
                    host: read_opt_str(reader)?,
                    process: read_opt_str(reader)?,
                    text: read_opt_str(reader)?,
                    after: read_cursor(reader)?,
                    limit: read_u32(reader, "limit")?,
                })
            }
            3 => {
                expect_array(reader, "at query", 2)?;
                let mut names = Vec::new();
                for _ in 0..reader.read_array_len()? {
                    names.push(reader.read_str()?.to_string());
                }
                ArchiveRequest::At(AtQuery {
                    names,
                    time: reader.read_int()?,
                })
            }
            op => {
                return Err(DecodeError::InvalidField {
                    field: "archive operation",
                    reason: format!("unknown operation {op} (expected 0..3)"),
                })
            }
        })
    }
}

fn write_stored(out: &mut Vec<u8>, stored: &StoredRecord) {
    msgpack::write_array_len(out, 3);
    msgpack::write_uint(out, stored.seq);
    msgpack::write_int(out, stored.received);
    out.extend_from_slice(&stored.record);
}

fn read_stored(reader: &mut Reader<'_>, body: &Bytes) -> Result<StoredRecord, DecodeError> {
    expect_array(reader, "stored record", 3)?;
    let seq = reader.read_uint()?;
    let received = reader.read_int()?;
    let start = reader.position();
    crate::record::RecordMeta::scan(reader, start)?;
    let record = body.slice(start..reader.position());
    Ok(StoredRecord {
        seq,
        received,
        record,
    })
}

impl ArchiveReply {
    /// Appends `[op, answer]`: 0 page `[[stored, …], cursor]`, 1 buckets, 2 at.
    pub fn encode(&self, out: &mut Vec<u8>) {
        msgpack::write_array_len(out, 2);
        match self {
            ArchiveReply::Page(page) => {
                msgpack::write_uint(out, 0);
                msgpack::write_array_len(out, 2);
                msgpack::write_array_len(out, msgpack::len_u32(page.records.len()));
                for stored in &page.records {
                    write_stored(out, stored);
                }
                write_cursor(out, page.next);
            }
            ArchiveReply::Buckets(buckets) => {
                msgpack::write_uint(out, 1);
                msgpack::write_array_len(out, msgpack::len_u32(buckets.len()));
                for bucket in buckets {
                    msgpack::write_array_len(out, 4);
                    msgpack::write_int(out, bucket.start);
                    msgpack::write_int(out, bucket.end);
                    msgpack::write_uint(out, bucket.count);
                    msgpack::write_array_len(out, msgpack::len_u32(bucket.fields.len()));
                    for stats in &bucket.fields {
                        msgpack::write_array_len(out, 7);
                        msgpack::write_str(out, &stats.name);
                        msgpack::write_uint(out, stats.count);
                        for value in [stats.min, stats.max, stats.mean, stats.first, stats.last] {
                            msgpack::write_f64(out, value);
                        }
                    }
                }
            }
            ArchiveReply::At(found) => {
                msgpack::write_uint(out, 2);
                msgpack::write_array_len(out, msgpack::len_u32(found.len()));
                for stored in found {
                    match stored {
                        Some(stored) => write_stored(out, stored),
                        None => msgpack::write_nil(out),
                    }
                }
            }
        }
    }

    /// Decodes what [`ArchiveReply::encode`] wrote; records are slices of `body`.
    ///
    /// # Errors
    /// [`DecodeError`] for malformed bytes or an unknown answer.
    pub fn decode(reader: &mut Reader<'_>, body: &Bytes) -> Result<ArchiveReply, DecodeError> {
        expect_array(reader, "archive reply", 2)?;
        Ok(match reader.read_uint()? {
            0 => {
                expect_array(reader, "page", 2)?;
                let mut records = Vec::new();
                for _ in 0..reader.read_array_len()? {
                    records.push(read_stored(reader, body)?);
                }
                ArchiveReply::Page(Page {
                    records,
                    next: read_cursor(reader)?,
                })
            }
            1 => {
                let mut buckets = Vec::new();
                for _ in 0..reader.read_array_len()? {
                    expect_array(reader, "bucket", 4)?;
                    let mut bucket = Bucket {
                        start: reader.read_int()?,
                        end: reader.read_int()?,
                        count: reader.read_uint()?,
                        fields: Vec::new(),
                    };
                    for _ in 0..reader.read_array_len()? {
                        expect_array(reader, "field statistics", 7)?;
                        bucket.fields.push(FieldStats {
                            name: reader.read_str()?.to_string(),
                            count: reader.read_uint()?,
                            min: reader.read_f64()?,
                            max: reader.read_f64()?,
                            mean: reader.read_f64()?,
                            first: reader.read_f64()?,
                            last: reader.read_f64()?,
                        });
                    }
                    buckets.push(bucket);
                }
                ArchiveReply::Buckets(buckets)
            }
            2 => {
                let mut found = Vec::new();
                for _ in 0..reader.read_array_len()? {
                    found.push(if reader.read_nil()? {
                        None
                    } else {
                        Some(read_stored(reader, body)?)
                    });
                }
                ArchiveReply::At(found)
            }
            op => {
                return Err(DecodeError::InvalidField {
                    field: "archive answer",
                    reason: format!("unknown answer {op} (expected 0..2)"),
                })
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kind::Kind;
    use crate::priority::Priority;

    fn request_round_trip(request: ArchiveRequest) {
        let mut out = Vec::new();
        request.encode(&mut out);
        let mut reader = Reader::new(&out);
        assert_eq!(ArchiveRequest::decode(&mut reader).unwrap(), request);
        assert!(reader.is_empty());
    }

    #[test]
    fn a_log_query_with_a_mask_beyond_the_priorities_is_refused() {
        let mut out = Vec::new();
        msgpack::write_array_len(&mut out, 2);
        msgpack::write_uint(&mut out, 2);
        msgpack::write_array_len(&mut out, 9);
        msgpack::write_int(&mut out, 0);
        msgpack::write_int(&mut out, 1);
        msgpack::write_uint(&mut out, 1 << 20);
        for _ in 0..5 {
            msgpack::write_nil(&mut out);
        }
        msgpack::write_uint(&mut out, 10);
        let error = ArchiveRequest::decode(&mut Reader::new(&out)).unwrap_err();
        assert!(error.to_string().contains("priorities"), "{error}");
    }

    fn reply_round_trip(reply: ArchiveReply) {
        let mut out = Vec::new();
        reply.encode(&mut out);
        let body = Bytes::from(out);
        let mut reader = Reader::new(&body);
        assert_eq!(ArchiveReply::decode(&mut reader, &body).unwrap(), reply);
        assert!(reader.is_empty());
    }

    #[test]
    fn every_request_and_reply_round_trips() {
        request_round_trip(ArchiveRequest::Samples(SampleQuery {
            name: "RunParams.Rate".into(),
            from: -5,
            to: 10,
            after: Some(Cursor { time: 3, seq: 9 }),
            limit: 100,
        }));
        request_round_trip(ArchiveRequest::Buckets(BucketQuery {
            name: "a".into(),
            from: 0,
            to: 1,
            buckets: 500,
            field: Some("value".into()),
        }));
        request_round_trip(ArchiveRequest::Logs(LogQuery {
            from: 1,
            to: 2,
            priorities: PrioritySet::at_least(Priority::Error),
            subject: Some("ANTENNA.*".into()),
            host: None,
            process: Some("mountd".into()),
            text: Some("stuck".into()),
            after: None,
            limit: 7,
        }));
        request_round_trip(ArchiveRequest::At(AtQuery {
            names: vec!["a".into(), "b".into()],
            time: 42,
        }));
        let record = Record::new(Kind::Info, "RunParams.Rate").to_bytes();
        let stored = StoredRecord {
            seq: 4,
            received: 5,
            record: Bytes::from(record),
        };
        reply_round_trip(ArchiveReply::Page(Page {
            records: vec![stored.clone()],
            next: Some(Cursor { time: 1, seq: 2 }),
        }));
        reply_round_trip(ArchiveReply::Buckets(vec![Bucket {
            start: 0,
            end: 10,
            count: 2,
            fields: vec![FieldStats {
                name: "value".into(),
                count: 2,
                min: 1.0,
                max: 2.0,
                mean: 1.5,
                first: 2.0,
                last: 1.0,
            }],
        }]));
        reply_round_trip(ArchiveReply::At(vec![Some(stored), None]));
    }

    #[test]
    fn log_filters_match_subject_origin_and_text() {
        let mut record = Record::new(Kind::Log, "ANTENNA.DV01.Mount");
        record.origin.host = "ctl1".into();
        record.origin.process = "mountd".into();
        record.text = "axis stuck at 12 deg".into();
        let query = LogQuery {
            subject: Some("ANTENNA.*".into()),
            host: Some("ctl1".into()),
            text: Some("stuck".into()),
            ..LogQuery::default()
        };
        let glob = query.subject_glob().unwrap();
        assert!(query.matches(glob.as_ref(), &record));
        let other_host = LogQuery {
            host: Some("ctl2".into()),
            ..query.clone()
        };
        assert!(!other_host.matches(glob.as_ref(), &record));
        record.text = "fine".into();
        assert!(!query.matches(glob.as_ref(), &record));
    }
}
