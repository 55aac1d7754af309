//! Frames waiting to be written, and `PUBLISH` frames kept until the server acknowledges
//! them, so that after a failover they can be sent again.
//!
//! Records are encoded straight into the open batch, so publishing costs one encode and no
//! allocation once the buffers are warm. Every `PUBLISH` frame asks for a `received`
//! acknowledgement; until it comes, the frame stays in `unacked` and counts against the
//! outbox's budget — the in-flight window that bounds what a failover can have to resend.
//!
//! Records are numbered from 1 in the order they are published (a `PUBLISH` carries the
//! number of its first record): with the producer id the client gives in `HELLO`, the
//! numbers let cluster members drop the records a failover sends again. The numbers come
//! from the client's [`Numbering`], which a logger's disk buffer shares: when it took
//! numbers for records it put on disk, the open batch is sealed, so that every frame's
//! numbers run on one by one. [`Outbox::push_numbered`] queues records numbered already
//! (the disk buffer's, sent again under their own numbers).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use herald_proto::frame::{self, FrameType};
use herald_proto::{AckLevel, Frame, Record};

use crate::error::ClientError;
use crate::numbering::Numbering;

/// Size at which the open batch is sealed into a frame (after the record that reaches it).
pub const BATCH_BYTES: usize = 64 * 1024;
/// Room a batch's buffer is made with: the records up to [`BATCH_BYTES`], the one that
/// crosses it (a quarter more for it, so that an ordinary record never makes the buffer grow),
/// the header and the first record's number. A buffer that grew was copied whole into a new
/// one of twice the size, above glibc's `mmap` threshold: fresh pages for every frame, which
/// cost the publishing thread a tenth of its time (page faults, clearing pages, the copy).
const BATCH_ROOM: usize = BATCH_BYTES + BATCH_BYTES / 4 + PUBLISH_HEADER_BYTES + FIRST_SEQ_BYTES;
/// Bytes the outbox may hold (waiting or unacknowledged) before `publish` waits.
pub const DEFAULT_OUTBOX_BYTES: usize = 8 * 1024 * 1024;
/// Room kept for the `PUBLISH` header in a frame, and reserved at the start of the open
/// batch so that sealing writes the header in front of the records instead of copying them.
const PUBLISH_HEADER_BYTES: usize = 32;
/// Most bytes the number of a batch's first record takes, after its records.
const FIRST_SEQ_BYTES: usize = 9;

/// A sealed frame waiting to be written.
#[derive(Debug, Clone)]
struct Ready {
    bytes: Bytes,
    /// Whether it is a `PUBLISH` (also held in `unacked`).
    publish: bool,
}

/// Encoded frames, the open batch of records, and the `PUBLISH` frames not yet acknowledged.
#[derive(Debug)]
pub struct Outbox {
    ready: VecDeque<Ready>,
    /// `PUBLISH` frames not yet acknowledged: ack id, bytes and how many records.
    unacked: VecDeque<(u64, Bytes, u32)>,
    batch: Vec<u8>,
    batch_count: u32,
    /// Bytes of `PUBLISH` frames in `unacked`.
    unacked_bytes: usize,
    /// Bytes of other frames in `ready`.
    control_bytes: usize,
    max_frame_bytes: usize,
    ids: Arc<AtomicU64>,
    /// Where the records' numbers come from.
    numbering: Numbering,
    /// The number of the open batch's first record (meaningless while it is empty).
    batch_first: u64,
    /// Room of acknowledged frames, emptied, for the next batches (at most [`SPARES`]).
    spares: Vec<Vec<u8>>,
}

/// Acknowledged frames' room kept to build the next batches in (at most ~650 KiB): a new
/// batch's room came from the allocator as pages the kernel had to fault in and clear again
/// (6 % of a publishing client's time, `herald-bench-compare --scenario pub`; with two kept,
/// acknowledgements that come in bursts still left most batches without one: 5.5 %).
const SPARES: usize = 8;

impl Outbox {
    /// Returns an empty outbox for a server that accepts frames up to `max_frame_bytes`,
    /// taking acknowledgement ids from `ids` and record numbers from `numbering`.
    pub fn new(max_frame_bytes: usize, ids: Arc<AtomicU64>, numbering: Numbering) -> Self {
        Outbox {
            ready: VecDeque::new(),
            unacked: VecDeque::new(),
            batch: Vec::new(),
            batch_count: 0,
            unacked_bytes: 0,
            control_bytes: 0,
            max_frame_bytes,
            ids,
            numbering,
            batch_first: 0,
            spares: Vec::new(),
        }
    }

    /// Returns the bytes held: the open batch, unacknowledged `PUBLISH` frames and control
    /// frames not yet written.
    pub fn len(&self) -> usize {
        self.batch_bytes() + self.unacked_bytes + self.control_bytes
    }

    /// Returns how many records are held without an acknowledgement: those of `PUBLISH`
    /// frames not acknowledged (written or not) and of the open batch.
    pub fn records_held(&self) -> u64 {
        let sealed: u64 = self
            .unacked
            .iter()
            .map(|(_, _, records)| u64::from(*records))
            .sum();
        sealed + u64::from(self.batch_count)
    }

    /// Returns true when the writer has nothing to take: no frame ready and no record in
    /// the open batch. A publisher wakes the writer only for the record that ends such a
    /// state; the records after it ride on that wake, since the writer takes everything.
    pub fn is_drained(&self) -> bool {
        self.ready.is_empty() && self.batch_count == 0
    }

    /// Returns the bytes of records in the open batch.
    fn batch_bytes(&self) -> usize {
        self.batch.len().saturating_sub(PUBLISH_HEADER_BYTES)
    }

    /// Encodes `record` into the open batch.
    ///
    /// # Errors
    /// [`ClientError::TooLarge`] if the record alone cannot fit a frame (its number is then
    /// skipped), [`ClientError::Numbering`] if no number could be reserved.
    pub fn push_record(&mut self, record: &Record) -> Result<(), ClientError> {
        let seq = self.numbering.take(1).map_err(ClientError::Numbering)?;
        if self.batch_count > 0 && seq != self.batch_first + u64::from(self.batch_count) {
            // Numbers were taken elsewhere (by the disk buffer): a frame's run on one by one.
            self.seal(None);
        }
        if self.batch.is_empty() {
            self.batch.reserve(BATCH_ROOM);
            self.batch.resize(PUBLISH_HEADER_BYTES, 0);
        }
        let start = self.batch.len();
        record.encode(&mut self.batch);
        let size = self.batch.len() - start;
        // Saturating: the limit comes from the server's WELCOME, which may be absurdly small.
        let max = self
            .max_frame_bytes
            .saturating_sub(PUBLISH_HEADER_BYTES + FIRST_SEQ_BYTES);
        if size > max {
            self.batch.truncate(start);
            return Err(ClientError::TooLarge { size, max });
        }
        let before = start - PUBLISH_HEADER_BYTES;
        if before > 0 && self.batch_bytes() > max {
            // Over the server's frame limit with this record: seal what came before it; it
            // opens the next batch.
            let mut next = Vec::with_capacity(BATCH_ROOM.max(size + PUBLISH_HEADER_BYTES));
            next.resize(PUBLISH_HEADER_BYTES, 0);
            next.extend_from_slice(&self.batch[start..]);
            self.batch.truncate(start);
            self.seal(None);
            self.batch = next;
        }
        if self.batch_count == 0 {
            self.batch_first = seq;
        }
        self.batch_count += 1;
        if self.batch_bytes() >= BATCH_BYTES {
            self.seal(None);
        }
        Ok(())
    }

    /// Queues `records` (encoded, as a `PUBLISH` carries them), numbered already from
    /// `first_seq` on, one each, as one `PUBLISH` frame acknowledged at `received` under
    /// `ack_id`, after everything queued before. The frame is kept until acknowledged and
    /// resent after a failover like any other.
    ///
    /// # Errors
    /// [`ClientError::TooLarge`] if the frame would exceed the server's limit; nothing is
    /// queued then.
    pub fn push_numbered(
        &mut self,
        records: &[&[u8]],
        first_seq: u64,
        ack_id: u64,
    ) -> Result<(), ClientError> {
        self.seal(None);
        let count = u32::try_from(records.len()).expect("a frame holds far fewer records");
        let size: usize = records.iter().map(|r| r.len()).sum();
        let max = self
            .max_frame_bytes
            .saturating_sub(PUBLISH_HEADER_BYTES + FIRST_SEQ_BYTES);
        if size > max {
            return Err(ClientError::TooLarge { size, max });
        }
        let mut out = Vec::with_capacity(size + PUBLISH_HEADER_BYTES + FIRST_SEQ_BYTES);
        let start = frame::begin_frame(&mut out, FrameType::Publish);
        frame::write_numbered_publish_header(&mut out, ack_id, AckLevel::Received, count);
        for record in records {
            out.extend_from_slice(record);
        }
        frame::write_publish_first_seq(&mut out, first_seq);
        frame::end_frame(&mut out, start);
        let bytes = Bytes::from(out);
        self.unacked_bytes += bytes.len();
        self.unacked.push_back((ack_id, bytes.clone(), count));
        self.ready.push_back(Ready {
            bytes,
            publish: true,
        });
        Ok(())
    }

    /// Turns the open batch into a `PUBLISH` frame acknowledged under `ack`'s id at its
    /// level (a fresh id and `received` when `None`). With an explicit id the frame is sealed
    /// even when empty: that is a flush.
    pub fn seal(&mut self, ack: Option<(u64, AckLevel)>) {
        if self.batch_count == 0 && ack.is_none() {
            return;
        }
        let (ack_id, level) =
            ack.unwrap_or_else(|| (self.ids.fetch_add(1, Ordering::Relaxed), AckLevel::Received));
        let mut header = Vec::with_capacity(PUBLISH_HEADER_BYTES);
        frame::begin_frame(&mut header, FrameType::Publish);
        if self.batch_count == 0 {
            frame::write_publish_header(&mut header, ack_id, level, 0);
        } else {
            frame::write_numbered_publish_header(&mut header, ack_id, level, self.batch_count);
            let first_seq = self.batch_first;
            self.batch
                .resize(self.batch.len().max(PUBLISH_HEADER_BYTES), 0);
            frame::write_publish_first_seq(&mut self.batch, first_seq);
        }
        let length = u32::try_from(header.len() - frame::LENGTH_BYTES + self.batch_bytes())
            .expect("a batch is far below 4 GiB");
        header[..frame::LENGTH_BYTES].copy_from_slice(&length.to_be_bytes());
        // Write the header just in front of the records, in the room reserved for it.
        let mut batch = std::mem::take(&mut self.batch);
        batch.resize(batch.len().max(PUBLISH_HEADER_BYTES), 0);
        if batch.capacity() > 4 * batch.len() {
            // A frame is kept until acknowledged: a few records (a flush, a request) should
            // not hold a whole batch's room meanwhile.
            batch.shrink_to_fit();
        }
        let offset = PUBLISH_HEADER_BYTES - header.len();
        batch[offset..PUBLISH_HEADER_BYTES].copy_from_slice(&header);
        let bytes = Bytes::from(batch).slice(offset..);
        self.unacked_bytes += bytes.len();
        self.unacked
            .push_back((ack_id, bytes.clone(), self.batch_count));
        self.ready.push_back(Ready {
            bytes,
            publish: true,
        });
        self.batch = self
            .spares
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(BATCH_ROOM));
        self.batch_count = 0;
    }

    /// Keeps the room of `frame`, acknowledged, for a later batch: when nothing else holds
    /// the frame (it was written), it is a whole batch's room, and fewer than [`SPARES`]
    /// are kept.
    fn keep_room(&mut self, frame: Bytes) {
        if self.spares.len() >= SPARES {
            return;
        }
        let Ok(mut room) = frame.try_into_mut() else {
            return;
        };
        // Emptied first, so that taking the vector copies nothing.
        room.clear();
        let room = Vec::from(room);
        if room.capacity() >= BATCH_ROOM {
            self.spares.push(room);
        }
    }

    /// Appends a control frame, after the records published before it.
    pub fn push_frame(&mut self, frame: &Frame) {
        self.push_control(Bytes::from(frame.to_bytes()));
    }

    /// Queues an encoded control frame after the open batch, sealed first.
    fn push_control(&mut self, bytes: Bytes) {
        self.seal(None);
        self.control_bytes += bytes.len();
        self.ready.push_back(Ready {
            bytes,
            publish: false,
        });
    }

    /// Appends a request frame like [`Outbox::push_frame`], unless it is larger than the
    /// server accepts: a frame over the limit would make the server close the connection.
    ///
    /// # Errors
    /// [`ClientError::RequestTooLarge`], and nothing is queued.
    pub fn push_request(&mut self, frame: &Frame) -> Result<(), ClientError> {
        let bytes = frame.to_bytes();
        let size = bytes.len().saturating_sub(frame::LENGTH_BYTES);
        if size > self.max_frame_bytes {
            return Err(ClientError::RequestTooLarge {
                frame: frame.frame_type().name(),
                size,
                max: self.max_frame_bytes,
            });
        }
        self.push_control(Bytes::from(bytes));
        Ok(())
    }

    /// Seals the open batch and moves every frame waiting to `out`, in order.
    pub fn take(&mut self, out: &mut Vec<Bytes>) {
        self.seal(None);
        for ready in self.ready.drain(..) {
            if !ready.publish {
                self.control_bytes -= ready.bytes.len();
            }
            out.push(ready.bytes);
        }
    }

    /// Seals the open batch and takes every `PUBLISH` frame not acknowledged, oldest first
    /// (the frames not yet written among them): the client closes without a server, and
    /// its records go elsewhere (a logger's disk buffer).
    pub fn take_unacknowledged(&mut self) -> Vec<Bytes> {
        self.seal(None);
        self.ready.retain(|ready| !ready.publish);
        self.unacked_bytes = 0;
        self.unacked.drain(..).map(|(_, bytes, _)| bytes).collect()
    }

    /// Forgets the `PUBLISH` frames up to and including `ack_id`: the server has them.
    /// Acknowledgements come in order, because the server handles a connection's frames in
    /// order. Given the `count` the `ACK` carried, returns how many records of the
    /// acknowledged frame the server refused (sent, less routed); `None` if `ack_id` was not
    /// one of ours.
    pub fn acknowledge(&mut self, ack_id: u64, count: u64) -> Option<u64> {
        if !self.is_unacked(ack_id) {
            return None;
        }
        while let Some((id, bytes, records)) = self.unacked.pop_front() {
            self.unacked_bytes -= bytes.len();
            self.keep_room(bytes);
            if id == ack_id {
                return Some(u64::from(records).saturating_sub(count));
            }
        }
        Some(0)
    }

    /// Returns whether `ack_id` belongs to a `PUBLISH` frame not yet acknowledged.
    pub fn is_unacked(&self, ack_id: u64) -> bool {
        self.unacked.iter().any(|(id, ..)| *id == ack_id)
    }

    /// After a failover: drops the control frames not yet written (their requests failed)
    /// and queues `first` (e.g. the subscriptions to restore), then every unacknowledged
    /// `PUBLISH` frame again, oldest first, ahead of anything newer. Returns how many
    /// frames will be resent.
    pub fn rewind(&mut self, first: &[Frame], max_frame_bytes: usize) -> usize {
        self.seal(None);
        self.max_frame_bytes = max_frame_bytes;
        self.ready.clear();
        self.control_bytes = 0;
        for frame in first {
            let bytes = Bytes::from(frame.to_bytes());
            self.control_bytes += bytes.len();
            self.ready.push_back(Ready {
                bytes,
                publish: false,
            });
        }
        for (_, bytes, _) in &self.unacked {
            self.ready.push_back(Ready {
                bytes: bytes.clone(),
                publish: true,
            });
        }
        self.unacked.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herald_proto::frame::Publish;
    use herald_proto::Kind;

    fn outbox(max_frame_bytes: usize) -> Outbox {
        Outbox::new(
            max_frame_bytes,
            Arc::new(AtomicU64::new(1)),
            Numbering::new(1),
        )
    }

    fn taken(outbox: &mut Outbox) -> Vec<u8> {
        let mut frames = Vec::new();
        outbox.take(&mut frames);
        frames.concat()
    }

    fn frames(bytes: &[u8]) -> Vec<Frame> {
        let mut buffer = herald_proto::frame_buffer::FrameBuffer::new(1 << 20);
        buffer.spare().extend_from_slice(bytes);
        std::iter::from_fn(|| buffer.next_frame().unwrap())
            .map(|f| Frame::decode(f).unwrap())
            .collect()
    }

    fn publish(frame: &Frame) -> &Publish {
        match frame {
            Frame::Publish(publish) => publish,
            other => panic!("expected PUBLISH, got {other:?}"),
        }
    }

    #[test]
    fn an_acknowledged_full_frame_that_nothing_holds_gives_its_room_to_a_later_batch() {
        let mut outbox = outbox(1 << 20);
        let record = Record {
            text: "x".repeat(1000),
            ..Record::new(Kind::Log, "a")
        };
        // Two full batches sealed and written; the second still held by someone (a writer
        // that has not dropped it).
        let mut written = Vec::new();
        while outbox.unacked.len() < 2 {
            outbox.push_record(&record).unwrap();
        }
        outbox.take(&mut written);
        let (first_id, first_count) = (outbox.unacked[0].0, outbox.unacked[0].2);
        let first_ptr = outbox.unacked[0].1.as_ptr();
        let (second_id, second_count) = (outbox.unacked[1].0, outbox.unacked[1].2);
        let held = written.pop().unwrap();
        drop(written);
        assert_eq!(outbox.acknowledge(first_id, first_count.into()), Some(0));
        assert_eq!(outbox.spares.len(), 1, "the first frame's room is kept");
        assert_eq!(outbox.acknowledge(second_id, second_count.into()), Some(0));
        assert_eq!(outbox.spares.len(), 1, "a frame still held is not taken");
        drop(held);
        // The next batch after the open one is built in the kept room.
        let unacked = outbox.unacked.len();
        while outbox.unacked.len() == unacked {
            outbox.push_record(&record).unwrap();
        }
        assert!(outbox.spares.is_empty());
        let room = outbox.batch.as_ptr();
        // The kept room starts the frame's header bytes before where the frame started.
        let header = PUBLISH_HEADER_BYTES as isize;
        assert!((first_ptr as isize - room as isize).abs() <= header);
    }

    #[test]
    fn records_batch_until_a_control_frame_and_every_batch_asks_for_an_ack() {
        let mut outbox = outbox(1 << 20);
        let record = Record::new(Kind::Log, "a");
        outbox.push_record(&record).unwrap();
        outbox.push_record(&record).unwrap();
        outbox.push_frame(&Frame::Ping);
        outbox.push_record(&record).unwrap();
        let frames = frames(&taken(&mut outbox));
        assert_eq!(frames.len(), 3);
        assert_eq!(publish(&frames[0]).records.len(), 2);
        assert_eq!(
            (publish(&frames[0]).ack_id, publish(&frames[0]).ack),
            (1, AckLevel::Received)
        );
        assert_eq!(frames[1], Frame::Ping);
        assert_eq!(
            (
                publish(&frames[2]).records.len(),
                publish(&frames[2]).ack_id
            ),
            (1, 2)
        );
        assert!(
            outbox.len() > 0,
            "written but unacknowledged frames still count"
        );
        assert_eq!(outbox.acknowledge(2, 1), Some(0));
        assert_eq!(outbox.len(), 0, "an ack covers every earlier frame too");
        assert_eq!(outbox.acknowledge(1, 1), None);
    }

    #[test]
    fn rewind_resends_what_was_not_acknowledged_after_the_given_frames() {
        let mut outbox = outbox(1 << 20);
        let record = Record::new(Kind::Log, "a");
        for _ in 0..3 {
            outbox.push_record(&record).unwrap();
            outbox.seal(None);
        }
        taken(&mut outbox);
        assert_eq!(outbox.acknowledge(1, 0), Some(1));
        outbox.push_frame(&Frame::Monitor { cid: 9 });
        assert_eq!(outbox.rewind(&[Frame::Ping], 1 << 20), 2);
        let frames = frames(&taken(&mut outbox));
        assert_eq!(
            frames[0],
            Frame::Ping,
            "the restoring frames first; the MONITOR is dropped"
        );
        let acks: Vec<u64> = frames[1..].iter().map(|f| publish(f).ack_id).collect();
        assert_eq!(acks, [2, 3]);
    }

    #[test]
    fn numbers_taken_elsewhere_start_a_new_frame_and_numbered_batches_keep_theirs() {
        let numbering = Numbering::new(1);
        let mut outbox = Outbox::new(1 << 20, Arc::new(AtomicU64::new(1)), numbering.clone());
        let record = Record::new(Kind::Log, "a");
        outbox.push_record(&record).unwrap();
        assert_eq!(numbering.take(5).unwrap(), 2, "the disk buffer takes 2..=6");
        outbox.push_record(&record).unwrap();
        let mut encoded = Vec::new();
        record.encode(&mut encoded);
        outbox.push_numbered(&[&encoded, &encoded], 2, 99).unwrap();
        let frames = frames(&taken(&mut outbox));
        let firsts: Vec<(u64, usize)> = frames
            .iter()
            .map(|f| (publish(f).first_seq, publish(f).records.len()))
            .collect();
        assert_eq!(firsts, [(1, 1), (7, 1), (2, 2)]);
        assert_eq!(publish(&frames[2]).ack_id, 99);
    }

    #[test]
    fn big_batches_split_and_oversized_records_are_refused() {
        let mut outbox = outbox(4096);
        let record = Record {
            text: "x".repeat(1000),
            ..Record::new(Kind::Log, "a")
        };
        for _ in 0..10 {
            outbox.push_record(&record).unwrap();
        }
        let counts: Vec<usize> = frames(&taken(&mut outbox))
            .iter()
            .map(|f| publish(f).records.len())
            .collect();
        assert_eq!(counts.iter().sum::<usize>(), 10);
        assert!(counts.len() >= 3, "{counts:?}");
        let huge = Record {
            text: "x".repeat(5000),
            ..Record::new(Kind::Log, "a")
        };
        assert!(matches!(
            outbox.push_record(&huge),
            Err(ClientError::TooLarge { .. })
        ));
        let mut tiny = super::Outbox::new(16, Arc::new(AtomicU64::new(1)), Numbering::new(1));
        assert!(matches!(
            tiny.push_record(&record),
            Err(ClientError::TooLarge { max: 0, .. })
        ));
    }
}
