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

/// A fast hash for the cache's keys (the Fx hash rustc uses). Subjects come from
/// publishers, but a publisher only fills its own cache, so hash flooding hurts no one else.
#[derive(Debug, Default, Clone, Copy)]
pub struct SubjectHasher(u64);

impl std::hash::Hasher for SubjectHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let word = u64::from_le_bytes(chunk.try_into().expect("chunks of 8"));
            self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
        }
        for &byte in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(byte)).wrapping_mul(SEED);
        }
    }
}

type BuildSubjectHasher = std::hash::BuildHasherDefault<SubjectHasher>;

/// Subject → matched subscriptions, for one index generation.
#[derive(Debug, Default)]
pub struct MatchCache {
    generation: u64,
    entries: HashMap<Box<str>, Arc<Matched>, BuildSubjectHasher>,
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
