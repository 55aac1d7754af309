//! Chunks: the embedded store keeps the records of one name (or, for logs, of one stretch of
//! time) that arrive in one batch as one row — up to [`MAX_ENTRIES`] records and about
//! [`MAX_BYTES`] bytes spanning at most [`MAX_SPAN`] of producer time. At high rates that
//! turns dozens of B-tree inserts into one; at 1 Hz a chunk holds one record and the layout
//! is that of a row per record.
//!
//! A chunk's blob is its entries in `(time, seq)` order, each
//! `time i64 | seq u64 | received i64 | priority u8 | length u32 | record`, little-endian.

use herald_proto::archive::Cursor;

use crate::entry::Entry;
use crate::error::{ArchiveError, ArchiveErrorKind};

/// Widest stretch of producer time one chunk covers, in nanoseconds. Readers look this far
/// before a range for chunks reaching into it.
pub const MAX_SPAN: i64 = 60_000_000_000;
/// Most records in one chunk.
pub const MAX_ENTRIES: usize = 1024;
/// Most bytes in one chunk (unless one record is larger). `herald bench archive` (100-byte
/// records, ~100 per name and batch) wrote 350–370k records/s with 2,000-byte chunks and
/// 520–670k with 16,000 (SQLite's overflow pages cost less than the extra rows); 16 KiB
/// pages were slower than 4 KiB ones.
pub const MAX_BYTES: usize = 16_000;
/// Bytes of an entry's header.
const HEADER: usize = 29;

/// A chunk ready to insert: its key, extent and blob.
#[derive(Debug)]
pub struct Chunk {
    /// First entry's time: the row's key after the name.
    pub time: i64,
    /// First entry's sequence.
    pub seq: u64,
    /// Last entry's time.
    pub last_time: i64,
    /// Entries.
    pub count: usize,
    /// Priority bits of its entries (bit n = priority n).
    pub priorities: u16,
    /// Encoded entries.
    pub data: Vec<u8>,
}

/// Splits `entries` — sorted by `(time, seq)` and all of one row group (a name's samples, or
/// logs) — into chunks.
pub fn chunks(entries: &[&Entry]) -> Vec<Chunk> {
    let mut chunks: Vec<Chunk> = Vec::new();
    for entry in entries {
        let time = entry.record.meta.time;
        let record = &entry.record.bytes;
        let fits = chunks.last().is_some_and(|c| {
            c.count < MAX_ENTRIES
                && c.data.len() + HEADER + record.len() <= MAX_BYTES
                && time.saturating_sub(c.time) <= MAX_SPAN
        });
        if !fits {
            chunks.push(Chunk {
                time,
                seq: entry.seq,
                last_time: time,
                count: 0,
                priorities: 0,
                data: Vec::with_capacity(HEADER + record.len()),
            });
        }
        let chunk = chunks.last_mut().expect("pushed above");
        chunk.data.extend_from_slice(&time.to_le_bytes());
        chunk.data.extend_from_slice(&entry.seq.to_le_bytes());
        chunk.data.extend_from_slice(&entry.received.to_le_bytes());
        chunk.data.push(entry.record.meta.priority as u8);
        chunk
            .data
            .extend_from_slice(&(record.len() as u32).to_le_bytes());
        chunk.data.extend_from_slice(record);
        chunk.last_time = time;
        chunk.count += 1;
        chunk.priorities |= entry.record.meta.priority.bit();
    }
    chunks
}

/// One entry of a chunk, located in the buffer the chunk was read into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Located {
    /// Producer's time.
    pub time: i64,
    /// Sequence number.
    pub seq: u64,
    /// The server's arrival time.
    pub received: i64,
    /// Priority number.
    pub priority: u8,
    /// Where the record's bytes start in the buffer.
    pub start: usize,
    /// Where they end.
    pub end: usize,
}

impl Located {
    /// Returns the entry's position, as a cursor.
    pub fn cursor(&self) -> Cursor {
        Cursor {
            time: self.time,
            seq: self.seq,
        }
    }
}

fn corrupt() -> ArchiveError {
    ArchiveError::new(ArchiveErrorKind::Corrupt, "archived chunk is cut short")
}

fn field<const N: usize>(data: &[u8], at: usize) -> Result<[u8; N], ArchiveError> {
    data.get(at..at + N)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(corrupt)
}

/// Returns the time of a chunk's first entry: the row's key time.
///
/// # Errors
/// `Corrupt` if the blob is shorter than a header.
pub fn first_time(data: &[u8]) -> Result<i64, ArchiveError> {
    Ok(i64::from_le_bytes(field(data, 0)?))
}

/// Calls `each` with every entry of the chunk `data`, which starts at `base` in the buffer
/// the caller keeps.
///
/// # Errors
/// `Corrupt` if the blob is cut short.
pub fn decode(data: &[u8], base: usize, mut each: impl FnMut(Located)) -> Result<(), ArchiveError> {
    let mut at = 0;
    while at < data.len() {
        let length = u32::from_le_bytes(field(data, at + 25)?) as usize;
        let start = at + HEADER;
        if start + length > data.len() {
            return Err(corrupt());
        }
        each(Located {
            time: i64::from_le_bytes(field(data, at)?),
            seq: u64::from_le_bytes(field(data, at + 8)?),
            received: i64::from_le_bytes(field(data, at + 16)?),
            priority: field::<1>(data, at + 24)?[0],
            start: base + start,
            end: base + start + length,
        });
        at = start + length;
    }
    Ok(())
}
