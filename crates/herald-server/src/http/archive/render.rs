//! Archive answers as JSON, NDJSON and CSV text.

use herald_info::json::record_json;
use herald_proto::archive::{Bucket, StoredRecord};
use herald_proto::time::format_iso8601;
use herald_proto::Record;
use serde_json::{json, Map, Value as Json};

use super::params::csv_cell;
use crate::http::HttpError;

/// Which columns a CSV of records has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Columns {
    /// One line per field of each sample.
    Samples,
    /// One line per log record.
    Logs,
}

/// Decodes a stored record, or says the archive holds something broken.
///
/// # Errors
/// A 500 naming the sequence number.
pub fn decode(stored: &StoredRecord) -> Result<Record, HttpError> {
    stored.decode().map_err(|err| {
        HttpError::new(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            "storage",
            format!("archived record {} does not decode: {err}", stored.seq),
        )
    })
}

/// The JSON form of a stored record.
///
/// # Errors
/// As [`decode`].
pub fn stored_json(stored: &StoredRecord) -> Result<Json, HttpError> {
    Ok(record_json(&decode(stored)?, stored.seq, stored.received))
}

/// The CSV header for `columns`.
pub fn csv_header(columns: Columns) -> &'static str {
    match columns {
        Columns::Samples => "time,time_ns,seq,name,field,value\n",
        Columns::Logs => "time,time_ns,seq,priority,subject,host,process,text\n",
    }
}

/// Appends the CSV lines of one record.
///
/// # Errors
/// As [`decode`].
pub fn csv_lines(out: &mut String, columns: Columns, stored: &StoredRecord) -> Result<(), HttpError> {
    let record = decode(stored)?;
    let time = format_iso8601(record.time);
    match columns {
        Columns::Samples => {
            for (name, value) in &record.fields {
                out.push_str(&format!(
                    "{time},{},{},{},{},{}\n",
                    record.time,
                    stored.seq,
                    csv_cell(&record.subject),
                    csv_cell(name),
                    csv_cell(&value.to_text())
                ));
            }
        }
        Columns::Logs => out.push_str(&format!(
            "{time},{},{},{},{},{},{},{}\n",
            record.time,
            stored.seq,
            record.priority.name(),
            csv_cell(&record.subject),
            csv_cell(&record.origin.host),
            csv_cell(&record.origin.process),
            csv_cell(&record.text)
        )),
    }
    Ok(())
}

/// The JSON form of one bucket.
pub fn bucket_json(bucket: &Bucket) -> Json {
    let mut fields = Map::new();
    for stats in &bucket.fields {
        fields.insert(
            stats.name.clone(),
            json!({
                "count": stats.count, "min": stats.min, "max": stats.max,
                "mean": stats.mean, "first": stats.first, "last": stats.last,
            }),
        );
    }
    json!({
        "start": format_iso8601(bucket.start),
        "start_ns": bucket.start,
        "end_ns": bucket.end,
        "count": bucket.count,
        "fields": fields,
    })
}

/// The buckets as CSV, one line per bucket and field.
pub fn buckets_csv(buckets: &[Bucket]) -> String {
    let mut out = String::from("start,start_ns,end_ns,count,field,field_count,min,max,mean,first,last\n");
    for bucket in buckets {
        for s in &bucket.fields {
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{},{}\n",
                format_iso8601(bucket.start),
                bucket.start,
                bucket.end,
                bucket.count,
                csv_cell(&s.name),
                s.count,
                s.min,
                s.max,
                s.mean,
                s.first,
                s.last
            ));
        }
    }
    out
}

/// The value of each name at an instant, as JSON: `[{"name", "record": {…} | null}]`.
///
/// # Errors
/// As [`decode`].
pub fn at_json(names: &[String], found: &[Option<StoredRecord>]) -> Result<Json, HttpError> {
    let mut items = Vec::new();
    for (name, stored) in names.iter().zip(found) {
        let record = match stored {
            Some(stored) => stored_json(stored)?,
            None => Json::Null,
        };
        items.push(json!({ "name": name, "record": record }));
    }
    Ok(Json::Array(items))
}
