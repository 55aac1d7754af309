//! `INFO`: one information-service request; `INFO_SUBSCRIBE`: a subscription to objects.

use std::sync::Arc;

use crate::auth::{Access, Operation};
use crate::cluster::info::Placement;
use crate::info::InfoFailure;
use crate::session_state::{Close, Session};
use herald_proto::info::{InfoReply, InfoRequest, SelectionData};
use herald_proto::{ErrorCode, ErrorFrame, Frame};

pub(super) async fn apply(
    session: &mut Session,
    cid: u64,
    request: InfoRequest,
) -> Result<(), Close> {
    if let Err(message) = check(&session.access, session.feed.is_some(), &request) {
        super::deny(session, cid, message).await;
        return Ok(());
    }
    let listing = matches!(request, InfoRequest::List(_));
    let shared = Arc::clone(&session.shared);
    if session.feed.is_none() {
        if let Some(message) = read_only(&shared, &request) {
            let error = ErrorFrame {
                cid,
                code: ErrorCode::ReadOnly,
                message,
            };
            session.reply(Frame::Error(error)).await;
            return Ok(());
        }
    }
    let cluster = shared.cluster.get();
    // In a cluster, a change of another member's namespace is that member's to make.
    if let Some(cluster) = cluster {
        let forwarded = match cluster.info.place(cluster, &request) {
            Placement::Here => None,
            Placement::There(link) => Some(cluster.info.forward(&link, request.clone()).await),
            Placement::Nowhere(message) => Some(Err((ErrorCode::Unavailable, message))),
        };
        if let Some(answer) = forwarded {
            return answer_with(session, cid, answer).await;
        }
    }
    let declared = matches!(request, InfoRequest::Declare(_)).then(|| request.clone());
    let mut answer = shared
        .info
        .handle(request, &shared.router, &mut session.route);
    if let (true, Ok(reply)) = (listing, &mut answer) {
        // A list shows what the identity may read, and nothing else.
        let access = &session.access;
        reply
            .objects
            .retain(|o| o.as_ref().is_some_and(|o| access.may_read(&o.name)));
    }
    if let (Some(cluster), true) = (cluster, answer.is_ok()) {
        if let Some(declared) = &declared {
            cluster.info.declared(cluster, declared);
        }
        // A change of a leased namespace is answered once saved in Cassandra.
        let saver = &cluster.info.saver;
        saver.saved(saver.last()).await;
    }
    answer_with(session, cid, answer).await
}

/// Answers request `cid` with `answer`: an `ERROR`, or the reply in as many parts as the
/// frame limit needs.
async fn answer_with(
    session: &Session,
    cid: u64,
    answer: Result<InfoReply, InfoFailure>,
) -> Result<(), Close> {
    let shared = &session.shared;
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
    let max_bytes = (shared.config().max_frame_bytes as usize).saturating_sub(REPLY_OVERHEAD_BYTES);
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

/// Says why `request` may not change an object here, if this server mirrors it read-only.
pub(crate) fn read_only(shared: &crate::shared::Shared, request: &InfoRequest) -> Option<String> {
    match request {
        InfoRequest::Update { name, .. } | InfoRequest::Delete { name, .. } => {
            shared.mirrored.object_refusal(name)
        }
        _ => None,
    }
}

/// Checks an info request against the connection's identity (a list is narrowed, not
/// refused; types are no secret).
/// Whether `access` may make `request`; `feed` when the session is a mirror's feed.
fn check(access: &Access, feed: bool, request: &InfoRequest) -> Result<(), String> {
    match request {
        // A feed declares its source's types: the `admin` identity feeding needs may, though
        // it may write no object here (the feed's objects are copies).
        InfoRequest::Declare(_) if feed => Ok(()),
        InfoRequest::Declare(declared) => access.check(Operation::Declare, &declared.name),
        InfoRequest::Update { name, .. } | InfoRequest::Delete { name, .. } => {
            access.check(Operation::InfoWrite, name)
        }
        InfoRequest::Get(names) => names
            .iter()
            .try_for_each(|name| access.check(Operation::InfoRead, name)),
        InfoRequest::List(_) | InfoRequest::Types => Ok(()),
    }
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
    let config = session.shared.config().queue;
    let queue = super::subscribe::reserve(session, id, describe(selection), config, None)?;
    let shared = &session.shared;
    if let Err(failure) = shared.info.subscribe(
        session.state.id,
        id,
        selection,
        session.access.visible_objects(),
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
