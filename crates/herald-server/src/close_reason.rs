//! [`CloseReason`]: why a connection ended. Below the monitor, which counts each reason,
//! and the events (`events.rs`, which re-exports it), which log and count a close.

/// Why a connection ended; the monitor counts each reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseReason {
    /// The client closed the socket.
    ClientClosed,
    /// The client sent a frame that could not be decoded or was not allowed.
    ProtocolError,
    /// The client sent a frame over the size limit.
    FrameTooLarge,
    /// The client did not complete the handshake in time.
    HandshakeTimeout,
    /// The client stopped answering heartbeats.
    HeartbeatTimeout,
    /// Reading or writing the socket failed.
    IoError,
    /// The server is shutting down.
    ServerShutdown,
    /// The connection limit was reached.
    TooManyConnections,
    /// A subscription with policy `disconnect` fell behind.
    SlowConsumer,
    /// No token, or an unknown one, where the server needs one.
    Unauthorized,
    /// The connection's identity was revoked (or its permissions changed).
    Revoked,
    /// The TLS handshake failed or timed out, or the client did not speak TLS.
    TlsFailed,
}

impl CloseReason {
    /// Every reason, in the order of [`CloseReason::index`].
    pub const ALL: [CloseReason; 12] = [
        CloseReason::ClientClosed,
        CloseReason::ProtocolError,
        CloseReason::FrameTooLarge,
        CloseReason::HandshakeTimeout,
        CloseReason::HeartbeatTimeout,
        CloseReason::IoError,
        CloseReason::ServerShutdown,
        CloseReason::TooManyConnections,
        CloseReason::SlowConsumer,
        CloseReason::Unauthorized,
        CloseReason::Revoked,
        CloseReason::TlsFailed,
    ];

    /// Returns the snake-case name used by the monitor.
    pub fn name(self) -> &'static str {
        match self {
            CloseReason::ClientClosed => "client_closed",
            CloseReason::ProtocolError => "protocol_error",
            CloseReason::FrameTooLarge => "frame_too_large",
            CloseReason::HandshakeTimeout => "handshake_timeout",
            CloseReason::HeartbeatTimeout => "heartbeat_timeout",
            CloseReason::IoError => "io_error",
            CloseReason::ServerShutdown => "server_shutdown",
            CloseReason::TooManyConnections => "too_many_connections",
            CloseReason::SlowConsumer => "slow_consumer",
            CloseReason::Unauthorized => "unauthorized",
            CloseReason::Revoked => "revoked",
            CloseReason::TlsFailed => "tls_failed",
        }
    }

    /// Returns the position of this reason in [`CloseReason::ALL`].
    pub fn index(self) -> usize {
        CloseReason::ALL
            .iter()
            .position(|r| *r == self)
            .unwrap_or(0)
    }
}
