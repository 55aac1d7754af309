//! Answers archive queries on any [`Backend`]: pages merged in time order across retention
//! classes and days, log filters, instant lookups and decimation. Every answer is bounded
//! ([`Budget`]), so a year-long query is a series of pages, never one huge read, and the
//! answers that are not paged (buckets, values at an instant) come in parts that each fit a
//! frame ([`answer_in_parts`]).

use herald_proto::archive::{
    ArchiveReply, ArchiveRequest, AtQuery, LogQuery, Page, SampleQuery, StoredRecord, MAX_AT_NAMES,
    MAX_PAGE_RECORDS,
};
use herald_proto::{Glob, PrioritySet, Record};

use crate::backend::{Backend, RowRange, Source};
use crate::decimate;
use crate::entry::{day_of, Row};
use crate::error::{ArchiveError, ArchiveErrorKind};
use crate::rows::ROW_OVERHEAD_BYTES;
pub use crate::rows::{check_range, read_rows, readable, Budget, RowsRead};

/// An answer, and how many stored records it skipped because they do not decode.
///
/// What the server acknowledged every reader must be able to read; a stored record that
/// does not decode (written by an older server, or damaged) is left out of every answer and
/// counted here, so one bad record never fails a whole query.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The answer.
    pub reply: ArchiveReply,
    /// Stored records in the range that were skipped because they do not decode.
    pub skipped: u64,
}

/// Answers `request`, each page within `budget` (whose record count the query's own
/// `limit` lowers), as one answer: the parts of [`answer_in_parts`] joined.
///
/// # Errors
/// [`ArchiveError`] of kind `BadQuery` naming what is wrong with the query, or the store's.
pub fn answer(
    backend: &dyn Backend,
    request: &ArchiveRequest,
    budget: Budget,
) -> Result<Answer, ArchiveError> {
    let mut whole: Option<Answer> = None;
    answer_in_parts(backend, request, budget, |part| {
        match &mut whole {
            None => whole = Some(part),
            Some(whole) => whole.extend(part),
        }
        true
    })?;
    Ok(whole.expect("answer_in_parts gives at least one part"))
}

/// Answers `request` in parts of at most `budget.bytes` of records each (one part can run
/// over only when it holds a single record or bucket larger than that), handing each to
/// `emit` as soon as it is complete, so neither side holds a large answer whole. A page is
/// always one part (the next page is the client's to ask for); buckets and values at an
/// instant come in as many parts as they need, in order. There is always at least one
/// part; `emit` returning false stops the answer (its reader is gone).
///
/// # Errors
/// [`ArchiveError`] of kind `BadQuery` naming what is wrong with the query (before any
/// part), or the store's (possibly after some parts).
pub fn answer_in_parts(
    backend: &dyn Backend,
    request: &ArchiveRequest,
    budget: Budget,
    mut emit: impl FnMut(Answer) -> bool,
) -> Result<(), ArchiveError> {
    match request {
        ArchiveRequest::Samples(query) => {
            let (page, skipped) = samples(backend, query, budget)?;
            emit(Answer::new(ArchiveReply::Page(page), skipped));
        }
        ArchiveRequest::Logs(query) => {
            let (page, skipped) = logs(backend, query, budget)?;
            emit(Answer::new(ArchiveReply::Page(page), skipped));
        }
        ArchiveRequest::At(query) => {
            at(backend, query, budget.bytes, |found, skipped| {
                emit(Answer::new(ArchiveReply::At(found), skipped))
            })?;
        }
        ArchiveRequest::Buckets(query) => {
            decimate::buckets(backend, query, budget.bytes, |buckets, skipped| {
                emit(Answer::new(ArchiveReply::Buckets(buckets), skipped))
            })?;
        }
    }
    Ok(())
}

impl Answer {
    fn new(reply: ArchiveReply, skipped: u64) -> Answer {
        Answer { reply, skipped }
    }

    /// Appends the next part of the same answer.
    pub fn extend(&mut self, part: Answer) {
        self.reply.extend(part.reply);
        self.skipped += part.skipped;
    }
}

fn check_limit(limit: u32) -> Result<(), ArchiveError> {
    if limit == 0 || limit > MAX_PAGE_RECORDS {
        return Err(ArchiveError::bad_query(format!(
            "limit {limit} is out of range (1 to {MAX_PAGE_RECORDS})"
        )));
    }
    Ok(())
}

/// One page of `query.name`'s samples, and how many stored records it skipped.
///
/// # Errors
/// As [`answer`].
pub fn samples(
    backend: &dyn Backend,
    query: &SampleQuery,
    budget: Budget,
) -> Result<(Page, u64), ArchiveError> {
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

/// One page of log records passing `query`'s filters, and how many stored records it
/// skipped.
///
/// # Errors
/// As [`answer`].
pub fn logs(
    backend: &dyn Backend,
    query: &LogQuery,
    budget: Budget,
) -> Result<(Page, u64), ArchiveError> {
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
        // Rows reach `keep` only once checked, so this decode fails only on a bug.
        let record = decode(&row.stored)?;
        Ok(query.matches(subject.as_ref(), &record))
    })
}

/// The value of every name in `query` at its instant (`None` where nothing is archived,
/// or where the last sample does not decode: that one is counted as skipped), handed to
/// `emit` in order, in parts of at most `max_bytes` of records (with the records skipped
/// since the last part). There is always a last part, possibly empty; `emit` returning false
/// stops.
///
/// # Errors
/// As [`answer`].
pub fn at(
    backend: &dyn Backend,
    query: &AtQuery,
    max_bytes: usize,
    mut emit: impl FnMut(Vec<Option<StoredRecord>>, u64) -> bool,
) -> Result<(), ArchiveError> {
    if query.names.len() > MAX_AT_NAMES {
        return Err(ArchiveError::bad_query(format!(
            "{} names asked at once; at most {MAX_AT_NAMES}",
            query.names.len()
        )));
    }
    let mut part = Vec::new();
    let (mut bytes, mut skipped) = (0usize, 0u64);
    for name in &query.names {
        let row = last_at(backend, name, query.time)?;
        let stored = match row {
            Some(row) if !row.checked && !readable(&row.stored) => {
                skipped += 1;
                None
            }
            row => row.map(|row| row.stored),
        };
        let size = stored
            .as_ref()
            .map_or(1, |s| s.record.len() + ROW_OVERHEAD_BYTES);
        if !part.is_empty() && bytes + size > max_bytes {
            if !emit(std::mem::take(&mut part), std::mem::take(&mut skipped)) {
                return Ok(());
            }
            bytes = 0;
        }
        bytes += size;
        part.push(stored);
    }
    emit(part, skipped);
    Ok(())
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
) -> Result<(Page, u64), ArchiveError> {
    let read = read_rows(backend, source, range, budget, keep)?;
    let page = Page {
        records: read.rows.into_iter().map(|row| row.stored).collect(),
        next: read.next,
    };
    Ok((page, read.skipped))
}
