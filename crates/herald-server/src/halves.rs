//! A connection as two boxed halves, plain TCP and TLS alike: what a cluster route and a
//! mirror feed read from and write to.

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

/// A connection's reading half.
pub type Reading = Box<dyn AsyncRead + Send + Unpin>;
/// A connection's writing half.
pub type Writing = Box<dyn AsyncWrite + Send + Unpin>;

/// The halves of a plain TCP connection.
pub fn plain(stream: TcpStream) -> (Reading, Writing) {
    let (read, write) = stream.into_split();
    (Box::new(read), Box::new(write))
}

/// The halves of any other stream (a TLS session).
pub fn of<S: AsyncRead + AsyncWrite + Send + Unpin + 'static>(stream: S) -> (Reading, Writing) {
    let (read, write) = tokio::io::split(stream);
    (Box::new(read), Box::new(write))
}
