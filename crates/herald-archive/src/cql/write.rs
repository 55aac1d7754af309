//! Writing: index rows first (once per process for each name, day and class, as far as
//! [`MAX_REGISTERED`] entries remember), then each partition's entries as block rows
//! (`cql/blocks.rs`), several blocks of one partition in an unlogged batch, many batches in
//! flight.
//!
//! Cassandra checks `batch_size_warn_threshold` (5 KiB) and `batch_size_fail_threshold`
//! (50 KiB) only for batches spanning several partitions (CASSANDRA-10876; ScyllaDB does
//! the same): on 5.0.9 a 200 KiB batch of one partition passes without a warning, the same
//! rows over two partitions fail with "Batch too large". So batches may be larger than
//! 50 KiB; [`BATCH_ROWS`] and [`BATCH_BYTES`] keep each one a modest mutation anyway.
//!
//! With `commitlog_sync: group` or `batch` every batch is acknowledged only after a commit
//! log sync, so writes of many small partitions (few rows per batch) go in slower than
//! with `periodic`.

use std::collections::{HashMap, HashSet};

use futures_util::stream::{self, StreamExt, TryStreamExt};
use scylla::statement::batch::{Batch, BatchType};
use scylla::statement::prepared::PreparedStatement;

use super::blocks::{self, hour_of, BlockRow};
use super::errors::{execution_error, lock};
use super::schema::{keep_value, CLASSES_PART};
use super::store::{Registered, Store};
use crate::entry::{Entry, Table};
use crate::error::ArchiveError;
use crate::keep::Keep;

/// Block rows in one batch at most.
pub(super) const BATCH_ROWS: usize = 16;
/// Block bytes in one batch at most (a batch holds at least one block).
pub(super) const BATCH_BYTES: usize = 256 * 1024;
/// Requests in flight at once: more than a node's `concurrent_writes` (32 by default, 128 on
/// the test node), which with `batch` or `group` sync each wait for a commit log sync.
pub(super) const IN_FLIGHT: usize = 512;

/// Index entries remembered at most; beyond, those of older days are forgotten.
const MAX_REGISTERED: usize = 100_000;

/// A partition of `samples` or `logs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Partition<'a> {
    Samples { name: &'a str, day: i32, keep: Keep },
    Logs { day: i32, hour: i32, keep: Keep },
}

fn partition_of(entry: &Entry) -> Partition<'_> {
    let (day, keep) = (entry.day(), entry.keep);
    match entry.table() {
        Table::Samples => Partition::Samples {
            name: entry.record.subject(),
            day,
            keep,
        },
        Table::Logs => Partition::Logs {
            day,
            hour: hour_of(day, entry.record.meta.time),
            keep,
        },
    }
}

/// Writes `entries`: index rows missing so far, then the blocks. `checked`: every entry
/// passed the record checks ([`crate::Backend::write_checked`]).
pub(super) async fn write(
    store: &Store,
    entries: &[Entry],
    checked: bool,
) -> Result<(), ArchiveError> {
    let mut partitions: HashMap<Partition<'_>, Vec<&Entry>> = HashMap::new();
    for entry in entries {
        partitions
            .entry(partition_of(entry))
            .or_default()
            .push(entry);
    }
    register(store, partitions.keys().copied()).await?;
    let partitions: Vec<(Partition<'_>, Vec<BlockRow>)> = partitions
        .into_iter()
        .map(|(partition, mut entries)| (partition, blocks::build(&mut entries, checked)))
        .collect();
    let mut batches = Vec::new();
    for (partition, rows) in &partitions {
        let mut start = 0;
        while start < rows.len() {
            let (mut end, mut bytes) = (start, 0);
            while end < rows.len() && end - start < BATCH_ROWS {
                bytes += rows[end].bytes.len();
                if end > start && bytes > BATCH_BYTES {
                    break;
                }
                end += 1;
            }
            batches.push((*partition, &rows[start..end]));
            start = end;
        }
    }
    stream::iter(batches)
        .map(|(partition, rows)| write_batch(store, partition, rows))
        .buffer_unordered(IN_FLIGHT)
        .try_for_each(|()| async { Ok(()) })
        .await
}

fn batch_of(statement: &PreparedStatement, rows: usize) -> Batch {
    let mut batch =
        Batch::new_with_statements(BatchType::Unlogged, vec![statement.clone().into(); rows]);
    batch.set_is_idempotent(true);
    batch
}

async fn write_batch(
    store: &Store,
    partition: Partition<'_>,
    rows: &[BlockRow],
) -> Result<(), ArchiveError> {
    let statements = &store.statements;
    let result = match partition {
        Partition::Samples { name, day, keep } => {
            let keep = keep_value(keep);
            let values: Vec<_> = rows
                .iter()
                .map(|b| (name, day, keep, b.start_time, b.start_seq, &b.bytes[..]))
                .collect();
            let batch = batch_of(&statements.insert_sample_block, values.len());
            store.session.batch(&batch, values).await
        }
        Partition::Logs { day, hour, keep } => {
            let keep = keep_value(keep);
            let values: Vec<_> = rows
                .iter()
                .map(|b| (day, hour, keep, b.start_time, b.start_seq, &b.bytes[..]))
                .collect();
            let batch = batch_of(&statements.insert_log_block, values.len());
            store.session.batch(&batch, values).await
        }
    };
    result
        .map(drop)
        .map_err(|err| execution_error("writing a batch", &err))
}

/// Writes the index rows of `partitions` this process has not written yet, and remembers
/// them once all are written.
async fn register<'a>(
    store: &Store,
    partitions: impl Iterator<Item = Partition<'a>>,
) -> Result<(), ArchiveError> {
    let missing: HashSet<Registered> = {
        let registered = lock(&store.registered);
        let mut missing = HashSet::new();
        let mut add = |entry: Registered| {
            if !registered.contains(&entry) {
                missing.insert(entry);
            }
        };
        for partition in partitions {
            let (keep, day, table) = match partition {
                Partition::Samples { name, day, keep } => {
                    let name = name.to_string();
                    add(Registered::Name { name, day, keep });
                    (keep, day, Table::Samples)
                }
                Partition::Logs { day, keep, .. } => (keep, day, Table::Logs),
            };
            add(Registered::Slot { keep, day, table });
            add(Registered::Class(keep));
        }
        missing
    };
    if missing.is_empty() {
        return Ok(());
    }
    stream::iter(&missing)
        .map(|entry| write_index(store, entry))
        .buffer_unordered(IN_FLIGHT)
        .try_for_each(|()| async { Ok(()) })
        .await?;
    let mut registered = lock(&store.registered);
    registered.extend(missing);
    if registered.len() > MAX_REGISTERED {
        forget_old_days(&mut registered);
    }
    Ok(())
}

/// Keeps what was registered for the two newest days (and the classes), or nothing but
/// the classes if that is still too much: what is forgotten is only written again.
fn forget_old_days(registered: &mut HashSet<Registered>) {
    let newest = registered.iter().filter_map(Registered::day).max();
    let oldest_kept = newest.map_or(i32::MIN, |day| day.saturating_sub(1));
    registered.retain(|entry| entry.day().is_none_or(|day| day >= oldest_kept));
    if registered.len() > MAX_REGISTERED {
        registered.retain(|entry| entry.day().is_none());
    }
}

async fn write_index(store: &Store, entry: &Registered) -> Result<(), ArchiveError> {
    let (session, statements) = (&store.session, &store.statements);
    let result = match entry {
        Registered::Name { name, day, keep } => {
            let keep = keep_value(*keep);
            let by_name = session.execute_unpaged(&statements.insert_name_slot, (name, day, keep));
            let by_slot = session.execute_unpaged(&statements.insert_slot_name, (keep, day, name));
            futures_util::future::try_join(by_name, by_slot)
                .await
                .map(drop)
        }
        Registered::Slot { keep, day, table } => session
            .execute_unpaged(
                &statements.insert_slot,
                (keep_value(*keep), day, table.name()),
            )
            .await
            .map(drop),
        Registered::Class(keep) => session
            .execute_unpaged(&statements.insert_class, (CLASSES_PART, keep_value(*keep)))
            .await
            .map(drop),
    };
    result.map_err(|err| execution_error("writing the index", &err))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forgetting_keeps_the_newest_two_days_and_the_classes() {
        let keep = Keep::days(30);
        let mut registered: HashSet<Registered> = (0..10)
            .map(|day| Registered::Name {
                name: "a".into(),
                day,
                keep,
            })
            .chain([Registered::Class(keep)])
            .collect();
        forget_old_days(&mut registered);
        let mut days: Vec<_> = registered.iter().map(Registered::day).collect();
        days.sort_unstable();
        assert_eq!(days, vec![None, Some(8), Some(9)]);
    }
}
