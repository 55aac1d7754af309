//! Which numbered records this server has already seen, by producer: what lets a member drop
//! the records a producer sends again after a failover (it cannot know which of them the
//! member it lost had passed on) without delivering any of them twice.
//!
//! A producer names itself in `HELLO` and numbers its records (`PUBLISH`'s fourth element).
//! For each producer the server keeps two bits per number over a window of the last
//! [`WINDOW`] numbers: *taken* (received from the producer itself: routed, archived and
//! acknowledged here) and *seen* (received from the producer or over a route: delivered to
//! this server's subscribers). A number below the window counts as never seen: a record
//! may then arrive twice, but none is lost.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Numbers remembered per producer.
pub const WINDOW: u64 = 1 << 20;
/// Numbers per chunk of a window (64 words of 64 bits).
const CHUNK: u64 = 4096;
/// Producers remembered per shard; the one not heard from longest is forgotten first.
const PRODUCERS_PER_SHARD: usize = 4096;
const SHARDS: usize = 16;

/// One chunk of a producer's window: a bit per number, twice.
#[derive(Debug)]
struct Chunk {
    taken: [u64; 64],
    seen: [u64; 64],
}

#[derive(Debug)]
struct Window {
    chunks: BTreeMap<u64, Box<Chunk>>,
    heard: Instant,
}

impl Window {
    fn new() -> Self {
        Window {
            chunks: BTreeMap::new(),
            heard: Instant::now(),
        }
    }

    /// Returns chunk `key` (numbers `key * CHUNK ..`), making it if needed and forgetting
    /// the oldest ones beyond the window. `None` for a chunk already forgotten.
    fn chunk(&mut self, key: u64) -> Option<&mut Chunk> {
        let span = WINDOW / CHUNK;
        let newest = self
            .chunks
            .last_key_value()
            .map_or(key, |(k, _)| *k)
            .max(key);
        if key + span <= newest {
            return None;
        }
        while let Some((&oldest, _)) = self.chunks.first_key_value() {
            if oldest + span > newest {
                break;
            }
            self.chunks.pop_first();
        }
        let chunk = self.chunks.entry(key).or_insert_with(|| {
            Box::new(Chunk {
                taken: [0; 64],
                seen: [0; 64],
            })
        });
        Some(chunk)
    }

    /// Returns the chunk of `number` and its word and bit (see [`Window::chunk`]).
    fn slot(&mut self, number: u64) -> Option<(&mut Chunk, usize, u64)> {
        let (word, bit) = word_and_bit(number);
        self.chunk(number / CHUNK).map(|chunk| (chunk, word, bit))
    }
}

/// Returns where `number`'s bit is in its chunk.
fn word_and_bit(number: u64) -> (usize, u64) {
    let offset = number % CHUNK;
    ((offset / 64) as usize, 1u64 << (offset % 64))
}

/// What a server knows of a record its producer sent it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// New here: route, archive, acknowledge.
    New,
    /// Already delivered here (it came over a route from the member the producer used
    /// before): routes and the archive take it, this server's subscribers do not.
    Seen,
    /// Already taken from the producer (it resent across a reconnection): acknowledged,
    /// nothing else.
    Taken,
}

/// The windows of every numbered producer, sharded by producer id.
#[derive(Debug)]
pub struct Producers {
    shards: Vec<Mutex<HashMap<u64, Window>>>,
    /// Records dropped as already delivered or taken (not a loss).
    duplicates: AtomicU64,
}

impl Default for Producers {
    fn default() -> Self {
        Producers {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            duplicates: AtomicU64::new(0),
        }
    }
}

impl Producers {
    /// Records that `producer` sent the records numbered `numbers`; returns each one's fate
    /// in `fates` (cleared first).
    pub fn taken(&self, producer: u64, numbers: &[u64], fates: &mut Vec<Fate>) {
        fates.clear();
        self.with_window(producer, |window| {
            // A batch's numbers run on: look each chunk up once.
            let mut current: Option<(u64, Option<&mut Chunk>)> = None;
            for &number in numbers {
                let key = number / CHUNK;
                if current.as_ref().is_none_or(|(k, _)| *k != key) {
                    current = Some((key, window.chunk(key)));
                }
                let (word, bit) = word_and_bit(number);
                let fate = match current.as_mut().and_then(|(_, c)| c.as_deref_mut()) {
                    None => Fate::New,
                    Some(chunk) => {
                        let fate = if chunk.taken[word] & bit != 0 {
                            Fate::Taken
                        } else if chunk.seen[word] & bit != 0 {
                            Fate::Seen
                        } else {
                            Fate::New
                        };
                        chunk.taken[word] |= bit;
                        chunk.seen[word] |= bit;
                        fate
                    }
                };
                fates.push(fate);
            }
        });
        let duplicates = fates.iter().filter(|f| **f != Fate::New).count() as u64;
        if duplicates > 0 {
            self.duplicates.fetch_add(duplicates, Ordering::Relaxed);
        }
    }

    /// Records that a route brought record `number` of `producer`; returns true if this
    /// server has delivered it already (drop it).
    pub fn seen_over_route(&self, producer: u64, number: u64) -> bool {
        let seen = self.with_window(producer, |window| match window.slot(number) {
            None => false,
            Some((chunk, word, bit)) => {
                let seen = chunk.seen[word] & bit != 0;
                chunk.seen[word] |= bit;
                seen
            }
        });
        if seen {
            self.duplicates.fetch_add(1, Ordering::Relaxed);
        }
        seen
    }

    /// Returns how many records were dropped as duplicates.
    pub fn duplicates(&self) -> u64 {
        self.duplicates.load(Ordering::Relaxed)
    }

    fn with_window<T>(&self, producer: u64, f: impl FnOnce(&mut Window) -> T) -> T {
        let shard = &self.shards[(producer % SHARDS as u64) as usize];
        let mut windows = shard.lock().unwrap_or_else(|p| p.into_inner());
        if !windows.contains_key(&producer) && windows.len() >= PRODUCERS_PER_SHARD {
            let quietest = windows
                .iter()
                .min_by_key(|(_, w)| w.heard)
                .map(|(id, _)| *id);
            if let Some(id) = quietest {
                windows.remove(&id);
            }
        }
        let window = windows.entry(producer).or_insert_with(Window::new);
        window.heard = Instant::now();
        f(window)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resent_record_is_taken_and_one_seen_over_a_route_is_seen() {
        let producers = Producers::default();
        let mut fates = Vec::new();
        assert!(!producers.seen_over_route(7, 2));
        producers.taken(7, &[1, 2, 3], &mut fates);
        assert_eq!(fates, [Fate::New, Fate::Seen, Fate::New]);
        producers.taken(7, &[3, 4], &mut fates);
        assert_eq!(fates, [Fate::Taken, Fate::New]);
        assert!(producers.seen_over_route(7, 4));
        assert!(!producers.seen_over_route(8, 4), "another producer");
        assert_eq!(producers.duplicates(), 3);
    }

    #[test]
    fn numbers_below_the_window_count_as_new() {
        let producers = Producers::default();
        let mut fates = Vec::new();
        producers.taken(1, &[5], &mut fates);
        producers.taken(1, &[5 + WINDOW + CHUNK], &mut fates);
        producers.taken(1, &[5], &mut fates);
        assert_eq!(
            fates,
            [Fate::New],
            "forgotten: may arrive twice, is never lost"
        );
    }
}
