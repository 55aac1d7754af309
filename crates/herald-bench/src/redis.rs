//! The Redis pub/sub adapter (the `redis` crate): `PUBLISH` of opaque payloads whose first
//! 8 bytes are the send time in ns, big-endian, and `SUBSCRIBE` on a dedicated connection.
//!
//! Every message is its own `PUBLISH`, pipelined as the `redis` docs advise for throughput:
//! a task of the publisher's sends whatever has queued up as one pipeline on the multiplexed
//! connection, with up to two pipelines awaiting their replies while the next one
//! queues up. A lone message goes out at once, so pipelining adds no wait at a fixed rate.
//!
//! Redis has no loss notices, and the `redis` crate reads a subscription's socket into an
//! unbounded queue: a slow subscriber loses nothing and lags, its backlog held in its own
//! process, so the server's `client-output-buffer-limit pubsub` never trips.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use bytes::BytesMut;
use futures_util::{FutureExt, StreamExt};
use redis::aio::{MultiplexedConnection, PubSubStream};
use redis::AsyncConnectionConfig;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::payload;
use crate::system::{Publisher, Received, Subscriber, System};

/// Most messages in one pipeline.
const BATCH_MESSAGES: usize = 1024;
/// Most payload bytes in one pipeline (fewer messages when they are large).
const BATCH_BYTES: usize = 1 << 20;
/// Most pipelines awaiting their replies (two keep the server busy while the client parses
/// one batch of replies and packs the next: +25 % for `pub` over one).
const IN_FLIGHT: usize = 2;
/// Messages that may queue for the next pipeline, in pipelines.
const QUEUED_BATCHES: usize = 2;
/// Longest a pipeline may wait for its replies (the crate's default, 500 ms, is for requests
/// that a loaded server answers at once, not for a megabyte of `PUBLISH`es).
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(60);

/// Redis at `url`.
#[derive(Debug, Clone)]
pub struct Redis {
    /// `redis://host:port`.
    pub url: String,
}

impl System for Redis {
    type Publisher = RedisPublisher;
    type Subscriber = RedisSubscriber;

    fn name(&self) -> &'static str {
        "redis"
    }

    async fn publisher(&self, subject: &str, size: usize) -> anyhow::Result<RedisPublisher> {
        let config = AsyncConnectionConfig::new().set_response_timeout(Some(RESPONSE_TIMEOUT));
        let connection = redis::Client::open(self.url.as_str())?
            .get_multiplexed_async_connection_with_config(&config)
            .await?;
        let batch = (BATCH_BYTES / size.max(1)).clamp(1, BATCH_MESSAGES);
        let (sender, receiver) = mpsc::channel(batch * QUEUED_BATCHES);
        let pipeliner = Pipeliner {
            connection,
            channel: subject.to_string(),
            size,
            batch,
        };
        Ok(RedisPublisher {
            sender,
            task: tokio::spawn(pipeliner.run(receiver)),
        })
    }

    async fn subscriber(&self, subject: &str) -> anyhow::Result<RedisSubscriber> {
        let mut pubsub = redis::Client::open(self.url.as_str())?
            .get_async_pubsub()
            .await?;
        pubsub.subscribe(subject).await?;
        Ok(RedisSubscriber {
            messages: pubsub.into_on_message(),
        })
    }
}

/// What the publisher asks of its pipelining task.
enum Op {
    /// `PUBLISH` a payload stamped with this send time.
    Publish(i64),
    /// Answer once every earlier `PUBLISH` has its reply.
    Flush(oneshot::Sender<()>),
}

/// Hands messages to the pipelining task.
pub struct RedisPublisher {
    sender: mpsc::Sender<Op>,
    task: JoinHandle<anyhow::Result<()>>,
}

impl RedisPublisher {
    /// Returns why the pipelining task stopped.
    async fn failure(&mut self) -> anyhow::Error {
        match (&mut self.task).await {
            Ok(Err(error)) => error,
            Ok(Ok(())) => anyhow::anyhow!("the redis pipelining task stopped"),
            Err(error) => error.into(),
        }
    }
}

impl Publisher for RedisPublisher {
    async fn publish(&mut self, sent_ns: i64) -> anyhow::Result<()> {
        if self.sender.send(Op::Publish(sent_ns)).await.is_err() {
            return Err(self.failure().await);
        }
        Ok(())
    }

    async fn flush(&mut self) -> anyhow::Result<()> {
        let (done, flushed) = oneshot::channel();
        if self.sender.send(Op::Flush(done)).await.is_err() || flushed.await.is_err() {
            return Err(self.failure().await);
        }
        Ok(())
    }
}

/// A pipeline's replies, on their way.
type Reply = Pin<Box<dyn Future<Output = redis::RedisResult<()>> + Send>>;

/// Turns queued messages into pipelines of `PUBLISH`es.
struct Pipeliner {
    connection: MultiplexedConnection,
    channel: String,
    size: usize,
    batch: usize,
}

impl Pipeliner {
    async fn run(self, mut receiver: mpsc::Receiver<Op>) -> anyhow::Result<()> {
        let mut ops = Vec::with_capacity(self.batch);
        let mut payload = BytesMut::with_capacity(self.size.max(payload::STAMP_LEN));
        let mut in_flight: VecDeque<Reply> = VecDeque::with_capacity(IN_FLIGHT);
        while receiver.recv_many(&mut ops, self.batch).await > 0 {
            let mut pipeline = redis::pipe();
            let mut flushes = Vec::new();
            for op in ops.drain(..) {
                match op {
                    Op::Publish(sent_ns) => {
                        payload::encode(&mut payload, sent_ns, self.size);
                        pipeline
                            .cmd("PUBLISH")
                            .arg(&self.channel)
                            .arg(&payload[..])
                            .ignore();
                    }
                    Op::Flush(done) => flushes.push(done),
                }
            }
            if !pipeline.is_empty() {
                self.send(pipeline, &mut in_flight).await?;
            }
            if !flushes.is_empty() {
                for reply in in_flight.drain(..) {
                    reply.await?;
                }
            }
            for done in flushes {
                // The publisher may have given up waiting; nothing to tell then.
                let _ = done.send(());
            }
        }
        Ok(())
    }

    /// Sends `pipeline`, then waits until fewer than [`IN_FLIGHT`] await their replies.
    async fn send(
        &self,
        pipeline: redis::Pipeline,
        in_flight: &mut VecDeque<Reply>,
    ) -> redis::RedisResult<()> {
        let mut connection = self.connection.clone();
        let mut reply: Reply = Box::pin(async move { pipeline.exec_async(&mut connection).await });
        // The first poll hands the pipeline to the connection's writer (its queue has room
        // for far more than IN_FLIGHT), so pipelines go out in the order they were made.
        match (&mut reply).now_or_never() {
            Some(result) => result?,
            None => in_flight.push_back(reply),
        }
        while in_flight.len() >= IN_FLIGHT {
            in_flight.pop_front().expect("a pipeline in flight").await?;
        }
        Ok(())
    }
}

/// One subscription on a dedicated pub/sub connection.
pub struct RedisSubscriber {
    messages: PubSubStream,
}

impl Subscriber for RedisSubscriber {
    async fn next(&mut self) -> Option<Received> {
        let message = self.messages.next().await?;
        // A payload too short to carry a send time is not ours; it counts as sent just now.
        let sent_ns = payload::decode(message.get_payload_bytes())
            .unwrap_or_else(herald_proto::time::now_nanos);
        Some(Received::Message { sent_ns })
    }
}
