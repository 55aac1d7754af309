//! The byte stream to one server, plain TCP or TLS, as the two halves the connection's
//! reader and writer tasks own.

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

use crate::tls::Tls;

/// The half the reader task owns.
pub(crate) type ReadHalf = Box<dyn AsyncRead + Send + Unpin>;
/// The half the writer task owns.
pub(crate) type WriteHalf = Box<dyn AsyncWrite + Send + Unpin>;

/// An open stream to one server.
pub(crate) struct Transport {
    /// Bytes from the server.
    pub(crate) read: ReadHalf,
    /// Bytes to the server.
    pub(crate) write: WriteHalf,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport").finish_non_exhaustive()
    }
}

impl Transport {
    /// Connects to `server` (`host:port`), over TLS when `tls` is given.
    ///
    /// # Errors
    /// Why the server could not be reached or the TLS handshake failed.
    pub(crate) async fn open(server: &str, tls: Option<&Tls>) -> Result<Transport, String> {
        let stream = TcpStream::connect(server)
            .await
            .map_err(|e| e.to_string())?;
        let _ = stream.set_nodelay(true);
        let Some(tls) = tls else {
            let (read, write) = stream.into_split();
            return Ok(Transport {
                read: Box::new(read),
                write: Box::new(write),
            });
        };
        let stream = tls.connect(server, stream).await?;
        let (read, write) = tokio::io::split(stream);
        Ok(Transport {
            read: Box::new(read),
            write: Box::new(write),
        })
    }
}
