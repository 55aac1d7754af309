//! What a benchmarked system must do: publish, flush, subscribe. One adapter per system
//! implements it, so every system runs exactly the same workload.

use std::future::Future;

/// One delivered message, as a subscriber sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// A message, with the publisher's send time (ns since the epoch) read from it.
    Message {
        /// When the publisher sent it.
        sent_ns: i64,
    },
    /// The system reported this many messages lost (Herald's gap notices).
    Lost(u64),
}

/// A system under test.
pub trait System: Send + Sync + 'static {
    /// A connection that publishes.
    type Publisher: Publisher;
    /// A connection with one subscription.
    type Subscriber: Subscriber;

    /// Returns the system's name for reports (`herald`, `nats`, `redis`).
    fn name(&self) -> &'static str;

    /// Connects a publisher of messages with `size` bytes of payload on `subject`.
    fn publisher(
        &self,
        subject: &str,
        size: usize,
    ) -> impl Future<Output = anyhow::Result<Self::Publisher>> + Send;

    /// Connects a subscriber to `subject`.
    fn subscriber(
        &self,
        subject: &str,
    ) -> impl Future<Output = anyhow::Result<Self::Subscriber>> + Send;
}

/// Publishes the benchmark's messages.
pub trait Publisher: Send + 'static {
    /// Sends one message stamped with `sent_ns` (ns since the epoch).
    fn publish(&mut self, sent_ns: i64) -> impl Future<Output = anyhow::Result<()>> + Send;

    /// Returns once the system has taken every message published so far.
    fn flush(&mut self) -> impl Future<Output = anyhow::Result<()>> + Send;
}

/// Receives the benchmark's messages.
pub trait Subscriber: Send + 'static {
    /// Returns the next message or loss report; `None` if the subscription ended.
    fn next(&mut self) -> impl Future<Output = Option<Received>> + Send;
}
