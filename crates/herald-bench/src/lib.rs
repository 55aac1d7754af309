//! Herald's benchmark workload: one definition of each scenario, run against any system
//! through an adapter, so Herald and its peers are measured the same way in the same run.
//!
//! # Layout
//! - [`system`]: the [`System`], [`Publisher`] and [`Subscriber`] traits an adapter implements.
//! - [`herald`]: the Herald adapter (native protocol, Rust client, full log records).
//! - [`scenarios`]: `pub`, `pubsub`/`fanout`, `slow`, `latency`.
//! - [`report`]: [`Report`] and percentiles.
//!
//! `herald bench` runs the scenarios against Herald; `bench/compare.sh` runs them against
//! Herald, NATS and Redis in one go.

pub mod herald;
pub mod report;
pub mod scenarios;
pub mod system;

pub use report::Report;
pub use system::{Publisher, Received, Subscriber, System};
