//! `MONITOR`: reply with the server's counters, connections and archive.

use herald_proto::Frame;

use crate::auth::Operation;
use crate::session_state::{Close, Session};

pub(super) async fn apply(session: &mut Session, cid: u64) -> Result<(), Close> {
    let what = "see the server's connections and counters (MONITOR)";
    if let Err(message) = session.access.check(Operation::Admin, what) {
        super::deny(session, cid, message).await;
        return Ok(());
    }
    let data = crate::snapshot::monitor_snapshot(&session.shared);
    session.reply(Frame::MonitorReply { cid, data }).await;
    Ok(())
}
