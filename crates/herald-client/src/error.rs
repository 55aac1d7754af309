//! Errors of the client, one enum per operation.

use std::time::Duration;

use herald_proto::{ErrorCode, FrameError};

use crate::url::UrlError;

/// Why `connect` failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The URL is malformed.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// No server in the URL could be reached; one line per server tried.
    #[error("no server could be reached: {}", .attempts.join("; "))]
    Unreachable {
        /// `server: why`, per server tried.
        attempts: Vec<String>,
    },
    /// The TLS settings could not be used: a CA, certificate or key file that is missing
    /// or not what it should be.
    #[error("TLS: {0}")]
    Tls(String),
    /// A server answered the handshake with an error.
    #[error("server {server} refused the connection: {message} ({})", .code.as_str())]
    Refused {
        /// The server.
        server: String,
        /// The server's error code.
        code: ErrorCode,
        /// The server's message.
        message: String,
    },
}

/// Why an operation on a connected client failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server sent an error for this request (the connection stays open).
    #[error("server error: {message} ({})", .code.as_str())]
    Server {
        /// Machine-readable code.
        code: ErrorCode,
        /// The server's message.
        message: String,
    },
    /// The connection is closed; the reason says why.
    #[error("connection closed: {0}")]
    Closed(String),
    /// The server stopped answering heartbeats.
    #[error("server silent for {} ms (heartbeat timeout); connection closed", .0.as_millis())]
    HeartbeatTimeout(Duration),
    /// The server sent bytes that are not a valid frame.
    #[error("server sent a bad frame: {0}")]
    BadFrame(#[from] FrameError),
    /// No answer within the time allowed.
    #[error("no answer within {} ms", .0.as_millis())]
    Timeout(Duration),
    /// A request had no subscriber to answer it within the timeout.
    #[error("no reply to the request on `{subject}` within {} ms", .timeout.as_millis())]
    NoReply {
        /// The request's subject.
        subject: String,
        /// The time waited.
        timeout: Duration,
    },
    /// The record cannot be sent as it is.
    #[error("invalid record: {0}")]
    InvalidRecord(String),
    /// The record is larger than the server accepts in one frame.
    #[error("record of {size} bytes exceeds the server's maximum frame of {max} bytes")]
    TooLarge {
        /// Encoded size.
        size: usize,
        /// Server's limit.
        max: usize,
    },
    /// A request is larger than the server accepts in one frame (e.g. a `get` of very many
    /// names); it was not sent.
    #[error("{frame} request of {size} bytes exceeds the server's maximum frame of {max} bytes")]
    RequestTooLarge {
        /// The frame type's name.
        frame: &'static str,
        /// Encoded size.
        size: usize,
        /// Server's limit.
        max: usize,
    },
    /// No number could be reserved for the record: the disk buffer that keeps the
    /// client's numbering could not write its state (the message says why); not sent.
    #[error("record numbers could not be reserved: {0}")]
    Numbering(String),
    /// The send buffer is full (only from `try_publish`).
    #[error("send buffer full ({0} bytes waiting)")]
    BufferFull(usize),
}
