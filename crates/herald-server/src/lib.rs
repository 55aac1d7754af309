//! The Herald server: front doors, sessions, router hookup, monitor and configuration.
//!
//! # Layout
//! - [`server`]: [`Server`] — bind, accept, shut down. [`shared`]: [`Shared`], what every
//!   session and task takes: [`local`]'s parts ([`Local`](local::Local): router, monitor,
//!   information service, archive, configuration…) and the cluster, which takes `Local`
//!   alone.
//! - [`listener`]: the accept loop with its connection limit.
//! - [`connection_limit`]: connections in all and per address, native and HTTP.
//! - [`session`]: one connection from `HELLO` to close, heartbeat watch, [`Close`] reasons.
//! - [`auth`]: identities (the file `herald token` writes), [`Access`](auth::Access) and the
//!   permission checks; [`revoke`]: the refusing default, reloading the file, closing
//!   revoked connections.
//! - [`cluster`]: this server as a member of a cluster — routes, interests, dialers; below
//!   `shared`, above `local`.
//! - [`mirror`]: one-way mirrors — feeding one (`[[mirror]]`), and being one.
//! - [`command`]: one file per client operation (publish, subscribe, unsubscribe, monitor).
//! - [`connection`]: [`FrameReader`], frames from a socket.
//! - [`writer`]: the per-connection writer task (replies, pings, deliveries, gap notices).
//! - [`producers`]: numbered producers' records seen here, to drop what a failover resends;
//!   [`acks`]: a connection's acknowledgements in order while some wait for routes;
//!   [`relay`]: records from another server (a route, a mirror's source) routed here;
//!   [`remote_gap`]: a loss on another server passed on to the local subscribers.
//! - [`reload`]: SIGHUP and `RELOAD` read the configuration again and put in force what
//!   can change live ([`reload::diff`] says which); `config::Source` is where it came from.
//! - [`info`]: the information service (store, info subscribers, change records).
//! - [`http`]: the HTTP front door (`GET`/`PUT`/`DELETE /info/{name}`, `GET /info`,
//!   `GET /info-types`, the archive, `GET /monitor`, the WebSockets `/ws/records` and
//!   `/ws/info`, the embedded UI files), JSON errors.
//! - [`monitor`]: counters and the connection registry; [`events`]: log-and-count events;
//!   [`close_reason`]: why a connection ended, below both.
//! - [`memory`]: freed memory given back to the system once the server goes quiet.
//! - [`config`]: [`Config`] from file, `HERALD_*` and flags; [`units`] for `2s`, `64KiB`.
//! - [`data_lock`]: [`DataDirGuard`](data_lock::DataDirGuard), one server per data directory.
//! - [`tls`]: TLS on both front doors, mutual TLS, reloading the certificate files;
//!   [`tls::peer`]: the name in a client certificate.
//! - [`shutdown`]: the shutdown signal.
//!
//! # Example
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> std::io::Result<()> {
//! use herald_server::{Config, Server};
//!
//! let data_dir = std::env::temp_dir().join(format!("herald-doc-{}", std::process::id()));
//! let loopback = "127.0.0.1:0".parse().unwrap();
//! let config = Config { listen: loopback, http: loopback, data_dir: data_dir.clone(), ..Config::default() };
//! let server = Server::start(config).await?;
//! println!("listening on {}, HTTP on {}", server.local_addr(), server.http_addr());
//! server.shutdown().await;
//! # std::fs::remove_dir_all(&data_dir)?;
//! # Ok(()) }
//! ```

pub mod acks;
pub mod archive;
pub mod auth;
pub mod close_reason;
pub mod closing;
pub mod cluster;
pub mod command;
pub mod config;
pub mod connection;
pub mod connection_limit;
pub mod data_lock;
pub mod events;
pub mod halves;
pub mod http;
pub mod info;
pub mod ingest;
pub mod listener;
pub mod local;
pub mod memory;
pub mod mirror;
pub mod monitor;
pub mod otlp;
pub mod producers;
pub mod relay;
pub mod reload;
pub mod remote_gap;
pub mod revoke;
pub mod round_trip;
pub mod server;
pub mod session;
pub mod session_state;
pub mod shared;
pub mod shutdown;
pub mod snapshot;
pub mod storm;
pub mod syslog;
pub mod tls;
pub mod units;
pub mod writer;

pub use config::{Config, ConfigError};
pub use connection::FrameReader;
pub use server::{Preflight, Server, Shared};
pub use session_state::Close;
