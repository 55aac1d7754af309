//! Splitting a byte stream into frames, without doing the I/O: the server and the client
//! read from their sockets into [`FrameBuffer::spare`] and take whole frames out.

use bytes::{Bytes, BytesMut};

use crate::error::FrameError;
use crate::frame::{check_frame, LENGTH_BYTES};

/// Bytes read ahead of the next whole frame.
const INITIAL_CAPACITY: usize = 64 * 1024;
/// Free space kept available for the next read.
const MIN_SPARE: usize = 4096;

/// Bytes received and not yet taken as frames.
#[derive(Debug)]
pub struct FrameBuffer {
    buffer: BytesMut,
    max_frame_bytes: u32,
}

impl FrameBuffer {
    /// Returns an empty buffer that refuses frames longer than `max_frame_bytes`.
    pub fn new(max_frame_bytes: u32) -> Self {
        FrameBuffer {
            buffer: BytesMut::with_capacity(INITIAL_CAPACITY),
            max_frame_bytes,
        }
    }

    /// Takes the next whole frame (type byte and body), or `None` if more bytes are needed.
    /// The frame shares memory with the buffer; nothing is copied.
    ///
    /// # Errors
    /// [`FrameError`] for a bad length prefix.
    pub fn next_frame(&mut self) -> Result<Option<Bytes>, FrameError> {
        let Some(total) = check_frame(&self.buffer, self.max_frame_bytes)? else {
            return Ok(None);
        };
        let mut frame = self.buffer.split_to(total);
        let _prefix = frame.split_to(LENGTH_BYTES);
        Ok(Some(frame.freeze()))
    }

    /// Returns the buffer to read more bytes into, with room for at least one read.
    pub fn spare(&mut self) -> &mut BytesMut {
        if self.buffer.capacity() - self.buffer.len() < MIN_SPARE {
            self.buffer.reserve(INITIAL_CAPACITY);
        }
        &mut self.buffer
    }

    /// Returns how many bytes wait for the rest of their frame.
    pub fn pending(&self) -> usize {
        self.buffer.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::Frame;

    #[test]
    fn frames_split_anywhere_come_out_whole() {
        let mut stream = Frame::Ping.to_bytes();
        stream.extend(Frame::Ok { cid: 300 }.to_bytes());
        for cut in 0..stream.len() {
            let mut buffer = FrameBuffer::new(1024);
            let mut frames = Vec::new();
            for part in [&stream[..cut], &stream[cut..]] {
                buffer.spare().extend_from_slice(part);
                while let Some(frame) = buffer.next_frame().unwrap() {
                    frames.push(Frame::decode(frame).unwrap());
                }
            }
            assert_eq!(
                frames,
                [Frame::Ping, Frame::Ok { cid: 300 }],
                "cut at {cut}"
            );
            assert_eq!(buffer.pending(), 0);
        }
    }
}
