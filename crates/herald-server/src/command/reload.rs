//! `RELOAD`: read the configuration again and apply what can change live
//! ([`crate::reload`]); the answer names what changed and what waits for a restart.

use herald_proto::frame::{ErrorCode, ErrorFrame};
use herald_proto::Frame;

use crate::auth::Operation;
use crate::reload::ReloadError;
use crate::session_state::{Close, Session};

pub(super) async fn apply(session: &mut Session, cid: u64) -> Result<(), Close> {
    let what = "reload the server's configuration (RELOAD)";
    if let Err(message) = session.access.check(Operation::Admin, what) {
        super::deny(session, cid, message).await;
        return Ok(());
    }
    let reply = match crate::reload::reload(&session.shared).await {
        Ok(outcome) => Frame::ReloadReply {
            cid,
            data: outcome.fields(),
        },
        Err(err) => {
            let code = match err {
                ReloadError::NoSource => ErrorCode::BadRequest,
                _ => ErrorCode::BadConfig,
            };
            Frame::Error(ErrorFrame {
                cid,
                code,
                message: err.to_string(),
            })
        }
    };
    session.reply(reply).await;
    Ok(())
}
