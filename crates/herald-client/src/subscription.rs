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
    gap: Mutex<Option<GapNotice>>,
}

/// The reader's end of a subscription: batches of events, bounded in events.
#[derive(Debug)]
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
        if let Some(gap) = pending.take() {
            match room {
                0 => *pending = Some(gap),
                _ => batch.insert(0, Event::Gap(gap)),
            }
        }
        if batch.len() > room {
            for event in batch.drain(room..) {
                let gap = self.lose(event);
                merge(&mut pending, &gap);
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

    /// Returns `event` as a gap notice (a record becomes a gap of one, and is counted lost).
    fn lose(&self, event: Event) -> GapNotice {
        match event {
            Event::Gap(gap) => gap,
            Event::Record(delivered) => {
                self.counters.lost.fetch_add(1, Ordering::Relaxed);
                GapNotice {
                    subscription: delivered.subscription,
                    count: 1,
                    first_seq: delivered.seq,
                    last_seq: delivered.seq,
                    by_priority: vec![(delivered.priority(), 1)],
                }
            }
        }
    }
}

fn merge(pending: &mut Option<GapNotice>, gap: &GapNotice) {
    let Some(local) = pending else {
        *pending = Some(gap.clone());
        return;
    };
    local.count += gap.count;
    local.first_seq = local.first_seq.min(gap.first_seq);
    local.last_seq = local.last_seq.max(gap.last_seq);
    let mut counts = [0u64; 12];
    for (priority, count) in local.by_priority.iter().chain(&gap.by_priority) {
        counts[*priority as usize] += count;
    }
    local.by_priority = ALL_PRIORITIES
        .into_iter()
        .map(|p: Priority| (p, counts[p as usize]))
        .filter(|(_, c)| *c > 0)
        .collect();
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
                    self.taken.extend(batch);
                }
                Err(_) => return lock(&self.counters.gap).take().map(Event::Gap),
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
