//! Reading frames from a socket: check, then parse; a partial frame waits for more bytes.

use bytes::Bytes;
use herald_proto::frame_buffer::FrameBuffer;
use herald_proto::FrameError;
use tokio::io::{AsyncRead, AsyncReadExt};

/// Why no frame could be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The bytes do not form a frame.
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// The peer closed the connection in the middle of a frame.
    #[error("connection closed in the middle of a frame ({0} bytes pending)")]
    Truncated(usize),
    /// The socket failed.
    #[error("read failed: {0}")]
    Io(#[from] std::io::Error),
}

/// The read half of a connection, yielding whole frames.
#[derive(Debug)]
pub struct FrameReader<R> {
    read: R,
    buffer: FrameBuffer,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// Wraps `read`, refusing frames longer than `max_frame_bytes`.
    pub fn new(read: R, max_frame_bytes: u32) -> Self {
        FrameReader {
            read,
            buffer: FrameBuffer::new(max_frame_bytes),
        }
    }

    /// Returns the next frame (type byte and body, without the length prefix), or `None`
    /// when the peer closed the connection between frames. Cancel-safe: bytes read before
    /// a cancellation stay in the buffer.
    ///
    /// # Errors
    /// [`ReadError`] for a bad frame, a close mid-frame, or a socket error.
    pub async fn read_frame(&mut self) -> Result<Option<Bytes>, ReadError> {
        loop {
            if let Some(frame) = self.buffer.next_frame()? {
                return Ok(Some(frame));
            }
            if self.read.read_buf(self.buffer.spare()).await? == 0 {
                return match self.buffer.pending() {
                    0 => Ok(None),
                    pending => Err(ReadError::Truncated(pending)),
                };
            }
        }
    }
}
