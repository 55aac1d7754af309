//! What a closing connection, or a subscription that ends, leaves behind: the connection
//! is taken out of the router, the information service and the monitor; what its queues
//! still hold goes to the other members of their queue groups or is counted lost. Used by
//! the session's loop, the browser's WebSocket and the `UNSUBSCRIBE` command alike.

use herald_router::DropReason;

use crate::events::{self, CloseReason};
use crate::monitor::ConnectionState;
use crate::shared::Shared;

/// Takes a closing connection (native or browser) out of the router, the information
/// service and the monitor, and counts what its queues still held as lost.
pub(crate) fn unregister(shared: &Shared, state: &ConnectionState, reason: CloseReason) {
    shared.router.remove_connection(state.id);
    shared.info.remove_connection(state.id);
    shared.monitor.remove_connection(state.id);
    discard_queues(shared, state, reason);
}

/// Counts the records still queued for a closing connection's subscriptions as lost.
fn discard_queues(shared: &Shared, state: &ConnectionState, reason: CloseReason) {
    let drop_reason = match reason {
        CloseReason::SlowConsumer => DropReason::SlowConsumer,
        _ => DropReason::Closed,
    };
    for subscription in state.subscriptions().iter() {
        hand_over(shared, subscription);
        let discarded = subscription.queue.discard(drop_reason);
        events::queue_discarded(
            &shared.monitor,
            state.id,
            subscription.id,
            drop_reason,
            discarded,
        );
    }
}

/// A queue group member that leaves hands what is queued for it to the other members (what
/// none takes stays, for the discard that follows to count as lost).
pub(crate) fn hand_over(shared: &Shared, subscription: &crate::monitor::SubscriptionState) {
    let Some(group) = &subscription.group else {
        return;
    };
    let (handed, drops) = shared.router.hand_over(group, &subscription.queue);
    if drops.total() > 0 {
        events::records_dropped(&shared.monitor, 0, &drops);
    }
    if handed > 0 {
        tracing::debug!(group = %group, handed, "a queue group member left: its records went to the others");
    }
}
