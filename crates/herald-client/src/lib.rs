//! The Rust client for Herald: connect, publish and log, subscribe with filters, request and
//! reply, acknowledged sends, flush and monitor.
//!
//! # Layout
//! - [`client`]: [`Client`] and [`ClientOptions`] — every operation.
//! - [`subscription`]: [`Subscription`] and [`Event`]; [`delivered`]: [`Delivered`], decoded on first use.
//! - [`info`]: information objects — types, values, selections, subscriptions.
//! - [`url`]: [`ServerUrl`], `herald://h1:7400,h2:7400?name=…&token=…`, and
//!   `herald+tls://…?ca=…&cert=…&key=…`; [`tls`]: [`TlsOptions`], TLS and mutual TLS.
//! - [`error`]: [`ConnectError`] and [`ClientError`].
//! - `outbox`, `io`, `transport`, `failover`, `inbox`: the send buffer (kept until
//!   acknowledged), the connection tasks, the byte stream (TCP or TLS), moving to the next
//!   server when one fails, request/reply.
//! - [`origin`]: the host/process/thread origin of this program's records.
//! - [`logger`]: [`Logger`], the non-blocking logger with its flight recorder, and
//!   [`logger::install_log`], the `log` crate facade.
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
pub mod delivered;
pub mod error;
mod failover;
mod inbox;
pub mod info;
mod io;
pub mod logger;
pub mod origin;
mod outbox;
pub mod subscription;
pub mod tls;
mod transport;
pub mod url;

pub use archive::Pages;
pub use client::{monitor_value, Client, ClientOptions};
pub use delivered::Delivered;
pub use error::{ClientError, ConnectError};
pub use herald_proto as proto;
pub use info::InfoChange;
pub use logger::{Logger, LoggerError, LoggerOptions, WhenFull};
pub use subscription::{Event, Interruption, Subscription};
pub use tls::TlsOptions;
pub use url::{ServerUrl, UrlError};
