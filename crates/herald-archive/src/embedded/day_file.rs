//! One day file: opening it for writing (creating the schema) or for reading, and the SQL
//! each operation runs. Rows are [chunks](super::chunk) clustered by their primary key
//! (`WITHOUT ROWID`): samples by (name, first time, first seq), logs by (first time, first
//! seq).

use std::path::Path;

use bytes::Bytes;
use herald_proto::archive::{Cursor, StoredRecord};
use rusqlite::{params, Connection, OpenFlags};

use super::chunk::{self, Located, MAX_SPAN};
use crate::backend::{RowRange, Source};
use crate::entry::{Entry, Row, Table};
use crate::error::ArchiveError;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS samples(
    name TEXT NOT NULL, time INTEGER NOT NULL, seq INTEGER NOT NULL,
    last_time INTEGER NOT NULL, count INTEGER NOT NULL, data BLOB NOT NULL,
    PRIMARY KEY(name, time, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS logs(
    time INTEGER NOT NULL, seq INTEGER NOT NULL, last_time INTEGER NOT NULL,
    count INTEGER NOT NULL, priorities INTEGER NOT NULL, data BLOB NOT NULL,
    PRIMARY KEY(time, seq)) WITHOUT ROWID;
";

/// Opens (creating if needed) `path` for writing. Commits survive a crash of the process;
/// the WAL is fsynced by the store's `sync`. The store sets its page cache size.
///
/// The store's directories (`<root>/<keep>/`) are created as needed, but not the directory
/// the store lives in: if that is gone (the data directory was removed under a running
/// server), writing fails and says so instead of quietly making a new one.
///
/// # Errors
/// [`ArchiveError`] naming the file.
pub fn open_for_write(path: &Path) -> Result<Connection, ArchiveError> {
    let what = || format!("opening {}", path.display());
    if let Some(keep_dir) = path.parent() {
        let home = keep_dir.parent().and_then(Path::parent);
        if let Some(home) = home.filter(|h| !h.as_os_str().is_empty() && !h.exists()) {
            let gone = std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("the directory {} is gone", home.display()),
            );
            return Err(ArchiveError::io(&what(), gone));
        }
        std::fs::create_dir_all(keep_dir).map_err(|err| ArchiveError::io(&what(), err))?;
    }
    let connection = Connection::open(path).map_err(|err| ArchiveError::io(&what(), err))?;
    connection
        .execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=4096;",
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
    let what = || format!("opening {}", path.display());
    let connection =
        Connection::open_with_flags(path, flags).map_err(|err| ArchiveError::io(&what(), err))?;
    // The writer creates the file before its tables: until they are committed the file
    // holds nothing to read (and a connection that saw it empty must not be kept).
    let tables: i64 = connection
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name IN ('samples', 'logs')",
            [],
            |row| row.get(0),
        )
        .map_err(|err| ArchiveError::io(&what(), err))?;
    Ok((tables == 2).then_some(connection))
}

/// Inserts `entries` (all of this file's slot, sorted by table, name, time and sequence)
/// in one transaction, as chunks.
///
/// # Errors
/// [`ArchiveError`]; the transaction is rolled back.
pub fn insert(connection: &mut Connection, entries: &[&Entry]) -> Result<(), ArchiveError> {
    let transaction = connection.transaction()?;
    {
        let mut samples = transaction.prepare_cached(
            "INSERT OR REPLACE INTO samples(name, time, seq, last_time, count, data)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        let mut logs = transaction.prepare_cached(
            "INSERT OR REPLACE INTO logs(time, seq, last_time, count, priorities, data)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        let same_group = |a: &&Entry, b: &&Entry| {
            a.table() == b.table()
                && (a.table() == Table::Logs
                    || a.record.subject_bytes() == b.record.subject_bytes())
        };
        for group in entries.chunk_by(same_group) {
            for chunk in chunk::chunks(group) {
                let (time, seq) = (chunk.time, chunk.seq as i64);
                let count = chunk.count as i64;
                match group[0].table() {
                    Table::Samples => samples.execute(params![
                        group[0].record.subject(),
                        time,
                        seq,
                        chunk.last_time,
                        count,
                        chunk.data
                    ])?,
                    Table::Logs => logs.execute(params![
                        time,
                        seq,
                        chunk.last_time,
                        count,
                        i64::from(chunk.priorities),
                        chunk.data
                    ])?,
                };
            }
        }
    }
    transaction.commit()?;
    Ok(())
}

/// Chunks as they are read: their bytes copied into one buffer, their entries located in
/// it, those not yet known to be in order kept pending.
struct Merge<'a> {
    range: &'a RowRange,
    limit: usize,
    buffer: Vec<u8>,
    pending: Vec<Located>,
    out: Vec<Located>,
}

impl Merge<'_> {
    /// Takes one chunk starting at `start`. Every chunk after it starts at or after `start`,
    /// so pending entries before `start` are final. Returns false once the output is full.
    fn chunk(&mut self, start: i64, data: &[u8]) -> Result<bool, ArchiveError> {
        if let [only] = self.pending[..] {
            // One record per chunk (a slow signal): nothing to sort.
            if only.time < start {
                self.out.push(only);
                self.pending.clear();
                if self.out.len() >= self.limit {
                    return Ok(false);
                }
            }
        } else if self.pending.iter().any(|entry| entry.time < start) {
            self.pending.sort_unstable_by_key(Located::cursor);
            let ready = self.pending.partition_point(|entry| entry.time < start);
            self.out.extend(self.pending.drain(..ready));
            if self.out.len() >= self.limit {
                return Ok(false);
            }
        }
        let range = self.range;
        if self.buffer.capacity() == 0 {
            // Room for a full answer of records like this one, so the buffer is not copied
            // again and again as it grows.
            self.buffer
                .reserve(data.len().max(128) * self.limit.min(16_384));
        }
        let base = self.buffer.len();
        self.buffer.extend_from_slice(data);
        chunk::decode(data, base, |entry| {
            let wanted = entry.time >= range.from
                && entry.time < range.to
                && range.after.is_none_or(|after| entry.cursor() > after)
                && range.priorities.bits() & (1 << entry.priority) != 0;
            if wanted {
                self.pending.push(entry);
            }
        })?;
        Ok(true)
    }

    fn finish(mut self) -> Vec<Row> {
        self.pending.sort_unstable_by_key(Located::cursor);
        self.out.append(&mut self.pending);
        self.out.truncate(self.limit);
        let buffer = Bytes::from(self.buffer);
        self.out
            .iter()
            .map(|entry| Row {
                time: entry.time,
                stored: StoredRecord {
                    seq: entry.seq,
                    received: entry.received,
                    record: buffer.slice(entry.start..entry.end),
                },
                checked: false,
            })
            .collect()
    }
}

fn blob<'r>(row: &'r rusqlite::Row<'_>, index: usize) -> rusqlite::Result<&'r [u8]> {
    Ok(row.get_ref(index)?.as_blob()?)
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
    let lower = range
        .after
        .map_or(range.from, |c: Cursor| c.time.max(range.from));
    // Chunks starting up to MAX_SPAN earlier may reach into the range.
    let first_start = lower.saturating_sub(MAX_SPAN);
    let mut merge = Merge {
        range,
        limit,
        buffer: Vec::new(),
        pending: Vec::new(),
        out: Vec::with_capacity(limit.min(16_384)),
    };
    let mut statement;
    let mut rows = match source {
        Source::Samples(name) => {
            statement = connection.prepare_cached(
                "SELECT data FROM samples WHERE name = ?1 AND time >= ?2 ORDER BY time, seq",
            )?;
            // The end of the range is checked below, per chunk: one comparison less per row.
            statement.query(params![name, first_start])?
        }
        Source::Logs => {
            statement = connection.prepare_cached(
                "SELECT data FROM logs WHERE time >= ?1 AND time < ?2
                   AND (priorities & ?3) != 0 ORDER BY time, seq",
            )?;
            let mask = i64::from(range.priorities.bits());
            statement.query(params![first_start, range.to, mask])?
        }
    };
    while let Some(row) = rows.next()? {
        // A chunk's key time is its first entry's, the blob's first eight bytes.
        let data = blob(row, 0)?;
        let start = chunk::first_time(data)?;
        if start >= range.to || !merge.chunk(start, data)? {
            break;
        }
    }
    Ok(merge.finish())
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
    // Chunks overlap by at most MAX_SPAN: the answer is in the last chunk starting at or
    // before `time`, or in one starting up to MAX_SPAN before that one.
    let mut latest = connection.prepare_cached(
        "SELECT time FROM samples WHERE name = ?1 AND time <= ?2 ORDER BY time DESC LIMIT 1",
    )?;
    let Some(start) = latest
        .query_row(params![name, time], |row| row.get::<_, i64>(0))
        .map(Some)
        .or_else(|err| match err {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            err => Err(err),
        })?
    else {
        return Ok(None);
    };
    let mut near = connection
        .prepare_cached("SELECT data FROM samples WHERE name = ?1 AND time >= ?2 AND time <= ?3")?;
    let mut rows = near.query(params![name, start.saturating_sub(MAX_SPAN), start])?;
    let mut best: Option<(Located, Bytes)> = None;
    while let Some(row) = rows.next()? {
        let data = blob(row, 0)?;
        let mut found: Option<Located> = None;
        chunk::decode(data, 0, |entry| {
            let better = |than: &Located| entry.cursor() > than.cursor();
            let beats_best = best.as_ref().is_none_or(|(b, _)| better(b));
            if entry.time <= time && beats_best && found.as_ref().is_none_or(better) {
                found = Some(entry);
            }
        })?;
        if let Some(entry) = found {
            best = Some((entry, Bytes::copy_from_slice(data)));
        }
    }
    Ok(best.map(|(entry, data)| Row {
        time: entry.time,
        stored: StoredRecord {
            seq: entry.seq,
            received: entry.received,
            record: data.slice(entry.start..entry.end),
        },
        checked: false,
    }))
}
