//! The archive's bounded buffer: routed batches as the router handed them over, waiting for
//! the writer thread.
//!
//! A batch's records move in whole — the vector the `PUBLISH` frame was decoded into, each
//! record still a slice of the frame — so the publisher's side writes nothing per record but
//! its retention (one for the whole batch when one rule matched it all). The writer thread
//! makes them [`Entry`]s as it takes them, on its own side: the 128-byte entries the
//! publisher used to build in the buffer, with a reference taken to each record, cost its
//! task cache misses and page faults (docs/benchmarks.md, "The archive takes whole
//! batches").

use std::collections::VecDeque;
use std::time::Instant;

use herald_proto::frame::RawRecord;

use crate::entry::Entry;
use crate::keep::Keep;

/// The retention of each record of a handed-over batch.
#[derive(Debug)]
pub(crate) enum Keeps {
    /// Every record's (the usual case: one rule matches the whole batch).
    All(Keep),
    /// Record by record.
    Each(Vec<Keep>),
}

impl Keeps {
    /// Adds the retention of the `count`th record taken (counted from 0).
    pub(crate) fn push(keeps: &mut Option<Keeps>, count: usize, keep: Keep) {
        match keeps {
            None => *keeps = Some(Keeps::All(keep)),
            Some(Keeps::All(all)) if *all == keep => {}
            Some(Keeps::All(all)) => {
                let mut each = vec![*all; count];
                each.push(keep);
                *keeps = Some(Keeps::Each(each));
            }
            Some(Keeps::Each(each)) => each.push(keep),
        }
    }

    fn get(&self, index: usize) -> Keep {
        match self {
            Keeps::All(keep) => *keep,
            Keeps::Each(each) => each[index],
        }
    }
}

/// One routed batch's records that the rules archive, with what the server added.
#[derive(Debug)]
pub(crate) struct Handed {
    /// The records, in the order they were routed.
    pub records: Vec<RawRecord>,
    /// Their retention.
    pub keeps: Keeps,
    /// The server's sequence number of the routed batch's first record.
    pub first_seq: u64,
    /// Each record's place in the routed batch when some of it is not here (not archived,
    /// or shed); `None`: `records[i]` was its `i`th record.
    pub offsets: Option<Vec<u32>>,
    /// When the batch arrived.
    pub received: i64,
    /// The records' encoded bytes.
    pub bytes: usize,
}

impl Handed {
    /// Appends the batch's records to `entries`, as entries.
    pub(crate) fn into_entries(self, entries: &mut Vec<Entry>) {
        let Handed {
            records,
            keeps,
            first_seq,
            offsets,
            received,
            ..
        } = self;
        entries.reserve(records.len());
        for (index, record) in records.into_iter().enumerate() {
            let offset = offsets
                .as_ref()
                .map_or(index as u64, |o| u64::from(o[index]));
            entries.push(Entry {
                seq: first_seq + offset,
                received,
                keep: keeps.get(index),
                record,
            });
        }
    }
}

/// The buffer: handed-over batches and the writer's state, under one lock.
#[derive(Debug, Default)]
pub(crate) struct Buffer {
    /// The batches waiting, oldest first.
    pub batches: VecDeque<Handed>,
    /// Records in `batches`.
    pub records: usize,
    /// Their bytes.
    pub bytes: usize,
    /// Records taken by the writer and not yet written.
    pub in_flight: usize,
    /// Their bytes.
    pub in_flight_bytes: usize,
    /// Tickets handed out: records ever taken into the buffer.
    pub issued: u64,
    /// Highest ticket a producer waits on as `stored`.
    pub wanted: u64,
    /// When a producer last asked for `stored`.
    pub stored_at: Option<Instant>,
    /// The archive is closing: the writer drains what is left and stops.
    pub closing: bool,
    /// The writer waits on its condition variable: an offer wakes it only when it sleeps on
    /// an empty buffer, when it makes `WAKE_RECORDS` or holds a stored record, so that the
    /// router rarely pays a wake-up syscall.
    pub writer_asleep: bool,
}

impl Buffer {
    /// Takes batches, oldest first, until they hold at least `limit` records or none is left
    /// (at least one batch when there is one), and counts them in flight.
    pub(crate) fn take(&mut self, limit: usize, into: &mut Vec<Handed>) {
        let (mut records, mut bytes) = (0, 0);
        while records < limit.max(1) {
            let Some(handed) = self.batches.pop_front() else {
                break;
            };
            records += handed.records.len();
            bytes += handed.bytes;
            into.push(handed);
        }
        self.records -= records;
        self.bytes -= bytes;
        self.in_flight = records;
        self.in_flight_bytes = bytes;
    }

    /// Empties the buffer, returning the records it held (for the loss counters).
    pub(crate) fn clear(&mut self) -> impl Iterator<Item = RawRecord> + '_ {
        self.records = 0;
        self.bytes = 0;
        self.in_flight = 0;
        self.in_flight_bytes = 0;
        self.batches.drain(..).flat_map(|handed| handed.records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use herald_proto::{Kind, Record};

    fn raw(text: &str) -> RawRecord {
        let record = Record {
            text: text.into(),
            ..Record::new(Kind::Log, "A.b")
        };
        RawRecord::new(Bytes::from(record.to_bytes())).unwrap()
    }

    #[test]
    fn a_batch_becomes_entries_numbered_by_their_place_in_the_routed_batch() {
        let (day, week) = (Keep::days(1), Keep::days(7));
        let mut keeps = None;
        for (count, keep) in [day, day, week].into_iter().enumerate() {
            Keeps::push(&mut keeps, count, keep);
        }
        let handed = Handed {
            records: vec![raw("a"), raw("c"), raw("d")],
            keeps: keeps.unwrap(),
            first_seq: 100,
            offsets: Some(vec![0, 2, 3]),
            received: 7,
            bytes: 0,
        };
        let mut entries = Vec::new();
        handed.into_entries(&mut entries);
        let got: Vec<(u64, Keep, String)> = entries
            .iter()
            .map(|e| {
                (
                    e.seq,
                    e.keep,
                    Record::from_bytes(&e.record.bytes).unwrap().text,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (100, day, "a".to_string()),
                (102, day, "c".to_string()),
                (103, week, "d".to_string()),
            ]
        );
        assert!(entries.iter().all(|e| e.received == 7));
    }

    #[test]
    fn one_retention_for_a_whole_batch_is_kept_once() {
        let mut keeps = None;
        for count in 0..3 {
            Keeps::push(&mut keeps, count, Keep::days(30));
        }
        assert!(matches!(keeps, Some(Keeps::All(keep)) if keep == Keep::days(30)));
    }

    #[test]
    fn the_writer_takes_whole_batches_up_to_its_limit() {
        let mut buffer = Buffer::default();
        for size in [3, 4, 5] {
            let records: Vec<RawRecord> = (0..size).map(|_| raw("x")).collect();
            let bytes = records.iter().map(|r| r.bytes.len()).sum();
            buffer.records += size;
            buffer.bytes += bytes;
            buffer.batches.push_back(Handed {
                records,
                keeps: Keeps::All(Keep::days(1)),
                first_seq: 0,
                offsets: None,
                received: 0,
                bytes,
            });
        }
        let mut taken = Vec::new();
        buffer.take(6, &mut taken);
        assert_eq!(
            taken.len(),
            2,
            "3 records are under the limit of 6: a second batch"
        );
        assert_eq!((buffer.records, buffer.in_flight), (5, 7));
        taken.clear();
        buffer.take(0, &mut taken);
        assert_eq!((taken.len(), buffer.records, buffer.in_flight), (1, 0, 5));
        assert_eq!(buffer.bytes, 0);
    }
}
