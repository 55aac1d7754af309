//! Latest-only delivery: per subject keep only the newest record, and release at most one
//! record per subject per interval — what a display wants.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::Delivery;

/// Newest record per subject, and when each subject may next be sent.
#[derive(Debug)]
pub struct Latest {
    interval: Duration,
    pending: HashMap<Bytes, Delivery>,
    next_allowed: HashMap<Bytes, Instant>,
    bytes: usize,
}

impl Latest {
    /// Returns an empty state releasing each subject at most once per `interval`.
    pub fn new(interval: Duration) -> Self {
        Latest {
            interval,
            pending: HashMap::new(),
            next_allowed: HashMap::new(),
            bytes: 0,
        }
    }

    /// Returns the subjects waiting.
    pub fn records(&self) -> usize {
        self.pending.len()
    }

    /// Returns the record bytes waiting.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Returns true if `delivery` replaces a waiting record rather than adding a subject.
    pub fn replaces(&self, delivery: &Delivery) -> bool {
        self.pending.contains_key(&delivery.subject())
    }

    /// Keeps `delivery` as its subject's newest; returns the record it replaced, if any.
    ///
    /// The record is copied out of the frame it arrived in: a latest-only queue keeps one
    /// record per subject for a long time, and a slice would keep its whole frame (up to
    /// the frame size) alive — thousands of subjects could pin gigabytes.
    pub fn push(&mut self, mut delivery: Delivery) -> Option<Delivery> {
        delivery.record = Bytes::copy_from_slice(&delivery.record);
        self.bytes += delivery.record.len();
        let replaced = self.pending.insert(delivery.subject(), delivery);
        if let Some(old) = &replaced {
            self.bytes -= old.record.len();
        }
        replaced
    }

    /// Moves the records whose subjects may be sent now into `out`, oldest first, up to
    /// `max_bytes` (at least one).
    pub fn drain(&mut self, now: Instant, out: &mut Vec<Delivery>, max_bytes: usize) {
        self.next_allowed
            .retain(|subject, at| *at > now || self.pending.contains_key(subject));
        let mut ready: Vec<Bytes> = self
            .pending
            .keys()
            .filter(|subject| self.next_allowed.get(*subject).is_none_or(|at| *at <= now))
            .cloned()
            .collect();
        ready.sort_by_key(|subject| self.pending.get(subject).map_or(u64::MAX, |d| d.seq));
        let mut taken = 0;
        for subject in ready {
            let Some(delivery) = self.pending.remove(&subject) else {
                continue;
            };
            if taken > 0 && taken + delivery.record.len() > max_bytes {
                self.pending.insert(subject, delivery);
                break;
            }
            taken += delivery.record.len();
            self.bytes -= delivery.record.len();
            self.next_allowed.insert(subject, now + self.interval);
            out.push(delivery);
        }
    }

    /// Returns when the next waiting subject may be sent, if any waits.
    pub fn next_ready(&self) -> Option<Instant> {
        self.pending
            .keys()
            .map(|subject| {
                self.next_allowed
                    .get(subject)
                    .copied()
                    .unwrap_or_else(Instant::now)
            })
            .min()
    }

    /// Empties the state, returning what waited.
    pub fn clear(&mut self) -> Vec<Delivery> {
        self.bytes = 0;
        self.pending.drain().map(|(_, d)| d).collect()
    }
}
