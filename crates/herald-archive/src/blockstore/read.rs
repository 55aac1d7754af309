//! Reading one segment file for a query: its block index picks the blocks that may hold
//! rows (time range, priorities, the subject filter), in the order of their earliest time,
//! and reading stops as soon as no further block can change the answer.

use std::collections::VecDeque;
use std::fs::File;
use std::path::Path;
use std::sync::{Arc, Mutex, RwLock};

use herald_proto::archive::StoredRecord;

use super::layout::FileKey;
use crate::backend::{RowRange, Source};
use crate::entry::{Entry, Row};
use crate::error::ArchiveError;
use crate::keep::Keep;
use crate::segment::{decode_entries, filter, read_block, BlockHeader, BlockRef};

/// The blocks of one segment file, as far as they are whole: loaded by scanning the file
/// once, then extended by the store as it appends.
#[derive(Debug, Default)]
pub(super) struct FileIndex {
    pub(super) blocks: RwLock<Vec<BlockRef>>,
}

/// The blocks of `index` that `keep` says may matter: their offsets and headers.
fn candidates(index: &FileIndex, keep: impl Fn(&BlockRef) -> bool) -> Vec<(u64, BlockHeader)> {
    let blocks = index
        .blocks
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    blocks
        .iter()
        .filter(|block| keep(block))
        .map(|block| (block.offset, block.header))
        .collect()
}

/// Blocks read lately, decoded: a query reads in chunks of rows and a client in pages, and
/// each chunk starts in the block where the last one stopped.
#[derive(Debug, Default)]
pub(super) struct Decoded {
    recent: Mutex<VecDeque<DecodedBlock>>,
}

/// A block (its file and offset) and its entries.
type DecodedBlock = ((FileKey, u64), Arc<Vec<Entry>>);

/// Blocks [`Decoded`] keeps.
const DECODED_BLOCKS: usize = 8;

impl Decoded {
    /// Returns the entries of `key`'s block at `offset`, reading it from `file` unless it
    /// was read lately.
    fn get(
        &self,
        key: FileKey,
        file: &mut Option<File>,
        path: &Path,
        offset: u64,
        header: BlockHeader,
    ) -> Result<Arc<Vec<Entry>>, ArchiveError> {
        let mut recent = self.lock();
        if let Some(at) = recent.iter().position(|(k, _)| *k == (key, offset)) {
            let hit = recent.remove(at).expect("found");
            let entries = Arc::clone(&hit.1);
            recent.push_back(hit);
            return Ok(entries);
        }
        drop(recent);
        let file = match file {
            Some(file) => file,
            None => file.insert(open(path)?),
        };
        let payload = read_block(file, offset, &header)?;
        // The retention class is the file's; rows do not carry it.
        let entries = Arc::new(decode_entries(&header, &payload, Keep::days(1))?);
        let mut recent = self.lock();
        recent.push_back(((key, offset), Arc::clone(&entries)));
        if recent.len() > DECODED_BLOCKS {
            recent.pop_front();
        }
        Ok(entries)
    }

    /// Forgets the blocks of `key`'s file (it is gone).
    pub(super) fn forget(&self, key: FileKey) {
        self.lock().retain(|((k, _), _)| *k != key);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<DecodedBlock>> {
        self.recent
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// `entry` as a row; `checked`: its block says it passed the record checks.
fn row(entry: &Entry, checked: bool) -> Row {
    Row {
        time: entry.record.meta.time,
        stored: StoredRecord {
            seq: entry.seq,
            received: entry.received,
            record: entry.record.bytes.clone(),
        },
        checked,
    }
}

/// Whether `entry` is one of `source`'s.
fn of_source(entry: &Entry, source: Source<'_>) -> bool {
    match source {
        Source::Samples(name) => entry.record.subject_bytes() == name.as_bytes(),
        Source::Logs => true,
    }
}

/// Puts `rows` in order, drops rows written twice and keeps the first `limit`; the rows
/// from `new` on were just added, the ones before already settled. Blocks are read in
/// time order and hold their entries mostly in order, so new rows usually just follow:
/// then nothing is sorted.
fn settle(rows: &mut Vec<Row>, new: usize, limit: usize) {
    let at = |row: &Row| (row.time, row.stored.seq);
    let in_order = rows[new.saturating_sub(1)..]
        .windows(2)
        .all(|pair| at(&pair[0]) < at(&pair[1]));
    if !in_order {
        rows.sort_by_key(at);
        // The same record, read twice (its block's and its log's copy, say).
        rows.dedup_by(|a, b| at(a) == at(b) && a.stored == b.stored);
    }
    rows.truncate(limit);
}

/// Adds to `out` the rows of `source` in the file at `path` (and in `pending`, its open
/// block's entries) within `range` that could be among the first `limit` (`out` stays
/// settled: ordered, without repeats, at most `limit`).
#[allow(clippy::too_many_arguments)]
pub(super) fn read_rows(
    (key, path): (FileKey, &Path),
    index: &FileIndex,
    decoded: &Decoded,
    (pending, pending_checked): (Vec<Entry>, bool),
    source: Source<'_>,
    range: &RowRange,
    limit: usize,
    out: &mut Vec<Row>,
) -> Result<(), ArchiveError> {
    let hash = match source {
        Source::Samples(name) => Some(filter::subject_hash(name.as_bytes())),
        Source::Logs => None,
    };
    let wanted = |entry: &Entry| {
        let (time, seq) = (entry.record.meta.time, entry.seq);
        time >= range.from
            && time < range.to
            && range.after.is_none_or(|c| (time, seq) > (c.time, c.seq))
            && (hash.is_some() || range.priorities.contains(entry.record.meta.priority))
            && of_source(entry, source)
    };
    let before = out.len();
    out.extend(
        pending
            .iter()
            .filter(|e| wanted(e))
            .map(|e| row(e, pending_checked)),
    );
    if out.len() > before {
        settle(out, before, limit);
    }
    let lower = range.after.map_or(range.from, |c| c.time.max(range.from));
    let mask = range.priorities.bits();
    let mut blocks = candidates(index, |block| {
        let header = &block.header;
        header.overlaps(lower, range.to)
            && match hash {
                Some(hash) => {
                    usize::from(header.group) == super::sample_group(hash)
                        && filter::may_contain(&block.filter, hash)
                }
                None => header.priorities & mask != 0,
            }
    });
    if blocks.is_empty() {
        return Ok(());
    }
    blocks.sort_by_key(|(_, header)| header.min_time);
    let mut file = None;
    for (offset, header) in blocks {
        if out.len() >= limit && out.last().is_some_and(|last| header.min_time > last.time) {
            break;
        }
        let before = out.len();
        let found = decoded.get(key, &mut file, path, offset, header)?;
        let checked = header.checked();
        out.extend(found.iter().filter(|e| wanted(e)).map(|e| row(e, checked)));
        if out.len() > before {
            settle(out, before, limit);
        }
    }
    Ok(())
}

/// Returns the last sample of `name` at or before `time` in the file at `path` (or in
/// `pending`, its open block's entries).
pub(super) fn last_at(
    (key, path): (FileKey, &Path),
    index: &FileIndex,
    decoded: &Decoded,
    (pending, pending_checked): (Vec<Entry>, bool),
    name: &str,
    time: i64,
) -> Result<Option<Row>, ArchiveError> {
    let consider = |entry: &Entry, checked: bool, best: &mut Option<Row>| {
        let at = (entry.record.meta.time, entry.seq);
        if at.0 <= time
            && of_source(entry, Source::Samples(name))
            && best.as_ref().is_none_or(|b| at > (b.time, b.stored.seq))
        {
            *best = Some(row(entry, checked));
        }
    };
    let mut best: Option<Row> = None;
    for entry in &pending {
        consider(entry, pending_checked, &mut best);
    }
    let hash = filter::subject_hash(name.as_bytes());
    let mut blocks = candidates(index, |block| {
        block.header.count > 0
            && block.header.min_time <= time
            && usize::from(block.header.group) == super::sample_group(hash)
            && filter::may_contain(&block.filter, hash)
    });
    if blocks.is_empty() {
        return Ok(best);
    }
    // Latest first: once the best row is later than a block's latest entry, no block after
    // it can hold a better one.
    blocks.sort_by_key(|(_, header)| std::cmp::Reverse(header.max_time));
    let mut file = None;
    for (offset, header) in blocks {
        if best.as_ref().is_some_and(|b| b.time > header.max_time) {
            break;
        }
        for entry in decoded.get(key, &mut file, path, offset, header)?.iter() {
            consider(entry, header.checked(), &mut best);
        }
    }
    Ok(best)
}

fn open(path: &Path) -> Result<File, ArchiveError> {
    File::open(path).map_err(|e| ArchiveError::io(&format!("opening {}", path.display()), e))
}
