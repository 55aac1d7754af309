//! One file per client operation: each applies a decoded frame to the session and queues
//! the reply (mini-redis `cmd/`).

pub(crate) mod info;
mod monitor;
mod publish;
mod query;
pub(crate) mod subscribe;
mod unsubscribe;

use herald_proto::{ErrorCode, Frame};

use crate::events::CloseReason;
use crate::session::{Close, Session};

/// Applies one frame from the client.
///
/// # Errors
/// A [`Close`] when the frame ends the connection: a frame only the server may send, a
/// second `HELLO`, or an error frame from the client.
pub async fn apply(session: &mut Session, frame: Frame) -> Result<(), Close> {
    match frame {
        Frame::Publish(publish) => publish::apply(session, publish).await,
        Frame::Subscribe(subscribe) => subscribe::apply(session, subscribe).await,
        Frame::Unsubscribe { cid, subscription } => {
            unsubscribe::apply(session, cid, subscription).await
        }
        Frame::Monitor { cid } => monitor::apply(session, cid).await,
        Frame::Info { cid, request } => info::apply(session, cid, request).await,
        Frame::InfoSubscribe {
            cid,
            subscription,
            selection,
        } => info::subscribe(session, cid, subscription, selection).await,
        Frame::Query { cid, request } => query::apply(session, cid, request).await,
        Frame::Ping => {
            session.reply(Frame::Pong).await;
            Ok(())
        }
        Frame::Pong => Ok(()),
        Frame::Hello(_) => Err(protocol_error(
            ErrorCode::Handshake,
            "HELLO sent twice".to_string(),
        )),
        Frame::Error(error) => {
            tracing::debug!(code = error.code.as_str(), message = %error.message, "client reported an error");
            Err(Close::quiet(CloseReason::ClientClosed))
        }
        other => {
            let name = other.frame_type().name();
            Err(protocol_error(
                ErrorCode::BadFrame,
                format!("{name} frames go from server to client, not back"),
            ))
        }
    }
}

fn protocol_error(code: ErrorCode, message: String) -> Close {
    Close::with_error(CloseReason::ProtocolError, code, message)
}
