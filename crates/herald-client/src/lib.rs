//! The Rust client for Herald: connect, publish and log, subscribe with filters, request and
//! reply, acknowledged sends, flush and monitor.
//!
//! # Layout, in layers that depend only downward
//! 1. The public API: [`client`] ([`Client`] — every operation), [`subscription`]
//!    ([`Subscription`]), [`info`] (information objects), [`archive`] (queries), [`logger`]
//!    ([`Logger`], the non-blocking logger with its flight recorder, and
//!    [`logger::install_log`], the `log` crate facade).
//! 2. `connection`: the state the handles and the connection's tasks share, the tasks
//!    (`io`: frames in and out; `failover`: the next server when one fails), request/reply
//!    routing (`inbox`), and the handle every public object holds to send and wait.
//! 3. Below both: `outbox` (the send buffer, kept until acknowledged), `sink` (a
//!    subscription's reader end), `transport` (TCP or TLS), [`tls`] ([`TlsOptions`]),
//!    [`url`] ([`ServerUrl`], `herald://h1:7400,h2:7400?name=…&token=…` and
//!    `herald+tls://…?ca=…&cert=…&key=…`), [`options`] ([`ClientOptions`]), [`event`]
//!    ([`Event`]), [`delivered`] ([`Delivered`], decoded on first use), [`error`]
//!    ([`ConnectError`], [`ClientError`]), [`origin`] (this program's host, process,
//!    thread), `numbering` (the producer id and record numbers, kept on disk by a logger's
//!    disk buffer), `sync`.
//!
//! # Example
//! ```no_run
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use herald_client::Client;
//! use herald_proto::{Filter, Priority};
//!
//! let client = Client::connect("herald://127.0.0.1:7400?name=example").await?;
//! let mut warnings = client.subscribe(Filter::parse(Some("ANTENNA.*"), None, Some(">=WARNING"), &[], None)?).await?;
//! client.log(Priority::Warning, "ANTENNA.DV01.Mount", "encoder fault").await?;
//! let delivered = warnings.next_record_timeout(Duration::from_secs(1)).await?;
//! println!("{}: {}", delivered.subject(), delivered.record().text);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod archive;
pub mod client;
mod connection;
pub mod delivered;
pub mod error;
pub mod event;
pub mod info;
pub mod logger;
mod numbering;
pub mod options;
pub mod origin;
mod outbox;
mod sink;
pub mod subscription;
mod sync;
pub mod tls;
mod transport;
pub mod url;

pub use archive::Pages;
pub use client::{monitor_value, Client};
pub use delivered::Delivered;
pub use error::{ClientError, ConnectError};
pub use event::{Event, Interruption};
pub use herald_proto as proto;
pub use info::InfoChange;
pub use logger::{Logger, LoggerError, LoggerOptions, WhenFull};
pub use options::ClientOptions;
pub use subscription::Subscription;
pub use tls::TlsOptions;
pub use url::{ServerUrl, UrlError};
