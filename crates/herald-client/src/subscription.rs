//! Subscriptions: a stream of delivered records and gap notices.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use herald_proto::frame::GapNotice;
use herald_proto::priority::ALL_PRIORITIES;
use herald_proto::{Frame, Priority};
use tokio::sync::mpsc;

use crate::client::{lock, Client};
use crate::delivered::Delivered;
use crate::error::ClientError;

/// What a subscription yields.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A record.
    Record(Delivered),
    /// Records were lost before reaching this subscription: by the server (its queue for
    /// this subscriber was full) or by this client (the subscription's buffer was full).
    Gap(GapNotice),
    /// The connection to the server was lost and the client failed over: the subscription
    /// was made again on the next server, and records published in between (for `down`)
    /// were not delivered to it — a gap of unknown size.
    Interrupted(Interruption),
}

/// The notice of a failover, for each subscription: see [`Event::Interrupted`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interruption {
    /// The server whose connection was lost.
    pub lost: String,
    /// The server the subscription was made again on.
    pub resumed: String,
    /// How long the subscription went unserved.
    pub down: Duration,
}

/// State shared between a subscription and the connection's reader.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) received: AtomicU64,
    pub(crate) lost: AtomicU64,
    /// Events handed over and not yet taken by the subscriber.
    queued: AtomicUsize,
    /// Records dropped by the client because the subscription's buffer was full, not yet
    /// reported in the stream. The reader reports it before its next batch; the subscriber
    /// takes it once it has emptied the buffer, so it is never left behind.
    gap: Mutex<Option<LocalGap>>,
    /// Signalled when the subscriber takes a batch, for a reader waiting for room.
    space: tokio::sync::Notify,
}

/// Records this client lost for one subscription, counted without allocating per record.
#[derive(Debug)]
pub(crate) struct LocalGap {
    subscription: u64,
    count: u64,
    first_seq: u64,
    last_seq: u64,
    by_priority: [u64; 12],
}

impl LocalGap {
    fn add(&mut self, subscription: u64, count: u64, first_seq: u64, last_seq: u64) {
        if self.count == 0 {
            (self.subscription, self.first_seq, self.last_seq) =
                (subscription, first_seq, last_seq);
        }
        self.count += count;
        self.first_seq = self.first_seq.min(first_seq);
        self.last_seq = self.last_seq.max(last_seq);
    }

    fn into_notice(self) -> GapNotice {
        let by_priority = ALL_PRIORITIES
            .into_iter()
            .map(|p: Priority| (p, self.by_priority[p as usize]))
            .filter(|(_, c)| *c > 0)
            .collect();
        GapNotice {
            subscription: self.subscription,
            count: self.count,
            first_seq: self.first_seq,
            last_seq: self.last_seq,
            by_priority,
            member: None,
        }
    }
}

/// The reader's end of a subscription: batches of events, bounded in events.
#[derive(Debug, Clone)]
pub(crate) struct Sink {
    events: mpsc::UnboundedSender<Vec<Event>>,
    counters: Arc<Counters>,
    limit: usize,
}

impl Sink {
    pub(crate) fn new(
        events: mpsc::UnboundedSender<Vec<Event>>,
        counters: Arc<Counters>,
        limit: usize,
    ) -> Self {
        Sink {
            events,
            counters,
            limit,
        }
    }

    /// Hands a batch to the subscriber, waiting at most `patience` for room first. While the
    /// reader waits it reads nothing, so the socket backs up and the server's queue for this
    /// subscriber sheds — cheaply, at the source — instead of this client dropping records
    /// the server already sent. Past `patience`, what does not fit becomes a gap here.
    pub(crate) async fn offer_patiently(&mut self, batch: Vec<Event>, patience: Duration) {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            let space = self.counters.space.notified();
            tokio::pin!(space);
            space.as_mut().enable();
            let room = self
                .limit
                .saturating_sub(self.counters.queued.load(Ordering::Acquire));
            if room >= batch.len() || batch.len() > self.limit {
                break;
            }
            if tokio::time::timeout_at(deadline, space).await.is_err() {
                break;
            }
        }
        self.offer(batch);
    }

    /// Hands a batch to the subscriber without ever waiting. What does not fit the buffer
    /// becomes a gap, reported in order before anything that comes later.
    pub(crate) fn offer(&mut self, mut batch: Vec<Event>) {
        for event in &batch {
            if let Event::Gap(gap) = event {
                self.counters.lost.fetch_add(gap.count, Ordering::Relaxed);
            }
        }
        let mut pending = lock(&self.counters.gap);
        let room = self
            .limit
            .saturating_sub(self.counters.queued.load(Ordering::Acquire));
        if room > 0 {
            if let Some(gap) = pending.take() {
                batch.insert(0, Event::Gap(gap.into_notice()));
            }
        }
        if batch.len() > room {
            let gap = pending.get_or_insert(LocalGap {
                subscription: 0,
                count: 0,
                first_seq: 0,
                last_seq: 0,
                by_priority: [0; 12],
            });
            for event in batch.drain(room..) {
                self.lose(event, gap);
            }
        }
        drop(pending);
        if batch.is_empty() {
            return;
        }
        self.counters
            .queued
            .fetch_add(batch.len(), Ordering::AcqRel);
        // A send error means the subscription was dropped; nobody is left to tell.
        let _ = self.events.send(batch);
    }

    /// Adds `event` to the pending gap (a record counts as one lost record).
    fn lose(&self, event: Event, gap: &mut LocalGap) {
        match event {
            Event::Gap(notice) => {
                gap.add(
                    notice.subscription,
                    notice.count,
                    notice.first_seq,
                    notice.last_seq,
                );
                for (priority, count) in notice.by_priority {
                    gap.by_priority[priority as usize] += count;
                }
            }
            Event::Record(delivered) => {
                self.counters.lost.fetch_add(1, Ordering::Relaxed);
                gap.add(delivered.subscription, 1, delivered.seq, delivered.seq);
                gap.by_priority[delivered.priority() as usize] += 1;
            }
            // The buffer's own gap notice stands for it.
            Event::Interrupted(_) => {}
        }
    }
}

/// A live subscription. Dropping it unsubscribes.
#[derive(Debug)]
pub struct Subscription {
    pub(crate) id: u64,
    pub(crate) client: Client,
    pub(crate) events: mpsc::UnboundedReceiver<Vec<Event>>,
    pub(crate) taken: std::collections::VecDeque<Event>,
    pub(crate) counters: Arc<Counters>,
    pub(crate) active: bool,
}

impl Subscription {
    /// Returns the subscription's id on its connection.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Returns the next record or gap notice if one is already here, without waiting.
    pub fn try_next(&mut self) -> Option<Event> {
        if self.taken.is_empty() {
            match self.events.try_recv() {
                Ok(batch) => {
                    self.counters
                        .queued
                        .fetch_sub(batch.len(), Ordering::AcqRel);
                    self.counters.space.notify_one();
                    self.taken.extend(batch);
                }
                Err(_) => {
                    return lock(&self.counters.gap)
                        .take()
                        .map(|gap| Event::Gap(gap.into_notice()))
                }
            }
        }
        let event = self.taken.pop_front()?;
        if let Event::Record(_) = event {
            self.counters.received.fetch_add(1, Ordering::Relaxed);
        }
        Some(event)
    }

    /// Waits for the next record or gap notice; `None` once the connection is closed (see
    /// [`Client::error`] for why).
    pub async fn next(&mut self) -> Option<Event> {
        if let Some(event) = self.try_next() {
            return Some(event);
        }
        let batch = self.events.recv().await?;
        self.counters
            .queued
            .fetch_sub(batch.len(), Ordering::AcqRel);
        self.counters.space.notify_one();
        self.taken.extend(batch);
        self.try_next()
    }

    /// Waits for the next record, passing over gap notices (they are still counted in
    /// [`Subscription::lost`]).
    pub async fn next_record(&mut self) -> Option<Delivered> {
        loop {
            if let Event::Record(delivered) = self.next().await? {
                return Some(delivered);
            }
        }
    }

    /// Waits at most `timeout` for the next record.
    ///
    /// # Errors
    /// [`ClientError::Timeout`], or the connection's error if it closed.
    pub async fn next_record_timeout(
        &mut self,
        timeout: Duration,
    ) -> Result<Delivered, ClientError> {
        match tokio::time::timeout(timeout, self.next_record()).await {
            Ok(Some(delivered)) => Ok(delivered),
            Ok(None) => Err(self.client.closed_error()),
            Err(_) => Err(ClientError::Timeout(timeout)),
        }
    }

    /// Returns the records taken from this subscription so far.
    pub fn received(&self) -> u64 {
        self.counters.received.load(Ordering::Relaxed)
    }

    /// Returns the records lost so far, as reported by gap notices (server and client side).
    pub fn lost(&self) -> u64 {
        self.counters.lost.load(Ordering::Relaxed)
    }

    /// Ends the subscription and waits for the server to confirm.
    ///
    /// # Errors
    /// The server's error, a timeout, or the connection's error.
    pub async fn unsubscribe(mut self) -> Result<(), ClientError> {
        self.active = false;
        self.client.unsubscribe(self.id).await
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if self.active {
            self.client.forget_subscription(self.id);
            self.client.send_frame(&Frame::Unsubscribe {
                cid: 0,
                subscription: self.id,
            });
        }
    }
}
