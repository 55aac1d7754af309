//! [`CqlBackend`]: the archive's synchronous [`Backend`] over the async store, on a runtime of
//! its own (see the module's notes on threads).

use std::future::Future;

use tokio::runtime::Runtime;

use crate::backend::{Backend, Expired, RowRange, Slot, Source};
use crate::entry::{Entry, Row};
use crate::error::ArchiveError;

use super::options::CqlOptions;
use super::store::Store;
use super::{expire, read, schema, write};

/// The Cassandra / ScyllaDB store.
pub struct CqlBackend {
    store: Store,
    /// Taken and shut down in the background on drop.
    runtime: Option<Runtime>,
    description: String,
}

impl std::fmt::Debug for CqlBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CqlBackend")
            .field("description", &self.description)
            .finish_non_exhaustive()
    }
}

impl CqlBackend {
    /// Connects to the cluster, creates the keyspace and the tables if missing, and prepares
    /// the statements. Must not be called from inside an async task (see the module docs).
    ///
    /// # Errors
    /// `Unavailable` if no contact point answers, else `Io` naming what failed.
    pub fn connect(options: CqlOptions) -> Result<CqlBackend, ArchiveError> {
        schema::check_keyspace_name(&options.keyspace)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("herald-cql")
            .enable_all()
            .build()
            .map_err(|err| ArchiveError::io("starting the CQL runtime", err))?;
        let description = format!(
            "Cassandra at {}, keyspace {}",
            options.contact_points.join(", "),
            options.keyspace
        );
        let store = runtime.block_on(Store::connect(&options))?;
        Ok(CqlBackend {
            store,
            runtime: Some(runtime),
            description,
        })
    }

    fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime
            .as_ref()
            .expect("the runtime lives until the store is dropped")
            .block_on(future)
    }
}

impl Drop for CqlBackend {
    fn drop(&mut self) {
        // Dropping a runtime blocks, which panics inside an async task; this does not.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl Backend for CqlBackend {
    fn describe(&self) -> String {
        self.description.clone()
    }

    fn write(&self, entries: &[Entry]) -> Result<(), ArchiveError> {
        self.block_on(write::write(&self.store, entries, false))
    }

    fn write_checked(&self, entries: &[Entry]) -> Result<(), ArchiveError> {
        self.block_on(write::write(&self.store, entries, true))
    }

    fn sync(&self) -> Result<(), ArchiveError> {
        // Acknowledged writes are in the replicas' commit logs; see the module docs.
        Ok(())
    }

    fn slots(
        &self,
        source: Source<'_>,
        first_day: i32,
        last_day: i32,
    ) -> Result<Vec<Slot>, ArchiveError> {
        self.block_on(read::slots(&self.store, source, first_day, last_day))
    }

    fn read(
        &self,
        source: Source<'_>,
        slot: Slot,
        range: &RowRange,
        limit: usize,
    ) -> Result<Vec<Row>, ArchiveError> {
        self.block_on(read::read(&self.store, source, slot, range, limit))
    }

    fn last_at(&self, name: &str, slot: Slot, time: i64) -> Result<Option<Row>, ArchiveError> {
        self.block_on(read::last_at(&self.store, name, slot, time))
    }

    fn expire(&self, now: i64) -> Result<Expired, ArchiveError> {
        self.block_on(expire::expire(&self.store, now))
    }
}
