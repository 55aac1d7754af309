//! `UNSUBSCRIBE`: remove a subscription; records already queued for it are discarded.
//! `cid` 0 asks for no answer: a client dropping a subscription handle sends that, and an
//! `ERROR` with `cid` 0 would otherwise read as "the whole connection failed".

use herald_proto::{ErrorCode, ErrorFrame, Frame};
use herald_router::DropReason;

use crate::events;
use crate::session_state::{Close, Session};

pub(super) async fn apply(session: &mut Session, cid: u64, subscription: u64) -> Result<(), Close> {
    let connection = session.state.id;
    let removed = session.shared.router.unsubscribe(connection, subscription)
        | session.shared.info.unsubscribe(connection, subscription);
    let removed_state = {
        let mut subscriptions = session.state.subscriptions();
        let position = subscriptions.iter().position(|s| s.id == subscription);
        position.map(|index| subscriptions.remove(index))
    };
    if let Some(state) = removed_state {
        crate::closing::hand_over(&session.shared, &state);
        let discarded = state.queue.discard(DropReason::Closed);
        let (monitor, connection) = (&session.shared.monitor, session.state.id);
        events::queue_discarded(
            monitor,
            connection,
            subscription,
            DropReason::Closed,
            discarded,
        );
    }
    if cid == 0 {
        return Ok(());
    }
    let reply = if removed {
        Frame::Ok { cid }
    } else {
        Frame::Error(ErrorFrame {
            cid,
            code: ErrorCode::BadSubscription,
            message: format!("no subscription with id {subscription} on this connection"),
        })
    };
    session.reply(reply).await;
    Ok(())
}
