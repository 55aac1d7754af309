//! `herald bench`: throughput, latency and behaviour under load, measured end to end with
//! the shared workload of `herald-bench` (the same one `bench/compare.sh` runs against NATS
//! and Redis).
//!
//! Without `--server`, the bench starts a server in this process on a free loopback port, on
//! a runtime of its own, so one command measures the whole path.

use std::process::ExitCode;

use anyhow::Context;
use herald_bench::herald::Herald;
use herald_bench::scenarios::{self, Scenario as Shared, Workload};
use herald_server::config::ArchiveBackendConfig;
use herald_server::{Config, Server};

/// Measure throughput and latency.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Scenario to run.
    #[arg(value_enum)]
    scenario: Scenario,
    /// Server URL; without it, a server is started in this process.
    #[arg(long)]
    server: Option<String>,
    /// Subscribers connect to this server instead (with --server: another member of its
    /// cluster, to measure delivery across a route).
    #[arg(long, value_name = "URL", requires = "server")]
    subscriber_server: Option<String>,
    /// Records to send.
    #[arg(long, short = 'n', default_value_t = 1_000_000)]
    records: u64,
    /// Bytes of text per record.
    #[arg(long, default_value_t = 128)]
    size: usize,
    /// Subscribers for `fanout`.
    #[arg(long, default_value_t = 10)]
    subscribers: usize,
    /// Records per second for `latency`, `info`; for `archive` and `syslog` (its UDP sender),
    /// pace the ingest at this rate when above 10000 (otherwise it runs as fast as the
    /// client can).
    #[arg(long, default_value_t = 10_000.0)]
    rate: f64,
    /// Objects to create for `info`'s memory measurement.
    #[arg(long, default_value_t = 1_000_000)]
    objects: u64,
    /// The bench's own server archives into this Cassandra node (`host:port`, a fresh
    /// keyspace) instead of its embedded store.
    #[arg(long)]
    cassandra: Option<String>,
    /// Keep the bench server's archive on (default rules) in the routing scenarios; without
    /// it they measure routing alone, as NATS and Redis (which persist nothing) are measured.
    #[arg(long)]
    with_archive: bool,
    /// For `syslog` with `--server`: the server's syslog UDP and TCP addresses
    /// (`host:port,host:port`); the bench's own server listens on free loopback ports.
    #[arg(long, value_name = "UDP,TCP")]
    syslog: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Scenario {
    /// Records/s into the server, no subscriber.
    Pub,
    /// 1 publisher → 1 subscriber, records/s delivered.
    Pubsub,
    /// 1 publisher → `--subscribers` subscribers.
    Fanout,
    /// 5 fast subscribers alone, then beside one that reads at 1/5 of their rate.
    Slow,
    /// End-to-end latency at `--rate` records/s.
    Latency,
    /// The logger's call from 1, 2 and 8 threads.
    Logger,
    /// Information objects: notification latency at `--rate`, get latency, memory per
    /// object with `--objects` objects.
    Info,
    /// The archive: sustained ingest beside live routing, and the read time of one day of a
    /// 1 Hz signal, whole and in 1,000 buckets.
    Archive,
    /// syslog: messages into the syslog listeners over UDP (runs, then one datagram a
    /// message) and TCP (RFC 5424 octet-counted, RFC 3164 lines), then native publish; with
    /// the server's CPU time per million when it runs in this process.
    Syslog,
    /// `tracing::info!` through Herald's layer, beside fmt + tracing-appender, 1/2/8 threads.
    Tracing,
    /// A log storm of `-n` identical records beside a source publishing `--rate` distinct
    /// records/s for 5 s: that source's delivered rate and latency alone and during the storm.
    Storm,
    /// `-n` records to one subscriber, then shared by a queue group of three: both rates.
    Group,
}

impl Scenario {
    /// Returns the shared scenario this is, or `None` for Herald's own.
    fn shared(self) -> Option<Shared> {
        match self {
            Scenario::Pub => Some(Shared::Pub),
            Scenario::Pubsub => Some(Shared::Pubsub),
            Scenario::Fanout => Some(Shared::Fanout),
            Scenario::Slow => Some(Shared::Slow),
            Scenario::Latency => Some(Shared::Latency),
            Scenario::Logger
            | Scenario::Info
            | Scenario::Archive
            | Scenario::Syslog
            | Scenario::Storm
            | Scenario::Group
            | Scenario::Tracing => None,
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let server_runtime = runtime("herald-server")?;
    let (url, server) = match &args.server {
        Some(url) => (url.clone(), None),
        None => {
            // The bench's own server keeps its data in a directory of its own.
            let data_dir = own_data_dir();
            // Free ports for both front doors: the bench must not clash with a running server.
            let loopback = "127.0.0.1:0".parse()?;
            let mut config = Config {
                listen: loopback,
                http: loopback,
                data_dir,
                ..Config::default()
            };
            if args.scenario != Scenario::Archive && !args.with_archive {
                config.archive.backend = ArchiveBackendConfig::None;
            }
            if args.scenario == Scenario::Syslog {
                config.syslog = Some(herald_server::config::SyslogConfig {
                    udp: Some(loopback),
                    tcp: Some(loopback),
                    subject: herald_server::config::syslog::DEFAULT_SUBJECT.into(),
                    max_message_bytes: herald_server::config::syslog::DEFAULT_MAX_MESSAGE_BYTES,
                });
            }
            if let Some(node) = &args.cassandra {
                config.archive.backend = ArchiveBackendConfig::Cassandra {
                    contact_points: vec![node.clone()],
                    keyspace: format!("herald_bench_{}", std::process::id()),
                    replication_factor: 1,
                };
            }
            let server = server_runtime.block_on(Server::start(config))?;
            (format!("herald://{}", server.local_addr()), Some(server))
        }
    };
    let syslog_addrs = match (&args.syslog, &server) {
        (Some(given), _) => {
            let (udp, tcp) = given
                .split_once(',')
                .context("--syslog takes the UDP and TCP addresses: host:port,host:port")?;
            Some((udp.parse()?, tcp.parse()?))
        }
        (None, Some(server)) => match server.syslog_addrs() {
            (Some(udp), Some(tcp)) => Some((udp, tcp)),
            _ => None,
        },
        (None, None) => None,
    };
    let herald = Herald {
        url,
        subscriber_url: args.subscriber_server.clone(),
    };
    let workload = Workload {
        messages: args.records,
        size: args.size,
        subscribers: args.subscribers,
        rate: args.rate,
    };
    // The day `archive` wrote, read from the store once the server is down.
    let mut day_written = None;
    let mut report = runtime("herald-bench")?.block_on(async {
        match (args.scenario.shared(), args.scenario) {
            (Some(shared), _) => scenarios::run(&herald, shared, &workload).await,
            (None, Scenario::Logger) => herald_bench::logger::logger(&herald.url, &[1, 2, 8]).await,
            (None, Scenario::Tracing) => {
                herald_bench::tracing_layer::tracing_calls(&herald.url, &[1, 2, 8]).await
            }
            (None, Scenario::Syslog) => {
                let (udp, tcp) = syslog_addrs
                    .context("with --server, give its syslog addresses: --syslog UDP,TCP")?;
                // `--rate` paces the UDP sender when given above its latency default.
                let rate = (args.rate > 10_000.0).then_some(args.rate);
                // The server's CPU time is read only when it runs in this process.
                let own_server = server.is_some();
                let addrs = (udp, tcp);
                herald_bench::syslog::syslog(
                    &herald.url,
                    addrs,
                    args.records,
                    args.size,
                    rate,
                    own_server,
                )
                .await
            }
            (None, Scenario::Group) => {
                herald_bench::group::group(&herald.url, args.records, args.size).await
            }
            (None, Scenario::Storm) => {
                herald_bench::storm::storm(&herald.url, args.records, args.rate, 5.0).await
            }
            (None, Scenario::Archive) => {
                // `--rate` paces the ingest when given above its latency default.
                let rate = (args.rate > 10_000.0).then_some(args.rate);
                let (report, day) =
                    herald_bench::archive::archive(&herald.url, args.records, rate).await?;
                day_written = Some(day);
                Ok(report)
            }
            (None, _) => {
                // The server runs in this process unless --server says otherwise; then its
                // memory is not ours to measure, and 0 is reported.
                let pid = if args.server.is_none() {
                    std::process::id()
                } else {
                    0
                };
                let gets = (args.records / 10).max(1);
                herald_bench::info::info(
                    &herald.url,
                    args.records,
                    args.rate,
                    gets,
                    args.objects,
                    pid,
                )
                .await
            }
        }
    })?;
    if let Some(server) = server {
        server_runtime.block_on(server.shutdown());
        // The embedded store of our own server can also be read directly, now that it is
        // closed (every open block in its files).
        if let (Some(day), None) = (day_written, &args.cassandra) {
            let store = herald_server::config::ArchiveConfig::embedded_dir(&own_data_dir());
            herald_bench::archive::store_measurements(&store, day, &mut report)?;
        }
        // What the bench's own server stored is of no further use.
        let _ = std::fs::remove_dir_all(own_data_dir());
    }
    if args.json {
        println!("{}", report.json);
    } else {
        report.lines.iter().for_each(|line| println!("{line}"));
    }
    Ok(ExitCode::SUCCESS)
}

/// Returns the data directory of the bench's own server.
fn own_data_dir() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("herald-bench-{}", std::process::id()))
}

fn runtime(name: &str) -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(name)
        .enable_all()
        .build()
        .with_context(|| format!("starting the {name} runtime"))
}
