//! One day file: opening it for writing (creating the schema) or for reading, and the SQL
//! each operation runs. Rows are clustered by their primary key (`WITHOUT ROWID`): samples
//! by (name, time, seq), logs by (time, seq).

use std::path::Path;

use bytes::Bytes;
use herald_proto::archive::StoredRecord;
use rusqlite::{params, Connection, OpenFlags};

use crate::backend::{RowRange, Source};
use crate::entry::{Entry, Row, Table};
use crate::error::ArchiveError;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS samples(
    name TEXT NOT NULL, time INTEGER NOT NULL, seq INTEGER NOT NULL,
    received INTEGER NOT NULL, record BLOB NOT NULL,
    PRIMARY KEY(name, time, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS logs(
    time INTEGER NOT NULL, seq INTEGER NOT NULL, priority INTEGER NOT NULL,
    received INTEGER NOT NULL, record BLOB NOT NULL,
    PRIMARY KEY(time, seq)) WITHOUT ROWID;
";

/// Opens (creating if needed) `path` for writing. Commits survive a crash of the process;
/// the WAL is fsynced by the store's `sync`.
///
/// # Errors
/// [`ArchiveError`] naming the file.
pub fn open_for_write(path: &Path) -> Result<Connection, ArchiveError> {
    let what = || format!("opening {}", path.display());
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|err| ArchiveError::io(&what(), err))?;
    }
    let connection = Connection::open(path).map_err(|err| ArchiveError::io(&what(), err))?;
    connection
        .execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-16384;
             PRAGMA wal_autocheckpoint=4096;",
        )
        .and_then(|()| connection.execute_batch(SCHEMA))
        .map_err(|err| ArchiveError::io(&what(), err))?;
    Ok(connection)
}

/// Opens `path` read-only; `None` if it does not exist.
///
/// # Errors
/// [`ArchiveError`] naming the file.
pub fn open_for_read(path: &Path) -> Result<Option<Connection>, ArchiveError> {
    if !path.exists() {
        return Ok(None);
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let connection = Connection::open_with_flags(path, flags)
        .map_err(|err| ArchiveError::io(&format!("opening {}", path.display()), err))?;
    Ok(Some(connection))
}

/// Inserts `entries` (all of this file's slot) in one transaction.
///
/// # Errors
/// [`ArchiveError`]; the transaction is rolled back.
pub fn insert(connection: &mut Connection, entries: &[&Entry]) -> Result<(), ArchiveError> {
    let transaction = connection.transaction()?;
    {
        let mut samples = transaction.prepare_cached(
            "INSERT OR REPLACE INTO samples(name, time, seq, received, record)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        let mut logs = transaction.prepare_cached(
            "INSERT OR REPLACE INTO logs(time, seq, priority, received, record)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for entry in entries {
            let record = &entry.record;
            let (time, seq) = (record.meta.time, entry.seq as i64);
            match entry.table() {
                Table::Samples => samples.execute(params![
                    record.subject(),
                    time,
                    seq,
                    entry.received,
                    &record.bytes[..]
                ])?,
                Table::Logs => logs.execute(params![
                    time,
                    seq,
                    record.meta.priority as u8,
                    entry.received,
                    &record.bytes[..]
                ])?,
            };
        }
    }
    transaction.commit()?;
    Ok(())
}

fn row(sql_row: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    let record: Vec<u8> = sql_row.get(3)?;
    Ok(Row {
        time: sql_row.get(0)?,
        stored: StoredRecord {
            seq: sql_row.get::<_, i64>(1)? as u64,
            received: sql_row.get(2)?,
            record: Bytes::from(record),
        },
    })
}

/// Reads up to `limit` rows of `source` within `range`, in order.
///
/// # Errors
/// [`ArchiveError`].
pub fn read(
    connection: &Connection,
    source: Source<'_>,
    range: &RowRange,
    limit: usize,
) -> Result<Vec<Row>, ArchiveError> {
    let (after_time, after_seq) = range
        .after
        .map_or((i64::MIN, -1), |c| (c.time, c.seq as i64));
    // The cursor's time is also a plain lower bound on `time`, which SQLite turns into a
    // range start on the primary key; the row-value test alone would make it scan from
    // `from` on every page.
    let from = range.from.max(after_time);
    let limit = limit as i64;
    let rows = match source {
        Source::Samples(name) => {
            let mut statement = connection.prepare_cached(
                "SELECT time, seq, received, record FROM samples
                 WHERE name = ?1 AND time >= ?2 AND time < ?3 AND (time, seq) > (?4, ?5)
                 ORDER BY time, seq LIMIT ?6",
            )?;
            let found = statement.query_map(
                params![name, from, range.to, after_time, after_seq, limit],
                row,
            )?;
            found.collect::<rusqlite::Result<Vec<Row>>>()?
        }
        Source::Logs => {
            let mut statement = connection.prepare_cached(
                "SELECT time, seq, received, record FROM logs
                 WHERE time >= ?1 AND time < ?2 AND (time, seq) > (?3, ?4)
                   AND ((1 << priority) & ?5) != 0
                 ORDER BY time, seq LIMIT ?6",
            )?;
            let mask = i64::from(range.priorities.bits());
            let found = statement.query_map(
                params![from, range.to, after_time, after_seq, mask, limit],
                row,
            )?;
            found.collect::<rusqlite::Result<Vec<Row>>>()?
        }
    };
    Ok(rows)
}

/// Returns the last sample of `name` at or before `time`.
///
/// # Errors
/// [`ArchiveError`].
pub fn last_at(
    connection: &Connection,
    name: &str,
    time: i64,
) -> Result<Option<Row>, ArchiveError> {
    let mut statement = connection.prepare_cached(
        "SELECT time, seq, received, record FROM samples
         WHERE name = ?1 AND time <= ?2 ORDER BY time DESC, seq DESC LIMIT 1",
    )?;
    let mut found = statement.query_map(params![name, time], row)?;
    Ok(found.next().transpose()?)
}
