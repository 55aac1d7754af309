//! One route connection between two members. Once it is open ([`super::handshake`]: `MEMBERS`
//! both ways, the proofs of the cluster secret, the checks) the connection is attached to the far member's [`Link`] (made on the first
//! one), announces the local interests (`SUBSCRIBE`/`UNSUBSCRIBE`, [`super::interest`]),
//! registers the far side's on the link, drains the link's queue into `DELIVER` frames with
//! the ordinary writer task, and routes the records that come in to local subscribers only.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use herald_proto::frame::{Ack, DeliverEntry};
use herald_proto::info::{InfoRequest, TypeData};
use herald_proto::route::InfoChange;
use herald_proto::{AckLevel, ErrorCode, ErrorFrame, Frame};
use herald_router::RouteContext;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::handshake::{self, Ended};
use super::{Cluster, Link};
use crate::connection::FrameReader;
use crate::halves::{Reading, Writing};
use crate::local::Local;
use crate::shutdown::Shutdown;

/// The writer of a route does not ping: its reader does, every heartbeat interval, and
/// times the answers (the route's round trip in the monitor).
const ROUTE_WRITER_PING: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Runs a route over `(read, write)`, a connection with `peer` (plain or TLS), until it
/// ends.
pub async fn run(
    (read, mut write): (Reading, Writing),
    peer: SocketAddr,
    outbound: bool,
    shared: Arc<Local>,
    cluster: Arc<Cluster>,
    mut shutdown: Shutdown,
) -> Ended {
    let mut reader = FrameReader::new(read, shared.config().max_frame_bytes);
    let timeout = shared.config().handshake_timeout;
    let opened = handshake::open(&cluster, outbound, peer, (&mut reader, &mut write), timeout);
    let members = match opened.await {
        Ok(members) => members,
        Err(ended) => return ended,
    };
    let far = members.me.clone();
    let (control, mut pending) = mpsc::unbounded_channel();
    let close = Arc::new(tokio::sync::Notify::new());
    // `attach` refuses the name of a member routed to already, under its lock.
    let (link, token) = match cluster.attach(&shared, &far, peer, outbound, &control, &close) {
        Ok(Some(attached)) => attached,
        Ok(None) => return Ended::Closed(far.id),
        Err(reason) => return handshake::refuse(&mut write, reason).await,
    };
    tracing::info!(member = %far.name, address = %far.address, outbound, "route up");
    // Tell the far side what arrived from it, so it knows what its last connection had in
    // flight and lost.
    link.send(route_ack(link.received_through.load(Ordering::Relaxed), 0));
    // The types, and the namespaces this member owns, for the far side's copy.
    cluster.info.send_snapshot(&shared, &link);
    let mut all = members.known.clone();
    all.push(far.clone());
    for member in cluster.learn(&all) {
        cluster.request_dial(member);
    }
    // One writer drains the link's queue at a time: wait for the last connection's to end.
    let turn = Arc::clone(&link.turn).lock_owned().await;
    let (frames, control_rx) = mpsc::channel(crate::writer::CONTROL_QUEUE_FRAMES);
    let pump = tokio::spawn(async move {
        while let Some(frame) = pending.recv().await {
            if frames.send(frame).await.is_err() {
                return;
            }
        }
    });
    let writer = tokio::spawn({
        let writing = crate::writer::run(
            write,
            Arc::clone(&link.state),
            control_rx,
            // The reader pings (timing the answers), not the writer.
            ROUTE_WRITER_PING,
            shared.config().max_frame_bytes,
            true,
        );
        async move {
            let _turn = turn;
            writing.await
        }
    });
    let why = read_loop(&shared, &cluster, &link, &close, &mut reader, &mut shutdown).await;
    tracing::info!(member = %far.name, why, "route down");
    cluster.detach(&link, token, &control);
    pump.abort();
    writer.abort();
    Ended::Closed(far.id)
}

async fn read_loop<R: tokio::io::AsyncRead + Unpin>(
    shared: &Arc<Local>,
    cluster: &Arc<Cluster>,
    link: &Arc<Link>,
    close: &tokio::sync::Notify,
    reader: &mut FrameReader<R>,
    shutdown: &mut Shutdown,
) -> &'static str {
    let timeout = shared.config().heartbeat_timeout;
    let mut check = tokio::time::interval(shared.config().heartbeat_interval);
    let mut last_heard = Instant::now();
    let mut context = RouteContext::from_route();
    // The far side announces its interests, then sends `MEMBERS`: interests of an earlier
    // connection it did not announce again are gone.
    let mut announced = false;
    let mut first_ack = true;
    let mut copies = Copies::default();
    let mut forwarded = RouteContext::default();
    loop {
        let frame = tokio::select! {
            read = reader.read_frame() => match read {
                Ok(Some(frame)) => frame,
                Ok(None) => return "closed by the other member",
                Err(_) => return "read failed",
            },
            _ = check.tick() => {
                if last_heard.elapsed() > timeout {
                    return "the other member stopped answering (heartbeat timeout)";
                }
                link.ping();
                continue;
            }
            () = close.notified() => return "replaced by another connection between the two members",
            () = shutdown.recv() => return "server shutting down",
        };
        last_heard = Instant::now();
        let Ok(frame) = Frame::decode(frame) else {
            return "a frame that does not decode";
        };
        match frame {
            Frame::Deliver(entries) => deliver(shared, link, &mut context, entries).await,
            Frame::Subscribe(subscribe) => {
                let group = subscribe.options.group;
                link.add_interest(shared, subscribe.subscription, subscribe.filter, group);
            }
            Frame::Unsubscribe { subscription, .. } => link.remove_interest(shared, subscription),
            Frame::Members(members) => {
                if !announced {
                    announced = true;
                    link.drop_stale(shared);
                }
                let mut all = members.known;
                all.push(members.me);
                for member in cluster.learn(&all) {
                    cluster.request_dial(member);
                }
            }
            Frame::Ping => link.send(Frame::Pong),
            Frame::Pong => link.pong(),
            Frame::Info { cid, request } => {
                serve(
                    shared,
                    cluster,
                    link,
                    &mut forwarded,
                    cid,
                    request,
                    &mut copies,
                )
                .await;
            }
            Frame::InfoReply { cid, reply, .. } => cluster.info.answered(cid, Ok(reply)),
            Frame::Query { cid, request } => super::query::answer_far(shared, link, cid, request),
            Frame::QueryReply {
                cid,
                reply,
                skipped,
                ..
            } => {
                let answer = herald_archive::query::Answer { reply, skipped };
                cluster.asked.answered(cid, Ok(answer));
            }
            Frame::InfoChange(change) => copies.apply(shared, cluster, change),
            Frame::Error(error) if error.cid != 0 => {
                let failure = (error.code, error.message);
                if !cluster.asked.answered(error.cid, Err(failure.clone())) {
                    cluster.info.answered(error.cid, Err(failure));
                }
            }
            Frame::Error(error) => {
                let member = link.member().name;
                tracing::warn!(%member, "route error from the other member: {}", error.message);
                return "the other member sent an error";
            }
            Frame::Gap(gap) => crate::remote_gap::owe_gap(shared, &link.member().name, &gap),
            Frame::Ack(ack) => {
                let lost = link.confirm(ack.ack_id, std::mem::take(&mut first_ack));
                if lost > 0 {
                    let member = link.member().name;
                    tracing::warn!(%member, lost, "records in flight on a broken route connection were lost; the other member is told");
                }
            }
            // Pongs: the reading above was the point.
            _ => {}
        }
    }
}

/// Routes records that came over the route to this member's own subscribers, keeping the
/// time the first member received them.
async fn deliver(
    shared: &Arc<Local>,
    link: &Link,
    context: &mut RouteContext,
    entries: Vec<DeliverEntry>,
) {
    link.records_in
        .fetch_add(entries.len() as u64, Ordering::Relaxed);
    let count = entries.len() as u64;
    let Some(through) = entries.iter().map(|e| e.seq).max() else {
        return;
    };
    // Drop what this member delivered already: a producer's records resent after a
    // failover, which reached it over two routes.
    let entries = entries
        .into_iter()
        .filter(|e| e.producer == 0 || !shared.producers.seen_over_route(e.producer, e.pseq));
    crate::relay::route_entries(&shared.router, context, entries, |_, stats, _| {
        let queued = stats.deliveries.saturating_sub(stats.dropped.total());
        shared.monitor.count_batch(0, 0, queued);
        if stats.dropped.total() > 0 {
            crate::events::records_dropped(&shared.monitor, link.connection, &stats.dropped);
        }
    })
    .await;
    // Routed (queued for every local subscriber): the far side may acknowledge them.
    link.received_through.fetch_max(through, Ordering::Relaxed);
    link.send(route_ack(through, count));
}

/// What a route's reader keeps for the copies of the far member's namespaces.
#[derive(Default)]
struct Copies {
    /// The objects of the snapshot being received.
    snapshot: Vec<herald_info::InfoObject>,
    /// Types declared by the far side whose base has not come yet.
    types: Vec<TypeData>,
}

impl Copies {
    /// Applies a change the far member made to a namespace it owns, or a part of its
    /// snapshot, to this member's copy.
    fn apply(&mut self, shared: &Local, cluster: &Cluster, change: InfoChange) {
        let info = &cluster.info;
        let objects = change
            .objects
            .into_iter()
            .map(herald_info::InfoObject::from)
            .filter(|o| info.is_copy(&o.name));
        match change.reason.as_str() {
            crate::info::SNAPSHOT_REASON => self.snapshot.extend(objects),
            herald_proto::route::SYNCED => {
                self.snapshot.extend(objects);
                let namespaces = change.namespaces;
                let takes = |name: &str| {
                    info.is_copy(name)
                        && info
                            .namespaces
                            .of(name)
                            .is_some_and(|n| namespaces.contains(&n.name))
                };
                let snapshot = std::mem::take(&mut self.snapshot);
                shared.info.replace_copies(snapshot, takes, &shared.router);
            }
            reason => shared
                .info
                .apply_copies(objects.collect(), reason, &shared.router),
        }
    }

    /// Declares a type the far member declared, and those that waited for it as a base.
    fn declare(&mut self, shared: &Local, data: TypeData) {
        self.types.push(data);
        loop {
            let before = self.types.len();
            let waiting = std::mem::take(&mut self.types);
            for data in waiting {
                match shared.info.declare_copy(data.clone()) {
                    Ok(()) => {}
                    Err(herald_info::InfoError::UnknownBase { .. }) => self.types.push(data),
                    Err(error) => {
                        tracing::warn!(%error, "a type declared on another member is not declared here");
                    }
                }
            }
            if self.types.len() == before || self.types.is_empty() {
                return;
            }
        }
    }
}

/// Serves an `INFO` request of the far member: a change of a namespace this member owns,
/// forwarded (answered once applied, and saved when the namespace is leased), or a type it
/// declared (not answered).
async fn serve(
    shared: &Arc<Local>,
    cluster: &Arc<Cluster>,
    link: &Arc<Link>,
    context: &mut RouteContext,
    cid: u64,
    request: InfoRequest,
    copies: &mut Copies,
) {
    let name = match &request {
        InfoRequest::Declare(data) => {
            copies.declare(shared, data.clone());
            return;
        }
        InfoRequest::Update { name, .. } | InfoRequest::Delete { name, .. } => name.clone(),
        _ => {
            link.send(Frame::Error(ErrorFrame {
                cid,
                code: ErrorCode::BadRequest,
                message: "only changes of information objects are forwarded between members".into(),
            }));
            return;
        }
    };
    if !cluster.info.owns(&name) {
        link.send(Frame::Error(ErrorFrame {
            cid,
            code: ErrorCode::Unavailable,
            message: format!(
                "cluster member `{}` does not own `{name}` (its namespace changed owner); \
                 try again",
                cluster.me.name
            ),
        }));
        return;
    }
    // Applied here, in the order the far member sent them; its change goes to every member
    // (the far one too) before the answer.
    let answer = shared.info.handle(request, &shared.router, context);
    let started = tokio::time::Instant::now();
    for (queue, blocked) in context.take_blocked() {
        queue.push_blocking(blocked, started).await;
    }
    let ticket = cluster.info.saver.last();
    let (cluster, link) = (Arc::clone(cluster), Arc::clone(link));
    tokio::spawn(async move {
        cluster.info.saver.saved(ticket).await;
        link.send(match answer {
            Ok(reply) => Frame::InfoReply {
                cid,
                reply,
                more: false,
            },
            Err((code, message)) => Frame::Error(ErrorFrame { cid, code, message }),
        });
    });
}

/// The `ACK` by which a member confirms the route numbers it has routed.
fn route_ack(through: u64, count: u64) -> Frame {
    Frame::Ack(Ack {
        ack_id: through,
        level: AckLevel::Received,
        count,
    })
}
