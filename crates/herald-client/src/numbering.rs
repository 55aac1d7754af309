//! How a producer numbers its records: its id and the number the next record gets
//! (docs/protocol.md, Numbered records). One [`Numbering`] serves every connection of a
//! client, so a failover does not start again at 1.
//!
//! A logger's disk buffer gives its client one that it keeps on disk, so that the producer
//! keeps its id and numbers on after a restart: numbers are taken in blocks, and before the
//! first number of a new block is handed out the `reserve` hook writes the new limit down.
//! After a restart numbering goes on from the limit written, so a number is never used twice,
//! even if the process died without saying how far it got (the numbers between the last one
//! used and the limit are skipped: a server sees a gap in the numbers, which is no loss).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::sync::lock;

/// Numbers reserved at once by a numbering that keeps its limit on disk: one write of the
/// disk buffer's state file per this many records.
pub(crate) const RESERVE_BLOCK: u64 = 1 << 16;

/// Writes a new limit down before numbers below it are handed out; `Err` says why it could
/// not (then no number is taken).
pub(crate) type ReserveHook = Box<dyn FnMut(u64) -> Result<(), String> + Send>;

/// A producer id and the next number. A cheap clone; clones share the counter.
#[derive(Clone)]
pub(crate) struct Numbering {
    inner: Arc<Inner>,
}

struct Inner {
    producer: u64,
    next: AtomicU64,
    /// Numbers below this may be handed out without calling the hook (`u64::MAX` without one).
    limit: AtomicU64,
    reserve: Option<Mutex<ReserveHook>>,
}

impl std::fmt::Debug for Numbering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Numbering")
            .field("producer", &self.inner.producer)
            .field("next", &self.next_seq())
            .finish_non_exhaustive()
    }
}

impl Numbering {
    /// Returns a numbering of `producer` from 1, kept in memory only.
    pub(crate) fn new(producer: u64) -> Self {
        Numbering::build(producer, 1, u64::MAX, None)
    }

    /// Returns a numbering of `producer` from `next_seq`, which calls `reserve` before any
    /// number at or above `limit` is handed out.
    pub(crate) fn with_reserve(
        producer: u64,
        next_seq: u64,
        limit: u64,
        reserve: ReserveHook,
    ) -> Self {
        Numbering::build(producer, next_seq.max(1), limit, Some(Mutex::new(reserve)))
    }

    fn build(producer: u64, next: u64, limit: u64, reserve: Option<Mutex<ReserveHook>>) -> Self {
        Numbering {
            inner: Arc::new(Inner {
                producer,
                next: AtomicU64::new(next),
                limit: AtomicU64::new(limit),
                reserve,
            }),
        }
    }

    /// Returns the producer id.
    pub(crate) fn producer(&self) -> u64 {
        self.inner.producer
    }

    /// Returns the number the next record gets.
    pub(crate) fn next_seq(&self) -> u64 {
        self.inner.next.load(Ordering::Acquire)
    }

    /// Numbers the next `count` records (at least one): returns the number of the first.
    ///
    /// # Errors
    /// The hook's message when the numbers cross the reserved limit and it could not write
    /// the new one down; no number is taken then.
    pub(crate) fn take(&self, count: u64) -> Result<u64, String> {
        debug_assert!(count > 0, "a take numbers at least one record");
        loop {
            let first = self.inner.next.load(Ordering::Acquire);
            let end = first + count;
            if end > self.inner.limit.load(Ordering::Acquire) {
                self.reserve(end)?;
            }
            let taken = self.inner.next.compare_exchange_weak(
                first,
                end,
                Ordering::AcqRel,
                Ordering::Acquire,
            );
            if taken.is_ok() {
                return Ok(first);
            }
        }
    }

    /// Calls the hook (once, whoever else crossed the limit meanwhile) so that numbers
    /// below `end` may be used.
    fn reserve(&self, end: u64) -> Result<(), String> {
        let Some(reserve) = &self.inner.reserve else {
            return Ok(());
        };
        let mut reserve = lock(reserve);
        if end <= self.inner.limit.load(Ordering::Acquire) {
            return Ok(());
        }
        let limit = end + RESERVE_BLOCK;
        (*reserve)(limit)?;
        self.inner.limit.store(limit, Ordering::Release);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_run_on_and_the_limit_is_written_before_it_is_crossed() {
        let written = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&written);
        let numbering = Numbering::with_reserve(
            7,
            10,
            12,
            Box::new(move |limit| {
                lock(&log).push(limit);
                Ok(())
            }),
        );
        assert_eq!(numbering.take(2).unwrap(), 10);
        assert!(lock(&written).is_empty(), "10 and 11 lie below the limit");
        assert_eq!(numbering.take(3).unwrap(), 12);
        assert_eq!(*lock(&written), [15 + RESERVE_BLOCK]);
        assert_eq!(numbering.next_seq(), 15);
        assert_eq!(numbering.producer(), 7);
    }

    #[test]
    fn a_failed_reserve_takes_no_number() {
        let numbering = Numbering::with_reserve(1, 5, 5, Box::new(|_| Err("disk full".into())));
        assert_eq!(numbering.take(1), Err("disk full".to_string()));
        assert_eq!(numbering.next_seq(), 5);
    }
}
