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
//! [`Backend`](crate::Backend) is synchronous. The store owns a small tokio runtime (one
//! worker thread, on which the driver's connections run) and every method waits with
//! [`Runtime::block_on`](tokio::runtime::Runtime::block_on) on the calling thread. Methods may
//! therefore be called from any plain thread — the archive's writer thread,
//! `tokio::task::spawn_blocking` threads of another runtime, tests — but **never from inside
//! an async task**: tokio panics there ("Cannot start a runtime from within a runtime").
//! Dropping the store is allowed anywhere (its runtime is shut down in the background).
//!
//! # Durability
//! A write returns once the coordinator acknowledged it at the configured consistency, i.e.
//! it is in the commit log of enough replicas; [`Backend::sync`](crate::Backend::sync) has
//! nothing more to do and returns at once. How durable an acknowledged write is depends on
//! the nodes' `commitlog_sync`: with `batch` or `group` a write is acknowledged only after
//! the commit log sync that holds it, so nothing acknowledged is lost; with `periodic`
//! (Cassandra's default) a node that crashes may lose what it acknowledged since its last
//! sync (up to `commitlog_sync_period`, 10 s by default, when the machine loses power) —
//! replication is then what protects those writes.

mod backend;
mod blocks;
mod errors;
mod expire;
mod lazy;
mod lease;
mod legacy;
mod options;
mod read;
mod schema;
mod store;
mod write;

pub use backend::CqlBackend;
pub use lazy::LazyCqlBackend;
pub use lease::{Holder, InfoLeases};
pub use options::{CqlConsistency, CqlOptions};
