//! One-way mirrors (`[[mirror]]`, docs/cluster.md "Mirrors"): a source server connects out
//! to a mirror's client port and streams the records of some subjects and the information
//! objects of some names; the mirror holds them read-only.
//!
//! - [`source`]: the feeding side — a queue of the mirrored records, the connection out
//!   (with backoff), the objects' snapshot and changes.
//! - [`feed`]: the mirror's side — a connection that announced itself with `MIRROR`.
//! - [`Mirrored`]: what a mirror holds read-only, and the refusals of changes to it.

pub mod feed;
pub mod feed_state;
pub mod link;
pub mod source;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::RwLock;

use herald_proto::glob::Glob;

/// What one source feeds this mirror.
#[derive(Debug, Clone)]
pub struct Feed {
    /// The source server's name.
    pub source: String,
    /// Subjects whose records it streams.
    pub subjects: Vec<Glob>,
    /// Information objects it streams.
    pub objects: Vec<Glob>,
}

impl Feed {
    /// Returns true if the feed streams object `name`.
    pub fn has_object(&self, name: &str) -> bool {
        self.objects.iter().any(|g| g.matches(name))
    }
}

/// The feeds of this mirror: their subjects and objects are read-only here (for as long as
/// the server runs, feeding or not).
#[derive(Debug, Default)]
pub struct Mirrored {
    feeds: RwLock<Vec<Feed>>,
    any: AtomicBool,
}

impl Mirrored {
    /// Registers (or updates) `feed`.
    pub fn add(&self, feed: Feed) {
        let mut feeds = self.feeds.write().unwrap_or_else(|p| p.into_inner());
        feeds.retain(|f| f.source != feed.source);
        feeds.push(feed);
        self.any.store(true, Ordering::Release);
    }

    /// Returns true if no source feeds this server.
    pub fn is_empty(&self) -> bool {
        !self.any.load(Ordering::Acquire)
    }

    /// Says why records about `subject` may not be published here, if they may not.
    pub fn subject_refusal(&self, subject: &str) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let feeds = self.feeds.read().unwrap_or_else(|p| p.into_inner());
        let (feed, glob) = feeds.iter().find_map(|f| {
            f.subjects
                .iter()
                .find(|g| g.matches(subject))
                .map(|g| (f, g))
        })?;
        Some(format!(
            "`{subject}` is read-only here: this server is a read-only mirror of `{}` for \
             subjects `{glob}`; publish on `{}`",
            feed.source, feed.source
        ))
    }

    /// Says why object `name` may not be changed here, if it may not.
    pub fn object_refusal(&self, name: &str) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let feeds = self.feeds.read().unwrap_or_else(|p| p.into_inner());
        let (feed, glob) = feeds
            .iter()
            .find_map(|f| f.objects.iter().find(|g| g.matches(name)).map(|g| (f, g)))?;
        Some(format!(
            "`{name}` is read-only here: this server is a read-only mirror of `{}` for \
             objects `{glob}`; change it on `{}`",
            feed.source, feed.source
        ))
    }

    /// The feeds, for the monitor.
    pub fn feeds(&self) -> Vec<Feed> {
        self.feeds.read().unwrap_or_else(|p| p.into_inner()).clone()
    }
}
