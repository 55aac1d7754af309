//! `UNSUBSCRIBE`: remove a subscription; records already queued for it are discarded.
//! `cid` 0 asks for no answer: a client dropping a subscription handle sends that, and an
//! `ERROR` with `cid` 0 would otherwise read as "the whole connection failed".

use herald_proto::{ErrorCode, ErrorFrame, Frame};

use crate::session::{Close, Session};

pub(super) async fn apply(session: &mut Session, cid: u64, subscription: u64) -> Result<(), Close> {
    let removed = session
        .shared
        .router
        .unsubscribe(session.state.id, subscription);
    session
        .state
        .subscriptions()
        .retain(|s| s.id != subscription);
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
