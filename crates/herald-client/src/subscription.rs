//! Subscriptions: a stream of delivered records and gap notices.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use herald_proto::frame::GapNotice;
use herald_proto::priority::ALL_PRIORITIES;
use herald_proto::{Frame, Priority, Record};
use tokio::sync::mpsc;

use crate::client::Client;
use crate::error::ClientError;

/// A record delivered to a subscription.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivered {
    /// The subscription it matched.
    pub subscription: u64,
    /// The server's sequence number.
    pub seq: u64,
    /// The server's receive time, ns since the epoch.
    pub received: i64,
    /// The record.
    pub record: Record,
}

/// What a subscription yields.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A record.
    Record(Delivered),
    /// Records were lost before reaching this subscription: by the server (its queue for
    /// this subscriber was full) or by this client (the subscription's buffer was full).
    Gap(GapNotice),
}

/// Counters shared between a subscription and the connection's reader.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) received: AtomicU64,
    pub(crate) lost: AtomicU64,
}

/// The reader's end of a subscription.
#[derive(Debug)]
pub(crate) struct Sink {
    events: mpsc::Sender<Event>,
    counters: Arc<Counters>,
    /// Records dropped here because `events` was full, not yet reported in the stream.
    local_gap: Option<GapNotice>,
}

impl Sink {
    pub(crate) fn new(events: mpsc::Sender<Event>, counters: Arc<Counters>) -> Self {
        Sink {
            events,
            counters,
            local_gap: None,
        }
    }

    /// Hands `event` to the subscriber without ever waiting; a full buffer becomes a gap.
    pub(crate) fn offer(&mut self, event: Event) {
        if let Some(gap) = self.local_gap.take() {
            if let Err(mpsc::error::TrySendError::Full(Event::Gap(gap))) =
                self.events.try_send(Event::Gap(gap))
            {
                self.local_gap = Some(gap);
            }
        }
        match event {
            Event::Gap(gap) => {
                self.counters.lost.fetch_add(gap.count, Ordering::Relaxed);
                if let Err(mpsc::error::TrySendError::Full(Event::Gap(gap))) =
                    self.events.try_send(Event::Gap(gap))
                {
                    self.merge_local(&gap);
                }
            }
            Event::Record(delivered) => {
                if self.local_gap.is_none() {
                    if let Err(mpsc::error::TrySendError::Full(Event::Record(lost))) =
                        self.events.try_send(Event::Record(delivered))
                    {
                        self.lose(&lost);
                    }
                } else {
                    self.lose(&delivered);
                }
            }
        }
    }

    fn lose(&mut self, delivered: &Delivered) {
        self.counters.lost.fetch_add(1, Ordering::Relaxed);
        let gap = GapNotice {
            subscription: delivered.subscription,
            count: 1,
            first_seq: delivered.seq,
            last_seq: delivered.seq,
            by_priority: vec![(delivered.record.priority, 1)],
        };
        self.merge_local(&gap);
    }

    fn merge_local(&mut self, gap: &GapNotice) {
        let local = self.local_gap.get_or_insert_with(|| GapNotice {
            subscription: gap.subscription,
            first_seq: gap.first_seq,
            ..GapNotice::default()
        });
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
}

/// A live subscription. Dropping it unsubscribes.
#[derive(Debug)]
pub struct Subscription {
    pub(crate) id: u64,
    pub(crate) client: Client,
    pub(crate) events: mpsc::Receiver<Event>,
    pub(crate) counters: Arc<Counters>,
    pub(crate) active: bool,
}

impl Subscription {
    /// Returns the subscription's id on its connection.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Waits for the next record or gap notice; `None` once the connection is closed (see
    /// [`Client::error`] for why).
    pub async fn next(&mut self) -> Option<Event> {
        let event = self.events.recv().await?;
        if let Event::Record(_) = event {
            self.counters.received.fetch_add(1, Ordering::Relaxed);
        }
        Some(event)
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
