//! `MONITOR`: reply with the server's counters, connections and archive.

use herald_proto::Frame;

use crate::session::{Close, Session};

pub(super) async fn apply(session: &mut Session, cid: u64) -> Result<(), Close> {
    let mut data = session.shared.monitor.snapshot();
    if let Some(archive) = &session.shared.archive {
        data.push((
            "archive".into(),
            crate::archive::stats_value(&archive.stats()),
        ));
    }
    session.reply(Frame::MonitorReply { cid, data }).await;
    Ok(())
}
