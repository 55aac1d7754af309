//! Reading: the slots of a source (from the index tables), rows of one slot in (time, seq)
//! order, and the last sample at an instant.

use bytes::Bytes;
use futures_util::future::try_join_all;
use herald_proto::archive::StoredRecord;
use scylla::deserialize::row::DeserializeRow;
use scylla::response::query_result::QueryResult;
use scylla::statement::prepared::PreparedStatement;

use super::schema::{keep_of, keep_value, CLASSES_PART};
use super::write::hour_of;
use super::{execution_error, rows_error, Store};
use crate::backend::{RowRange, Slot, Source};
use crate::entry::{Row, Table};
use crate::error::ArchiveError;

/// Runs `statement` and returns its rows as `R`s.
pub(super) async fn select<R>(
    store: &Store,
    statement: &PreparedStatement,
    values: impl scylla::serialize::row::SerializeRow,
    what: &str,
) -> Result<Vec<R>, ArchiveError>
where
    R: for<'frame, 'metadata> DeserializeRow<'frame, 'metadata>,
{
    let result: QueryResult = store
        .session
        .execute_unpaged(statement, values)
        .await
        .map_err(|err| execution_error(what, &err))?;
    let rows = result
        .into_rows_result()
        .map_err(|err| rows_error(what, err))?;
    let rows = rows
        .rows::<R>()
        .map_err(|err| rows_error(what, err))?
        .collect::<Result<Vec<R>, _>>()
        .map_err(|err| rows_error(what, err));
    rows
}

/// Returns the slots of `source` between the days, inclusive.
pub(super) async fn slots(
    store: &Store,
    source: Source<'_>,
    first_day: i32,
    last_day: i32,
) -> Result<Vec<Slot>, ArchiveError> {
    let statements = &store.statements;
    match source {
        Source::Samples(name) => {
            let values = (name, first_day, last_day);
            let rows: Vec<(i32, i64)> =
                select(store, &statements.name_slots, values, "a name's slots").await?;
            Ok(rows
                .into_iter()
                .map(|(day, keep)| Slot {
                    day,
                    keep: keep_of(keep),
                })
                .collect())
        }
        Source::Logs => {
            let classes: Vec<(i64,)> =
                select(store, &statements.classes, (CLASSES_PART,), "classes").await?;
            let days = classes.iter().map(|(keep,)| {
                let values = (*keep, first_day, last_day);
                select::<(i32, String)>(store, &statements.class_days, values, "a class's days")
            });
            let days = try_join_all(days).await?;
            let mut slots = Vec::new();
            for ((keep,), days) in classes.iter().zip(days) {
                slots.extend(
                    days.into_iter()
                        .filter(|(_, source)| source == Table::Logs.name())
                        .map(|(day, _)| Slot {
                            day,
                            keep: keep_of(*keep),
                        }),
                );
            }
            Ok(slots)
        }
    }
}

/// Where rows start: after a cursor, or at a time.
#[derive(Debug, Clone, Copy)]
enum Lower {
    /// `(time, seq) > (time, seq)`.
    After(i64, i64),
    /// `(time, seq) >= (time, i64::MIN)`.
    From(i64),
}

impl Lower {
    fn of(range: &RowRange) -> Lower {
        match range.after {
            Some(after) if after.time >= range.from => Lower::After(after.time, after.seq as i64),
            _ => Lower::From(range.from),
        }
    }

    fn time(self) -> i64 {
        match self {
            Lower::After(time, _) | Lower::From(time) => time,
        }
    }

    /// Returns the statement to use of the two and its bound.
    fn pick<'a>(
        self,
        after: &'a PreparedStatement,
        from: &'a PreparedStatement,
    ) -> (&'a PreparedStatement, (i64, i64)) {
        match self {
            Lower::After(time, seq) => (after, (time, seq)),
            Lower::From(time) => (from, (time, i64::MIN)),
        }
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
    let statements = &store.statements;
    match source {
        Source::Samples(name) => {
            let (statement, low) = lower.pick(&statements.samples_after, &statements.samples_from);
            let cap = i32::try_from(limit).unwrap_or(i32::MAX);
            let values = (name, day, keep, low.0, low.1, upper.0, upper.1, cap);
            let rows: Vec<(i64, i64, i64, Bytes)> =
                select(store, statement, values, "samples").await?;
            Ok(rows
                .into_iter()
                .map(|(time, seq, received, record)| row(time, seq, received, record))
                .collect())
        }
        Source::Logs => read_logs(store, slot, range, lower, limit).await,
    }
}

/// Reads the hours of the slot's day that `range` covers, in order, keeping the rows of
/// the priorities asked for, until `limit` rows.
async fn read_logs(
    store: &Store,
    slot: Slot,
    range: &RowRange,
    mut lower: Lower,
    limit: usize,
) -> Result<Vec<Row>, ArchiveError> {
    let (keep, day) = (keep_value(slot.keep), slot.day);
    let upper = (range.to, i64::MIN);
    let statements = &store.statements;
    let cap = i32::try_from(limit).unwrap_or(i32::MAX);
    let priorities = range.priorities.bits();
    let first_hour = hour_of(day, lower.time());
    let last_hour = hour_of(day, range.to.saturating_sub(1));
    let mut found = Vec::new();
    for hour in first_hour..=last_hour {
        loop {
            let (statement, low) = lower.pick(&statements.logs_after, &statements.logs_from);
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
    name: &str,
    slot: Slot,
    time: i64,
) -> Result<Option<Row>, ArchiveError> {
    let values = (name, slot.day, keep_value(slot.keep), time);
    let rows: Vec<(i64, i64, i64, Bytes)> = select(
        store,
        &store.statements.last_sample,
        values,
        "the last sample",
    )
    .await?;
    Ok(rows
        .into_iter()
        .next()
        .map(|(time, seq, received, record)| row(time, seq, received, record)))
}
