//! The syslog sockets, UDP (read in `udp.rs`) and TCP with RFC 6587 framing — octet
//! counting (`LEN SP MSG`) when a frame starts with a digit, else one message per line
//! (LF, CR LF or NUL) — told apart frame by frame, as rsyslog does.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::{Buf, BytesMut};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream, UdpSocket};

use super::{Ingest, SyslogStats};
use crate::config::SyslogConfig;
use crate::shared::Shared;
use crate::shutdown::Shutdown;

/// The UDP receive buffer asked for: bursts of datagrams wait here while records are
/// routed (the kernel caps it at `net.core.rmem_max`).
const UDP_RECEIVE_BUFFER: usize = 8 << 20;
/// Digits of an octet count at most (a count of 16 MiB has 8).
const MAX_COUNT_DIGITS: usize = 8;

/// The bound sockets, before the server's state exists.
#[derive(Debug)]
pub struct Sockets {
    /// The UDP socket, if configured.
    pub udp: Option<UdpSocket>,
    /// The TCP listener, if configured.
    pub tcp: Option<TcpListener>,
}

/// Binds the configured sockets.
///
/// # Errors
/// An address that cannot be bound, named.
pub async fn bind(config: &SyslogConfig) -> std::io::Result<Sockets> {
    let named = |what: &'static str, addr: SocketAddr| {
        move |err: std::io::Error| {
            std::io::Error::new(
                err.kind(),
                format!("cannot listen for syslog over {what} on {addr}: {err}"),
            )
        }
    };
    let udp = match config.udp {
        Some(addr) => {
            let socket = UdpSocket::bind(addr).await.map_err(named("UDP", addr))?;
            let sock = socket2::SockRef::from(&socket);
            let _ = sock.set_recv_buffer_size(UDP_RECEIVE_BUFFER);
            let size = sock.recv_buffer_size().unwrap_or(0);
            if size < UDP_RECEIVE_BUFFER {
                tracing::info!(
                    bytes = size,
                    "syslog: the UDP receive buffer is capped by net.core.rmem_max; raise it \
                     for bursts (packets the kernel drops are counted as syslog.udp_dropped)"
                );
            }
            Some(socket)
        }
        None => None,
    };
    let tcp = match config.tcp {
        Some(addr) => Some(TcpListener::bind(addr).await.map_err(named("TCP", addr))?),
        None => None,
    };
    Ok(Sockets { udp, tcp })
}

/// Returns the addresses of `sockets`, for the counters.
pub fn addresses_of(sockets: &Sockets) -> super::Addresses {
    super::Addresses {
        udp: sockets.udp.as_ref().and_then(|s| s.local_addr().ok()),
        udp_inode: sockets.udp.as_ref().and_then(super::udp::socket_inode),
        tcp: sockets.tcp.as_ref().and_then(|s| s.local_addr().ok()),
    }
}

/// Accepts syslog connections until `stop` (a reload, or the server's shutdown), then gives
/// the listener back; the connections open go on until the server's `shutdown`.
pub async fn accept(
    listener: TcpListener,
    shared: Arc<Shared>,
    stats: Arc<SyslogStats>,
    max: usize,
    mut stop: Shutdown,
    shutdown: Shutdown,
) -> TcpListener {
    // syslog connections have limits of their own, as many as the native port's.
    let limit = Arc::clone(&shared.syslog_connections);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(got) => got,
                Err(err) => {
                    tracing::warn!(error = %err, "syslog: TCP accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = stop.recv() => return listener,
        };
        let permit = match limit.try_acquire(peer.ip()) {
            Ok(permit) => permit,
            Err(refusal) => {
                stats.refused.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(%peer, %refusal, "syslog: TCP connection refused");
                drop(stream);
                continue;
            }
        };
        stats.connections.fetch_add(1, Ordering::Relaxed);
        let ingest = Ingest::new(Arc::clone(&shared), Arc::clone(&stats));
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            connection(stream, peer, ingest, max, shutdown).await;
            drop(permit);
        });
    }
}

async fn connection(
    mut stream: TcpStream,
    peer: SocketAddr,
    mut ingest: Ingest,
    max: usize,
    mut shutdown: Shutdown,
) {
    let peer = peer.ip().to_string();
    let mut framer = Framer::new(max);
    let mut buffer = BytesMut::with_capacity(64 * 1024);
    loop {
        let read = tokio::select! {
            read = stream.read_buf(&mut buffer) => read,
            () = shutdown.recv() => break,
        };
        let ended = !matches!(read, Ok(n) if n > 0);
        framer.frames(&mut buffer, ended, |frame| match frame {
            Frame::Message(bytes) => ingest.message(bytes, &peer),
            Frame::Bad(why, bytes) => ingest.stats.bad(&peer, &why, bytes),
        });
        ingest.flush().await;
        if ended {
            break;
        }
    }
}

/// What the framer found.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A message.
    Message(&'a [u8]),
    /// Bad input: why, and (the start of) what it was.
    Bad(String, &'a [u8]),
}

/// Cuts a TCP stream into messages (RFC 6587).
#[derive(Debug)]
pub struct Framer {
    max: usize,
    /// Bytes still to skip of a frame too long to take.
    skipping: usize,
    /// Skipping a line too long to take, up to its end.
    skipping_line: bool,
}

impl Framer {
    /// Returns a framer taking messages of up to `max` bytes.
    pub fn new(max: usize) -> Framer {
        Framer {
            max,
            skipping: 0,
            skipping_line: false,
        }
    }

    /// Takes every whole frame from `buffer` (and, once the stream `ended`, what is left).
    pub fn frames(&mut self, buffer: &mut BytesMut, ended: bool, mut found: impl FnMut(Frame<'_>)) {
        loop {
            if self.skipping > 0 {
                let skip = self.skipping.min(buffer.len());
                buffer.advance(skip);
                self.skipping -= skip;
                if self.skipping > 0 {
                    return;
                }
            }
            if self.skipping_line {
                match buffer.iter().position(|b| matches!(b, b'\n' | b'\0')) {
                    Some(end) => {
                        buffer.advance(end + 1);
                        self.skipping_line = false;
                    }
                    None => {
                        buffer.clear();
                        return;
                    }
                }
            }
            // Blank lines between frames are nothing.
            let blank = buffer
                .iter()
                .take_while(|b| matches!(b, b'\n' | b'\r' | b'\0' | b' '))
                .count();
            buffer.advance(blank);
            let Some(first) = buffer.first().copied() else {
                return;
            };
            if first.is_ascii_digit() {
                let digits = buffer.iter().take_while(|b| b.is_ascii_digit()).count();
                if digits == buffer.len() && digits <= MAX_COUNT_DIGITS && !ended {
                    return; // the count goes on in the next read
                }
                let count = std::str::from_utf8(&buffer[..digits])
                    .ok()
                    .and_then(|d| d.parse::<usize>().ok())
                    .filter(|_| digits <= MAX_COUNT_DIGITS && buffer.get(digits) == Some(&b' '));
                let Some(count) = count else {
                    let end = buffer.len().min(digits + 1);
                    found(Frame::Bad(
                        "an octet count that is not 1 to 8 digits and a space".into(),
                        &buffer[..end],
                    ));
                    self.skipping_line = true;
                    continue;
                };
                if count > self.max {
                    let why = format!(
                        "a frame of {count} bytes, longer than max_message_bytes ({})",
                        self.max
                    );
                    // The sample is the message's start (what is read of it), not its count.
                    found(Frame::Bad(why, &buffer[digits + 1..]));
                    buffer.advance(digits + 1);
                    self.skipping = count;
                    continue;
                }
                if buffer.len() < digits + 1 + count {
                    if ended {
                        let why = format!("the stream ended inside a frame of {count} bytes");
                        found(Frame::Bad(why, &buffer[digits + 1..]));
                        buffer.clear();
                    }
                    return;
                }
                found(Frame::Message(&buffer[digits + 1..digits + 1 + count]));
                buffer.advance(digits + 1 + count);
            } else {
                match buffer.iter().position(|b| matches!(b, b'\n' | b'\0')) {
                    Some(end) if end <= self.max => {
                        found(Frame::Message(&buffer[..end]));
                        buffer.advance(end + 1);
                    }
                    None if buffer.len() <= self.max => {
                        if ended {
                            found(Frame::Message(&buffer[..]));
                            buffer.clear();
                        }
                        return;
                    }
                    _ => {
                        let why = format!("a line longer than max_message_bytes ({})", self.max);
                        found(Frame::Bad(why, &buffer[..self.max.min(buffer.len())]));
                        self.skipping_line = true;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(framer: &mut Framer, input: &[u8], ended: bool) -> (Vec<String>, usize) {
        let mut buffer = BytesMut::from(input);
        let mut out = Vec::new();
        framer.frames(&mut buffer, ended, |frame| {
            out.push(match frame {
                Frame::Message(m) => String::from_utf8_lossy(m).into_owned(),
                Frame::Bad(why, _) => format!("BAD {why}"),
            });
        });
        (out, buffer.len())
    }

    #[test]
    fn octet_counted_and_newline_frames_mix() {
        let mut framer = Framer::new(100);
        let (out, left) = frames(
            &mut framer,
            b"5 <1>ab<2>cd\n\n6 <3>e\nf<4>g\r\n9 <5>",
            false,
        );
        assert_eq!(out, ["<1>ab", "<2>cd", "<3>e\nf", "<4>g\r"]);
        assert_eq!(left, 5, "the last frame waits for its bytes");
        let (out, _) = frames(&mut framer, b"<6>no newline at the end", true);
        assert_eq!(out, ["<6>no newline at the end"]);
    }

    #[test]
    fn frames_too_long_are_bad_and_skipped_whole() {
        let mut framer = Framer::new(10);
        let (out, left) = frames(&mut framer, b"20 0123456789", false);
        assert_eq!(
            out,
            ["BAD a frame of 20 bytes, longer than max_message_bytes (10)"]
        );
        assert_eq!(left, 0);
        // The sample kept is the message's start, not its octet count.
        let mut samples = Vec::new();
        let mut buffer = BytesMut::from(&b"20 0123456789"[..]);
        Framer::new(10).frames(&mut buffer, false, |frame| {
            if let Frame::Bad(_, sample) = frame {
                samples.push(sample.to_vec());
            }
        });
        assert_eq!(samples, [b"0123456789".to_vec()]);
        let (out, _) = frames(&mut framer, b"0123456789<1>ok\n", false);
        assert_eq!(out, ["<1>ok"]);
        let (out, _) = frames(&mut framer, b"<1>this line is too long\n<2>next\n", false);
        assert_eq!(out[0], "BAD a line longer than max_message_bytes (10)");
        assert_eq!(out[1], "<2>next");
        let (out, _) = frames(&mut framer, b"123456789012 x\n<3>z\n", false);
        assert!(out[0].starts_with("BAD an octet count"), "{out:?}");
        assert_eq!(out[1], "<3>z");
    }
}
