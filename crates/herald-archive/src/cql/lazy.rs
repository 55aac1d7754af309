//! [`LazyCqlBackend`]: a Cassandra store that connects on first use and again after a
//! failed connect, so a server configured for Cassandra starts (and buffers) while the node
//! is still down, instead of refusing to start.

use std::sync::{Arc, Mutex};

use super::backend::CqlBackend;
use super::options::CqlOptions;
use crate::backend::{Backend, Expired, RowRange, Slot, Source};
use crate::entry::{Entry, Row};
use crate::error::ArchiveError;

/// A [`CqlBackend`] connected when first needed; until then every call fails as
/// `Unavailable`, which the archive's writer retries.
pub struct LazyCqlBackend {
    options: CqlOptions,
    connected: Mutex<Option<Arc<CqlBackend>>>,
}

impl LazyCqlBackend {
    /// Returns a store that will connect with `options`.
    pub fn new(options: CqlOptions) -> LazyCqlBackend {
        LazyCqlBackend {
            options,
            connected: Mutex::new(None),
        }
    }

    /// Returns the connected store, connecting now if needed.
    fn store(&self) -> Result<Arc<CqlBackend>, ArchiveError> {
        let mut connected = self.connected.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(store) = connected.as_ref() {
            return Ok(Arc::clone(store));
        }
        let store = Arc::new(CqlBackend::connect(self.options.clone())?);
        *connected = Some(Arc::clone(&store));
        Ok(store)
    }
}

impl Backend for LazyCqlBackend {
    fn describe(&self) -> String {
        format!(
            "Cassandra at {}, keyspace {}",
            self.options.contact_points.join(","),
            self.options.keyspace
        )
    }

    fn write(&self, entries: &[Entry]) -> Result<(), ArchiveError> {
        self.store()?.write(entries)
    }

    fn sync(&self) -> Result<(), ArchiveError> {
        self.store()?.sync()
    }

    fn slots(&self, source: Source<'_>, first: i32, last: i32) -> Result<Vec<Slot>, ArchiveError> {
        self.store()?.slots(source, first, last)
    }

    fn read(
        &self,
        source: Source<'_>,
        slot: Slot,
        range: &RowRange,
        limit: usize,
    ) -> Result<Vec<Row>, ArchiveError> {
        self.store()?.read(source, slot, range, limit)
    }

    fn last_at(&self, name: &str, slot: Slot, time: i64) -> Result<Option<Row>, ArchiveError> {
        self.store()?.last_at(name, slot, time)
    }

    fn expire(&self, now: i64) -> Result<Expired, ArchiveError> {
        self.store()?.expire(now)
    }
}
