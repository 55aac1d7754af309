//! One file per client operation: each applies a decoded frame to the session and queues
//! the reply (mini-redis `cmd/`).

pub(crate) mod info;
mod monitor;
mod publish;
mod query;
mod reload;
pub(crate) mod subscribe;
mod unsubscribe;

use bytes::Bytes;
use herald_proto::request::{request_cid, CheckedPublish};
use herald_proto::{ErrorCode, ErrorFrame, Frame, FrameError, FrameType};

use crate::events::CloseReason;
use crate::session_state::{Close, Session};

/// A frame from the client, decoded.
#[derive(Debug)]
pub enum Request {
    /// A `PUBLISH`, checked record by record.
    Publish(CheckedPublish),
    /// Any other frame.
    Frame(Frame),
}

/// Why a frame from the client was not decoded.
#[derive(Debug)]
pub enum Refused {
    /// A request that did not decode but whose cid could be read: answered alone.
    Answer(ErrorFrame),
    /// Not a request that can be answered: the connection closes.
    Close(FrameError),
}

/// Decodes a frame (type byte and body). A request whose body does not decode is refused
/// alone when its cid can be read: framing is intact, so the next frame is still readable.
///
/// # Errors
/// [`Refused`], saying whether to answer the request or to close.
pub fn decode(frame: Bytes) -> Result<Request, Refused> {
    let frame_type = frame.first().copied().map(FrameType::from_u8);
    let result = match frame_type {
        Some(Ok(FrameType::Publish)) => CheckedPublish::decode(&frame.slice(1..))
            .map(Request::Publish)
            .map_err(|source| FrameError::Malformed {
                frame: FrameType::Publish.name(),
                source,
            }),
        _ => Frame::decode(frame.clone()).map(Request::Frame),
    };
    let err = match result {
        Ok(request) => return Ok(request),
        Err(err) => err,
    };
    let code = match frame_type {
        Some(Ok(frame_type)) => match refusal_code(frame_type) {
            Some(code) => code,
            None => return Err(Refused::Close(err)),
        },
        // An unknown type: perhaps a newer client's request; answered if it has a cid.
        Some(Err(_)) => ErrorCode::BadRequest,
        None => return Err(Refused::Close(err)),
    };
    match request_cid(&frame) {
        Some(cid) => Err(Refused::Answer(ErrorFrame {
            cid,
            code,
            message: err.to_string(),
        })),
        None => Err(Refused::Close(err)),
    }
}

/// Returns the code that refuses a malformed request of this type alone, or `None` for a
/// frame that is not a request (`HELLO`, frames only the server sends, `PING`, `ERROR`).
fn refusal_code(frame_type: FrameType) -> Option<ErrorCode> {
    match frame_type {
        FrameType::Publish => Some(ErrorCode::BadRequest),
        FrameType::Subscribe => Some(ErrorCode::BadFilter),
        FrameType::Info | FrameType::InfoSubscribe => Some(ErrorCode::BadInfo),
        FrameType::Query => Some(ErrorCode::BadQuery),
        FrameType::Unsubscribe | FrameType::Monitor | FrameType::Reload => {
            Some(ErrorCode::BadRequest)
        }
        _ => None,
    }
}

/// Applies one frame from the client.
///
/// # Errors
/// A [`Close`] when the frame ends the connection: a frame only the server may send, a
/// second `HELLO`, or an error frame from the client.
pub async fn apply(session: &mut Session, request: Request) -> Result<(), Close> {
    let frame = match request {
        Request::Publish(checked) => return publish::apply(session, checked).await,
        Request::Frame(frame) => frame,
    };
    match frame {
        Frame::Publish(publish) => publish::apply(session, CheckedPublish::from(publish)).await,
        Frame::Subscribe(subscribe) => subscribe::apply(session, subscribe).await,
        Frame::Unsubscribe { cid, subscription } => {
            unsubscribe::apply(session, cid, subscription).await
        }
        Frame::Monitor { cid } => monitor::apply(session, cid).await,
        Frame::Reload { cid } => reload::apply(session, cid).await,
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
        Frame::Mirror(feed) => crate::mirror::feed::announce(session, feed).await,
        Frame::Deliver(entries) if session.feed.is_some() => {
            crate::mirror::feed::deliver(session, entries).await;
            Ok(())
        }
        Frame::Gap(gap) if session.feed.is_some() => {
            crate::mirror::feed::gap(session, &gap);
            Ok(())
        }
        Frame::InfoChange(change) if session.feed.is_some() => {
            crate::mirror::feed::info_change(session, change);
            Ok(())
        }
        Frame::Members(_) | Frame::RouteAuth(_) => Err(protocol_error(
            ErrorCode::BadFrame,
            format!(
                "{} is spoken between cluster members on the route port, not by clients",
                frame.frame_type().name()
            ),
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

/// Answers request `cid` with `ERROR denied` saying `message`, counted and logged.
async fn deny(session: &Session, cid: u64, message: String) {
    crate::events::denied(&session.shared.monitor, session.state.id, &message);
    crate::events::request_refused(&session.shared.monitor, session.state.id, &message);
    let error = ErrorFrame {
        cid,
        code: ErrorCode::Denied,
        message,
    };
    session.reply(Frame::Error(error)).await;
}

fn protocol_error(code: ErrorCode, message: String) -> Close {
    Close::with_error(CloseReason::ProtocolError, code, message)
}
