//! Reading the row-per-record tables of keyspaces written before block rows (see
//! `cql/schema.rs`): the same answers as before, merged with the blocks' by `cql/read.rs`.

use bytes::Bytes;
use herald_proto::archive::StoredRecord;
use scylla::statement::prepared::PreparedStatement;

use super::blocks::{hour_of, Lower};
use super::schema::{keep_value, Legacy};
use super::store::{select, Store};
use crate::backend::{RowRange, Slot, Source};
use crate::entry::Row;
use crate::error::ArchiveError;

/// Returns the statement to use of the two and its bound.
fn pick<'a>(
    lower: Lower,
    after: &'a PreparedStatement,
    from: &'a PreparedStatement,
) -> (&'a PreparedStatement, (i64, i64)) {
    match lower {
        Lower::After(time, seq) => (after, (time, seq)),
        Lower::From(time) => (from, (time, i64::MIN)),
    }
}

fn row(time: i64, seq: i64, received: i64, record: Bytes) -> Row {
    Row {
        time,
        stored: StoredRecord {
            seq: seq as u64,
            received,
            record,
        },
        checked: false,
    }
}

/// Returns up to `limit` rows of `source` in `slot` within `range`, in (time, seq) order.
pub(super) async fn read(
    store: &Store,
    legacy: &Legacy,
    source: Source<'_>,
    slot: Slot,
    range: &RowRange,
    limit: usize,
) -> Result<Vec<Row>, ArchiveError> {
    let lower = Lower::of(range);
    if limit == 0 || lower.time() >= range.to {
        return Ok(Vec::new());
    }
    let (keep, day) = (keep_value(slot.keep), slot.day);
    let upper = (range.to, i64::MIN);
    match source {
        Source::Samples(name) => {
            let (statement, low) = pick(lower, &legacy.samples_after, &legacy.samples_from);
            let cap = i32::try_from(limit).unwrap_or(i32::MAX);
            let values = (name, day, keep, low.0, low.1, upper.0, upper.1, cap);
            let rows: Vec<(i64, i64, i64, Bytes)> =
                select(store, statement, values, "samples").await?;
            Ok(rows
                .into_iter()
                .map(|(time, seq, received, record)| row(time, seq, received, record))
                .collect())
        }
        Source::Logs => read_logs(store, legacy, slot, range, lower, limit).await,
    }
}

/// Reads the hours of the slot's day that `range` covers, in order, keeping the rows of
/// the priorities asked for, until `limit` rows.
async fn read_logs(
    store: &Store,
    legacy: &Legacy,
    slot: Slot,
    range: &RowRange,
    mut lower: Lower,
    limit: usize,
) -> Result<Vec<Row>, ArchiveError> {
    let (keep, day) = (keep_value(slot.keep), slot.day);
    let upper = (range.to, i64::MIN);
    let cap = i32::try_from(limit).unwrap_or(i32::MAX);
    let priorities = range.priorities.bits();
    let first_hour = hour_of(day, lower.time());
    let last_hour = hour_of(day, range.to.saturating_sub(1));
    let mut found = Vec::new();
    for hour in first_hour..=last_hour {
        loop {
            let (statement, low) = pick(lower, &legacy.logs_after, &legacy.logs_from);
            let values = (day, hour, keep, low.0, low.1, upper.0, upper.1, cap);
            let rows: Vec<(i64, i64, i32, i64, Bytes)> =
                select(store, statement, values, "logs").await?;
            let full = rows.len() == limit;
            for (time, seq, priority, received, record) in rows {
                lower = Lower::After(time, seq);
                let bit = u32::try_from(priority)
                    .ok()
                    .and_then(|p| 1u16.checked_shl(p));
                if bit.is_some_and(|bit| priorities & bit != 0) {
                    found.push(row(time, seq, received, record));
                    if found.len() == limit {
                        return Ok(found);
                    }
                }
            }
            if !full {
                break;
            }
        }
    }
    Ok(found)
}

/// Returns the last sample of `name` in `slot` at or before `time`.
pub(super) async fn last_at(
    store: &Store,
    legacy: &Legacy,
    name: &str,
    slot: Slot,
    time: i64,
) -> Result<Option<Row>, ArchiveError> {
    let values = (name, slot.day, keep_value(slot.keep), time);
    let rows: Vec<(i64, i64, i64, Bytes)> =
        select(store, &legacy.last_sample, values, "the last sample").await?;
    Ok(rows
        .into_iter()
        .next()
        .map(|(time, seq, received, record)| row(time, seq, received, record)))
}
