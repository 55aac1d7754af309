//! The mirror's side of a feed: a client connection that sent `MIRROR` after `WELCOME`. Its
//! `DELIVER` frames are records to route here (and archive) as if published, its `GAP`
//! frames losses on the source's side to pass on to the subscribers here, and its
//! `INFO_CHANGE` frames the objects it mirrors; what it mirrors becomes read-only here.

use std::sync::atomic::Ordering;

use herald_info::InfoObject;
use herald_proto::frame::{DeliverEntry, GapNotice, RawRecord};
use herald_proto::glob::Glob;
use herald_proto::route::{InfoChange, MirrorFeed, SYNCED};
use herald_proto::ErrorCode;

use super::feed_state::FeedState;
use super::Feed;
use crate::events::CloseReason;
use crate::session_state::{Close, Session};

/// The connection announced a feed: checks it may, and registers what it mirrors.
///
/// # Errors
/// A [`Close`] when the feed is refused (an identity without `admin`, bad globs).
pub async fn announce(session: &mut Session, announced: MirrorFeed) -> Result<(), Close> {
    if let Err(message) = session.access.check(
        crate::auth::Operation::Admin,
        "feed this server as a mirror (MIRROR)",
    ) {
        // An identity not allowed to: closed as unauthorized, not as a protocol error.
        return Err(Close::with_error(
            CloseReason::Unauthorized,
            ErrorCode::Denied,
            message,
        ));
    }
    let globs = |list: &[String]| -> Result<Vec<Glob>, Close> {
        list.iter()
            .map(|g| {
                Glob::new(g).map_err(|err| {
                    Close::with_error(
                        CloseReason::ProtocolError,
                        ErrorCode::BadRequest,
                        format!("MIRROR names `{g}`: {err}"),
                    )
                })
            })
            .collect()
    };
    let feed = Feed {
        source: announced.source.clone(),
        subjects: globs(&announced.subjects)?,
        objects: globs(&announced.objects)?,
    };
    tracing::info!(source = %feed.source, subjects = ?announced.subjects, objects = ?announced.objects, "feeding this mirror");
    session.shared.mirrored.add(feed.clone());
    session.feed = Some(FeedState {
        feed,
        snapshot: Vec::new(),
    });
    Ok(())
}

/// Routes records the source streams, as if published here (and archives them).
pub async fn deliver(session: &mut Session, entries: Vec<DeliverEntry>) {
    let shared = std::sync::Arc::clone(&session.shared);
    let state = std::sync::Arc::clone(&session.state);
    let routed = |records: &[RawRecord], stats: &herald_router::RouteStats, received| {
        if let Some(archive) = &shared.archive {
            let offer = archive.offer(records.to_vec(), stats.first_seq, received, false);
            if offer.dropped > 0 {
                crate::events::archive_dropped(offer.dropped);
            }
        }
        let bytes: u64 = records.iter().map(|r| r.bytes.len() as u64).sum();
        let queued = stats.deliveries.saturating_sub(stats.dropped.total());
        shared.monitor.count_batch(stats.records, bytes, queued);
        state.records_in.fetch_add(stats.records, Ordering::Relaxed);
        if stats.dropped.total() > 0 {
            crate::events::records_dropped(&shared.monitor, state.id, &stats.dropped);
        }
    };
    crate::relay::route_entries(&shared.router, &mut session.route, entries, routed).await;
}

/// Passes a loss on the source's side on to the subscribers here, naming the source.
pub fn gap(session: &Session, notice: &GapNotice) {
    if let Some(feed) = &session.feed {
        crate::remote_gap::owe_gap(&session.shared, &feed.feed.source, notice);
    }
}

/// Applies the source's objects: a snapshot (after each connection), then every change.
pub fn info_change(session: &mut Session, change: InfoChange) {
    let shared = std::sync::Arc::clone(&session.shared);
    let Some(feed) = &mut session.feed else {
        return;
    };
    let objects = change
        .objects
        .into_iter()
        .map(InfoObject::from)
        .filter(|o| feed.feed.has_object(&o.name));
    match change.reason.as_str() {
        crate::info::SNAPSHOT_REASON => feed.snapshot.extend(objects),
        SYNCED => {
            feed.snapshot.extend(objects);
            let snapshot = std::mem::take(&mut feed.snapshot);
            let mirrored = feed.feed.clone();
            shared
                .info
                .replace_copies(snapshot, |name| mirrored.has_object(name), &shared.router);
        }
        reason => shared
            .info
            .apply_copies(objects.collect(), reason, &shared.router),
    }
}

/// Returns true if the session feeds this mirror.
pub fn is_feed(session: &Session) -> bool {
    session.feed.is_some()
}
