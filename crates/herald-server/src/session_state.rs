//! What the commands of one connection act on: the session's state ([`Session`]), and why
//! a session ends ([`Close`]). Below both the session's loop (`session.rs`) and the commands
//! (`command/`), so that neither imports the other's caller.

use std::sync::Arc;

use herald_proto::{ErrorCode, ErrorFrame, Frame};
use herald_router::RouteContext;
use tokio::sync::mpsc;

use crate::auth::Access;
use crate::events::CloseReason;
use crate::monitor::ConnectionState;
use crate::shared::Shared;

/// Why a session ends, and what to tell the client first.
#[derive(Debug)]
pub struct Close {
    /// The reason the monitor counts.
    pub reason: CloseReason,
    /// The error frame to send, if any.
    pub error: Option<ErrorFrame>,
    /// The peer spoke HTTP: answer in HTTP, which its tools can show, not with a frame.
    pub http: bool,
}

impl Close {
    /// Closes with `reason` after sending an error frame with `code` and `message`.
    pub fn with_error(reason: CloseReason, code: ErrorCode, message: impl Into<String>) -> Close {
        Close {
            http: false,
            reason,
            error: Some(ErrorFrame {
                cid: 0,
                code,
                message: message.into(),
            }),
        }
    }

    /// Closes quietly.
    pub fn quiet(reason: CloseReason) -> Close {
        Close {
            reason,
            error: None,
            http: false,
        }
    }
}

/// The state of one handshaken session, handed to each command.
pub struct Session {
    /// Server-wide state.
    pub shared: Arc<Shared>,
    /// This connection's state, shared with its writer and the monitor.
    pub state: Arc<ConnectionState>,
    /// Frames for the writer.
    pub replies: mpsc::Sender<Frame>,
    /// This publisher's match cache and scratch space.
    pub route: RouteContext,
    /// Turns for archive queries: a connection has at most [`QUERIES_AT_ONCE`] read at once.
    pub queries: Arc<tokio::sync::Semaphore>,
    /// What the connection's identity may do.
    pub access: Access,
    /// The producer id the client gave in `HELLO` (0: it does not number its records).
    pub producer: u64,
    /// Acknowledgements waiting for cluster routes, in order.
    pub acks: crate::acks::AckOrder,
    /// Scratch space: what became of each record of a numbered batch.
    pub fates: Vec<crate::producers::Fate>,
    /// When the connection feeds this server as a mirror (it sent `MIRROR`): what it feeds.
    pub feed: Option<crate::mirror::feed_state::FeedState>,
}

/// Archive queries of one connection read at once; more wait their turn.
pub const QUERIES_AT_ONCE: usize = 4;

impl Session {
    /// Queues `frame` for the writer. If the writer is gone the connection is closing anyway.
    pub async fn reply(&self, frame: Frame) {
        let _ = self.replies.send(frame).await;
    }
}
