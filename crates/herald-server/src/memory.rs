//! Gives memory freed by a burst of records back to the system once the server goes quiet.
//!
//! Routing a burst allocates and frees batches, queue entries and frames by the million;
//! glibc keeps the freed memory for later, so the server stayed at its peak resident size
//! long after (108 MiB after the side-by-side scenarios, against NATS's 27). Every
//! [`QUIET`], this task looks at the records that came in and went out; once they stop
//! moving after some did (or the resident size grew by [`GROWTH`], as a large archive query
//! makes it), it asks the allocator to return what it holds free ([`herald_memory`]), on the
//! blocking pool. Nothing is released under load, when the memory is about to be used again
//! and the allocator's locks are busy.

use std::sync::Arc;
use std::time::Duration;

use crate::shared::Shared;
use crate::shutdown::Shutdown;

/// How long the records must stand still before memory is released.
pub const QUIET: Duration = Duration::from_millis(250);
/// Growth of the resident size that calls for a release once quiet, without records moving.
pub const GROWTH: u64 = 16 << 20;

/// Releases free memory whenever the server goes quiet after work, until shutdown.
pub async fn release_when_quiet(shared: Arc<Shared>, mut shutdown: Shutdown) {
    let mut tick = tokio::time::interval(QUIET);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut watch = Watch::new(resident_bytes());
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = shutdown.recv() => return,
        }
        if watch.due(shared.monitor.activity(), resident_bytes()) {
            let released = tokio::task::spawn_blocking(herald_memory::release_free_memory).await;
            let after = resident_bytes();
            tracing::debug!(released = ?released, resident = after, "released free memory");
            watch.released(after);
        }
    }
}

/// Decides when to release: after activity, at the first look that finds none.
#[derive(Debug)]
struct Watch {
    activity: u64,
    /// Records moved since the last release.
    busy: bool,
    /// The resident size after the last release.
    resident: u64,
}

impl Watch {
    fn new(resident: u64) -> Self {
        Watch {
            activity: 0,
            busy: false,
            resident,
        }
    }

    /// Takes in the activity counter and the resident size now; returns true when memory
    /// should be released.
    fn due(&mut self, activity: u64, resident: u64) -> bool {
        if activity != self.activity {
            self.activity = activity;
            self.busy = true;
            return false;
        }
        self.busy || resident > self.resident.saturating_add(GROWTH)
    }

    fn released(&mut self, resident: u64) {
        self.busy = false;
        self.resident = resident;
    }
}

/// This process's resident size in bytes (0 where `/proc` does not say).
fn resident_bytes() -> u64 {
    herald_memory::resident_kib(std::process::id()).map_or(0, |kib| kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_once_records_stop_moving() {
        let mut watch = Watch::new(40 << 20);
        assert!(!watch.due(0, 40 << 20), "nothing happened yet");
        assert!(!watch.due(1_000, 60 << 20), "records moving");
        assert!(!watch.due(5_000, 80 << 20), "still moving");
        assert!(watch.due(5_000, 80 << 20), "quiet after work");
        watch.released(45 << 20);
        assert!(
            !watch.due(5_000, 50 << 20),
            "released already, no growth since"
        );
        assert!(
            watch.due(5_000, 62 << 20),
            "grew by more than GROWTH without records"
        );
        watch.released(46 << 20);
        assert!(!watch.due(5_000, 46 << 20));
    }

    #[test]
    fn reads_its_own_resident_size() {
        if cfg!(target_os = "linux") {
            assert!(resident_bytes() > 1 << 20);
        }
    }
}
