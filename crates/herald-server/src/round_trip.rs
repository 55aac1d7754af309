//! The round trip of a connection between two servers (a cluster route, a mirror's feed),
//! timed by the `PING`s its reader sends: the answers come in order, so each `PONG` answers
//! the oldest `PING` not yet answered.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use tokio::time::Instant;

/// Pings in flight and the last round trip measured.
#[derive(Debug, Default)]
pub struct RoundTrip {
    pings: Mutex<VecDeque<Instant>>,
    micros: AtomicU64,
}

impl RoundTrip {
    /// A `PING` goes out now.
    pub fn sent(&self) {
        let mut pings = lock(&self.pings);
        // Pings of a connection that ended are never answered.
        if pings.len() > 16 {
            pings.clear();
        }
        pings.push_back(Instant::now());
    }

    /// A `PONG` came: the oldest `PING` in flight is answered.
    pub fn answered(&self) {
        if let Some(sent) = lock(&self.pings).pop_front() {
            let micros = u64::try_from(sent.elapsed().as_micros()).unwrap_or(u64::MAX);
            self.micros.store(micros.max(1), Ordering::Relaxed);
        }
    }

    /// The connection ended: its pings are never answered.
    pub fn reset(&self) {
        lock(&self.pings).clear();
    }

    /// The last round trip, in µs (0: none measured yet).
    pub fn micros(&self) -> u64 {
        self.micros.load(Ordering::Relaxed)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
