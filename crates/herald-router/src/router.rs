//! The router: puts each record on the queue of every subscription that wants it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use herald_proto::frame::RawRecord;
use herald_proto::Kind;

use crate::cache::MatchCache;
use crate::index::{Index, Matched};
use crate::queue::{Delivery, Drops, Queue};
use crate::subscription::Subscription;
use crate::DropReason;

/// Hears of this server's own subscriptions as they come and go (not of routes' interests):
/// a cluster tells the other members what this one's subscribers want.
pub trait InterestListener: Send + Sync + std::fmt::Debug {
    /// `subscription` was added.
    fn added(&self, subscription: &Arc<Subscription>);
    /// `subscription` was removed.
    fn removed(&self, subscription: &Arc<Subscription>);
}

/// Routes records to subscriptions. Cheap to share: clone the `Arc`.
#[derive(Debug, Default)]
pub struct Router {
    index: ArcSwap<Index>,
    /// Serializes index rebuilds; never taken on the routing path.
    rebuild: Mutex<()>,
    next_seq: AtomicU64,
    listener: std::sync::OnceLock<Arc<dyn InterestListener>>,
    /// Turns among queue group members whose queues are equally short.
    turn: AtomicU64,
}

/// What routing one batch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RouteStats {
    /// Records routed.
    pub records: u64,
    /// Deliveries made (one per record per matching subscription).
    pub deliveries: u64,
    /// Deliveries lost, by reason (queued records shed to make room count here too).
    pub dropped: Drops,
    /// First sequence number given to the batch.
    pub first_seq: u64,
}

/// Per-publisher scratch space: the match cache and per-queue batches, reused so routing
/// allocates nothing per record once warm.
#[derive(Debug, Default)]
pub struct RouteContext {
    cache: MatchCache,
    pending: Vec<(Arc<Queue>, Vec<Delivery>)>,
    blocked: Vec<(Arc<Queue>, Vec<Delivery>)>,
    /// Records routed through this context came over a route: local subscribers only.
    from_route: bool,
    /// Route queues one record was queued on already (a route's interests share a queue),
    /// by address: only compared, cleared before each record.
    routed: Vec<usize>,
    /// Members of queue groups that one record matched, cleared before each record: it
    /// goes to one member of each group.
    grouped: Vec<Arc<Subscription>>,
    /// From a route: the queue groups the far member chose this member to serve for the
    /// records routed now (their other groups' members here do not get them).
    route_groups: Vec<String>,
    /// Numbered queues (routes) the last batch went to, with the highest number it got on
    /// each: see [`RouteContext::take_marks`].
    marks: Vec<(Arc<Queue>, u64)>,
}

/// Where the records of a batch come from, when their producer numbers them.
#[derive(Debug, Clone, Copy)]
pub struct Origin<'a> {
    /// The producer's id.
    pub producer: u64,
    /// The producer's number of each record.
    pub seqs: &'a [u64],
    /// Records this server has routed before (a resend after a failover): they go to
    /// routes only, whose far members drop what they have too.
    pub seen: &'a [bool],
}

impl RouteContext {
    /// A context for the records a member receives over a route: they reach this member's
    /// own subscribers and are never sent over another route.
    pub fn from_route() -> RouteContext {
        RouteContext {
            from_route: true,
            ..RouteContext::default()
        }
    }

    /// Sets the queue groups this member serves for the records routed next through a
    /// context [`RouteContext::from_route`] (those a route's `DELIVER` entries name).
    pub fn set_route_groups(&mut self, groups: &[String]) {
        self.route_groups.clear();
        self.route_groups.extend_from_slice(groups);
    }

    /// Returns (hits, misses) of the match cache.
    pub fn cache_stats(&self) -> (u64, u64) {
        self.cache.stats()
    }

    /// Takes the deliveries that wait for room in queues with policy `block`; the publisher
    /// hands each to [`Queue::push_blocking`] before it reads its next batch.
    pub fn take_blocked(&mut self) -> Vec<(Arc<Queue>, Vec<Delivery>)> {
        std::mem::take(&mut self.blocked)
    }

    /// Takes the numbered queues (cluster routes) the last batch went to, each with the
    /// highest number it got there: a producer's acknowledgement waits until each is
    /// settled ([`Queue::wait_settled`]).
    pub fn take_marks(&mut self) -> Vec<(Arc<Queue>, u64)> {
        std::mem::take(&mut self.marks)
    }

    fn pending_for(&mut self, queue: &Arc<Queue>) -> &mut Vec<Delivery> {
        let position = self.pending.iter().position(|(q, _)| Arc::ptr_eq(q, queue));
        let index = position.unwrap_or_else(|| {
            self.pending.push((Arc::clone(queue), Vec::new()));
            self.pending.len() - 1
        });
        &mut self.pending[index].1
    }
}

impl Router {
    /// Takes the members of one queue group out of `context.grouped` and returns the one
    /// whose queue is the shortest (counting what this batch has for it so far); among
    /// equally short ones, each in turn.
    fn take_group_member(&self, context: &mut RouteContext) -> Option<Arc<Subscription>> {
        let group = Arc::clone(context.grouped.first()?.group.as_ref()?);
        let mut members = Vec::new();
        context.grouped.retain(|s| {
            let same = s.group.as_deref() == Some(&*group);
            if same {
                members.push(Arc::clone(s));
            }
            !same
        });
        let load = |context: &RouteContext, member: &Subscription| {
            let pending = context
                .pending
                .iter()
                .find(|(q, _)| Arc::ptr_eq(q, &member.queue))
                .map_or(0, |(_, batch)| batch.len() as u64);
            member.queue.depth() + pending
        };
        let start = self.turn.fetch_add(1, Ordering::Relaxed) as usize;
        let mut best: Option<(u64, usize)> = None;
        for step in 0..members.len() {
            let index = (start + step) % members.len();
            let length = load(context, &members[index]);
            if best.is_none_or(|(shortest, _)| length < shortest) {
                best = Some((length, index));
            }
        }
        best.map(|(_, index)| Arc::clone(&members[index]))
    }

    /// Hands what is queued for `leaving`, the queue of a member of queue group `group` that
    /// has left (it is out of the index already), to the group's other members: each record
    /// to the one whose filter takes it with the shortest queue. What no member takes (none
    /// wants it, or a member's policy `block` would make it wait) is put back on `leaving`,
    /// for its discard to count as lost. Returns how many records were handed over, and
    /// what the members' queues shed to take them.
    pub fn hand_over(&self, group: &str, leaving: &Arc<Queue>) -> (u64, Drops) {
        let index = self.index.load();
        let members: Vec<&Arc<Subscription>> = index
            .iter()
            // Local members only: a far member may already have the record (its producer or
            // an ordinary interest there), and a record from a route never crosses another.
            .filter(|s| {
                s.group.as_deref() == Some(group) && !s.route && !Arc::ptr_eq(&s.queue, leaving)
            })
            .collect();
        let (mut handed, mut drops, mut left) = (0, Drops::default(), Vec::new());
        for delivery in leaving.take_queued() {
            let record = RawRecord::new(delivery.record.clone());
            let wanted = |member: &&&Arc<Subscription>| {
                record.as_ref().is_ok_and(|r| {
                    member.wants_subject(r.subject()) && member.filter.matches_record(r)
                })
            };
            let Some(member) = members
                .iter()
                .filter(wanted)
                .min_by_key(|member| member.queue.depth())
            else {
                left.push(delivery);
                continue;
            };
            let mut pushed = member.queue.push_batch(&mut vec![delivery]);
            drops.merge(&pushed.drops);
            if pushed.blocked.is_empty() {
                handed += 1;
            }
            left.append(&mut pushed.blocked);
        }
        if !left.is_empty() {
            leaving.put_back(left);
        }
        (handed, drops)
    }

    /// Returns a router with no subscriptions, whose sequence numbers start at 1.
    pub fn new() -> Self {
        Router {
            next_seq: AtomicU64::new(1),
            ..Router::default()
        }
    }

    /// Adds a subscription.
    pub fn subscribe(&self, subscription: Arc<Subscription>) {
        self.change(Some(subscription), |_| false);
    }

    /// Removes the subscription `id` of `connection`; returns whether it existed.
    pub fn unsubscribe(&self, connection: u64, id: u64) -> bool {
        let before = self.index.load().len();
        self.change(None, |s| s.key() == (connection, id));
        self.index.load().len() < before
    }

    /// Removes every subscription of `connection`.
    pub fn remove_connection(&self, connection: u64) {
        self.change(None, |s| s.connection == connection);
    }

    /// Sets who hears of local subscriptions coming and going; told at once of those there
    /// are. Only the first listener set is kept (returns false for a later one).
    pub fn set_listener(&self, listener: Arc<dyn InterestListener>) -> bool {
        let _guard = self
            .rebuild
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if self.listener.set(Arc::clone(&listener)).is_err() {
            return false;
        }
        for subscription in self.index.load().iter().filter(|s| !s.route) {
            listener.added(subscription);
        }
        true
    }

    fn change(&self, added: Option<Arc<Subscription>>, remove: impl Fn(&Subscription) -> bool) {
        let _guard = self
            .rebuild
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let current = self.index.load();
        let next = current.rebuild(added.clone(), &remove);
        self.index.store(Arc::new(next));
        // Told under the lock, so a listener hears of changes in the order they were made.
        if let Some(listener) = self.listener.get() {
            for gone in current.iter().filter(|s| !s.route && remove(s)) {
                listener.removed(gone);
            }
            if let Some(added) = added.filter(|s| !s.route) {
                listener.added(&added);
            }
        }
    }

    /// Returns the current snapshot of subscriptions.
    pub fn index(&self) -> Arc<Index> {
        self.index.load_full()
    }

    /// Reserves `count` sequence numbers for records that are queued directly rather than
    /// routed (an info subscription's snapshot); returns the first.
    pub fn allocate_seq(&self, count: u64) -> u64 {
        self.next_seq.fetch_add(count, Ordering::Relaxed)
    }

    /// Returns the sequence number the next record will get.
    pub fn next_seq(&self) -> u64 {
        self.next_seq.load(Ordering::Relaxed)
    }

    /// Gives each record a sequence number and queues it for every matching subscription.
    /// Each record's bytes are shared, not copied, among its subscribers.
    pub fn route(
        &self,
        context: &mut RouteContext,
        records: &[RawRecord],
        received: i64,
    ) -> RouteStats {
        self.route_from(context, records, received, None)
    }

    /// As [`Router::route`], for records their producer numbered (`origin`).
    pub fn route_from(
        &self,
        context: &mut RouteContext,
        records: &[RawRecord],
        received: i64,
        origin: Option<Origin<'_>>,
    ) -> RouteStats {
        context.marks.clear();
        let count = records.len() as u64;
        let first_seq = self.next_seq.fetch_add(count, Ordering::Relaxed);
        let mut stats = RouteStats {
            records: count,
            first_seq,
            ..RouteStats::default()
        };
        let index = self.index.load();
        if index.is_empty() {
            return stats;
        }
        // A batch is mostly about one subject: a record about the subject before it takes the
        // same matches without a look in the cache (its text checked and hashed again). Subjects
        // that differ mostly differ at their end (`…s1`, `…s2`): that byte is compared first.
        let mut last: Option<(&[u8], Arc<Matched>)> = None;
        for (offset, record) in records.iter().enumerate() {
            let subject = record.subject_bytes();
            let same = |before: &[u8]| before.last() == subject.last() && before == subject;
            let matched = match &last {
                Some((before, matched)) if same(before) => matched,
                _ => {
                    let matched = context.cache.lookup(&index, record.subject());
                    &last.insert((subject, matched)).1
                }
            };
            let meta = &record.meta;
            context.routed.clear();
            let (producer, pseq, seen) = origin.map_or((0, 0, false), |o| {
                (
                    o.producer,
                    o.seqs.get(offset).copied().unwrap_or(0),
                    o.seen.get(offset) == Some(&true),
                )
            });
            let delivery = || Delivery {
                seq: first_seq + offset as u64,
                received,
                priority: meta.priority,
                record: record.bytes.clone(),
                subject: meta.subject,
                producer,
                pseq,
                groups: None,
            };
            for subscription in &matched.channels[meta.priority as usize] {
                // A record seen before (resent after a failover) went to its groups then; it
                // crosses only to routes for ordinary interests.
                if seen && (!subscription.route || subscription.group.is_some()) {
                    continue;
                }
                if subscription.route {
                    // One hop, and once per route however many of its interests match (a
                    // far member's group interest is a member of the group here: below).
                    let queue = Arc::as_ptr(&subscription.queue) as usize;
                    let grouped = subscription.group.is_some();
                    if context.from_route || (!grouped && context.routed.contains(&queue)) {
                        continue;
                    }
                    if !subscription.filter.matches_record(record) {
                        continue;
                    }
                    if !grouped {
                        context.routed.push(queue);
                    }
                } else if !subscription.filter.matches_record(record) {
                    continue;
                }
                // Only subscriptions of identities that may not read every object have this.
                if subscription.visible_info.is_some()
                    && meta.kind == Kind::Info
                    && !subscription.may_read_info(record.subject())
                {
                    continue;
                }
                if let Some(group) = &subscription.group {
                    // From a route, only the groups the far member chose this one for.
                    if !context.from_route || context.route_groups.iter().any(|g| **g == **group) {
                        context.grouped.push(Arc::clone(subscription));
                    }
                    continue;
                }
                context.pending_for(&subscription.queue).push(delivery());
                stats.deliveries += 1;
            }
            let mut served = 0;
            while let Some(member) = self.take_group_member(context) {
                served += 1;
                if let (true, Some(group)) = (member.route, &member.group) {
                    let group = Arc::clone(group);
                    stats.deliveries += give_over_route(context, &member, group, delivery);
                    continue;
                }
                context.pending_for(&member.queue).push(delivery());
                stats.deliveries += 1;
            }
            if context.from_route && context.route_groups.len() > served {
                // Named for a group none of whose members here takes it any more (the last
                // left while the record was on its way): lost, and counted as such.
                let unserved = context.route_groups.len() - served;
                stats.dropped.add(DropReason::Closed, unserved as u64);
            }
        }
        for (queue, batch) in &mut context.pending {
            if batch.is_empty() {
                continue;
            }
            let pushed = queue.push_batch(batch);
            stats.dropped.merge(&pushed.drops);
            if pushed.last_number > 0 {
                context.marks.push((Arc::clone(queue), pushed.last_number));
            }
            if !pushed.blocked.is_empty() {
                context.blocked.push((Arc::clone(queue), pushed.blocked));
            }
        }
        // Forget queues of subscriptions that may be gone, but keep the common case warm.
        context.grouped.clear();
        if context.pending.len() > 64 {
            context.pending.clear();
        }
        stats
    }
}

/// Gives a record to a far member of a queue group (`member`, a route's interest): the
/// record crosses the route once, naming the groups its members are to serve there.
/// Returns the deliveries made (0 when the record crosses already).
#[inline(never)]
fn give_over_route(
    context: &mut RouteContext,
    member: &Subscription,
    group: Arc<str>,
    delivery: impl FnOnce() -> Delivery,
) -> u64 {
    let queue = Arc::as_ptr(&member.queue) as usize;
    let crossed = context.routed.contains(&queue);
    let batch = context.pending_for(&member.queue);
    if let Some(queued) = batch.last_mut().filter(|_| crossed) {
        add_group(queued, group);
        return 0;
    }
    let mut routed = delivery();
    add_group(&mut routed, group);
    batch.push(routed);
    context.routed.push(queue);
    1
}

/// Adds `group` to the groups a route's far member is to serve with `delivery`.
fn add_group(delivery: &mut Delivery, group: Arc<str>) {
    Arc::make_mut(delivery.groups.get_or_insert_with(Arc::default)).push(group);
}
