//! A subscription as the router sees it: who, what filter, which queue.

use std::sync::Arc;

use herald_proto::Filter;

use crate::queue::Queue;

/// One subscription of one connection.
#[derive(Debug)]
pub struct Subscription {
    /// The connection it belongs to (server-wide id).
    pub connection: u64,
    /// The id the client chose, unique on its connection.
    pub id: u64,
    /// What it receives.
    pub filter: Filter,
    /// Where its records go.
    pub queue: Arc<Queue>,
}

impl Subscription {
    /// Returns the key that identifies the subscription server-wide.
    pub fn key(&self) -> (u64, u64) {
        (self.connection, self.id)
    }
}
