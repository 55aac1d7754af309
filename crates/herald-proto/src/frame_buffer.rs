//! Splitting a byte stream into frames, without doing the I/O: the server and the client
//! read from their sockets into [`FrameBuffer::spare`] and take whole frames out.
//!
//! Frames share the memory they were read into, so a buffer whose frames are still in use
//! (a subscriber has not taken its records yet) cannot be reused, and the next read needs
//! a new one. A client's buffer may keep a few such buffers aside
//! ([`FrameBuffer::with_spares`]) and read into one again once its frames are gone: a new
//! buffer of 64 KiB each time came in fresh pages from the system, which the kernel faulted
//! in and cleared as the socket was read into them (~15 % of a subscriber's time).

use std::collections::VecDeque;

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
    /// Buffers given up while their frames were in use, oldest first (empty handles that
    /// keep their memory's place), and how many may wait.
    spares: VecDeque<BytesMut>,
    most_spares: usize,
    /// Buffers made for lack of a free spare (for tests).
    made: u64,
}

impl FrameBuffer {
    /// Returns an empty buffer that refuses frames longer than `max_frame_bytes`.
    pub fn new(max_frame_bytes: u32) -> Self {
        Self::with_spares(max_frame_bytes, 0)
    }

    /// As [`FrameBuffer::new`], keeping up to `spares` buffers of 64 KiB whose frames are
    /// still in use, to read into again once they are not (at most `spares` × 64 KiB more
    /// memory held).
    pub fn with_spares(max_frame_bytes: u32, spares: usize) -> Self {
        FrameBuffer {
            buffer: BytesMut::with_capacity(INITIAL_CAPACITY),
            max_frame_bytes,
            spares: VecDeque::with_capacity(spares),
            most_spares: spares,
            made: 0,
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
            // In place when no frame uses the buffer any more (the bytes of a partial frame
            // move to its start); else, with spares, into one whose frames are gone.
            if self.most_spares == 0 || !self.reuse_spare() {
                self.buffer.reserve(INITIAL_CAPACITY);
            }
        }
        &mut self.buffer
    }

    /// Moves the bytes of the partial frame into a spare buffer that no frame uses any more
    /// (or a new one), parking the current buffer; false if the current one is free itself
    /// or the partial frame is too long for a spare.
    fn reuse_spare(&mut self) -> bool {
        let pending = self.buffer.len();
        if pending + MIN_SPARE > INITIAL_CAPACITY || self.buffer.try_reclaim(INITIAL_CAPACITY) {
            return false;
        }
        let free = self
            .spares
            .iter_mut()
            .position(|spare| spare.try_reclaim(INITIAL_CAPACITY));
        let mut next = match free.and_then(|at| self.spares.remove(at)) {
            Some(spare) => spare,
            None => {
                if self.spares.len() == self.most_spares {
                    // All still in use: the oldest goes when its frames do.
                    self.spares.pop_front();
                }
                self.made += 1;
                BytesMut::with_capacity(INITIAL_CAPACITY)
            }
        };
        next.extend_from_slice(&self.buffer);
        let mut parked = std::mem::replace(&mut self.buffer, next);
        parked.clear();
        self.spares.push_back(parked);
        true
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

    #[test]
    fn a_buffer_is_read_into_again_once_its_frames_are_gone() {
        let frame = Frame::Ok { cid: 7 }.to_bytes();
        let mut buffer = FrameBuffer::with_spares(1 << 20, 2);
        let mut held: Vec<Vec<Bytes>> = Vec::new();
        for _ in 0..200 {
            // A buffer's worth of whole frames; those of the last two rounds stay in use.
            while buffer.spare().capacity() - buffer.pending() >= MIN_SPARE + frame.len() {
                buffer.spare().extend_from_slice(&frame);
            }
            buffer.spare().extend_from_slice(&frame[..3]); // and a partial one
            let mut frames = Vec::new();
            while let Some(taken) = buffer.next_frame().unwrap() {
                frames.push(taken);
            }
            held.push(frames);
            if held.len() > 2 {
                held.remove(0);
            }
            buffer.spare().extend_from_slice(&frame[3..]);
        }
        // Three buffers go round (one read into, two with frames in use); without the
        // spares a new one was made every round.
        assert!(buffer.made <= 2, "{} buffers made", buffer.made);
        assert!(held.iter().flatten().all(|f| f[..] == frame[4..]));
        assert_eq!(buffer.next_frame().unwrap().as_deref(), Some(&frame[4..]));
    }
}
