//! What a subscription yields: records, gap notices, and notices of a failover.

use std::time::Duration;

use herald_proto::frame::GapNotice;

use crate::delivered::Delivered;

/// What a subscription yields.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A record.
    Record(Delivered),
    /// Records were lost before reaching this subscription: by the server (its queue for
    /// this subscriber was full) or by this client (the subscription's buffer was full).
    Gap(GapNotice),
    /// The connection to the server was lost and the client failed over: the subscription
    /// was made again on the next server, and records published in between (for `down`)
    /// were not delivered to it — a gap of unknown size.
    Interrupted(Interruption),
}

/// The notice of a failover, for each subscription: see [`Event::Interrupted`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interruption {
    /// The server whose connection was lost.
    pub lost: String,
    /// The server the subscription was made again on.
    pub resumed: String,
    /// How long the subscription went unserved.
    pub down: Duration,
}
