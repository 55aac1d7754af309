//! What a connection that feeds this mirror keeps: the feed it announced and the snapshot of
//! objects being received. The session holds it ([`crate::session_state::Session`]); the
//! frames that fill it are handled in [`super::feed`], over the session. Kept apart from
//! those handlers so that the session's state does not import them.

use herald_info::InfoObject;

use super::Feed;

/// What a session that feeds this mirror keeps.
#[derive(Debug)]
pub struct FeedState {
    pub(super) feed: Feed,
    /// The objects of the snapshot being received.
    pub(super) snapshot: Vec<InfoObject>,
}
