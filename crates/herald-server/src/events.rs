//! Every connection close, rejected frame and dropped record is an event that logs and
//! counts in one place (vector's `internal_events`), so the monitor and the log agree.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};

use herald_router::{DropReason, Drops};

use crate::monitor::Monitor;

pub use crate::close_reason::CloseReason;

/// A connection ended.
pub fn connection_closed(
    monitor: &Monitor,
    connection: u64,
    peer: SocketAddr,
    reason: CloseReason,
    detail: &str,
) {
    monitor.count_close(reason);
    match reason {
        CloseReason::ClientClosed | CloseReason::ServerShutdown => {
            tracing::debug!(connection, %peer, reason = reason.name(), "connection closed")
        }
        _ => {
            tracing::warn!(connection, %peer, reason = reason.name(), detail, "closing connection")
        }
    }
}

/// A frame was refused; the client gets an error frame saying `message`.
pub fn frame_rejected(monitor: &Monitor, connection: u64, peer: SocketAddr, message: &str) {
    monitor.count_rejected_frame();
    tracing::warn!(connection, %peer, error = message, "rejected frame");
}

/// A request was refused on its own (a body that does not decode, an unknown frame type);
/// the client gets an `ERROR` with the request's cid and the connection lives on. Client
/// mistakes are logged at debug level: the client is told, the monitor counts.
pub fn request_refused(monitor: &Monitor, connection: u64, message: &str) {
    monitor.count_refused_request();
    tracing::debug!(connection, error = message, "refused request");
}

/// A request (or some records of a `PUBLISH`) was refused because the connection's identity
/// may not do it: counted apart, and logged, so that an operator sees who tried what.
pub fn denied(monitor: &Monitor, connection: u64, message: &str) {
    monitor.count_denied();
    tracing::info!(connection, "denied: {message}");
}

/// Records of a `PUBLISH` were refused (the others were routed).
pub fn records_refused(monitor: &Monitor, connection: u64, count: u64, message: &str) {
    monitor.count_refused_records(count);
    tracing::debug!(connection, count, error = message, "refused records");
}

/// Records from publisher `connection` did not reach subscriber queues (or were shed from
/// them); each subscriber that lost some gets a gap notice from its writer.
pub fn records_dropped(monitor: &Monitor, connection: u64, drops: &Drops) {
    monitor.count_drops(drops);
    tracing::trace!(
        connection,
        count = drops.total(),
        "records dropped for subscribers"
    );
}

/// A subscription ended with records still queued, which are discarded.
pub fn queue_discarded(
    monitor: &Monitor,
    connection: u64,
    subscription: u64,
    reason: DropReason,
    count: u64,
) {
    if count == 0 {
        return;
    }
    let mut drops = Drops::default();
    drops.add(reason, count);
    monitor.count_drops(&drops);
    tracing::debug!(
        connection,
        subscription,
        count,
        reason = reason.name(),
        "queued records discarded"
    );
}

/// The archive's buffer was full (its store slow or down): `count` records were routed but
/// not archived. Counted by the archive (the monitor's `archive.dropped`); logged at most
/// once a second.
pub fn archive_dropped(count: u64) {
    static LAST_WARNING_SECS: AtomicU64 = AtomicU64::new(0);
    if first_this_second(&LAST_WARNING_SECS) {
        tracing::warn!(count, "archive buffer full: records not archived");
    }
}

/// Archive queries skipped `count` stored records that do not decode (counted by the
/// archive as `archive.skipped_unreadable`); logged at most once a second.
pub fn archive_skipped(count: u64) {
    static LAST_WARNING_SECS: AtomicU64 = AtomicU64::new(0);
    if first_this_second(&LAST_WARNING_SECS) {
        tracing::warn!(
            count,
            "archive query skipped stored records that do not decode"
        );
    }
}

/// Returns true at most once a second per `last` (the second of the last warning): what a
/// rate-limited warning asks before it logs.
fn first_this_second(last: &AtomicU64) -> bool {
    let now = herald_proto::time::now_nanos() as u64 / 1_000_000_000;
    last.swap(now, Ordering::Relaxed) != now
}
