//! The records a storm passes: a copy of one of its records with the storm's fields
//! ([`herald_proto::storm`] names them). Subject, type, priority, origin, audience and text
//! stay the record's own, so every subscriber that would have seen the storm's records
//! sees its marks.

use herald_proto::frame::RawRecord;
use herald_proto::storm::{self, Summary};
use herald_proto::value::Field;
use herald_proto::Record;

/// The record that starts a storm, marked `collapsing`, with the window in ms.
pub fn collapsing(record: &RawRecord, window_ns: i64) -> RawRecord {
    with_fields(record, storm::collapsing_fields(window_ns))
}

/// A summary's record: `repeated` (or `ended`) with its counts and times.
pub fn summary(summary: &Summary<RawRecord>) -> RawRecord {
    with_fields(&summary.record, storm::summary_fields(summary))
}

/// `record` with `marks` put in (replacing any of the same names it had).
fn with_fields(record: &RawRecord, marks: Vec<Field>) -> RawRecord {
    // The bytes were checked when they came in: they decode.
    let Ok(mut decoded) = Record::from_bytes(&record.bytes) else {
        return record.clone();
    };
    storm::put_marks(&mut decoded.fields, marks);
    RawRecord::from_record(&decoded).unwrap_or_else(|_| record.clone())
}
