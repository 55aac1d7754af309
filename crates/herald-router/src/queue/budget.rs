//! [`QueueBudget`]: the bytes every subscriber queue of a server may hold together.
//!
//! Each queue is bounded, but the sum is not: five subscribers that never read, each with
//! the default 64 MiB, hold 320 MiB. When the queues sharing a budget hold more than it,
//! the largest queue sheds its oldest unprotected records, lowest priority first, until the
//! total is back within the budget or it is no larger than the next largest — so the
//! subscribers that fell furthest behind lose first, and a subscriber that keeps up keeps
//! its records. Each loss is counted as `server_budget` and reported in the shedding
//! queue's gap notice.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use super::{DropReason, Drops, Queue};

/// The shared bound, what the queues hold now, and the queues, to find the largest.
#[derive(Debug)]
pub struct QueueBudget {
    max_bytes: AtomicUsize,
    used: AtomicUsize,
    queues: Mutex<Vec<Weak<Queue>>>,
}

impl QueueBudget {
    /// A budget of `max_bytes` of queued records in all.
    pub fn new(max_bytes: usize) -> QueueBudget {
        QueueBudget {
            max_bytes: AtomicUsize::new(max_bytes),
            used: AtomicUsize::new(0),
            queues: Mutex::new(Vec::new()),
        }
    }

    /// Returns the bound.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes.load(Ordering::Relaxed)
    }

    /// Sets a new bound (a reload); queues over it shed at their next push.
    pub fn set_max_bytes(&self, max_bytes: usize) {
        self.max_bytes.store(max_bytes, Ordering::Relaxed);
    }

    /// Returns the bytes queued in all queues of this budget.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// Makes `queue` one of the queues that shed when the budget is exceeded.
    pub fn register(&self, queue: &Arc<Queue>) {
        let mut queues = self.lock();
        queues.retain(|q| q.strong_count() > 0);
        queues.push(Arc::downgrade(queue));
    }

    /// Moves the count of queued bytes by the change a queue saw.
    pub(super) fn change(&self, before: usize, after: usize) {
        if after > before {
            self.used.fetch_add(after - before, Ordering::Relaxed);
        } else if before > after {
            self.used.fetch_sub(before - after, Ordering::Relaxed);
        }
    }

    /// While the queues hold more than the budget, makes the largest shed down to the
    /// budget or to the size of the next largest. Called by a queue after a push, with no
    /// queue lock held. Returns what was shed.
    pub(super) fn relieve(&self) -> Drops {
        let mut drops = Drops::default();
        // Bounded: each round sheds the largest queue down to the next, or ends.
        for _ in 0..64 {
            let over = self.used().saturating_sub(self.max_bytes());
            if over == 0 {
                break;
            }
            let Some((largest, queue, next)) = self.two_largest() else {
                break;
            };
            let target = largest.saturating_sub(over).max(next);
            let shed = queue.shed_to(target, DropReason::ServerBudget);
            if shed == 0 {
                break; // Only protected records left: nothing more to shed here.
            }
            drops.add(DropReason::ServerBudget, shed);
        }
        drops
    }

    /// Returns the largest queue with its bytes, and the bytes of the next largest (0 if
    /// there is none): one pass, no sorting.
    fn two_largest(&self) -> Option<(usize, Arc<Queue>, usize)> {
        let queues: Vec<Arc<Queue>> = self.lock().iter().filter_map(Weak::upgrade).collect();
        let mut largest: Option<(usize, Arc<Queue>)> = None;
        let mut next = 0;
        for queue in queues {
            let bytes = queue.depth_bytes() as usize;
            match &largest {
                Some((most, _)) if bytes <= *most => next = next.max(bytes),
                _ => {
                    next = largest.as_ref().map_or(next, |(most, _)| *most);
                    largest = Some((bytes, queue));
                }
            }
        }
        largest.map(|(bytes, queue)| (bytes, queue, next))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Weak<Queue>>> {
        self.queues.lock().unwrap_or_else(|p| p.into_inner())
    }
}
