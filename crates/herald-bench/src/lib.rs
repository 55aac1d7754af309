//! Herald's benchmark workload: one definition of each scenario, run against any system
//! through an adapter, so Herald and its peers are measured the same way in the same run.
//!
//! # Layout
//! - [`system`]: the [`System`], [`Publisher`] and [`Subscriber`] traits an adapter implements.
//! - [`archive`]: archive ingest beside live routing, and the read time of a day of a signal.
//! - [`herald`]: the Herald adapter (native protocol, Rust client, full log records).
//! - [`info`]: the information service's notification and get latency, and memory per object.
//! - [`logger`]: the cost of the Herald logger's call from several threads.
//! - [`scenarios`]: `pub`, `pubsub`/`fanout`, `slow`, `latency`.
//! - [`stored`]: `pub` acknowledged `stored` (Herald's, beside JetStream's acknowledged publish).
//! - [`syslog`]: messages into the syslog listeners, beside native publish.
//! - [`cpu`]: CPU time of a thread, and of the server when it runs in the bench's process.
//! - [`report`]: [`Report`] and percentiles.
//! - [`payload`]: the peers' opaque payload, stamped with its send time.
//! - `nats`, `redis` (feature `peers`): the peers' adapters, used by `herald-bench-compare`
//!   (`src/bin/compare.rs`).
//!
//! `herald bench` runs the scenarios against Herald; `bench/compare.sh` runs them against
//! Herald, NATS and Redis in one go.

pub mod archive;
pub mod cpu;
pub mod group;
pub mod herald;
pub mod info;
pub mod logger;
#[cfg(feature = "peers")]
pub mod nats;
pub mod payload;
#[cfg(feature = "peers")]
pub mod redis;
pub mod report;
pub mod scenarios;
pub mod stored;
pub mod storm;
pub mod syslog;
pub mod system;
pub mod tracing_layer;

pub use report::Report;
pub use system::{Publisher, Received, Subscriber, System};
