//! Reading: the slots of a source (from the index tables), rows of one slot in (time, seq)
//! order, and the last sample at an instant, from the block rows (`cql/blocks.rs`) and,
//! in keyspaces that have them, the row-per-record tables of earlier versions
//! (`cql/legacy.rs`).

use bytes::Bytes;
use futures_util::future::try_join_all;

use super::blocks::{self, hour_of, key, Lower, Wanted, BLOCK_SPAN};
use super::legacy;
use super::schema::{keep_of, keep_value, CLASSES_PART};
use super::store::{select, Store};
use crate::backend::{RowRange, Slot, Source};
use crate::entry::{Row, Table};
use crate::error::ArchiveError;
use crate::keep::Keep;

/// Block rows read per request.
const PAGE_BLOCKS: usize = 32;

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

/// A partition of `sample_blocks` or `log_blocks`.
#[derive(Debug, Clone, Copy)]
enum Blocks<'a> {
    Samples { name: &'a str, day: i32, keep: i64 },
    Logs { day: i32, hour: i32, keep: i64 },
}

/// Where the next page of blocks starts: at a (start_time, start_seq) or after one.
#[derive(Debug, Clone, Copy)]
enum Next {
    From(i64, i64),
    After(i64, i64),
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
    let mut rows = match source {
        Source::Samples(name) => {
            let wanted = Wanted {
                lower,
                to: range.to,
                priorities: None,
            };
            let partition = Blocks::Samples { name, day, keep };
            read_blocks(store, partition, slot.keep, &wanted, limit).await?
        }
        Source::Logs => {
            let wanted = Wanted {
                lower,
                to: range.to,
                priorities: Some(range.priorities),
            };
            let mut rows = Vec::new();
            let (first_hour, last_hour) = (hour_of(day, lower.time()), hour_of(day, range.to - 1));
            for hour in first_hour..=last_hour {
                let partition = Blocks::Logs { day, hour, keep };
                let left = limit - rows.len();
                rows.extend(read_blocks(store, partition, slot.keep, &wanted, left).await?);
                if rows.len() == limit {
                    break;
                }
            }
            rows
        }
    };
    if let Some(statements) = &store.statements.legacy {
        rows.extend(legacy::read(store, statements, source, slot, range, limit).await?);
        blocks::settle(&mut rows, limit);
    }
    Ok(rows)
}

/// Reads the blocks of `partition` that may hold rows `wanted`, in order, until `limit`
/// rows are certain: those found so far all come before the next block's first.
async fn read_blocks(
    store: &Store,
    partition: Blocks<'_>,
    keep: Keep,
    wanted: &Wanted,
    limit: usize,
) -> Result<Vec<Row>, ArchiveError> {
    let mut rows = Vec::new();
    // A block holds rows of its start to BLOCK_SPAN later.
    let mut next = Next::From(wanted.lower.time().saturating_sub(BLOCK_SPAN), i64::MIN);
    loop {
        let page = blocks_page(store, partition, next, wanted.to).await?;
        let full = page.len() == PAGE_BLOCKS;
        for (start_time, start_seq, block) in page {
            if rows.len() >= limit {
                blocks::settle(&mut rows, limit);
                let last = rows.last().map(|r: &Row| key(r.time, r.stored.seq));
                if rows.len() == limit && last < Some((start_time, start_seq)) {
                    return Ok(rows);
                }
            }
            blocks::decode_into(block, keep, wanted, &mut rows)?;
            next = Next::After(start_time, start_seq);
        }
        if !full {
            break;
        }
    }
    blocks::settle(&mut rows, limit);
    Ok(rows)
}

/// Returns the next page of `partition`'s blocks starting before `to`.
async fn blocks_page(
    store: &Store,
    partition: Blocks<'_>,
    next: Next,
    to: i64,
) -> Result<Vec<(i64, i64, Bytes)>, ArchiveError> {
    let statements = &store.statements;
    let (after, low) = match next {
        Next::From(time, seq) => (false, (time, seq)),
        Next::After(time, seq) => (true, (time, seq)),
    };
    let cap = PAGE_BLOCKS as i32;
    match partition {
        Blocks::Samples { name, day, keep } => {
            let statement = if after {
                &statements.sample_blocks_after
            } else {
                &statements.sample_blocks_from
            };
            let values = (name, day, keep, low.0, low.1, to, i64::MIN, cap);
            select(store, statement, values, "sample blocks").await
        }
        Blocks::Logs { day, hour, keep } => {
            let statement = if after {
                &statements.log_blocks_after
            } else {
                &statements.log_blocks_from
            };
            let values = (day, hour, keep, low.0, low.1, to, i64::MIN, cap);
            select(store, statement, values, "log blocks").await
        }
    }
}

/// Returns the last sample of `name` in `slot` at or before `time`.
pub(super) async fn last_at(
    store: &Store,
    name: &str,
    slot: Slot,
    time: i64,
) -> Result<Option<Row>, ArchiveError> {
    let keep = keep_value(slot.keep);
    let mut best: Option<Row> = None;
    let mut before = (time.saturating_add(1), i64::MIN);
    'pages: loop {
        let values = (name, slot.day, keep, before.0, before.1, PAGE_BLOCKS as i32);
        let page: Vec<(i64, i64, Bytes)> = select(
            store,
            &store.statements.sample_blocks_before,
            values,
            "sample blocks",
        )
        .await?;
        let full = page.len() == PAGE_BLOCKS;
        for (start_time, start_seq, block) in page {
            // This block and those before it hold nothing after start + BLOCK_SPAN.
            if best
                .as_ref()
                .is_some_and(|b| start_time.saturating_add(BLOCK_SPAN) < b.time)
            {
                break 'pages;
            }
            if let Some(row) = blocks::last_at(&block, slot.keep, time)? {
                if best.as_ref().is_none_or(|b| blocks::order(&row, b).is_gt()) {
                    best = Some(row);
                }
            }
            before = (start_time, start_seq);
        }
        if !full {
            break;
        }
    }
    if let Some(statements) = &store.statements.legacy {
        if let Some(row) = legacy::last_at(store, statements, name, slot, time).await? {
            if best.as_ref().is_none_or(|b| blocks::order(&row, b).is_gt()) {
                best = Some(row);
            }
        }
    }
    Ok(best)
}
