//! Reading rows for a page: day by day, the slots of each day merged in (time, seq) order, each
//! row checked, within a [`Budget`]. Below the queries (`query.rs`, which re-exports what it
//! shows) and decimation (`decimate.rs`), which both read through it.

use herald_proto::archive::{Cursor, StoredRecord, MAX_PAGE_RECORDS};

use crate::backend::{Backend, RowRange, Slot, Source};
use crate::entry::{day_of, Row};
use crate::error::ArchiveError;

/// Rows read from one slot at a time.
const CHUNK_ROWS: usize = 16_384;
/// Bytes a stored record adds to an answer besides the record itself.
pub(crate) const ROW_OVERHEAD_BYTES: usize = 24;

/// How much one page may hold and cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Records in the page.
    pub records: usize,
    /// Bytes of records in the page (so it fits a frame).
    pub bytes: usize,
    /// Rows read before the page is returned even if short (filters that match little).
    pub scanned: usize,
}

impl Budget {
    /// A budget of `records`, otherwise unbounded in practice.
    pub fn records(records: usize) -> Budget {
        Budget {
            records,
            bytes: usize::MAX,
            scanned: usize::MAX,
        }
    }
}

/// Checks a time range and a page limit.
///
/// # Errors
/// `BadQuery` naming the problem.
pub fn check_range(from: i64, to: i64) -> Result<(), ArchiveError> {
    if from >= to {
        return Err(ArchiveError::bad_query(format!(
            "empty time range: `from` ({}) must be before `to` ({})",
            herald_proto::time::format_iso8601(from),
            herald_proto::time::format_iso8601(to)
        )));
    }
    Ok(())
}

/// Returns whether a stored record passes the checks a `PUBLISH` gets, so every reader
/// can decode it.
pub fn readable(stored: &StoredRecord) -> bool {
    herald_proto::frame::RawRecord::new(stored.record.clone()).is_ok()
}

/// Rows of a page, where the next page starts, and the stored records skipped because they
/// do not decode.
#[derive(Debug)]
pub struct RowsRead {
    /// The rows kept, in (time, seq) order.
    pub rows: Vec<Row>,
    /// `None` when the range is exhausted.
    pub next: Option<Cursor>,
    /// Rows left out because their record does not decode.
    pub skipped: u64,
}

/// As [`read_page`](crate::query::read_page), returning the rows (with their times) and
/// the next cursor: day by day, merging the slots of each day. Each row is checked before
/// `keep` sees it; a row whose record does not decode is skipped and counted.
pub fn read_rows(
    backend: &dyn Backend,
    source: Source<'_>,
    range: &RowRange,
    budget: Budget,
    mut keep: impl FnMut(&Row) -> Result<bool, ArchiveError>,
) -> Result<RowsRead, ArchiveError> {
    let first_day = day_of(range.after.map_or(range.from, |c| c.time.max(range.from)));
    let last_day = day_of(range.to.saturating_sub(1));
    let mut by_day = backend.slots(source, first_day, last_day)?;
    by_day.sort_unstable();
    let mut page: Vec<Row> = Vec::with_capacity(budget.records.min(MAX_PAGE_RECORDS as usize));
    let (mut bytes, mut scanned, mut skipped) = (0usize, 0usize, 0u64);
    let mut cursor = range.after;
    for day_slots in by_day.chunk_by(|a, b| a.day == b.day) {
        loop {
            let (rows, safe) = merged_chunk(backend, source, day_slots, range, cursor)?;
            for row in rows {
                if safe.is_some_and(|bound| row.cursor() > bound) {
                    break;
                }
                scanned += 1;
                let before = cursor.replace(row.cursor());
                if !row.checked && !readable(&row.stored) {
                    skipped += 1;
                    tracing::debug!(
                        seq = row.stored.seq,
                        time = row.time,
                        "skipping an archived record that does not decode"
                    );
                } else if keep(&row)? {
                    let size = row.stored.record.len() + ROW_OVERHEAD_BYTES;
                    // A row that would take the page over its bytes starts the next page,
                    // unless it is the first: a page always makes progress.
                    if !page.is_empty() && bytes + size > budget.bytes {
                        return Ok(RowsRead {
                            rows: page,
                            next: before,
                            skipped,
                        });
                    }
                    bytes += size;
                    page.push(row);
                }
                if page.len() >= budget.records
                    || bytes >= budget.bytes
                    || scanned >= budget.scanned
                {
                    return Ok(RowsRead {
                        rows: page,
                        next: cursor,
                        skipped,
                    });
                }
            }
            if safe.is_none() {
                break;
            }
        }
    }
    Ok(RowsRead {
        rows: page,
        next: None,
        skipped,
    })
}

/// Reads the next chunk of each slot of one day after `after` and merges them. Returns the
/// rows and the position up to which the merge is complete: `None` when every slot returned
/// less than a chunk (all rows are final), else the smallest last position among the slots
/// that returned a full chunk (rows after it must wait for the next read).
fn merged_chunk(
    backend: &dyn Backend,
    source: Source<'_>,
    slots: &[Slot],
    range: &RowRange,
    after: Option<Cursor>,
) -> Result<(Vec<Row>, Option<Cursor>), ArchiveError> {
    let slot_range = RowRange { after, ..*range };
    let mut rows = Vec::new();
    let mut safe: Option<Cursor> = None;
    for slot in slots {
        let chunk = backend.read(source, *slot, &slot_range, CHUNK_ROWS)?;
        if chunk.len() == CHUNK_ROWS {
            let last = chunk[chunk.len() - 1].cursor();
            safe = Some(safe.map_or(last, |s| s.min(last)));
        }
        rows.extend(chunk);
    }
    if slots.len() > 1 {
        rows.sort_unstable_by_key(Row::cursor);
    }
    Ok((rows, safe))
}
