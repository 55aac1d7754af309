//! [`CuttableStream`]: an HTTP connection the server can cut at the end of its shutdown
//! grace period, and [`PeerAddr`], its remote address.
//!
//! Graceful shutdown waits for every request in flight, and a client that never finishes
//! its request would hold it up forever. So each socket is wrapped in a [`CuttableStream`]:
//! once the cut signal is sent, every read and write fails, hyper drops the connection, and
//! the serve future can end.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::watch;

/// The remote address of an HTTP connection, for handlers that name their peer (the
/// WebSocket routes register it with the monitor), put in each request's extensions as
/// `ConnectInfo<PeerAddr>` by [`serve`](super::serve).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddr(pub SocketAddr);

/// The name in the client certificate of an HTTPS connection (mutual TLS), put in each
/// request's extensions when the client presented one; [`caller`](super::caller) takes it
/// as the identity when no token is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCertificate(pub String);

type CutFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A TCP stream whose reads and writes fail once the cut signal is sent.
pub struct CuttableStream {
    inner: TcpStream,
    /// Completes at the cut; `None` once it has (a finished future must not be polled).
    cut: Option<CutFuture>,
}

impl std::fmt::Debug for CuttableStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CuttableStream")
            .field("inner", &self.inner)
            .field("cut", &self.cut.is_none())
            .finish()
    }
}

impl CuttableStream {
    /// Wraps `inner`; `cut` is the signal that ends the connection.
    pub fn new(inner: TcpStream, mut cut: watch::Receiver<bool>) -> Self {
        let cut: CutFuture = Box::pin(async move {
            // An error means the server is gone: a cut too.
            let _ = cut.wait_for(|cut| *cut).await;
        });
        CuttableStream {
            inner,
            cut: Some(cut),
        }
    }

    /// Fails once the cut has come; otherwise registers the waker, so that a read or write
    /// waiting on the socket wakes up at the cut.
    fn check(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        if let Some(cut) = self.cut.as_mut() {
            if cut.as_mut().poll(cx).is_pending() {
                return Ok(());
            }
            self.cut = None;
        }
        Err(io::Error::new(
            io::ErrorKind::ConnectionAborted,
            "the server is shutting down",
        ))
    }
}

impl AsyncRead for CuttableStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.check(cx)?;
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for CuttableStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.check(cx)?;
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.check(cx)?;
        Pin::new(&mut this.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.check(cx)?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn a_waiting_read_fails_at_the_cut() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let (cut, receiver) = watch::channel(false);
        let addr = listener.local_addr().unwrap();
        let mut client = TcpStream::connect(addr).await.unwrap();
        let (accepted, _) = listener.accept().await.unwrap();
        let mut server_side = CuttableStream::new(accepted, receiver);
        client.write_all(b"x").await.unwrap();
        let mut byte = [0; 1];
        server_side.read_exact(&mut byte).await.unwrap();
        let waiting = tokio::spawn(async move { server_side.read(&mut byte).await });
        cut.send(true).unwrap();
        let err = waiting.await.unwrap().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionAborted);
    }
}
