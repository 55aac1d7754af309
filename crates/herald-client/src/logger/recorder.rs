//! The flight recorder: the last records below the threshold, kept in case an error needs
//! their context.
//!
//! Logging threads add with [`ArrayQueue::force_push`], which evicts the oldest entry when
//! the ring is full and takes no lock. Only the background side takes entries out, when it
//! meets a record at or above the trigger priority.

use std::time::Duration;

use crossbeam_queue::ArrayQueue;

use super::entry::Entry;

/// Default number of below-threshold records the flight recorder keeps.
pub const DEFAULT_FLIGHT_RECORDER_RECORDS: usize = 1000;
/// Default age beyond which flight-recorder records are no longer sent as context.
pub const DEFAULT_FLIGHT_RECORDER_AGE: Duration = Duration::from_secs(10);

/// A bounded ring of recent below-threshold entries.
pub(crate) struct FlightRecorder {
    /// `None` when the recorder is off (zero records).
    ring: Option<ArrayQueue<Entry>>,
    /// In the logger clock's stamp units.
    max_age: i64,
}

impl FlightRecorder {
    /// Returns a recorder keeping at most `records` entries younger than `max_age` (in the
    /// logger clock's stamp units).
    pub(crate) fn new(records: usize, max_age: i64) -> Self {
        FlightRecorder {
            ring: (records > 0).then(|| ArrayQueue::new(records)),
            max_age,
        }
    }

    /// Returns true if the recorder keeps anything.
    pub(crate) fn is_enabled(&self) -> bool {
        self.ring.is_some()
    }

    /// Keeps `entry`, evicting the oldest if the ring is full.
    pub(crate) fn record(&self, entry: Entry) {
        if let Some(ring) = &self.ring {
            // The evicted entry (if any) is dropped here, on the logging thread.
            let _evicted = ring.force_push(entry);
        }
    }

    /// Takes the entries that give context to a record made at `time`: those made no later
    /// than `time` and no earlier than the age limit before it, oldest first. Entries made
    /// after `time` go back into the ring for a later trigger.
    pub(crate) fn take_context(&self, time: i64) -> Vec<Entry> {
        let Some(ring) = &self.ring else {
            return Vec::new();
        };
        let oldest = time.saturating_sub(self.max_age);
        let mut context = Vec::with_capacity(ring.len());
        let mut later = Vec::new();
        while let Some(entry) = ring.pop() {
            if entry.time > time {
                later.push(entry);
            } else if entry.time >= oldest {
                context.push(entry);
            }
        }
        for entry in later {
            let _evicted = ring.force_push(entry);
        }
        // Threads race to push, so the ring is only nearly in time order.
        context.sort_by_key(|entry| entry.time);
        context
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logger::entry::{Source, SubjectRef, Text};
    use herald_proto::Priority;

    fn entry(time: i64) -> Entry {
        Entry {
            time,
            ..Entry::new(
                0,
                Priority::Debug,
                SubjectRef::Id(0),
                Text::new(&time.to_string()),
                Vec::new(),
                Source::default(),
            )
        }
    }

    fn texts(entries: &[Entry]) -> Vec<String> {
        entries.iter().map(|e| e.text.to_str()).collect()
    }

    #[test]
    fn keeps_the_newest_within_count_and_age() {
        let recorder = FlightRecorder::new(3, 100);
        for time in [10, 500, 900, 950, 1100] {
            recorder.record(entry(time));
        }
        // 10 and 500 were evicted by count, 1100 is after the trigger, nothing is too old.
        assert_eq!(texts(&recorder.take_context(1000)), ["900", "950"]);
        assert_eq!(texts(&recorder.take_context(2000)), Vec::<&str>::new());
        recorder.record(entry(2000));
        assert_eq!(texts(&recorder.take_context(2050)), ["2000"]);
    }

    #[test]
    fn a_recorder_of_zero_records_is_off() {
        let recorder = FlightRecorder::new(0, 1_000);
        assert!(!recorder.is_enabled());
        recorder.record(entry(1));
        assert!(recorder.take_context(2).is_empty());
    }
}
