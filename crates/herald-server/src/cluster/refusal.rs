//! How a route refusal reads: "route refused: " and the reason, in the `ERROR handshake`
//! sent to the other side and in the log, whichever side refused.

use herald_proto::{ErrorCode, ErrorFrame, Frame};

/// What every route refusal starts with.
pub const PREFIX: &str = "route refused: ";

/// The text of the `ERROR` that refuses a route for `reason`.
pub fn message(reason: &str) -> String {
    format!("{PREFIX}{reason}")
}

/// The `ERROR handshake` that refuses a route for `reason`.
pub fn frame(reason: &str) -> Frame {
    Frame::Error(ErrorFrame {
        cid: 0,
        code: ErrorCode::Handshake,
        message: message(reason),
    })
}

/// The reason in a refusal the other side sent (its message without the prefix).
pub fn reason(message: &str) -> &str {
    message.strip_prefix(PREFIX).unwrap_or(message)
}
