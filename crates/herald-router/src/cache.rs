//! The per-publisher match cache: subject → matching subscriptions.
//!
//! Each connection that publishes owns one, so looking up a subject takes no lock shared
//! with other connections. An entry is valid for one index generation; when the generation
//! moves on, the whole cache is dropped (subscriptions change rarely). When the cache is
//! full it is cleared too: simpler than nats-server's random sweep, and a full cache means
//! subjects are so varied that most lookups miss anyway.

use std::collections::HashMap;
use std::sync::Arc;

use crate::index::{Index, Matched};

/// Most subjects a cache holds before it starts over.
pub const MAX_CACHE_ENTRIES: usize = 4096;

/// Subject → matched subscriptions, for one index generation.
#[derive(Debug, Default)]
pub struct MatchCache {
    generation: u64,
    entries: HashMap<Box<str>, Arc<Matched>>,
    hits: u64,
    misses: u64,
}

impl MatchCache {
    /// Returns the subscriptions matching `subject` in `index`.
    pub fn lookup(&mut self, index: &Index, subject: &str) -> Arc<Matched> {
        if self.generation != index.generation {
            self.entries.clear();
            self.generation = index.generation;
        }
        if let Some(matched) = self.entries.get(subject) {
            self.hits += 1;
            return Arc::clone(matched);
        }
        self.misses += 1;
        if self.entries.len() >= MAX_CACHE_ENTRIES {
            self.entries.clear();
        }
        let matched = Arc::new(index.matching(subject));
        self.entries.insert(subject.into(), Arc::clone(&matched));
        matched
    }

    /// Returns (hits, misses) so far.
    pub fn stats(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }
}
