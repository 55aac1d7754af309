//! When a log call was made, cheaply: where the processor's time-stamp counter is a clock
//! ([`herald_tsc::Counter`]), a log call keeps the raw count (~12 ns, against ~30–43 ns for
//! the system's wall clock on the test machine) and the background side turns counts into
//! wall-clock nanoseconds; elsewhere a log call reads the wall clock itself.
//!
//! The conversion: at the start of each drain the background side reads the counter and
//! the wall clock together (the anchor) and places every entry before or after it by the
//! ticks between them, at a rate measured against the monotonic clock since the logger
//! began (first over a millisecond at its creation, then over its whole life). An entry is
//! at most a drain old when converted, so its time is off by its age times the rate's
//! error: under a microsecond after the first second.

use std::time::{Duration, Instant};

use herald_tsc::Counter;

/// How long the rate is first measured for, at the logger's creation.
const FIRST_MEASURE: Duration = Duration::from_millis(1);
/// From how long a base on the rate is measured over the logger's life instead.
const LIFE_MEASURE: Duration = Duration::from_millis(100);

/// The logger's clock.
#[derive(Debug)]
pub(crate) struct Clock {
    counter: Option<Counter>,
    /// The counter and the monotonic clock when the logger began.
    base: (u64, Instant),
    /// Nanoseconds per tick, first measured.
    first_rate: f64,
}

/// Turns stamps into wall-clock nanoseconds, as of one anchor (the default: stamps are
/// nanoseconds already; every drain makes a real one before converting).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Converter {
    /// `None`: stamps are nanoseconds already.
    anchor: Option<(u64, i64, f64)>,
}

impl Clock {
    /// Returns a clock on the time-stamp counter where it is usable (measuring its rate for
    /// a millisecond), else on the wall clock.
    pub(crate) fn new() -> Clock {
        Clock::with_counter(Counter::invariant())
    }

    fn with_counter(counter: Option<Counter>) -> Clock {
        let started = Instant::now();
        let Some(counter) = counter else {
            return Clock {
                counter: None,
                base: (0, started),
                first_rate: 1.0,
            };
        };
        let first = counter.read();
        let mut now = Instant::now();
        while now.duration_since(started) < FIRST_MEASURE {
            std::hint::spin_loop();
            now = Instant::now();
        }
        let ticks = counter.read().saturating_sub(first).max(1);
        Clock {
            counter: Some(counter),
            base: (first, started),
            first_rate: now.duration_since(started).as_nanos() as f64 / ticks as f64,
        }
    }

    /// Returns the stamp of now: ticks of the counter, or wall-clock nanoseconds.
    #[inline(always)]
    pub(crate) fn stamp(&self) -> i64 {
        match self.counter {
            // Ticks fit an i64 for ~90 years at 3 GHz after the machine started.
            Some(counter) => counter.read() as i64,
            None => herald_proto::time::now_nanos(),
        }
    }

    /// Returns `span` in stamp units (for comparing stamps with an age).
    pub(crate) fn span(&self, span: Duration) -> i64 {
        let nanos = i64::try_from(span.as_nanos()).unwrap_or(i64::MAX);
        match self.counter {
            Some(_) => (nanos as f64 / self.first_rate) as i64,
            None => nanos,
        }
    }

    /// Reads the counter and the wall clock together: the anchor stamps are converted by.
    pub(crate) fn converter(&self) -> Converter {
        let Some(counter) = self.counter else {
            return Converter { anchor: None };
        };
        let (ticks, nanos) = anchor(counter);
        let lived = self.base.1.elapsed();
        let rate = if lived >= LIFE_MEASURE {
            lived.as_nanos() as f64 / ticks.saturating_sub(self.base.0).max(1) as f64
        } else {
            self.first_rate
        };
        Converter {
            anchor: Some((ticks, nanos, rate)),
        }
    }
}

/// Reads the counter and the wall clock together: the wall clock between two counter
/// reads, taken as at their middle, the closest of a few tries (a thread preempted between
/// the reads would make an anchor off by the time it was away).
fn anchor(counter: Counter) -> (u64, i64) {
    let mut best: Option<(u64, u64, i64)> = None;
    for _ in 0..ANCHOR_TRIES {
        let before = counter.read();
        let nanos = herald_proto::time::now_nanos();
        let after = counter.read();
        let spread = after.saturating_sub(before);
        if best.is_none_or(|(tightest, ..)| spread < tightest) {
            best = Some((spread, before + spread / 2, nanos));
        }
        if spread <= ANCHOR_TIGHT_TICKS {
            break;
        }
    }
    let (_, ticks, nanos) = best.expect("ANCHOR_TRIES > 0");
    (ticks, nanos)
}

/// Tries at an anchor at most.
const ANCHOR_TRIES: usize = 8;
/// An anchor whose counter reads are this close (about 1 µs at 2–4 GHz) is taken at once.
const ANCHOR_TIGHT_TICKS: u64 = 4_000;

impl Converter {
    /// Returns the wall-clock nanoseconds of `stamp`.
    pub(crate) fn nanos(&self, stamp: i64) -> i64 {
        match self.anchor {
            None => stamp,
            Some((ticks, nanos, rate)) => {
                let ahead = (stamp as u64).wrapping_sub(ticks) as i64;
                nanos.saturating_add((ahead as f64 * rate) as i64)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_turn_into_the_wall_clock_time_they_were_made_at() {
        let clock = Clock::new();
        let before = herald_proto::time::now_nanos();
        let stamp = clock.stamp();
        let after = herald_proto::time::now_nanos();
        std::thread::sleep(Duration::from_millis(120));
        let time = clock.converter().nanos(stamp);
        // Within 50 µs of when it was made, 120 ms later.
        assert!(
            time >= before - 50_000 && time <= after + 50_000,
            "{before} <= {time} <= {after}"
        );
        let later = clock.stamp();
        assert!(clock.converter().nanos(later) > time);
        let span = clock.span(Duration::from_millis(10));
        assert!(span > 0);
    }

    #[test]
    fn without_a_counter_stamps_are_the_wall_clock() {
        let clock = Clock::with_counter(None);
        let before = herald_proto::time::now_nanos();
        let stamp = clock.stamp();
        assert!(stamp >= before);
        assert_eq!(clock.converter().nanos(stamp), stamp);
        assert_eq!(clock.span(Duration::from_nanos(7)), 7);
    }
}
