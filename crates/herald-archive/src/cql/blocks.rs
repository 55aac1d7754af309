//! Block rows: what the Cassandra store writes and reads instead of a row per record.
//!
//! A write sorts each partition's entries by (time, seq) and cuts them into blocks
//! ([`crate::segment::BlockBuilder`], the embedded store's block format, LZ4, no subject
//! filter): a block ends at [`BLOCK_RAW_BYTES`] of entries or when the next entry is more
//! than [`BLOCK_SPAN`] after the block's first. A block is one row, clustered by its first
//! entry's (time, seq), holding the block's bytes (header and payload). So one mutation
//! carries hundreds of records, and a reader knows that a block starting at *t* holds
//! records of times *t* to *t* + [`BLOCK_SPAN`] only: reads start at the first block that
//! may hold the range and stop once what they found comes before the next block's start.
//!
//! The same record may reach two blocks (a batch written again after a timeout, cut
//! differently): readers sort what they decode and drop repeated (time, seq) pairs, as the
//! row-per-record tables' upserts did.

use std::cmp::Ordering;

use bytes::Bytes;
use herald_proto::archive::StoredRecord;
use herald_proto::PrioritySet;

use crate::backend::RowRange;
use crate::entry::{day_start, Entry, Row};
use crate::error::{ArchiveError, ArchiveErrorKind};
use crate::keep::Keep;
use crate::segment::{decode_entries, BlockBuilder, BlockHeader, Codec, BLOCK_HEADER_BYTES};

/// Raw bytes of entries that end a block (before compression).
pub(super) const BLOCK_RAW_BYTES: usize = 64 * 1024;
/// Nanoseconds a block spans at most, from its first entry's time to its last's (part of
/// the stored format: readers rely on it).
pub(super) const BLOCK_SPAN: i64 = 60_000_000_000;

/// One block ready to write: its first entry's (time, seq) and its bytes.
#[derive(Debug)]
pub(super) struct BlockRow {
    pub start_time: i64,
    pub start_seq: i64,
    pub bytes: Vec<u8>,
}

/// Returns the (time, seq) order that the tables cluster by (seq as two's complement).
pub(super) fn key(time: i64, seq: u64) -> (i64, i64) {
    (time, seq as i64)
}

/// Cuts one partition's entries into block rows, in (time, seq) order. Entries known to
/// pass the record checks (`checked`) make blocks that say so.
pub(super) fn build(entries: &mut [&Entry], checked: bool) -> Vec<BlockRow> {
    entries.sort_unstable_by_key(|e| key(e.record.meta.time, e.seq));
    let mut rows = Vec::new();
    let mut builder = BlockBuilder::new();
    let mut start: Option<(i64, i64)> = None;
    for entry in entries.iter() {
        let here = key(entry.record.meta.time, entry.seq);
        if let Some(first) = start {
            let full = builder.raw_len() >= BLOCK_RAW_BYTES;
            if full || here.0.saturating_sub(first.0) > BLOCK_SPAN {
                rows.push(finish(&mut builder, first, checked));
                start = None;
            }
        }
        start.get_or_insert(here);
        builder.push(entry);
    }
    if let Some(first) = start {
        rows.push(finish(&mut builder, first, checked));
    }
    rows
}

fn finish(
    builder: &mut BlockBuilder,
    (start_time, start_seq): (i64, i64),
    checked: bool,
) -> BlockRow {
    if !checked {
        builder.mark_unchecked();
    }
    let (_, bytes) = builder.finish(Codec::Lz4);
    BlockRow {
        start_time,
        start_seq,
        bytes,
    }
}

/// Which rows of a block a read wants.
#[derive(Debug, Clone, Copy)]
pub(super) struct Wanted {
    /// Rows after this (time, seq), or from this time.
    pub lower: Lower,
    /// Rows before this time.
    pub to: i64,
    /// Log rows of these priorities only.
    pub priorities: Option<PrioritySet>,
}

/// Where rows start: after a cursor, or at a time.
#[derive(Debug, Clone, Copy)]
pub(super) enum Lower {
    /// `(time, seq) > (time, seq)`.
    After(i64, i64),
    /// `time >= time`.
    From(i64),
}

impl Lower {
    /// Returns where the rows of `range` start.
    pub(super) fn of(range: &RowRange) -> Lower {
        match range.after {
            Some(after) if after.time >= range.from => Lower::After(after.time, after.seq as i64),
            _ => Lower::From(range.from),
        }
    }

    pub(super) fn time(self) -> i64 {
        match self {
            Lower::After(time, _) | Lower::From(time) => time,
        }
    }

    fn admits(self, key: (i64, i64)) -> bool {
        match self {
            Lower::After(time, seq) => key > (time, seq),
            Lower::From(time) => key.0 >= time,
        }
    }
}

/// Decodes the block `bytes` of retention class `keep` and adds the rows `wanted` admits
/// to `rows`.
///
/// # Errors
/// `Corrupt` naming what does not hold.
pub(super) fn decode_into(
    bytes: Bytes,
    keep: Keep,
    wanted: &Wanted,
    rows: &mut Vec<Row>,
) -> Result<(), ArchiveError> {
    let header = header_of(&bytes)?;
    if let Some(priorities) = wanted.priorities {
        if header.priorities & priorities.bits() == 0 {
            return Ok(());
        }
    }
    if header.max_time < wanted.lower.time() || header.min_time >= wanted.to {
        return Ok(());
    }
    let payload_at = BLOCK_HEADER_BYTES + header.filter_len as usize;
    let payload = bytes
        .get(payload_at..)
        .ok_or_else(|| corrupt("a block row ends inside its subject filter"))?;
    let checked = header.checked();
    for entry in decode_entries(&header, payload, keep)? {
        let meta = &entry.record.meta;
        let here = key(meta.time, entry.seq);
        let priority_ok = wanted.priorities.is_none_or(|p| p.contains(meta.priority));
        if priority_ok && meta.time < wanted.to && wanted.lower.admits(here) {
            rows.push(row_of(entry, checked));
        }
    }
    Ok(())
}

/// Decodes the block `bytes` and returns its last entry at or before `time`, if any.
///
/// # Errors
/// `Corrupt` naming what does not hold.
pub(super) fn last_at(bytes: &Bytes, keep: Keep, time: i64) -> Result<Option<Row>, ArchiveError> {
    let header = header_of(bytes)?;
    if header.min_time > time {
        return Ok(None);
    }
    let payload = &bytes[BLOCK_HEADER_BYTES + header.filter_len as usize..];
    let checked = header.checked();
    Ok(decode_entries(&header, payload, keep)?
        .into_iter()
        .filter(|e| e.record.meta.time <= time)
        .max_by_key(|e| key(e.record.meta.time, e.seq))
        .map(|e| row_of(e, checked)))
}

fn header_of(bytes: &[u8]) -> Result<BlockHeader, ArchiveError> {
    let head: &[u8; BLOCK_HEADER_BYTES] = bytes
        .get(..BLOCK_HEADER_BYTES)
        .and_then(|head| head.try_into().ok())
        .ok_or_else(|| corrupt(format!("a block row of {} bytes", bytes.len())))?;
    let header = BlockHeader::decode(head)?;
    if header.block_len() != bytes.len() as u64 {
        return Err(corrupt(format!(
            "a block row of {} bytes, its header says {}",
            bytes.len(),
            header.block_len()
        )));
    }
    Ok(header)
}

fn row_of(entry: Entry, checked: bool) -> Row {
    Row {
        time: entry.record.meta.time,
        stored: StoredRecord {
            seq: entry.seq,
            received: entry.received,
            record: entry.record.bytes,
        },
        checked,
    }
}

/// Orders rows by (time, seq) as the tables cluster them.
pub(super) fn order(a: &Row, b: &Row) -> Ordering {
    key(a.time, a.stored.seq).cmp(&key(b.time, b.stored.seq))
}

/// Sorts `rows`, drops repeats of a (time, seq) and keeps the first `limit`.
pub(super) fn settle(rows: &mut Vec<Row>, limit: usize) {
    if !rows.is_sorted_by(|a, b| order(a, b).is_lt()) {
        rows.sort_unstable_by(order);
        rows.dedup_by(|b, a| order(a, b).is_eq());
    }
    rows.truncate(limit);
}

fn corrupt(message: impl Into<String>) -> ArchiveError {
    ArchiveError::new(
        ArchiveErrorKind::Corrupt,
        format!("cassandra: {}", message.into()),
    )
}

/// Nanoseconds in an hour.
pub(super) const HOUR_NANOS: i64 = 3_600_000_000_000;

/// Returns the hour of `day` that `time` falls in, clamped to 0..=23.
pub(super) fn hour_of(day: i32, time: i64) -> i32 {
    let hour = time.saturating_sub(day_start(day)).div_euclid(HOUR_NANOS);
    i32::try_from(hour.clamp(0, 23)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segment::block::tests::entry;
    use herald_proto::Priority;

    const SECOND: i64 = 1_000_000_000;

    fn all(lower: Lower, to: i64) -> Wanted {
        Wanted {
            lower,
            to,
            priorities: None,
        }
    }

    fn decode(blocks: &[BlockRow], wanted: &Wanted) -> Vec<(i64, u64)> {
        let mut rows = Vec::new();
        for block in blocks {
            let bytes = Bytes::from(block.bytes.clone());
            decode_into(bytes, Keep::days(7), wanted, &mut rows).unwrap();
        }
        settle(&mut rows, usize::MAX);
        rows.iter().map(|r| (r.time, r.stored.seq)).collect()
    }

    #[test]
    fn blocks_are_sorted_and_cut_by_span_and_size() {
        // Out of order, over three minutes, one large record.
        let mut made: Vec<Entry> = (0..180)
            .rev()
            .map(|i| entry(i as u64, i * SECOND, Priority::Info, "x"))
            .collect();
        made.push(entry(500, 10 * SECOND, Priority::Info, &"y".repeat(70_000)));
        let mut refs: Vec<&Entry> = made.iter().collect();
        let blocks = build(&mut refs, true);
        let starts: Vec<i64> = blocks.iter().map(|b| b.start_time / SECOND).collect();
        // 0..=10 and the large record, which fills the block; then 61 s spans.
        assert_eq!(starts, vec![0, 11, 72, 133]);
        let got = decode(&blocks, &all(Lower::From(0), i64::MAX));
        assert_eq!(got.len(), 181);
        assert!(got.windows(2).all(|w| w[0] < w[1]));
        for block in &blocks {
            let header = header_of(&block.bytes).unwrap();
            assert!(header.max_time - header.min_time <= BLOCK_SPAN);
            assert_eq!(header.min_time, block.start_time);
            assert!(header.checked());
        }
    }

    #[test]
    fn reads_keep_the_range_the_priorities_and_drop_repeats() {
        let made: Vec<Entry> = (0..10)
            .map(|i| {
                let priority = if i % 2 == 0 {
                    Priority::Info
                } else {
                    Priority::Error
                };
                entry(i as u64, i * SECOND, priority, "x")
            })
            .collect();
        let mut first: Vec<&Entry> = made.iter().collect();
        let mut again: Vec<&Entry> = made[3..7].iter().collect();
        let mut blocks = build(&mut first, false);
        blocks.extend(build(&mut again, false));
        let got = decode(&blocks, &all(Lower::After(2 * SECOND, 2), 8 * SECOND));
        assert_eq!(
            got,
            (3..8).map(|i| (i * SECOND, i as u64)).collect::<Vec<_>>()
        );
        let errors = Wanted {
            priorities: Some(PrioritySet::from_bits(Priority::Error.bit())),
            ..all(Lower::From(0), i64::MAX)
        };
        let got = decode(&blocks, &errors);
        assert_eq!(
            got.iter().map(|(_, s)| *s).collect::<Vec<_>>(),
            vec![1, 3, 5, 7, 9]
        );
        let bytes = Bytes::from(blocks[0].bytes.clone());
        let last = last_at(&bytes, Keep::days(7), 4 * SECOND + 1)
            .unwrap()
            .unwrap();
        assert_eq!(
            (last.time, last.stored.seq, last.checked),
            (4 * SECOND, 4, false)
        );
        assert!(last_at(&bytes, Keep::days(7), -1).unwrap().is_none());
    }

    #[test]
    fn a_damaged_block_row_is_named_corrupt() {
        let made = [entry(1, SECOND, Priority::Info, "x")];
        let mut refs: Vec<&Entry> = made.iter().collect();
        let mut bytes = build(&mut refs, true).remove(0).bytes;
        let wanted = all(Lower::From(0), i64::MAX);
        let short = Bytes::copy_from_slice(&bytes[..bytes.len() - 1]);
        let err = decode_into(short, Keep::days(7), &wanted, &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("its header says"), "{err}");
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        let err = decode_into(bytes.into(), Keep::days(7), &wanted, &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("checksum"), "{err}");
    }

    #[test]
    fn hours_of_a_day_are_clamped() {
        let day = 20_777;
        assert_eq!(hour_of(day, day_start(day)), 0);
        assert_eq!(hour_of(day, day_start(day) + 5 * HOUR_NANOS + 1), 5);
        assert_eq!(hour_of(day, day_start(day) - 1), 0);
        assert_eq!(hour_of(day, day_start(day + 1)), 23);
    }
}
