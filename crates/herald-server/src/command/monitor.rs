//! `MONITOR`: reply with the server's counters, connections and archive.

use herald_proto::Frame;

use crate::session::{Close, Session};

pub(super) async fn apply(session: &mut Session, cid: u64) -> Result<(), Close> {
    let data = session.shared.monitor_snapshot();
    session.reply(Frame::MonitorReply { cid, data }).await;
    Ok(())
}
