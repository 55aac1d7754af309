//! The Cassandra / ScyllaDB store (feature `cql`), through the `scylla` driver.
//!
//! # Tables
//! Data is partitioned by what is read together and expired together (see `cql/schema.rs`):
//! - `sample_blocks`: one partition per (name, day, retention class), a row per block of
//!   records (`cql/blocks.rs`) clustered by its first record's (time, seq);
//! - `log_blocks`: one partition per (day, hour of the day, retention class), clustered the
//!   same way, so one day of logs is 24 partitions;
//! - index tables (`name_slots`, `slots`, `slot_names`, `classes`) so that listing slots and
//!   expiring never scan: a name's slots are one partition, a class's days are one partition,
//!   and the names written in one (class, day) are one partition. Expiring deletes whole
//!   partitions, never single rows.
//!
//! Index rows are written once per process for each (name, day, class), before the data
//! rows that need them, so a crash never leaves data the index does not lead to.
//!
//! # Threads
//! [`Backend`] is synchronous. The store owns a small tokio runtime (one worker thread, on
//! which the driver's connections run) and every method waits with [`Runtime::block_on`]
//! on the calling thread. Methods may therefore be called from any plain thread — the
//! archive's writer thread, `tokio::task::spawn_blocking` threads of another runtime,
//! tests — but **never from inside an async task**: tokio panics there ("Cannot start a
//! runtime from within a runtime"). Dropping the store is allowed anywhere (its runtime is
//! shut down in the background).
//!
//! # Durability
//! A write returns once the coordinator acknowledged it at the configured consistency, i.e.
//! it is in the commit log of enough replicas; [`Backend::sync`] has nothing more to do and
//! returns at once. How durable an acknowledged write is depends on the nodes'
//! `commitlog_sync`: with `batch` or `group` a write is acknowledged only after the commit
//! log sync that holds it, so nothing acknowledged is lost; with `periodic` (Cassandra's
//! default) a node that crashes may lose what it acknowledged since its last sync (up to
//! `commitlog_sync_period`, 10 s by default, when the machine loses power) — replication is
//! then what protects those writes.

mod blocks;
mod expire;
mod lazy;
mod lease;
mod legacy;
mod read;
mod schema;
mod write;

pub use lazy::LazyCqlBackend;
pub use lease::{Holder, InfoLeases};

use std::collections::HashSet;
use std::future::Future;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::errors::{DbError, ExecutionError, NewSessionError, PrepareError, RequestAttemptError};
use tokio::runtime::Runtime;

use crate::backend::{Backend, Expired, RowRange, Slot, Source};
use crate::entry::{Entry, Row};
use crate::error::{ArchiveError, ArchiveErrorKind};

use self::schema::Statements;
use self::write::Registered;

/// How many replicas must acknowledge a write or answer a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CqlConsistency {
    /// One replica.
    One,
    /// A majority of the replicas in the coordinator's data center (one at RF 1).
    #[default]
    LocalQuorum,
    /// A majority of all replicas.
    Quorum,
}

impl CqlConsistency {
    fn driver(self) -> scylla::statement::Consistency {
        use scylla::statement::Consistency;
        match self {
            CqlConsistency::One => Consistency::One,
            CqlConsistency::LocalQuorum => Consistency::LocalQuorum,
            CqlConsistency::Quorum => Consistency::Quorum,
        }
    }
}

/// Where the cluster is and how to use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CqlOptions {
    /// Nodes to contact first, as `host:port` (`127.0.0.1:9042`); the others are discovered.
    pub contact_points: Vec<String>,
    /// The keyspace holding the archive (letters, digits and `_`; created if missing).
    pub keyspace: String,
    /// Replicas of each row when the keyspace is created (`SimpleStrategy`); an existing
    /// keyspace keeps its own.
    pub replication_factor: u32,
    /// How long one request may take, retries included, before it fails as unavailable.
    pub request_timeout: Duration,
    /// Consistency of reads and writes.
    pub consistency: CqlConsistency,
}

impl Default for CqlOptions {
    fn default() -> Self {
        CqlOptions {
            contact_points: vec!["127.0.0.1:9042".to_string()],
            keyspace: "herald".to_string(),
            replication_factor: 1,
            request_timeout: Duration::from_secs(10),
            consistency: CqlConsistency::default(),
        }
    }
}

/// The Cassandra / ScyllaDB store.
pub struct CqlBackend {
    store: Store,
    /// Taken and shut down in the background on drop.
    runtime: Option<Runtime>,
    description: String,
}

/// What the async side works with.
struct Store {
    session: Session,
    statements: Statements,
    /// Index rows this process has written (or found written).
    registered: Mutex<HashSet<Registered>>,
}

impl std::fmt::Debug for CqlBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CqlBackend")
            .field("description", &self.description)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
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

impl Store {
    async fn connect(options: &CqlOptions) -> Result<Store, ArchiveError> {
        let profile = ExecutionProfile::builder()
            .consistency(options.consistency.driver())
            .request_timeout(Some(options.request_timeout))
            .build();
        let session = SessionBuilder::new()
            .known_nodes(&options.contact_points)
            .keyspaces_to_fetch([options.keyspace.to_lowercase()])
            .default_execution_profile_handle(profile.into_handle())
            .build()
            .await
            .map_err(|err| session_error(&options.contact_points, err))?;
        let legacy = schema::create(&session, options).await?;
        let statements = Statements::prepare(&session, &options.keyspace, legacy).await?;
        Ok(Store {
            session,
            statements,
            registered: Mutex::new(HashSet::new()),
        })
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

/// Whether a failed attempt means the cluster cannot serve now (so the caller retries).
fn attempt_unavailable(err: &RequestAttemptError) -> bool {
    match err {
        RequestAttemptError::UnableToAllocStreamId
        | RequestAttemptError::BrokenConnectionError(_) => true,
        RequestAttemptError::DbError(db, _) => matches!(
            db,
            DbError::Unavailable { .. }
                | DbError::Overloaded
                | DbError::IsBootstrapping
                | DbError::ReadTimeout { .. }
                | DbError::WriteTimeout { .. }
                | DbError::RateLimitReached { .. }
        ),
        _ => false,
    }
}

fn prepare_unavailable(err: &PrepareError) -> bool {
    match err {
        PrepareError::ConnectionPoolError(_) => true,
        PrepareError::AllAttemptsFailed { first_attempt } => attempt_unavailable(first_attempt),
        _ => false,
    }
}

fn kind(unavailable: bool) -> ArchiveErrorKind {
    if unavailable {
        ArchiveErrorKind::Unavailable
    } else {
        ArchiveErrorKind::Io
    }
}

/// Maps a failed request: unreachable nodes and timeouts are `Unavailable`, the rest `Io`.
fn execution_error(what: &str, err: &ExecutionError) -> ArchiveError {
    let unavailable = match err {
        ExecutionError::EmptyPlan
        | ExecutionError::ConnectionPoolError(_)
        | ExecutionError::RequestTimeout(_)
        | ExecutionError::SchemaAgreementError(_)
        | ExecutionError::MetadataError(_) => true,
        ExecutionError::LastAttemptError(attempt) => attempt_unavailable(attempt),
        ExecutionError::PrepareError(prepare) => prepare_unavailable(prepare),
        _ => false,
    };
    ArchiveError::new(kind(unavailable), format!("cassandra: {what}: {err}"))
}

fn prepare_error(statement: &str, err: &PrepareError) -> ArchiveError {
    ArchiveError::new(
        kind(prepare_unavailable(err)),
        format!("cassandra: preparing `{statement}`: {err}"),
    )
}

fn session_error(contact_points: &[String], err: NewSessionError) -> ArchiveError {
    let unavailable = matches!(
        err,
        NewSessionError::MetadataError(_) | NewSessionError::FailedToResolveAnyHostname(_)
    );
    ArchiveError::new(
        kind(unavailable),
        format!(
            "cassandra: connecting to {}: {err}",
            contact_points.join(", ")
        ),
    )
}

/// Rows that do not have the columns and types asked for.
fn rows_error(what: &str, err: impl std::fmt::Display) -> ArchiveError {
    ArchiveError::new(
        ArchiveErrorKind::Corrupt,
        format!("cassandra: reading {what}: {err}"),
    )
}
