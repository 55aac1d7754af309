//! Archive answers as JSON, NDJSON and CSV text.

use herald_info::json::record_json;
use herald_proto::archive::StoredRecord;
use herald_proto::Record;
use serde_json::Value as Json;

use crate::http::HttpError;
pub use herald_info::csv::Columns;

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

/// Appends the CSV lines of one record.
///
/// # Errors
/// As [`decode`].
pub fn csv_lines(
    out: &mut String,
    columns: Columns,
    stored: &StoredRecord,
) -> Result<(), HttpError> {
    herald_info::csv::record_lines(out, columns, &decode(stored)?, stored.seq);
    Ok(())
}
