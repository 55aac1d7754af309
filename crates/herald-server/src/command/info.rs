//! `INFO`: one information-service request; `INFO_SUBSCRIBE`: a subscription to objects.

use std::sync::Arc;

use crate::session::{Close, Session};
use herald_proto::info::{InfoRequest, SelectionData};
use herald_proto::{ErrorFrame, Frame};

pub(super) async fn apply(
    session: &mut Session,
    cid: u64,
    request: InfoRequest,
) -> Result<(), Close> {
    let shared = Arc::clone(&session.shared);
    let answer = shared
        .info
        .handle(request, &shared.router, &mut session.route);
    let reply = match answer {
        Ok(reply) => reply,
        Err((code, message)) => {
            session
                .reply(Frame::Error(ErrorFrame { cid, code, message }))
                .await;
            return Ok(());
        }
    };
    // No frame larger than the client was told (WELCOME's max_frame_bytes): a list of
    // 100,000 objects goes as several parts under one cid.
    let max_bytes = (shared.config.max_frame_bytes as usize).saturating_sub(REPLY_OVERHEAD_BYTES);
    let parts = reply.split(max_bytes.max(1024));
    let last = parts.len() - 1;
    for (index, part) in parts.into_iter().enumerate() {
        let more = index < last;
        session
            .reply(Frame::InfoReply {
                cid,
                reply: part,
                more,
            })
            .await;
    }
    Ok(())
}

/// Room left in a reply frame for its header and cid.
const REPLY_OVERHEAD_BYTES: usize = 64;

pub(super) async fn subscribe(
    session: &mut Session,
    cid: u64,
    subscription: u64,
    selection: SelectionData,
) -> Result<(), Close> {
    let reply = match add(session, subscription, &selection) {
        Ok(()) => Frame::Ok { cid },
        Err((code, message)) => Frame::Error(ErrorFrame { cid, code, message }),
    };
    session.reply(reply).await;
    Ok(())
}

fn add(
    session: &Session,
    id: u64,
    selection: &SelectionData,
) -> Result<(), crate::info::InfoFailure> {
    let config = session.shared.config.queue;
    let queue = super::subscribe::reserve(session, id, describe(selection), config)?;
    let shared = &session.shared;
    if let Err(failure) = shared.info.subscribe(
        session.state.id,
        id,
        selection,
        Arc::clone(&queue),
        &shared.router,
    ) {
        session.state.subscriptions().retain(|s| s.id != id);
        return Err(failure);
    }
    Ok(())
}

pub(crate) fn describe(selection: &SelectionData) -> String {
    let mut parts = vec!["info".to_string()];
    if let Some(regex) = &selection.name_regex {
        parts.push(format!("match={regex}"));
    }
    if let Some(types) = &selection.types {
        parts.push(format!("type={types}"));
    }
    if selection.any {
        parts.push("combine=or".to_string());
    }
    parts.join(" ")
}
