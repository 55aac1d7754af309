//! Frames waiting to be written. Records are encoded straight into the open `PUBLISH` batch,
//! so publishing costs one encode and no allocation once the buffers are warm.

use herald_proto::frame::{self, FrameType};
use herald_proto::{AckLevel, Frame, Record};

use crate::error::ClientError;

/// Size at which the open batch is sealed into a frame.
pub const BATCH_BYTES: usize = 64 * 1024;
/// Bytes the outbox may hold before `publish` waits (and `try_publish` fails).
pub const DEFAULT_OUTBOX_BYTES: usize = 8 * 1024 * 1024;
/// Room kept for the `PUBLISH` header in a frame.
const PUBLISH_HEADER_BYTES: usize = 32;

/// Encoded frames and the open batch of records.
#[derive(Debug, Default)]
pub struct Outbox {
    ready: Vec<u8>,
    batch: Vec<u8>,
    batch_count: u32,
    max_frame_bytes: usize,
}

impl Outbox {
    /// Returns an empty outbox for a server that accepts frames up to `max_frame_bytes`.
    pub fn new(max_frame_bytes: usize) -> Self {
        Outbox {
            max_frame_bytes,
            ..Outbox::default()
        }
    }

    /// Returns the bytes waiting.
    pub fn len(&self) -> usize {
        self.ready.len() + self.batch.len()
    }

    /// Encodes `record` into the open batch.
    ///
    /// # Errors
    /// [`ClientError::TooLarge`] if the record alone cannot fit a frame.
    pub fn push_record(&mut self, record: &Record) -> Result<(), ClientError> {
        let start = self.batch.len();
        record.encode(&mut self.batch);
        let size = self.batch.len() - start;
        // Saturating: the limit comes from the server's WELCOME, which may be absurdly small.
        let max = self.max_frame_bytes.saturating_sub(PUBLISH_HEADER_BYTES);
        if size > max {
            self.batch.truncate(start);
            return Err(ClientError::TooLarge { size, max });
        }
        if self.batch.len() > max || start >= BATCH_BYTES {
            // Seal what came before this record; it opens the next batch.
            let tail = self.batch.split_off(start);
            self.seal(0, AckLevel::None);
            self.batch = tail;
        }
        self.batch_count += 1;
        Ok(())
    }

    /// Turns the open batch (even an empty one, when an acknowledgement is asked) into a
    /// `PUBLISH` frame.
    pub fn seal(&mut self, ack_id: u64, ack: AckLevel) {
        if self.batch_count == 0 && ack == AckLevel::None {
            return;
        }
        let start = frame::begin_frame(&mut self.ready, FrameType::Publish);
        frame::write_publish_header(&mut self.ready, ack_id, ack, self.batch_count);
        self.ready.extend_from_slice(&self.batch);
        frame::end_frame(&mut self.ready, start);
        self.batch.clear();
        self.batch_count = 0;
    }

    /// Appends a control frame, after the records published before it.
    pub fn push_frame(&mut self, frame: &Frame) {
        self.seal(0, AckLevel::None);
        frame.encode(&mut self.ready);
    }

    /// Seals the open batch and swaps everything waiting into `out` (which must be empty).
    pub fn take(&mut self, out: &mut Vec<u8>) {
        debug_assert!(out.is_empty());
        self.seal(0, AckLevel::None);
        std::mem::swap(&mut self.ready, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use herald_proto::Kind;

    fn frames(bytes: &[u8]) -> Vec<Frame> {
        let mut buffer = herald_proto::frame_buffer::FrameBuffer::new(1 << 20);
        buffer.spare().extend_from_slice(bytes);
        std::iter::from_fn(|| buffer.next_frame().unwrap())
            .map(|f| Frame::decode(f).unwrap())
            .collect()
    }

    #[test]
    fn records_batch_until_a_control_frame() {
        let mut outbox = Outbox::new(1 << 20);
        let record = Record::new(Kind::Log, "a");
        outbox.push_record(&record).unwrap();
        outbox.push_record(&record).unwrap();
        outbox.push_frame(&Frame::Ping);
        outbox.push_record(&record).unwrap();
        let mut out = Vec::new();
        outbox.take(&mut out);
        let frames = frames(&out);
        assert_eq!(frames.len(), 3);
        assert!(matches!(&frames[0], Frame::Publish(p) if p.records.len() == 2));
        assert_eq!(frames[1], Frame::Ping);
        assert!(matches!(&frames[2], Frame::Publish(p) if p.records.len() == 1));
        assert_eq!(outbox.len(), 0);
    }

    #[test]
    fn big_batches_split_and_oversized_records_are_refused() {
        let mut outbox = Outbox::new(4096);
        let record = Record {
            text: "x".repeat(1000),
            ..Record::new(Kind::Log, "a")
        };
        for _ in 0..10 {
            outbox.push_record(&record).unwrap();
        }
        let mut out = Vec::new();
        outbox.take(&mut out);
        let counts: Vec<usize> = frames(&out)
            .iter()
            .map(|f| match f {
                Frame::Publish(p) => p.records.len(),
                _ => 0,
            })
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
        let mut tiny = Outbox::new(16);
        assert!(matches!(
            tiny.push_record(&record),
            Err(ClientError::TooLarge { max: 0, .. })
        ));
        let _ = Bytes::new();
    }
}
