//! Subscriptions: a stream of delivered records and gap notices.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use herald_proto::Frame;
use tokio::sync::mpsc;

use crate::connection::Handle;
use crate::delivered::Delivered;
use crate::error::ClientError;
pub use crate::event::{Event, Interruption};
use crate::sink::Counters;
use crate::sync::lock;

/// A live subscription. Dropping it unsubscribes.
#[derive(Debug)]
pub struct Subscription {
    pub(crate) id: u64,
    pub(crate) conn: Handle,
    pub(crate) events: mpsc::UnboundedReceiver<Vec<Event>>,
    /// The batch being read, taken from `events`: read where it is (copied into a queue,
    /// each event was moved once more, ~2 % of a subscriber's time).
    pub(crate) taken: std::vec::IntoIter<Event>,
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
        if self.taken.as_slice().is_empty() {
            match self.events.try_recv() {
                Ok(batch) => self.take(batch),
                Err(_) => {
                    return lock(&self.counters.gap)
                        .take()
                        .map(|gap| Event::Gap(gap.into_notice()))
                }
            }
        }
        let event = self.taken.next()?;
        if let Event::Record(_) = event {
            self.counters.received.fetch_add(1, Ordering::Relaxed);
        }
        Some(event)
    }

    /// Waits for the next record or gap notice; `None` once the connection is closed (see
    /// [`Client::error`](crate::Client::error) for why).
    pub async fn next(&mut self) -> Option<Event> {
        if let Some(event) = self.try_next() {
            return Some(event);
        }
        let batch = self.events.recv().await?;
        self.take(batch);
        self.try_next()
    }

    /// Makes `batch` the one read next (the one before is read through), and makes its
    /// room in the subscription's buffer free.
    fn take(&mut self, batch: Vec<Event>) {
        self.counters
            .queued
            .fetch_sub(batch.len(), Ordering::AcqRel);
        self.counters.space.notify_one();
        self.taken = batch.into_iter();
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
            Ok(None) => Err(self.conn.closed_error()),
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
        self.conn.unsubscribe(self.id).await
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if self.active {
            self.conn.forget_subscription(self.id);
            self.conn.send_frame(&Frame::Unsubscribe {
                cid: 0,
                subscription: self.id,
            });
        }
    }
}
