//! One route: a TCP connection between two members. Each side first sends `MEMBERS` and
//! reads the other's; then it announces its local interests (`SUBSCRIBE`/`UNSUBSCRIBE`,
//! [`super::interest`]), registers the far side's as subscriptions that share one bounded
//! queue (the route's, drained into `DELIVER` frames by the ordinary writer task, with
//! priority-aware shedding), and routes the records that come in to local subscribers only.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use herald_proto::frame::{DeliverEntry, GapNotice, RawRecord};
use herald_proto::route::Member;
use herald_proto::value::Value;
use herald_proto::{ErrorCode, ErrorFrame, Frame};
use herald_router::{DropReason, Gap, Queue, RouteContext, Subscription};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::Cluster;
use crate::connection::FrameReader;
use crate::monitor::{ConnectionState, SubscriptionState};
use crate::server::Shared;
use crate::shutdown::Shutdown;

/// Frames waiting for a route's writer.
const CONTROL_QUEUE_FRAMES: usize = 1024;

/// A registered route, as the cluster and the monitor see it.
#[derive(Debug)]
pub struct RouteHandle {
    /// The far member.
    pub member: Member,
    /// The router connection id of the far member's interests.
    pub connection: u64,
    /// This member dialed it.
    pub outbound: bool,
    /// Frames for the far side (interests, members), forwarded to the writer in order.
    pub control: mpsc::UnboundedSender<Frame>,
    /// The queue of records for the far side, and what the writer has sent.
    pub state: Arc<ConnectionState>,
    /// Records received over the route.
    pub records_in: AtomicU64,
    /// The far side's interests registered here.
    pub interests: AtomicU64,
    /// Told to close the route (it was replaced by the other one between the same members).
    pub close: tokio::sync::Notify,
}

impl RouteHandle {
    /// The route for the monitor.
    pub fn snapshot(&self) -> Value {
        let int = |n: u64| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
        let (depth, delivered, dropped) = self
            .state
            .subscriptions()
            .first()
            .map(|s| (s.queue.depth(), s.queue.delivered(), s.queue.dropped()))
            .unwrap_or_default();
        Value::Map(vec![
            ("member".into(), Value::Str(self.member.name.clone())),
            ("address".into(), Value::Str(self.member.address.clone())),
            (
                "direction".into(),
                Value::Str(if self.outbound { "out" } else { "in" }.into()),
            ),
            (
                "records_in".into(),
                int(self.records_in.load(Ordering::Relaxed)),
            ),
            ("records_out".into(), int(delivered)),
            ("queue".into(), int(depth)),
            ("dropped".into(), int(dropped)),
            (
                "interests".into(),
                int(self.interests.load(Ordering::Relaxed)),
            ),
        ])
    }
}

/// Why a route ended.
#[derive(Debug)]
pub enum Ended {
    /// The far side is this member (a seed naming this member's own listener).
    Myself,
    /// The far side is of another cluster, or spoke something else.
    Refused(String),
    /// The route ran and ended (closed, timed out, replaced); the far member's id.
    Closed(u64),
}

/// Runs a route over `stream` until it ends.
pub async fn run(
    stream: TcpStream,
    peer: SocketAddr,
    outbound: bool,
    shared: Arc<Shared>,
    cluster: Arc<Cluster>,
    mut shutdown: Shutdown,
) -> Ended {
    let _ = stream.set_nodelay(true);
    let (read, mut write) = stream.into_split();
    let mut reader = FrameReader::new(read, shared.config.max_frame_bytes);
    if write
        .write_all(&cluster.members_frame().to_bytes())
        .await
        .is_err()
    {
        return Ended::Refused("the connection closed before MEMBERS".into());
    }
    let timeout = shared.config.handshake_timeout;
    let first = match tokio::time::timeout(timeout, reader.read_frame()).await {
        Ok(Ok(Some(frame))) => Frame::decode(frame).ok(),
        _ => None,
    };
    let members = match first {
        Some(Frame::Members(members)) => members,
        other => {
            let what = other.map_or("nothing".to_string(), |f| f.frame_type().name().to_string());
            return Ended::Refused(format!("expected MEMBERS first, got {what}"));
        }
    };
    if members.me.id == cluster.me.id {
        return Ended::Myself;
    }
    if members.cluster != cluster.name {
        let message = format!(
            "route refused: this member is of cluster `{}`, the other of `{}`",
            cluster.name, members.cluster
        );
        let error = Frame::Error(ErrorFrame {
            cid: 0,
            code: ErrorCode::Handshake,
            message: message.clone(),
        });
        let _ = write.write_all(&error.to_bytes()).await;
        return Ended::Refused(message);
    }
    let far = members.me.clone();
    let connection = shared.next_connection_id();
    let state = Arc::new(ConnectionState::new(connection, peer));
    *state.name.lock().unwrap_or_else(|p| p.into_inner()) = format!("route:{}", far.name);
    let queue = Queue::with_budget(
        shared.config.queue,
        Arc::clone(&state.writer),
        Arc::clone(&shared.queue_budget),
    );
    state.subscriptions().push(SubscriptionState {
        id: 0,
        filter: format!("route to {}", far.name),
        queue: Arc::clone(&queue),
    });
    let (control, mut pending) = mpsc::unbounded_channel();
    let handle = Arc::new(RouteHandle {
        member: far.clone(),
        connection,
        outbound,
        control: control.clone(),
        state: Arc::clone(&state),
        records_in: AtomicU64::new(0),
        interests: AtomicU64::new(0),
        close: tokio::sync::Notify::new(),
    });
    match cluster.register(Arc::clone(&handle)) {
        Err(()) => return Ended::Closed(far.id),
        Ok(Some(replaced)) => replaced.close.notify_one(),
        Ok(None) => {}
    }
    tracing::info!(member = %far.name, address = %far.address, outbound, "route up");
    // Interests first (all of them, then each change), then the members this one knows.
    cluster.interests.add_route(connection, control.clone());
    let _ = control.send(cluster.members_frame());
    let mut all = members.known.clone();
    all.push(far.clone());
    for member in cluster.learn(&all) {
        cluster.request_dial(member);
    }
    let (frames, control_rx) = mpsc::channel(CONTROL_QUEUE_FRAMES);
    let pump = tokio::spawn(async move {
        while let Some(frame) = pending.recv().await {
            if frames.send(frame).await.is_err() {
                return;
            }
        }
    });
    let writer = tokio::spawn(crate::writer::run(
        write,
        Arc::clone(&state),
        control_rx,
        shared.config.heartbeat_interval,
        shared.config.max_frame_bytes,
    ));
    let why = read_loop(
        &shared,
        &cluster,
        &handle,
        &queue,
        &mut reader,
        &mut shutdown,
    )
    .await;
    tracing::info!(member = %far.name, why, "route down");
    cluster.interests.remove_route(connection);
    cluster.unregister(&handle);
    shared.router.remove_connection(connection);
    let discarded = queue.discard(DropReason::Closed);
    if discarded > 0 {
        tracing::warn!(member = %far.name, records = discarded, "records queued for a route lost with it");
    }
    pump.abort();
    writer.abort();
    Ended::Closed(far.id)
}

async fn read_loop<R: tokio::io::AsyncRead + Unpin>(
    shared: &Arc<Shared>,
    cluster: &Arc<Cluster>,
    handle: &Arc<RouteHandle>,
    queue: &Arc<Queue>,
    reader: &mut FrameReader<R>,
    shutdown: &mut Shutdown,
) -> &'static str {
    let timeout = shared.config.heartbeat_timeout;
    let mut check = tokio::time::interval(shared.config.heartbeat_interval);
    let mut last_heard = Instant::now();
    let mut context = RouteContext::from_route();
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
                continue;
            }
            () = handle.close.notified() => return "replaced by the route the other way",
            () = shutdown.recv() => return "server shutting down",
        };
        last_heard = Instant::now();
        let Ok(frame) = Frame::decode(frame) else {
            return "a frame that does not decode";
        };
        match frame {
            Frame::Deliver(entries) => deliver(shared, handle, &mut context, entries).await,
            Frame::Subscribe(subscribe) => {
                shared.router.subscribe(Arc::new(Subscription {
                    connection: handle.connection,
                    id: subscribe.subscription,
                    filter: subscribe.filter,
                    queue: Arc::clone(queue),
                    visible: None,
                    visible_info: None,
                    route: true,
                }));
                handle.interests.fetch_add(1, Ordering::Relaxed);
            }
            Frame::Unsubscribe { subscription, .. } => {
                let removed = shared.router.unsubscribe(handle.connection, subscription);
                handle
                    .interests
                    .fetch_sub(u64::from(removed), Ordering::Relaxed);
            }
            Frame::Members(members) => {
                let mut all = members.known;
                all.push(members.me);
                for member in cluster.learn(&all) {
                    cluster.request_dial(member);
                }
            }
            Frame::Ping => {
                let _ = handle.control.send(Frame::Pong);
            }
            Frame::Error(error) => {
                tracing::warn!(member = %handle.member.name, "route error from the other member: {}", error.message);
                return "the other member sent an error";
            }
            Frame::Gap(gap) => owe_gap(shared, &handle.member.name, &gap),
            // Pongs: the reading above was the point.
            _ => {}
        }
    }
}

/// Routes records that came over the route to this member's own subscribers, keeping the
/// time the first member received them.
async fn deliver(
    shared: &Arc<Shared>,
    handle: &RouteHandle,
    context: &mut RouteContext,
    entries: Vec<DeliverEntry>,
) {
    handle
        .records_in
        .fetch_add(entries.len() as u64, Ordering::Relaxed);
    let mut entries = entries.into_iter().peekable();
    let mut records: Vec<RawRecord> = Vec::new();
    while let Some(first) = entries.next() {
        let received = first.received;
        records.clear();
        records.push(first.record);
        while let Some(next) = entries.next_if(|e| e.received == received) {
            records.push(next.record);
        }
        let stats = shared.router.route(context, &records, received);
        let started = tokio::time::Instant::now();
        for (queue, blocked) in context.take_blocked() {
            queue.push_blocking(blocked, started).await;
        }
        let queued = stats.deliveries.saturating_sub(stats.dropped.total());
        shared.monitor.count_batch(0, 0, queued);
        if stats.dropped.total() > 0 {
            crate::events::records_dropped(&shared.monitor, handle.connection, &stats.dropped);
        }
    }
}

/// Passes a loss on the far member's route queue on to the local subscribers it may have
/// hit: each whose filter takes any of the priorities lost gets a gap notice naming the
/// member, counting the records of those priorities. Which subjects the lost records had
/// is not known here, so a subscriber may hear of records its subject pattern would not
/// have matched: a loss is never left unreported.
fn owe_gap(shared: &Shared, member: &str, notice: &GapNotice) {
    for subscription in shared.router.index().iter().filter(|s| !s.route) {
        let mut gap = Gap {
            first_seq: notice.first_seq,
            last_seq: notice.last_seq,
            ..Gap::default()
        };
        for (priority, count) in &notice.by_priority {
            if subscription.filter.priorities.contains(*priority) {
                gap.by_priority[*priority as usize] += count;
                gap.count += count;
            }
        }
        subscription.queue.note_remote_gap(member, gap);
    }
}

/// How long a dialer waits at most between attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(5);
