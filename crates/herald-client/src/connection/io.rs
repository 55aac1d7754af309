//! The connection's two tasks: the writer drains the outbox and pings; the reader dispatches
//! frames from the server and watches the heartbeat.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use herald_proto::frame::{DeliverEntry, Hello, Welcome, PROTOCOL_VERSION};
use herald_proto::frame_buffer::FrameBuffer;
use herald_proto::{ErrorCode, Frame, FrameError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

use super::{Inner, Route};
use crate::delivered::Delivered;
use crate::error::ClientError;
use crate::event::Event;
use crate::options::ClientOptions;
use crate::sync::lock;
use crate::tls::Tls;
use crate::transport::{ReadHalf, Transport, WriteHalf};

/// Slack over the server's frame limit for `DELIVER` frames, which add a small header to
/// records that were each within the limit.
const DELIVER_OVERHEAD_BYTES: u64 = 1024;

/// Why one server could not be used.
#[derive(Debug)]
pub(crate) enum HandshakeError {
    /// The server answered with an error; trying the next server would not help.
    Refused { code: ErrorCode, message: String },
    /// The server could not be reached or did not complete the handshake.
    Failed(String),
}

/// A socket error during the handshake; with TLS 1.3 the server's verdict on a client
/// certificate arrives here, after the TLS handshake, so TLS's hints apply too.
fn failed(err: std::io::Error) -> HandshakeError {
    let message = err.to_string();
    let hint = crate::tls::hint(&message);
    HandshakeError::Failed(format!("{message}{hint}"))
}

/// Connects to `server` (over TLS when `tls` is given) and completes the handshake.
pub(crate) async fn connect(
    server: &str,
    options: &ClientOptions,
    tls: Option<&Tls>,
) -> Result<(Transport, Welcome), HandshakeError> {
    let attempt = async {
        let mut stream = Transport::open(server, tls)
            .await
            .map_err(HandshakeError::Failed)?;
        let hello = Hello {
            version: PROTOCOL_VERSION,
            name: options.name.clone(),
            token: options.token.clone(),
            capabilities: Vec::new(),
            heartbeat_ms: options.heartbeat_interval.as_millis() as u64,
            producer: options.producer,
        };
        stream
            .write
            .write_all(&Frame::Hello(hello).to_bytes())
            .await
            .map_err(failed)?;
        let mut buffer = FrameBuffer::new(herald_proto::frame::DEFAULT_MAX_FRAME_BYTES);
        let frame = loop {
            if let Some(frame) = buffer
                .next_frame()
                .map_err(|e| HandshakeError::Failed(e.to_string()))?
            {
                break frame;
            }
            let read = stream.read.read_buf(buffer.spare()).await.map_err(failed)?;
            if read == 0 {
                return Err(HandshakeError::Failed(
                    "server closed the connection during the handshake".into(),
                ));
            }
        };
        match Frame::decode(frame).map_err(|e| HandshakeError::Failed(e.to_string()))? {
            Frame::Welcome(welcome) => Ok((stream, welcome)),
            Frame::Error(error) => Err(HandshakeError::Refused {
                code: error.code,
                message: error.message,
            }),
            other => Err(HandshakeError::Failed(format!(
                "expected WELCOME, got {}",
                other.frame_type().name()
            ))),
        }
    };
    match tokio::time::timeout(options.connect_timeout, attempt).await {
        Ok(result) => result,
        Err(_) => Err(HandshakeError::Failed(format!(
            "no handshake within {} ms",
            options.connect_timeout.as_millis()
        ))),
    }
}

/// Runs one connection: a writer task and a reader task. Returns why it ended. When the
/// client is closing on purpose, waits for the writer to flush first.
pub(crate) async fn run_connection(
    stream: Transport,
    inner: Arc<Inner>,
    welcome: Welcome,
) -> ClientError {
    let Transport { read, write } = stream;
    let mut writer = tokio::spawn(write_loop(write, Arc::clone(&inner)));
    let mut reader = tokio::spawn(read_loop(read, Arc::clone(&inner), welcome));
    let (error, writer_done) = tokio::select! {
        ended = &mut writer => {
            let error = ended.unwrap_or_else(|e| Some(ClientError::Closed(format!("writer task failed: {e}"))));
            (error, true)
        }
        ended = &mut reader => {
            let error = ended.unwrap_or_else(|e| ClientError::Closed(format!("reader task failed: {e}")));
            (Some(error), false)
        }
    };
    if inner.is_stopping() && !writer_done {
        // Let the writer finish flushing what was buffered before the socket goes.
        let _ = tokio::time::timeout(CLOSE_FLUSH_TIMEOUT, &mut writer).await;
    }
    writer.abort();
    reader.abort();
    error.unwrap_or_else(|| ClientError::Closed("client closed".to_string()))
}

/// Longest a closing client waits for its last bytes to be written.
const CLOSE_FLUSH_TIMEOUT: Duration = Duration::from_secs(2);

/// Writes what the outbox holds and pings. Returns `None` after a clean close (everything
/// written), or the write error.
async fn write_loop(mut write: WriteHalf, inner: Arc<Inner>) -> Option<ClientError> {
    let mut frames = Vec::new();
    let mut small = Vec::new();
    let mut ping = tokio::time::interval(inner.options.heartbeat_interval);
    ping.tick().await;
    let mut stop = inner.stop.subscribe();
    // A new connection writes what the outbox holds at once (after a failover: the
    // subscriptions to restore and the records to send again), without waiting for a wake:
    // publishers wake the writer only when it had taken everything.
    let mut first = true;
    loop {
        let stopping = *stop.borrow_and_update();
        if !stopping && !std::mem::take(&mut first) {
            tokio::select! {
                () = inner.wake.notified() => {}
                _ = ping.tick() => lock(&inner.outbox).push_frame(&Frame::Ping),
                _ = stop.changed() => {}
            }
        }
        lock(&inner.outbox).take(&mut frames);
        inner.space.notify_waiters();
        if let Err(err) = write_frames(&mut write, &mut frames, &mut small).await {
            return Some(ClientError::Closed(format!(
                "write to server failed: {err}"
            )));
        }
        if stopping {
            let _ = write.shutdown().await;
            return None;
        }
    }
}

/// Frames smaller than this are gathered into one write; larger ones are written as they are.
const GATHER_BYTES: usize = 16 * 1024;

/// Writes `frames` in order with few system calls and no copy of the large ones.
async fn write_frames(
    write: &mut WriteHalf,
    frames: &mut Vec<Bytes>,
    small: &mut Vec<u8>,
) -> std::io::Result<()> {
    for frame in frames.drain(..) {
        if frame.len() < GATHER_BYTES {
            small.extend_from_slice(&frame);
            continue;
        }
        if !small.is_empty() {
            write.write_all(small).await?;
            small.clear();
        }
        write.write_all(&frame).await?;
    }
    if !small.is_empty() {
        write.write_all(small).await?;
        small.clear();
    }
    Ok(())
}

/// Read buffers of 64 KiB kept while the records read into them wait for their
/// subscribers, to read into again once those took them (`FrameBuffer::with_spares`): up to
/// 512 KiB more per connection, and no fresh pages for every 64 KiB of deliveries.
const READ_SPARES: usize = 8;

/// Reads and dispatches frames and watches the heartbeat; returns why it stopped.
async fn read_loop(mut read: ReadHalf, inner: Arc<Inner>, welcome: Welcome) -> ClientError {
    let max_frame = welcome
        .max_frame_bytes
        .saturating_add(DELIVER_OVERHEAD_BYTES);
    let mut buffer =
        FrameBuffer::with_spares(u32::try_from(max_frame).unwrap_or(u32::MAX), READ_SPARES);
    // The server pings every `WELCOME.heartbeat_ms`: never give up before a few of those.
    let announced = Duration::from_millis(welcome.heartbeat_ms).saturating_mul(3);
    let timeout = inner.options.heartbeat_timeout.max(announced);
    let mut check = tokio::time::interval(inner.options.heartbeat_interval.min(timeout / 2));
    let mut last_heard = Instant::now();
    let mut stop = inner.stop.subscribe();
    loop {
        match buffer.next_frame() {
            Ok(Some(frame)) => {
                if let Err(error) = dispatch(&inner, frame).await {
                    return error;
                }
                // Time spent waiting for a slow subscriber is not silence from the server.
                last_heard = Instant::now();
                continue;
            }
            Ok(None) => {}
            Err(err) => return ClientError::BadFrame(err),
        }
        tokio::select! {
            read = read.read_buf(buffer.spare()) => match read {
                Ok(0) => return ClientError::Closed("server closed the connection".to_string()),
                Ok(_) => last_heard = Instant::now(),
                Err(err) => return ClientError::Closed(format!("read from server failed: {err}")),
            },
            _ = check.tick() => {
                if last_heard.elapsed() > timeout {
                    return ClientError::HeartbeatTimeout(timeout);
                }
            }
            _ = stop.changed() => {
                if *stop.borrow() {
                    return ClientError::Closed("client closed".to_string());
                }
            }
        }
    }
}

/// Handles one frame from the server.
async fn dispatch(inner: &Inner, frame: Bytes) -> Result<(), ClientError> {
    match Frame::decode(frame)? {
        Frame::Deliver(entries) => deliver(inner, entries).await,
        Frame::Gap(gap) => {
            if let Some(Route::Subscription(sink)) = lock(&inner.routes).get_mut(&gap.subscription)
            {
                sink.offer(vec![Event::Gap(gap)]);
            }
        }
        Frame::Ping => {
            lock(&inner.outbox).push_frame(&Frame::Pong);
            inner.wake.notify_one();
        }
        Frame::Pong => {}
        Frame::Error(error) if error.cid == 0 => {
            return Err(ClientError::Server {
                code: error.code,
                message: error.message,
            });
        }
        Frame::Error(error) => {
            if !lock(&inner.pending).contains_key(&error.cid)
                && lock(&inner.outbox).is_unacked(error.cid)
            {
                // Records of a batch nobody waits for were refused: the count follows in
                // its ACK (Client::refused_records); say why here, once per batch.
                tracing::warn!(code = error.code.as_str(), message = %error.message, "server refused published records");
            }
            answer(
                inner,
                error.cid,
                Err(ClientError::Server {
                    code: error.code,
                    message: error.message,
                }),
            )
        }
        Frame::Ack(ack) => {
            // The frame is the server's now; it will not be resent after a failover. Its
            // count is what was routed: the rest the server refused (and said why).
            let refused = lock(&inner.outbox).acknowledge(ack.ack_id, ack.count);
            if let Some(refused) = refused.filter(|n| *n > 0) {
                inner.refused_records.fetch_add(refused, Ordering::Relaxed);
            }
            inner.space.notify_waiters();
            answer(inner, ack.ack_id, Ok(Frame::Ack(ack)));
        }
        Frame::Ok { cid } => answer(inner, cid, Ok(Frame::Ok { cid })),
        frame @ (Frame::MonitorReply { cid, .. } | Frame::ReloadReply { cid, .. }) => {
            answer(inner, cid, Ok(frame))
        }
        Frame::InfoReply { cid, reply, more } => {
            let whole = Frame::InfoReply {
                cid,
                reply,
                more: false,
            };
            join_part(inner, cid, whole, more);
        }
        Frame::QueryReply {
            cid,
            reply,
            skipped,
            more,
        } => {
            let whole = Frame::QueryReply {
                cid,
                reply,
                skipped,
                more: false,
            };
            join_part(inner, cid, whole, more);
        }
        other => {
            let name = other.frame_type().name();
            return Err(ClientError::BadFrame(FrameError::Malformed {
                frame: name,
                source: herald_proto::DecodeError::InvalidField {
                    field: "frame type",
                    reason: format!("{name} frames go from client to server"),
                },
            }));
        }
    }
    Ok(())
}

/// An answer larger than a frame comes in parts (`more` on all but the last); the waiter
/// gets them joined.
fn join_part(inner: &Inner, cid: u64, part: Frame, more: bool) {
    let mut partial = lock(&inner.partial);
    let joined = match partial.remove(&cid) {
        None => part,
        Some(mut joined) => {
            match (&mut joined, part) {
                (Frame::InfoReply { reply, .. }, Frame::InfoReply { reply: next, .. }) => {
                    reply.extend(next);
                }
                (
                    Frame::QueryReply { reply, skipped, .. },
                    Frame::QueryReply {
                        reply: next,
                        skipped: next_skipped,
                        ..
                    },
                ) => {
                    reply.extend(next);
                    *skipped += next_skipped;
                }
                // A part of another kind under the same cid: the server never sends one.
                _ => {}
            }
            joined
        }
    };
    if more {
        partial.insert(cid, joined);
    } else {
        drop(partial);
        answer(inner, cid, Ok(joined));
    }
}

fn answer(inner: &Inner, cid: u64, result: Result<Frame, ClientError>) {
    // An error may end an answer that came in parts.
    lock(&inner.partial).remove(&cid);
    if let Some(waiter) = lock(&inner.pending).remove(&cid) {
        let _ = waiter.send(result);
    }
}

/// How long the reader waits for room in a subscription's buffer before it drops for it.
const SUBSCRIBER_PATIENCE: Duration = Duration::from_millis(100);

async fn deliver(inner: &Inner, entries: Vec<DeliverEntry>) {
    // One batch per subscription per frame: one hand-over instead of one per record.
    let mut batches: Vec<(u64, Vec<Event>)> = Vec::new();
    let total = entries.len();
    for (index, entry) in entries.into_iter().enumerate() {
        let subscription = entry.subscription;
        let delivered = Delivered::from_entry(entry);
        match batches.iter_mut().find(|(id, _)| *id == subscription) {
            Some((_, batch)) => batch.push(Event::Record(delivered)),
            None => {
                // A frame is mostly one subscription's: its batch gets room for the rest at
                // once (growing it a record at a time reallocated and copied it, into fresh
                // pages, ~8 % of a subscriber's time).
                let room = if batches.is_empty() { total - index } else { 1 };
                let mut batch = Vec::with_capacity(room);
                batch.push(Event::Record(delivered));
                batches.push((subscription, batch));
            }
        }
    }
    for (subscription, batch) in batches {
        let route = match lock(&inner.routes).get(&subscription) {
            Some(Route::Subscription(sink)) => Some(Ok(sink.clone())),
            Some(Route::Inbox(inbox)) => Some(Err(Arc::clone(inbox))),
            None => None, // Unsubscribed while the records were on their way.
        };
        match route {
            Some(Ok(mut sink)) => sink.offer_patiently(batch, SUBSCRIBER_PATIENCE).await,
            Some(Err(inbox)) => batch.into_iter().for_each(|event| {
                if let Event::Record(delivered) = event {
                    inbox.deliver(delivered);
                }
            }),
            None => {}
        }
    }
}
