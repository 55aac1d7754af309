//! The writer task of one connection: control frames, heartbeats, and deliveries drained
//! from the connection's subscription queues, batched into as few writes as possible.

use std::sync::Arc;
use std::time::Duration;

use herald_proto::frame::{self, FrameType, GapNotice};
use herald_proto::priority::ALL_PRIORITIES;
use herald_proto::{msgpack, Frame};
use herald_router::{Delivery, Gap, Queue};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::monitor::ConnectionState;

/// Control frames waiting for the writer; a client that never reads only blocks itself.
pub(crate) const CONTROL_QUEUE_FRAMES: usize = 1024;

/// Most record bytes taken from one queue for one `DELIVER` frame.
pub(crate) const DRAIN_BYTES: usize = 256 * 1024;
/// Bytes gathered before they are written out.
const WRITE_BATCH_BYTES: usize = 512 * 1024;
/// Most bytes a `DELIVER` entry adds around its record: array header, subscription, sequence
/// number and receive time (and on a route, the producer's id and number).
const ENTRY_OVERHEAD_BYTES: usize = 1 + 9 + 9 + 9 + 9 + 9;
/// Most bytes a route entry's array of queue group names adds (none for other entries).
fn groups_bytes(delivery: &Delivery) -> usize {
    delivery.groups.as_ref().map_or(0, |groups| {
        5 + groups.iter().map(|name| 5 + name.len()).sum::<usize>()
    })
}

/// Bytes of a `DELIVER` frame's length field that are not entries: type byte, array header.
const DELIVER_HEADER_BYTES: usize = 1 + 5;

/// Runs until the session drops its control sender; then flushes and shuts the socket.
/// `DELIVER` frames stay within `max_frame_bytes`, the limit the client was told in `WELCOME`.
/// On a cluster route (`route`), entries carry the producer's id and number of the record.
///
/// # Errors
/// The socket's error, if a write fails.
pub async fn run<W: AsyncWrite + Unpin>(
    mut write: W,
    state: Arc<ConnectionState>,
    mut control: mpsc::Receiver<Frame>,
    heartbeat_interval: Duration,
    max_frame_bytes: u32,
    route: bool,
) -> std::io::Result<()> {
    let deliver_budget = (max_frame_bytes as usize).saturating_sub(DELIVER_HEADER_BYTES);
    let mut buffer = Vec::with_capacity(WRITE_BATCH_BYTES);
    let mut scratch = Vec::new();
    let mut ping = tokio::time::interval(heartbeat_interval);
    ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ping.tick().await;
    let mut open = true;
    // When a latest-only queue next has a record ready, if any waits.
    let mut next_ready: Option<tokio::time::Instant> = None;
    while open {
        let ready_at =
            next_ready.unwrap_or_else(|| tokio::time::Instant::now() + heartbeat_interval);
        tokio::select! {
            frame = control.recv() => match frame {
                Some(frame) => frame.encode(&mut buffer),
                None => open = false,
            },
            () = state.writer.notified() => {}
            _ = ping.tick() => Frame::Ping.encode(&mut buffer),
            () = tokio::time::sleep_until(ready_at), if next_ready.is_some() => {}
        }
        while let Ok(frame) = control.try_recv() {
            frame.encode(&mut buffer);
        }
        loop {
            let queues: Vec<(u64, Arc<Queue>)> = state
                .subscriptions()
                .iter()
                .map(|s| (s.id, Arc::clone(&s.queue)))
                .collect();
            next_ready = queues
                .iter()
                .filter_map(|(_, q)| q.next_ready())
                .min()
                .map(Into::into);
            if let Some((subscription, queue)) = queues.iter().find(|(_, q)| q.take_disconnect()) {
                let error = slow_consumer_error(*subscription, queue);
                Frame::Error(error).encode(&mut buffer);
                write.write_all(&buffer).await?;
                state.slow_consumer.notify_one();
                return write.shutdown().await;
            }
            for (subscription, queue) in &queues {
                drain_queue(
                    *subscription,
                    queue,
                    &mut scratch,
                    &mut buffer,
                    (deliver_budget, route),
                );
                if buffer.len() >= WRITE_BATCH_BYTES {
                    break;
                }
            }
            if buffer.is_empty() {
                break;
            }
            write.write_all(&buffer).await?;
            buffer.clear();
        }
    }
    write.shutdown().await
}

/// Returns the error that tells a subscriber with policy `disconnect` why it is closed.
fn slow_consumer_error(subscription: u64, queue: &Queue) -> herald_proto::ErrorFrame {
    let config = queue.config();
    herald_proto::ErrorFrame {
        cid: 0,
        code: herald_proto::ErrorCode::SlowConsumer,
        message: format!(
            "subscription {subscription} fell behind: its queue ({} records, {} bytes) is full \
             and its policy is disconnect",
            config.max_records, config.max_bytes
        ),
    }
}

/// Appends a `GAP` frame if the queue dropped records, then `DELIVER` frames of what it
/// holds, each with at most `budget` bytes of entries (or a single entry, however large: the
/// record itself was within the limit, and clients allow for the entry's few extra bytes).
fn drain_queue(
    subscription: u64,
    queue: &Queue,
    scratch: &mut Vec<Delivery>,
    buffer: &mut Vec<u8>,
    (budget, route): (usize, bool),
) {
    for (member, gap) in queue.take_remote_gaps() {
        let notice = GapNotice {
            member: Some(member),
            ..gap_notice(subscription, &gap)
        };
        Frame::Gap(notice).encode(buffer);
    }
    if let Some(gap) = queue.drain(scratch, DRAIN_BYTES) {
        Frame::Gap(gap_notice(subscription, &gap)).encode(buffer);
    }
    let mut rest = scratch.as_slice();
    while !rest.is_empty() {
        let mut size = 0;
        let count = rest
            .iter()
            .take_while(|delivery| {
                size += delivery.record.len() + ENTRY_OVERHEAD_BYTES + groups_bytes(delivery);
                size <= budget
            })
            .count()
            .max(1);
        let (batch, tail) = rest.split_at(count);
        write_deliver(subscription, batch, buffer, route);
        rest = tail;
    }
    scratch.clear();
}

/// Appends one `DELIVER` frame of `deliveries`.
fn write_deliver(subscription: u64, deliveries: &[Delivery], buffer: &mut Vec<u8>, route: bool) {
    let start = frame::begin_frame(buffer, FrameType::Deliver);
    msgpack::write_array_len(buffer, msgpack::len_u32(deliveries.len()));
    for delivery in deliveries {
        if route {
            frame::write_route_entry(
                buffer,
                delivery.seq,
                delivery.received,
                &delivery.record,
                (delivery.producer, delivery.pseq),
                delivery.groups.as_deref().map_or(&[][..], Vec::as_slice),
            );
            continue;
        }
        frame::write_deliver_entry(
            buffer,
            subscription,
            delivery.seq,
            delivery.received,
            &delivery.record,
        );
    }
    frame::end_frame(buffer, start);
}

/// The notice of a queue's loss: count, sequence range and the priorities that lost records.
pub(crate) fn gap_notice(subscription: u64, gap: &Gap) -> GapNotice {
    let by_priority = ALL_PRIORITIES
        .into_iter()
        .map(|p| (p, gap.by_priority[p as usize]))
        .filter(|(_, count)| *count > 0)
        .collect();
    GapNotice {
        subscription,
        count: gap.count,
        first_seq: gap.first_seq,
        last_seq: gap.last_seq,
        by_priority,
        member: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use herald_proto::frame_buffer::FrameBuffer;
    use herald_proto::Priority;
    use herald_router::QueueConfig;

    #[test]
    fn deliver_frames_stay_within_the_budget() {
        let queue = Queue::new(QueueConfig::default(), Arc::default());
        let record = herald_proto::Record::new(herald_proto::Kind::Log, "a.b").to_bytes();
        let mut batch: Vec<Delivery> = (1..=100)
            .map(|seq| Delivery {
                seq,
                received: i64::MAX,
                priority: Priority::Info,
                record: Bytes::from(record.clone()),
                subject: (0, 0),
                producer: 0,
                pseq: 0,
                groups: None,
            })
            .collect();
        queue.push_batch(&mut batch);
        let (mut scratch, mut buffer) = (Vec::new(), Vec::new());
        drain_queue(
            7,
            &queue,
            &mut scratch,
            &mut buffer,
            (1024 - DELIVER_HEADER_BYTES, false),
        );
        let mut frames = FrameBuffer::new(1024);
        frames.spare().extend_from_slice(&buffer);
        let mut seqs = Vec::new();
        while let Some(frame) = frames.next_frame().unwrap() {
            let Frame::Deliver(entries) = Frame::decode(frame).unwrap() else {
                panic!("only DELIVER frames");
            };
            seqs.extend(entries.iter().map(|e| e.seq));
        }
        assert_eq!(seqs, (1..=100).collect::<Vec<u64>>());
        assert_eq!(frames.pending(), 0);
    }
}
