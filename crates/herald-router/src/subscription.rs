//! A subscription as the router sees it: who, what filter, what its identity may see,
//! which queue.

use std::sync::Arc;

use herald_proto::Filter;

use crate::queue::Queue;
use crate::rules::GlobRules;

/// One subscription of one connection.
#[derive(Debug)]
pub struct Subscription {
    /// Its queue group, if any: a record the group's members match goes to one of them.
    pub group: Option<Arc<str>>,
    /// The connection it belongs to (server-wide id).
    pub connection: u64,
    /// The id the client chose, unique on its connection.
    pub id: u64,
    /// What it receives.
    pub filter: Filter,
    /// Where its records go.
    pub queue: Arc<Queue>,
    /// The subjects its connection's identity may see, when it may not see all: the filter
    /// is narrowed to them (records outside were never owed, so they are not a loss).
    pub visible: Option<Arc<GlobRules>>,
    /// The object names whose changes (records of kind `info`) its identity may read, when
    /// not all: info records about other names are not delivered.
    pub visible_info: Option<Arc<GlobRules>>,
    /// A far member's interest, held for a route to it (a cluster): its queue is the
    /// route's, shared by every interest of that member, and records that came in over a
    /// route never go to one (one hop).
    pub route: bool,
}

impl Subscription {
    /// Returns the key that identifies the subscription server-wide.
    pub fn key(&self) -> (u64, u64) {
        (self.connection, self.id)
    }

    /// Returns true if the filter's subject pattern matches `subject` and the identity may
    /// see it.
    pub fn wants_subject(&self, subject: &str) -> bool {
        self.filter.subject.matches(subject) && self.may_see(subject)
    }

    /// Returns true if the identity may read the change of information object `name`.
    pub fn may_read_info(&self, name: &str) -> bool {
        self.visible_info
            .as_ref()
            .is_none_or(|rules| rules.allows(name))
    }

    /// Returns true if the identity may see records about `subject`.
    pub fn may_see(&self, subject: &str) -> bool {
        self.visible
            .as_ref()
            .is_none_or(|rules| rules.allows(subject))
    }
}
