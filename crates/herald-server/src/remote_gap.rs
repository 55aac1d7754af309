//! A loss on another server — a cluster member's route queue, a mirror's feed — passed on
//! to the local subscribers it may have hit. Below the cluster's routes and the mirror's
//! feed, which both report one.

use herald_proto::frame::GapNotice;
use herald_router::Gap;

use crate::local::Local;

/// Passes a loss on the far member's route queue on to the local subscribers it may have
/// hit: each whose filter takes any of the priorities lost gets a gap notice naming the
/// member, counting the records of those priorities. Which subjects the lost records had
/// is not known here, so a subscriber may hear of records its subject pattern would not
/// have matched: a loss is never left unreported.
pub(crate) fn owe_gap(shared: &Local, member: &str, notice: &GapNotice) {
    for subscription in shared.router.index().iter().filter(|s| !s.route) {
        let mut gap = Gap {
            first_seq: notice.first_seq,
            last_seq: notice.last_seq,
            ..Gap::default()
        };
        for (priority, count) in &notice.by_priority {
            if subscription.filter.priorities.contains(*priority) {
                gap.by_priority[*priority as usize] += count;
                gap.count += count;
            }
        }
        subscription.queue.note_remote_gap(member, gap);
    }
}
