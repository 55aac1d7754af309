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

/// Reads what is there into `buffer`; 0 at the end of the stream. A TLS peer that closes
/// its socket without TLS's close_notify ends the stream too (rustls reports that as
/// `UnexpectedEof`): frames carry their length, so a cut inside one is still seen.
async fn read_some<R: AsyncRead + Unpin>(
    read: &mut R,
    buffer: &mut bytes::BytesMut,
) -> std::io::Result<usize> {
    match read.read_buf(buffer).await {
        Err(err) if err.kind() == std::io::ErrorKind::UnexpectedEof => Ok(0),
        other => other,
    }
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
            if read_some(&mut self.read, self.buffer.spare()).await? == 0 {
                return match self.buffer.pending() {
                    0 => Ok(None),
                    pending => Err(ReadError::Truncated(pending)),
                };
            }
        }
    }
}
