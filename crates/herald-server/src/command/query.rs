//! `QUERY`: answer an archive query with one page (or the buckets, or the values at an
//! instant), read on the blocking pool so the connection's other frames are not held up by
//! the disk. Pages are cut to fit a frame (the client asks again with the page's cursor);
//! buckets and values too many for a frame come in several `QUERY_REPLY` parts.

use herald_archive::query::Answer;
use herald_archive::ArchiveErrorKind;
use herald_proto::archive::ArchiveRequest;
use herald_proto::{ErrorCode, ErrorFrame, Frame};

use crate::auth::Operation;
use crate::session_state::{Close, Session};

/// Room left in a reply frame for everything but the records.
const REPLY_OVERHEAD_BYTES: usize = 4096;

pub(super) async fn apply(
    session: &mut Session,
    cid: u64,
    request: ArchiveRequest,
) -> Result<(), Close> {
    if let Err(message) = session.access.check(Operation::Query, "") {
        super::deny(session, cid, message).await;
        return Ok(());
    }
    let Some(archive) = session.shared.archive.clone() else {
        let error = ErrorFrame {
            cid,
            code: ErrorCode::Archive,
            message: "this server has no archive (archive.backend = \"none\")".to_string(),
        };
        session.reply(Frame::Error(error)).await;
        return Ok(());
    };
    let max_bytes = (session.shared.config().max_frame_bytes as usize)
        .saturating_sub(REPLY_OVERHEAD_BYTES)
        .max(1024);
    let replies = session.replies.clone();
    let turn = std::sync::Arc::clone(&session.queries);
    let shared = std::sync::Arc::clone(&session.shared);
    if let (true, Some(cluster)) = (
        crate::cluster::query::merged(&shared, &request),
        shared.cluster.get().cloned(),
    ) {
        // Asked of every member, merged by time: one answer.
        tokio::spawn(async move {
            let Ok(_turn) = turn.acquire_owned().await else {
                return;
            };
            let answer =
                crate::cluster::query::ask_all(shared.local(), &cluster, request, max_bytes);
            let frame = match answer.await {
                Ok(answer) => reply_frame(cid, answer, false),
                Err(err) => error_frame(cid, err),
            };
            let _ = replies.send(frame).await;
        });
        return Ok(());
    }
    // Answered from a task of its own: a long read never delays this connection's
    // publishing, and the answer carries its cid. A connection has a few queries read at
    // once; the others wait their turn, holding only their request.
    tokio::spawn(async move {
        let Ok(_turn) = turn.acquire_owned().await else {
            return;
        };
        let mut parts = crate::archive::query_parts(&archive, request, max_bytes);
        // One part is held back until the next arrives, so the last is the one sent
        // without `more`.
        let mut held: Option<Answer> = None;
        while let Some(part) = parts.next().await {
            let frame = match part {
                Ok(part) => match held.replace(part) {
                    Some(earlier) => reply_frame(cid, earlier, true),
                    None => continue,
                },
                Err(err) => error_frame(cid, err),
            };
            let failed = matches!(frame, Frame::Error(_));
            if replies.send(frame).await.is_err() || failed {
                return;
            }
        }
        if let Some(last) = held {
            let _ = replies.send(reply_frame(cid, last, false)).await;
        }
    });
    Ok(())
}

fn error_frame(cid: u64, err: herald_archive::ArchiveError) -> Frame {
    Frame::Error(ErrorFrame {
        cid,
        code: match err.kind {
            ArchiveErrorKind::BadQuery => ErrorCode::BadQuery,
            _ => ErrorCode::Archive,
        },
        message: err.message,
    })
}

fn reply_frame(cid: u64, answer: Answer, more: bool) -> Frame {
    Frame::QueryReply {
        cid,
        reply: answer.reply,
        skipped: answer.skipped,
        more,
    }
}
