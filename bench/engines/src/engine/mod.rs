//! The three engines behind one small interface, each behind its own cargo feature.

use std::path::Path;

use crate::workload::Rec;

#[cfg(feature = "fjall")]
pub mod fjall;
#[cfg(feature = "redb")]
pub mod redb;
#[cfg(feature = "sqlite")]
pub mod sqlite;

pub type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// What a range read saw: rows, summed blob lengths, and a checksum of each blob's last byte
/// (so every blob is really touched).
#[derive(Default, Debug, Clone, Copy)]
pub struct ReadSum {
    pub rows: u64,
    pub bytes: u64,
    pub touch: u64,
}

impl ReadSum {
    /// Adds one row, checking that time never goes backwards.
    #[inline]
    pub fn add(&mut self, last_time: &mut i64, time: i64, blob: &[u8]) {
        assert!(time >= *last_time, "rows out of time order");
        *last_time = time;
        self.rows += 1;
        self.bytes += blob.len() as u64;
        self.touch = self
            .touch
            .wrapping_add(u64::from(*blob.last().unwrap_or(&0)));
    }
}

pub trait Engine: Sized {
    /// Opens (creating) the store in `dir`.
    fn open(dir: &Path) -> Result<Self>;
    /// Writes `recs` (all of one day) as one transaction with one durable commit.
    fn write_batch(&mut self, names: &[String], day: &str, recs: &[Rec]) -> Result<()>;
    /// Lets background work finish, or forces it; says what it did.
    fn settle(&mut self) -> Result<String>;
    /// Closes everything and opens the store again.
    fn reopen(&mut self) -> Result<()>;
    /// Reads every record of `name` with time in `t0..t1` in (time, seq) order.
    fn read(&mut self, day: &str, name: &str, t0: i64, t1: i64) -> Result<ReadSum>;
    /// Drops one whole day.
    fn delete_day(&mut self, day: &str) -> Result<()>;
    /// Gives back the space of deleted days, if the engine needs a step for it; says what.
    fn reclaim(&mut self) -> Result<String>;
    /// Rewrites the store as tightly as the engine can (a maintenance step); says how.
    fn compact(&mut self) -> Result<String>;
}
