//! Answers archive queries on any [`Backend`]: pages merged in time order across retention
//! classes and days, log filters, instant lookups and decimation. Every answer is bounded
//! ([`Budget`]), so a year-long query is a series of pages, never one huge read.

use herald_proto::archive::{
    ArchiveReply, ArchiveRequest, AtQuery, Cursor, LogQuery, Page, SampleQuery, StoredRecord,
    MAX_AT_NAMES, MAX_PAGE_RECORDS,
};
use herald_proto::{Glob, PrioritySet, Record};

use crate::backend::{Backend, RowRange, Slot, Source};
use crate::decimate;
use crate::entry::{day_of, Row};
use crate::error::{ArchiveError, ArchiveErrorKind};

/// Rows read from one slot at a time.
const CHUNK_ROWS: usize = 16_384;
/// Bytes a stored record adds to an answer besides the record itself.
const ROW_OVERHEAD_BYTES: usize = 24;

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

/// Answers `request`, each page within `budget` (whose record count the query's own
/// `limit` lowers).
///
/// # Errors
/// [`ArchiveError`] of kind `BadQuery` naming what is wrong with the query, or the store's.
pub fn answer(
    backend: &dyn Backend,
    request: &ArchiveRequest,
    budget: Budget,
) -> Result<ArchiveReply, ArchiveError> {
    match request {
        ArchiveRequest::Samples(query) => samples(backend, query, budget).map(ArchiveReply::Page),
        ArchiveRequest::Logs(query) => logs(backend, query, budget).map(ArchiveReply::Page),
        ArchiveRequest::At(query) => at(backend, query).map(ArchiveReply::At),
        ArchiveRequest::Buckets(query) => {
            decimate::buckets(backend, query).map(ArchiveReply::Buckets)
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

fn check_limit(limit: u32) -> Result<(), ArchiveError> {
    if limit == 0 || limit > MAX_PAGE_RECORDS {
        return Err(ArchiveError::bad_query(format!(
            "limit {limit} is out of range (1 to {MAX_PAGE_RECORDS})"
        )));
    }
    Ok(())
}

/// One page of `query.name`'s samples.
///
/// # Errors
/// As [`answer`].
pub fn samples(
    backend: &dyn Backend,
    query: &SampleQuery,
    budget: Budget,
) -> Result<Page, ArchiveError> {
    check_range(query.from, query.to)?;
    check_limit(query.limit)?;
    if query.name.is_empty() {
        return Err(ArchiveError::bad_query("no name given"));
    }
    let range = RowRange {
        from: query.from,
        to: query.to,
        after: query.after,
        priorities: PrioritySet::ALL,
    };
    let budget = Budget {
        records: budget.records.min(query.limit as usize),
        ..budget
    };
    read_page(
        backend,
        Source::Samples(&query.name),
        &range,
        budget,
        |_| Ok(true),
    )
}

/// One page of log records passing `query`'s filters.
///
/// # Errors
/// As [`answer`].
pub fn logs(backend: &dyn Backend, query: &LogQuery, budget: Budget) -> Result<Page, ArchiveError> {
    check_range(query.from, query.to)?;
    check_limit(query.limit)?;
    if query.priorities.is_empty() {
        return Err(ArchiveError::bad_query(
            "the priority filter matches no priority",
        ));
    }
    let subject: Option<Glob> = query.subject_glob().map_err(ArchiveError::bad_query)?;
    let range = RowRange {
        from: query.from,
        to: query.to,
        after: query.after,
        priorities: query.priorities,
    };
    let budget = Budget {
        records: budget.records.min(query.limit as usize),
        ..budget
    };
    let plain = subject.is_none() && query.host.is_none() && query.process.is_none();
    let plain = plain && query.text.is_none();
    read_page(backend, Source::Logs, &range, budget, |row| {
        if plain {
            return Ok(true);
        }
        let record = decode(&row.stored)?;
        Ok(query.matches(subject.as_ref(), &record))
    })
}

/// The value of every name in `query` at its instant.
///
/// # Errors
/// As [`answer`].
pub fn at(
    backend: &dyn Backend,
    query: &AtQuery,
) -> Result<Vec<Option<StoredRecord>>, ArchiveError> {
    if query.names.len() > MAX_AT_NAMES {
        return Err(ArchiveError::bad_query(format!(
            "{} names asked at once; at most {MAX_AT_NAMES}",
            query.names.len()
        )));
    }
    let mut found = Vec::with_capacity(query.names.len());
    for name in &query.names {
        found.push(last_at(backend, name, query.time)?.map(|row| row.stored));
    }
    Ok(found)
}

/// The last sample of `name` at or before `time`, looking back day by day through the slots
/// the store has.
fn last_at(backend: &dyn Backend, name: &str, time: i64) -> Result<Option<Row>, ArchiveError> {
    let mut slots = backend.slots(Source::Samples(name), i32::MIN, day_of(time))?;
    slots.sort_unstable_by(|a, b| b.cmp(a));
    let mut best: Option<Row> = None;
    for (index, slot) in slots.iter().enumerate() {
        if let Some(row) = backend.last_at(name, *slot, time)? {
            if best.as_ref().is_none_or(|b| row.cursor() > b.cursor()) {
                best = Some(row);
            }
        }
        // Later days of other classes cannot beat a row found on an earlier-sorted day.
        let next_day = slots.get(index + 1).map(|s| s.day);
        if best.is_some() && next_day != Some(slot.day) {
            break;
        }
    }
    Ok(best)
}

fn decode(stored: &StoredRecord) -> Result<Record, ArchiveError> {
    stored.decode().map_err(|err| {
        ArchiveError::new(
            ArchiveErrorKind::Corrupt,
            format!("archived record {} does not decode: {err}", stored.seq),
        )
    })
}

/// Reads a page of `source` in `range` in (time, seq) order, keeping the rows `keep`
/// accepts, until the budget is used or the range ends.
pub fn read_page(
    backend: &dyn Backend,
    source: Source<'_>,
    range: &RowRange,
    budget: Budget,
    keep: impl FnMut(&Row) -> Result<bool, ArchiveError>,
) -> Result<Page, ArchiveError> {
    let (rows, next) = read_rows(backend, source, range, budget, keep)?;
    Ok(Page {
        records: rows.into_iter().map(|row| row.stored).collect(),
        next,
    })
}

/// As [`read_page`], returning the rows (with their times) and the next cursor: day by day,
/// merging the slots of each day.
pub fn read_rows(
    backend: &dyn Backend,
    source: Source<'_>,
    range: &RowRange,
    budget: Budget,
    mut keep: impl FnMut(&Row) -> Result<bool, ArchiveError>,
) -> Result<(Vec<Row>, Option<Cursor>), ArchiveError> {
    let first_day = day_of(range.after.map_or(range.from, |c| c.time.max(range.from)));
    let last_day = day_of(range.to.saturating_sub(1));
    let mut by_day = backend.slots(source, first_day, last_day)?;
    by_day.sort_unstable();
    let mut page: Vec<Row> = Vec::with_capacity(budget.records.min(MAX_PAGE_RECORDS as usize));
    let (mut bytes, mut scanned) = (0usize, 0usize);
    let mut cursor = range.after;
    for day_slots in by_day.chunk_by(|a, b| a.day == b.day) {
        loop {
            let (rows, safe) = merged_chunk(backend, source, day_slots, range, cursor)?;
            for row in rows {
                if safe.is_some_and(|bound| row.cursor() > bound) {
                    break;
                }
                scanned += 1;
                cursor = Some(row.cursor());
                if keep(&row)? {
                    bytes += row.stored.record.len() + ROW_OVERHEAD_BYTES;
                    page.push(row);
                }
                if page.len() >= budget.records
                    || bytes >= budget.bytes
                    || scanned >= budget.scanned
                {
                    return Ok((page, cursor));
                }
            }
            if safe.is_none() {
                break;
            }
        }
    }
    Ok((page, None))
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
