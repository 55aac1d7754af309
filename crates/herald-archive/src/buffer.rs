//! The archive's bounded buffer: routed batches as the router handed them over, waiting for
//! the writer thread.
//!
//! A batch's records move in whole — the vector the `PUBLISH` frame was decoded into, each
//! record still a slice of the frame — so the publisher's side writes nothing per record but
//! its retention (one for the whole batch when one rule matched it all). The writer thread
//! makes them [`Entry`]s as it takes them, on its own side: the 128-byte entries the
//! publisher used to build in the buffer, with a reference taken to each record, cost its
//! task cache misses and page faults (docs/benchmarks.md, "A `stored` flush that waited a
//! second, and the archive taking whole batches": the work moved off the publisher's task,
//! the server's total CPU did not change).

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
    /// Hands over the records of a routed batch whose first record got sequence number
    /// `first_seq` and which arrived at `received`: with `offsets` (the places of the records
    /// taken, when some were left out) only those are kept.
    pub(crate) fn new(
        mut records: Vec<RawRecord>,
        keeps: Keeps,
        offsets: Option<Vec<u32>>,
        (first_seq, received): (u64, i64),
        bytes: usize,
    ) -> Handed {
        if let Some(offsets) = &offsets {
            let mut next = offsets.iter().peekable();
            let mut index = 0;
            records.retain(|_| {
                let taken = next.next_if_eq(&&index).is_some();
                index += 1;
                taken
            });
        }
        Handed {
            records,
            keeps,
            first_seq,
            offsets,
            received,
            bytes,
        }
    }

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
    /// Adds a handed-over batch; its records get the next tickets.
    pub(crate) fn push(&mut self, handed: Handed) {
        self.records += handed.records.len();
        self.bytes += handed.bytes;
        self.issued += handed.records.len() as u64;
        self.batches.push_back(handed);
    }

    /// Whether an offer that took `taken` records (and asked for `stored` or not) is to wake
    /// the writer, and notes it awake if so. The writer sleeps either on an empty buffer
    /// (wake it: it starts to linger) or lingering over a few records (wake it only when they
    /// make `wake_records`, or for a stored request — even one with no records of its own: a
    /// client's flush is an empty batch when its records went in earlier ones, and then only
    /// a sync is owed).
    pub(crate) fn wake_writer(&mut self, stored: bool, taken: usize, wake_records: usize) -> bool {
        let pending = self.records;
        let wake = self.writer_asleep
            && (stored || (taken > 0 && (pending == taken || pending >= wake_records)));
        self.writer_asleep &= !wake;
        wake
    }

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
        // "b" was left out: the others keep their places.
        let records = vec![raw("a"), raw("b"), raw("c"), raw("d")];
        let handed = Handed::new(records, keeps.unwrap(), Some(vec![0, 2, 3]), (100, 7), 0);
        assert_eq!(handed.records.len(), 3);
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
            buffer.push(Handed::new(
                records,
                Keeps::All(Keep::days(1)),
                None,
                (0, 0),
                bytes,
            ));
        }
        assert_eq!((buffer.records, buffer.issued), (12, 12));
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

    #[test]
    fn an_offer_wakes_a_sleeping_writer_for_a_first_record_many_records_or_stored() {
        let handed = |count: usize| {
            let records: Vec<RawRecord> = (0..count).map(|_| raw("x")).collect();
            Handed::new(records, Keeps::All(Keep::days(1)), None, (0, 0), 0)
        };
        let mut buffer = Buffer::default();
        assert!(
            !buffer.wake_writer(true, 0, 10),
            "an awake writer is not woken"
        );
        buffer.writer_asleep = true;
        assert!(
            !buffer.wake_writer(false, 0, 10),
            "nothing taken, nothing asked"
        );
        buffer.push(handed(2));
        assert!(
            buffer.wake_writer(false, 2, 10),
            "the first records of an empty buffer"
        );
        assert!(!buffer.writer_asleep);
        buffer.writer_asleep = true;
        buffer.push(handed(3));
        assert!(!buffer.wake_writer(false, 3, 10), "a few more: it lingers");
        buffer.push(handed(5));
        assert!(buffer.wake_writer(false, 5, 10), "ten make a batch");
        buffer.writer_asleep = true;
        assert!(
            buffer.wake_writer(true, 0, 10),
            "a stored request with no records of its own"
        );
    }
}
