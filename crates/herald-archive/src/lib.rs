//! Herald's archive: which records are kept ([`Rules`]), for how long ([`Keep`]), and the
//! stores that keep them — the embedded SQLite store by default ([`EmbeddedBackend`]) and
//! Apache Cassandra / ScyllaDB behind the `cql` feature — behind one [`Backend`] trait that
//! one conformance suite ([`conformance`]) checks.
//!
//! # Layout
//! - [`rules`], [`keep`]: what to archive and for how long.
//! - [`entry`]: [`Entry`] (a record on its way in), [`Row`] (one coming out), days, tables.
//! - [`backend`]: the [`Backend`] trait: write, sync, slots, read one slot, look back, expire.
//! - [`query`]: pages merged across slots, log filters, instant lookups — once for all stores.
//! - [`decimate`]: samples folded into buckets (min/max/mean/count/first/last).
//! - [`writer`]: [`Archive`], the bounded buffer and the writer thread in front of a store,
//!   with the durability watermark that `stored` acknowledgements wait on.
//! - [`spill`]: where the buffer overflows to on the embedded path, before anything is dropped;
//!   `overflow`: the thread that writes the spill files, so the router never does.
//! - [`segment`]: the block-compressed segment file format.
//! - [`blockstore`]: [`BlockStore`], the store of segment files, one per class, hour and table.
//! - [`embedded`]: the SQLite store, one file per retention class and day.
//! - `cql`: the Cassandra / ScyllaDB store (feature `cql`): `CqlBackend`.
//! - [`migrate`]: moving an archive from the SQLite store into the block store.
//! - [`conformance`]: the suite every store must pass.
//! - [`error`]: [`ArchiveError`], a kind and a message.

#![deny(missing_docs)]

pub mod backend;
pub mod blockstore;
mod buffer;
pub mod conformance;
#[cfg(feature = "cql")]
pub mod cql;
pub mod decimate;
pub mod embedded;
pub mod entry;
pub mod error;
pub mod keep;
pub mod migrate;
pub mod options;
mod overflow;
pub mod query;
pub mod rows;
pub mod rules;
pub mod segment;
pub mod spill;
pub mod writer;

pub use backend::{Backend, Expired, Recovery, RowRange, Slot, Source};
pub use blockstore::BlockStore;
#[cfg(feature = "cql")]
pub use cql::{CqlBackend, CqlConsistency, CqlOptions, LazyCqlBackend};
pub use embedded::{EmbeddedBackend, OpenFiles};
pub use entry::{Entry, Row, Table};
pub use error::{ArchiveError, ArchiveErrorKind};
pub use keep::Keep;
pub use query::Budget;
pub use rules::{Rule, Rules};
pub use writer::{shed_limit, Archive, ArchiveOptions, ArchiveStats, FsyncPolicy};
