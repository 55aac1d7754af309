//! The server's side of one TLS handshake, on either front door: a first look at the
//! client's first byte (a client that speaks plain TCP or HTTP to a TLS port is told so in
//! its own terms), the handshake within the deadline, and the name in the client's
//! certificate, if it presented one.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

use super::peer;

/// The first byte of every TLS connection: a handshake record.
const TLS_HANDSHAKE_RECORD: u8 = 0x16;

/// Why a connection did not become a TLS session.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The client spoke something else first (it was told so).
    #[error("the client does not speak TLS (first byte {0:#04x}); it was told to")]
    NotTls(u8),
    /// The handshake failed: no common version or cipher, a certificate the client CA did
    /// not sign, or no certificate where one is required.
    #[error("TLS handshake failed: {0}")]
    Handshake(std::io::Error),
    /// The client did not finish the handshake in time.
    #[error("no TLS handshake within {} ms", .0.as_millis())]
    Timeout(Duration),
}

/// Completes the TLS handshake on `stream` within `timeout`. A client whose first byte is
/// not TLS gets `plain_answer` (an error in the protocol it speaks) and the connection ends.
/// `wrap` turns the socket into what the session reads (the HTTP side makes it cuttable).
/// Returns the session and the name its client certificate presents.
///
/// # Errors
/// [`Failure`].
pub async fn accept<IO, F>(
    acceptor: TlsAcceptor,
    mut stream: TcpStream,
    wrap: F,
    plain_answer: &[u8],
    timeout: Duration,
) -> Result<(TlsStream<IO>, Option<String>), Failure>
where
    IO: AsyncRead + AsyncWrite + Unpin,
    F: FnOnce(TcpStream) -> IO,
{
    let handshake = async move {
        let mut first = [0u8; 1];
        let peeked = stream.peek(&mut first).await.map_err(Failure::Handshake)?;
        if peeked == 1 && first[0] != TLS_HANDSHAKE_RECORD {
            let _ = stream.write_all(plain_answer).await;
            let _ = stream.shutdown().await;
            return Err(Failure::NotTls(first[0]));
        }
        let session = acceptor
            .accept(wrap(stream))
            .await
            .map_err(Failure::Handshake)?;
        let name = session
            .get_ref()
            .1
            .peer_certificates()
            .and_then(|chain| chain.first())
            .and_then(peer::certificate_name);
        Ok((session, name))
    };
    tokio::time::timeout(timeout, handshake)
        .await
        .map_err(|_| Failure::Timeout(timeout))?
}
