//! What this member keeps for one other member, across the connections of their route: the
//! far side's interests (router subscriptions that share one queue) and that queue. When the
//! route's connection ends the link stays for the hold time (`[cluster] hold`, 30 s): records the far side wants keep
//! queuing (bounded, shedding by priority and counting what it sheds), and a connection that
//! comes back in time drains them and reports the losses as a gap; a link down longer is
//! dropped, and what it held is counted as lost.
//!
//! The queue is numbered: the far side confirms the numbers it has routed (an `ACK` after
//! each `DELIVER`, and one when a connection starts), so that a producer's acknowledgement
//! can wait until the far member has its records, and records a broken connection had in
//! flight are known and reported as lost.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use herald_proto::route::Member;
use herald_proto::value::Value;
use herald_proto::{Filter, Frame};
use herald_router::{DropReason, Queue, Subscription};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::local::Local;
use crate::monitor::{ConnectionState, SubscriptionState};

/// The current connection of a link.
#[derive(Debug)]
struct Current {
    /// Which attachment this is: a connection that ended detaches only its own.
    token: u64,
    outbound: bool,
    control: mpsc::UnboundedSender<Frame>,
    close: Arc<tokio::sync::Notify>,
}

/// This member's state for one other member.
#[derive(Debug)]
pub struct Link {
    /// The far member as it last introduced itself.
    member: Mutex<Member>,
    /// The router connection id of the far member's interests (stable for the link's life).
    pub connection: u64,
    /// The queue of records for the far member, drained by the current connection's writer.
    pub state: Arc<ConnectionState>,
    queue: Arc<Queue>,
    /// One writer drains the queue at a time: a new connection waits for the last one's.
    pub turn: Arc<tokio::sync::Mutex<()>>,
    current: Mutex<Option<Current>>,
    down_since: Mutex<Option<Instant>>,
    /// The far side's interests registered here, by id, and whether each was announced again
    /// since the last reattachment.
    interests: Mutex<HashMap<u64, (Interest, bool)>>,
    next_token: AtomicU64,
    /// Records received over the route.
    pub records_in: AtomicU64,
    /// The highest route number received from the far member (what it is told, when a
    /// connection starts, that this member has).
    pub received_through: AtomicU64,
    /// The route's round trip, timed by its reader's pings.
    round_trip: crate::round_trip::RoundTrip,
    /// Records in and out per second over the last sampling interval, as `f64` bits.
    rates: [AtomicU64; 2],
    /// The counts and time of the last sample.
    sampled: Mutex<(Instant, u64, u64)>,
}

/// A far member's interest: the filter its subscribers share, and their queue group.
type Interest = (Filter, Option<Arc<str>>);

impl Link {
    /// A new link to `member`, whose connection came from `peer`.
    pub fn new(shared: &Local, member: Member, peer: SocketAddr) -> Arc<Link> {
        let connection = shared.next_connection_id();
        let state = Arc::new(ConnectionState::new(connection, peer));
        *state.name.lock().unwrap_or_else(|p| p.into_inner()) = format!("route:{}", member.name);
        let queue = Queue::numbered(
            shared.config().queue,
            Arc::clone(&state.writer),
            Arc::clone(&shared.queue_budget),
        );
        state.subscriptions().push(SubscriptionState {
            id: 0,
            filter: format!("route to {}", member.name),
            queue: Arc::clone(&queue),
            group: None,
        });
        Arc::new(Link {
            member: Mutex::new(member),
            connection,
            state,
            queue,
            turn: Arc::default(),
            current: Mutex::new(None),
            down_since: Mutex::new(None),
            interests: Mutex::new(HashMap::new()),
            next_token: AtomicU64::new(1),
            records_in: AtomicU64::new(0),
            received_through: AtomicU64::new(0),
            round_trip: crate::round_trip::RoundTrip::default(),
            rates: [AtomicU64::new(0), AtomicU64::new(0)],
            sampled: Mutex::new((Instant::now(), 0, 0)),
        })
    }

    /// The far member.
    pub fn member(&self) -> Member {
        lock(&self.member).clone()
    }

    /// Returns true while a connection is attached.
    pub fn is_up(&self) -> bool {
        lock(&self.current).is_some()
    }

    /// Returns true if the attached connection is the one the smaller id dialed: the one both
    /// members keep when they dialed each other at once.
    pub fn preferred(&self, my_id: u64, outbound: bool) -> bool {
        outbound == (my_id < lock(&self.member).id)
    }

    /// Returns whether the attached connection, if any, was dialed by this member.
    pub fn outbound(&self) -> Option<bool> {
        lock(&self.current).as_ref().map(|c| c.outbound)
    }

    /// Attaches a connection: it receives the frames sent through `control`, and `close` ends
    /// it. Returns its token. The far side's interests are then to be announced again: those
    /// not announced by the end of the snapshot are stale ([`Link::drop_stale`]).
    pub fn attach(
        &self,
        member: Member,
        outbound: bool,
        control: mpsc::UnboundedSender<Frame>,
        close: Arc<tokio::sync::Notify>,
    ) -> u64 {
        let token = self.next_token.fetch_add(1, Ordering::Relaxed);
        *lock(&self.member) = member;
        if let Some(old) = lock(&self.current).replace(Current {
            token,
            outbound,
            control,
            close,
        }) {
            old.close.notify_one();
        }
        *lock(&self.down_since) = None;
        self.queue.reconnected();
        for (_, announced) in lock(&self.interests).values_mut() {
            *announced = false;
        }
        token
    }

    /// Detaches connection `token`, if it is still the attached one: the link is down.
    pub fn detach(&self, token: u64) {
        let mut current = lock(&self.current);
        if current.as_ref().is_some_and(|c| c.token == token) {
            *current = None;
            *lock(&self.down_since) = Some(Instant::now());
            self.round_trip.reset();
            // Producers are not held up while the member cannot answer.
            self.queue.release(true);
        }
    }

    /// Sends `frame` over the attached connection, if any.
    pub fn send(&self, frame: Frame) {
        if let Some(current) = lock(&self.current).as_ref() {
            let _ = current.control.send(frame);
        }
    }

    /// The far side confirmed every route number up to `through`; on a connection's first
    /// confirmation, what earlier connections had in flight and it never routed is lost:
    /// returns how many records that was.
    pub fn confirm(&self, through: u64, first: bool) -> u64 {
        self.queue.confirm(through);
        if first {
            self.queue.lose_unconfirmed()
        } else {
            0
        }
    }

    /// Sends a `PING` over the attached connection, timing its answer.
    pub fn ping(&self) {
        let Some(current) = lock(&self.current).as_ref().map(|c| c.control.clone()) else {
            return;
        };
        self.round_trip.sent();
        let _ = current.send(Frame::Ping);
    }

    /// The far side answered the oldest `PING`: the round trip is measured.
    pub fn pong(&self) {
        self.round_trip.answered();
    }

    /// Samples the records in and out since the last call, for the rates.
    pub fn sample(&self) {
        let (records_in, records_out) = (
            self.records_in.load(Ordering::Relaxed),
            self.queue.delivered(),
        );
        let mut sampled = lock(&self.sampled);
        let seconds = sampled.0.elapsed().as_secs_f64();
        if seconds <= 0.0 {
            return;
        }
        let rate = |now: u64, before: u64| (now.saturating_sub(before) as f64 / seconds).to_bits();
        self.rates[0].store(rate(records_in, sampled.1), Ordering::Relaxed);
        self.rates[1].store(rate(records_out, sampled.2), Ordering::Relaxed);
        *sampled = (Instant::now(), records_in, records_out);
    }

    /// Registers the far side's interest `id` (again, after a reattachment: kept as it is):
    /// its filter, and the queue group of its subscribers, if they are members of one (then
    /// the far member is a member of that group here, one among the local ones).
    pub fn add_interest(&self, shared: &Local, id: u64, filter: Filter, group: Option<Arc<str>>) {
        let interest = (filter, group);
        let mut interests = lock(&self.interests);
        if let Some((known, announced)) = interests.get_mut(&id) {
            if *known == interest {
                *announced = true;
                return;
            }
            shared.router.unsubscribe(self.connection, id);
        }
        shared.router.subscribe(Arc::new(Subscription {
            connection: self.connection,
            id,
            filter: interest.0.clone(),
            queue: Arc::clone(&self.queue),
            visible: None,
            visible_info: None,
            route: true,
            group: interest.1.clone(),
        }));
        interests.insert(id, (interest, true));
    }

    /// Removes the far side's interest `id`.
    pub fn remove_interest(&self, shared: &Local, id: u64) {
        if lock(&self.interests).remove(&id).is_some() {
            shared.router.unsubscribe(self.connection, id);
        }
    }

    /// Removes the interests the far side did not announce again since the last attachment
    /// (it dropped them while the route was down).
    pub fn drop_stale(&self, shared: &Local) {
        let mut interests = lock(&self.interests);
        interests.retain(|id, (_, announced)| {
            if !*announced {
                shared.router.unsubscribe(self.connection, *id);
            }
            *announced
        });
    }

    /// Returns true if the link has been down for longer than `hold`.
    pub fn expired(&self, hold: Duration) -> bool {
        lock(&self.down_since).is_some_and(|since| since.elapsed() > hold)
    }

    /// Ends the link: its interests leave the router and what its queue held is counted as
    /// lost; returns it as a gap (with what the far side was still owed).
    pub fn end(&self, shared: &Local) -> herald_router::Gap {
        lock(&self.interests).clear();
        shared.router.remove_connection(self.connection);
        self.queue.release(true);
        self.queue.discard_as_gap(DropReason::Closed)
    }

    /// Owes the far side a gap notice for `gap`: what an earlier link to the same member
    /// lost.
    pub fn owe_gap(&self, gap: &herald_router::Gap) {
        self.queue.owe_gap(gap);
    }

    /// The link for the monitor.
    pub fn snapshot(&self) -> Value {
        let int = |n: u64| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
        let member = self.member();
        let direction = match self.outbound() {
            Some(true) => "out",
            Some(false) => "in",
            None => "down",
        };
        let down_ms = lock(&self.down_since).map_or(0, |since| since.elapsed().as_millis() as u64);
        Value::Map(vec![
            ("member".into(), Value::Str(member.name)),
            ("address".into(), Value::Str(member.address)),
            ("direction".into(), Value::Str(direction.into())),
            ("up".into(), Value::Bool(self.is_up())),
            ("down_ms".into(), int(down_ms)),
            (
                "records_in".into(),
                int(self.records_in.load(Ordering::Relaxed)),
            ),
            ("records_out".into(), int(self.queue.delivered())),
            ("rate_in".into(), rate(&self.rates[0])),
            ("rate_out".into(), rate(&self.rates[1])),
            ("rtt_us".into(), int(self.round_trip.micros())),
            ("queue".into(), int(self.queue.depth())),
            ("dropped".into(), int(self.queue.dropped())),
            (
                "drops".into(),
                crate::monitor::drops_map(&self.queue.drops()),
            ),
            (
                "dropped_priorities".into(),
                crate::monitor::priorities_map(&self.queue.lost_by_priority()),
            ),
            ("interests".into(), int(lock(&self.interests).len() as u64)),
        ])
    }
}

fn rate(bits: &AtomicU64) -> Value {
    Value::Float(f64::from_bits(bits.load(Ordering::Relaxed)))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
