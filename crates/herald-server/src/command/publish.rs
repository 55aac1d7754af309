//! `PUBLISH`: route a batch of records, then acknowledge it if asked.

use std::sync::atomic::Ordering;

use herald_proto::frame::{Ack, Publish};
use herald_proto::time::now_nanos;
use herald_proto::{AckLevel, ErrorCode, ErrorFrame, Frame};

use crate::events;
use crate::session::{Close, Session};

pub(super) async fn apply(session: &mut Session, publish: Publish) -> Result<(), Close> {
    let shared = &session.shared;
    let mut stats = shared
        .router
        .route(&mut session.route, &publish.records, now_nanos());
    // Subscribers with policy `block` and a full queue make this publisher wait, each at
    // most its block timeout, counted from the same start so the waits overlap.
    let started = tokio::time::Instant::now();
    for (queue, blocked) in session.route.take_blocked() {
        stats
            .dropped
            .merge(&queue.push_blocking(blocked, started).await);
    }
    let bytes: usize = publish.records.iter().map(|r| r.bytes.len()).sum();
    let queued = stats.deliveries.saturating_sub(stats.dropped.total());
    shared
        .monitor
        .count_batch(stats.records, bytes as u64, queued);
    session
        .state
        .records_in
        .fetch_add(stats.records, Ordering::Relaxed);
    if stats.dropped.total() > 0 {
        events::records_dropped(&shared.monitor, session.state.id, &stats.dropped);
    }
    match publish.ack {
        AckLevel::None => {}
        AckLevel::Received => {
            let ack = Ack {
                ack_id: publish.ack_id,
                level: AckLevel::Received,
                count: stats.records,
            };
            session.reply(Frame::Ack(ack)).await;
        }
        AckLevel::Stored => {
            // The records were routed; only the durability promise cannot be made yet.
            let error = ErrorFrame {
                cid: publish.ack_id,
                code: ErrorCode::Other,
                message:
                    "acknowledgement level `stored` needs an archive, and this server has none; \
                          the records were routed but not stored"
                        .to_string(),
            };
            session.reply(Frame::Error(error)).await;
        }
    }
    Ok(())
}
