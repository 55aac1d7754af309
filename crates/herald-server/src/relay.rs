//! Records that come from another server as `DELIVER` entries — over a cluster route, or
//! from the source of a mirror — routed here in groups that share their receive time (the
//! time the first server received them, which they keep) and the queue groups this member
//! is to serve with them (a route's entries name those: the far member chose this one).

use herald_proto::frame::{DeliverEntry, RawRecord};
use herald_router::{RouteContext, RouteStats, Router};

/// Routes `entries` through `context`, waiting (each at most its block timeout) for
/// subscribers with policy `block`; `routed` hears of each group: its records, what routing
/// them did, and their receive time.
pub async fn route_entries(
    router: &Router,
    context: &mut RouteContext,
    entries: impl IntoIterator<Item = DeliverEntry>,
    mut routed: impl FnMut(&[RawRecord], &RouteStats, i64),
) {
    let mut entries = entries.into_iter().peekable();
    let mut records: Vec<RawRecord> = Vec::new();
    while let Some(first) = entries.next() {
        let received = first.received;
        let groups = first.groups;
        records.clear();
        records.push(first.record);
        while let Some(next) = entries.next_if(|e| e.received == received && e.groups == groups) {
            records.push(next.record);
        }
        context.set_route_groups(&groups);
        let stats = router.route(context, &records, received);
        let started = tokio::time::Instant::now();
        for (queue, blocked) in context.take_blocked() {
            queue.push_blocking(blocked, started).await;
        }
        routed(&records, &stats, received);
    }
}
