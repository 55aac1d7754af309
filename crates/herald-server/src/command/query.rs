//! `QUERY`: answer an archive query with one page (or the buckets, or the values at an
//! instant), read on the blocking pool so the connection's other frames are not held up by
//! the disk. Pages are cut to fit a frame; the client asks again with the page's cursor.

use herald_archive::ArchiveErrorKind;
use herald_proto::archive::ArchiveRequest;
use herald_proto::{ErrorCode, ErrorFrame, Frame};

use crate::session::{Close, Session};

/// Room left in a reply frame for everything but the records.
const REPLY_OVERHEAD_BYTES: usize = 4096;

pub(super) async fn apply(
    session: &mut Session,
    cid: u64,
    request: ArchiveRequest,
) -> Result<(), Close> {
    let Some(archive) = session.shared.archive.clone() else {
        let error = ErrorFrame {
            cid,
            code: ErrorCode::Archive,
            message: "this server has no archive (archive.backend = \"none\")".to_string(),
        };
        session.reply(Frame::Error(error)).await;
        return Ok(());
    };
    let max_bytes = (session.shared.config.max_frame_bytes as usize)
        .saturating_sub(REPLY_OVERHEAD_BYTES)
        .max(1024);
    let replies = session.replies.clone();
    // Answered from a task of its own: a long read never delays this connection's
    // publishing, and the answer carries its cid.
    tokio::spawn(async move {
        let frame = match crate::archive::query(&archive, request, max_bytes).await {
            Ok(answer) => Frame::QueryReply {
                cid,
                reply: answer.reply,
                skipped: answer.skipped,
            },
            Err(err) => Frame::Error(ErrorFrame {
                cid,
                code: match err.kind {
                    ArchiveErrorKind::BadQuery => ErrorCode::BadQuery,
                    _ => ErrorCode::Archive,
                },
                message: err.message,
            }),
        };
        let _ = replies.send(frame).await;
    });
    Ok(())
}
