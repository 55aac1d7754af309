//! The records a storm passes: a copy of one of its records with the storm's fields
//! ([`herald_proto::storm`] names them). Subject, type, priority, origin, audience and text
//! stay the record's own, so every subscriber that would have seen the storm's records
//! sees its marks.

use bytes::Bytes;
use herald_proto::frame::RawRecord;
use herald_proto::storm::{
    Summary, FROM_FIELD, REPEATED_FIELD, STORM_FIELD, TOTAL_FIELD, TO_FIELD,
};
use herald_proto::{Record, Value};

/// The record that starts a storm, marked `collapsing`, with the window in ms.
pub fn collapsing(record: &RawRecord, window_ns: i64) -> RawRecord {
    let window_ms = Value::Int(window_ns / 1_000_000);
    with_fields(
        record,
        vec![
            (STORM_FIELD, Value::from("collapsing")),
            ("herald.storm_window_ms", window_ms),
        ],
    )
}

/// A summary's record: `repeated` (or `ended`) with its counts and times.
pub fn summary(summary: &Summary<RawRecord>) -> RawRecord {
    let state = match summary.ended {
        Some(_) => "ended",
        None => "repeated",
    };
    let mut fields = vec![
        (STORM_FIELD, Value::from(state)),
        (REPEATED_FIELD, Value::from(summary.repeated)),
        (FROM_FIELD, Value::Time(summary.from)),
        (TO_FIELD, Value::Time(summary.to)),
    ];
    if let Some(total) = summary.ended {
        fields.push((TOTAL_FIELD, Value::from(total)));
    }
    with_fields(&summary.record, fields)
}

/// `record` with `fields` put in (replacing any of the same names it had).
fn with_fields(record: &RawRecord, fields: Vec<(&str, Value)>) -> RawRecord {
    // The bytes were checked when they came in: they decode.
    let Ok(mut decoded) = Record::from_bytes(&record.bytes) else {
        return record.clone();
    };
    decoded
        .fields
        .retain(|(name, _)| !fields.iter().any(|(mark, _)| mark == name));
    decoded.fields.extend(
        fields
            .into_iter()
            .map(|(name, value)| (name.to_string(), value)),
    );
    RawRecord::new(Bytes::from(decoded.to_bytes())).unwrap_or_else(|_| record.clone())
}
