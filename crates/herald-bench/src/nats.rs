//! The NATS adapter (`async-nats`, default options): core NATS publish/subscribe of opaque
//! payloads whose first 8 bytes are the send time in ns, big-endian.
//!
//! NATS has no loss notices. With a slow reader, `async-nats` keeps reading the socket and
//! drops what its subscription channel (65,536 messages by default) cannot hold, raising one
//! `Event::SlowConsumer` without a count. Each subscriber here has a connection of its own, so
//! the connection's `in_messages` counter minus what the subscriber took is exactly what the
//! client dropped; [`NatsSubscriber`] reports that as [`Received::Lost`].

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use async_nats::{Client, RequestErrorKind, Statistics};
use bytes::{Bytes, BytesMut};
use futures_util::{FutureExt, StreamExt};

use crate::payload;
use crate::system::{Publisher, Received, Subscriber, System};

/// How long a subscriber with nothing to read waits before it counts the messages its
/// connection received but did not hand over as dropped (one may be in the hand-over).
const HANDOVER: Duration = Duration::from_millis(1);

/// Subject nobody subscribes to; a request on it comes back as "no responders".
const BARRIER_SUBJECT: &str = "bench.barrier";

/// NATS at `url`.
#[derive(Debug, Clone)]
pub struct Nats {
    /// `nats://host:port`.
    pub url: String,
}

impl System for Nats {
    type Publisher = NatsPublisher;
    type Subscriber = NatsSubscriber;

    fn name(&self) -> &'static str {
        "nats"
    }

    async fn publisher(&self, subject: &str, size: usize) -> anyhow::Result<NatsPublisher> {
        Ok(NatsPublisher {
            client: async_nats::connect(&self.url).await?,
            subject: subject.to_string().into(),
            size,
            buffer: BytesMut::new(),
        })
    }

    async fn subscriber(&self, subject: &str) -> anyhow::Result<NatsSubscriber> {
        let client = async_nats::connect(&self.url).await?;
        let subscription = client.subscribe(subject.to_string()).await?;
        client.flush().await?;
        Ok(NatsSubscriber {
            statistics: client.statistics(),
            _client: client,
            subscription,
            accounted: 0,
        })
    }
}

/// Publishes through one connection; the client batches writes in its connection task.
pub struct NatsPublisher {
    client: Client,
    subject: async_nats::Subject,
    size: usize,
    /// Payloads are split off this buffer, so allocations come in chunks.
    buffer: BytesMut,
}

impl Publisher for NatsPublisher {
    async fn publish(&mut self, sent_ns: i64) -> anyhow::Result<()> {
        if self.buffer.capacity() < self.size.max(payload::STAMP_LEN) {
            self.buffer.reserve(self.size.max(payload::STAMP_LEN) * 64);
        }
        payload::encode(&mut self.buffer, sent_ns, self.size);
        let payload = self.buffer.split().freeze();
        Ok(self.client.publish(self.subject.clone(), payload).await?)
    }

    /// `Client::flush` only waits for the socket write. Herald's flush and Redis's replies
    /// come from the server, so this adds one round trip the server answers after it has
    /// routed every earlier `PUB` on this connection: a request nobody answers, which the
    /// server rejects with "no responders".
    async fn flush(&mut self) -> anyhow::Result<()> {
        self.client.flush().await?;
        match self.client.request(BARRIER_SUBJECT, Bytes::new()).await {
            Err(error) if error.kind() == RequestErrorKind::NoResponders => Ok(()),
            Err(error) => Err(error.into()),
            Ok(_) => anyhow::bail!("someone answered on {BARRIER_SUBJECT}"),
        }
    }
}

/// One subscription on a connection of its own.
pub struct NatsSubscriber {
    _client: Client,
    subscription: async_nats::Subscriber,
    statistics: Arc<Statistics>,
    /// Messages handed over or reported lost so far.
    accounted: u64,
}

impl NatsSubscriber {
    fn received(&mut self, message: Option<async_nats::Message>) -> Option<Received> {
        let message = message?;
        self.accounted += 1;
        // A payload too short to carry a send time is not ours; it counts as sent just now.
        let sent_ns =
            payload::decode(&message.payload).unwrap_or_else(herald_proto::time::now_nanos);
        Some(Received::Message { sent_ns })
    }
}

impl Subscriber for NatsSubscriber {
    async fn next(&mut self) -> Option<Received> {
        if let Some(message) = self.subscription.next().now_or_never() {
            return self.received(message);
        }
        // Nothing to read: everything the connection counted was handed over or dropped,
        // except perhaps the one message being handed over right now.
        let counted = self.statistics.in_messages.load(Ordering::Acquire);
        if counted <= self.accounted {
            let message = self.subscription.next().await;
            return self.received(message);
        }
        match tokio::time::timeout(HANDOVER, self.subscription.next()).await {
            Ok(message) => self.received(message),
            Err(_) => {
                let dropped = counted - self.accounted;
                self.accounted = counted;
                Some(Received::Lost(dropped))
            }
        }
    }
}
