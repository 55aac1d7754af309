//! `herald-bench-compare`: runs one scenario of the shared workload against Herald, NATS or
//! Redis and prints its JSON report on one line. `bench/compare.sh` drives it.
//!
//! ```text
//! cargo run --release -p herald-bench --features peers --bin herald-bench-compare -- \
//!     --system nats --url nats://127.0.0.1:4222 --scenario pubsub -n 1000000 --size 128
//! ```
//!
//! `--ack stored` (Herald, `pub` only) times the publish until the archive acknowledged every
//! record stored, with at most `--in-flight` records waiting ([`herald_bench::stored`]).

use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, ValueEnum};
use herald_bench::herald::Herald;
use herald_bench::nats::Nats;
use herald_bench::redis::Redis;
use herald_bench::report::resident_kib;
use herald_bench::scenarios::{self, Scenario, Workload};
use herald_bench::stored::{self, DEFAULT_IN_FLIGHT};

/// Run one benchmark scenario against Herald, NATS or Redis.
#[derive(Debug, Parser)]
struct Args {
    /// System under test.
    #[arg(long, value_enum)]
    system: SystemName,
    /// Its URL: `herald://…`, `nats://…` or `redis://…`.
    #[arg(long)]
    url: String,
    /// Scenario to run.
    #[arg(long, value_enum)]
    scenario: Scenario,
    /// Messages to send.
    #[arg(short = 'n', long, default_value_t = 1_000_000)]
    messages: u64,
    /// Bytes of payload per message (Herald: bytes of record text).
    #[arg(long, default_value_t = 128)]
    size: usize,
    /// Subscribers for `fanout`.
    #[arg(long, default_value_t = 10)]
    subscribers: usize,
    /// Messages per second for `latency`.
    #[arg(long, default_value_t = 10_000.0)]
    rate: f64,
    /// The server's process id: adds its resident memory after the scenario.
    #[arg(long)]
    pid: Option<u32>,
    /// Acknowledgement the publisher waits for: `stored` (Herald, `pub` only) until the
    /// archive has each record durably.
    #[arg(long, value_enum, default_value_t = Ack::Received)]
    ack: Ack,
    /// Records published and not yet acknowledged stored, at most (`--ack stored`).
    #[arg(long, default_value_t = DEFAULT_IN_FLIGHT)]
    in_flight: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Ack {
    /// The server has the messages (each system's flush).
    Received,
    /// Herald's archive has the records durably.
    Stored,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum SystemName {
    Herald,
    Nats,
    Redis,
}

fn main() -> anyhow::Result<ExitCode> {
    let args = Args::parse();
    let herald_pub = matches!(
        (args.system, args.scenario),
        (SystemName::Herald, Scenario::Pub)
    );
    if args.ack == Ack::Stored && !herald_pub {
        anyhow::bail!("--ack stored is for --system herald --scenario pub only");
    }
    // The same client runtime as `herald bench`: two worker threads.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the bench runtime")?;
    let url = args.url.clone();
    let workload = Workload {
        messages: args.messages,
        size: args.size,
        subscribers: args.subscribers,
        rate: args.rate,
    };
    let report = runtime.block_on(async {
        match args.system {
            SystemName::Herald => {
                let herald = Herald {
                    url,
                    subscriber_url: None,
                };
                match args.ack {
                    Ack::Stored => {
                        stored::publish_stored(&herald, args.messages, args.size, args.in_flight)
                            .await
                    }
                    Ack::Received => scenarios::run(&herald, args.scenario, &workload).await,
                }
            }
            SystemName::Nats => scenarios::run(&Nats { url }, args.scenario, &workload).await,
            SystemName::Redis => scenarios::run(&Redis { url }, args.scenario, &workload).await,
        }
    })?;
    let mut json = report.json;
    if let Some(pid) = args.pid {
        let kib = resident_kib(pid)
            .with_context(|| format!("cannot read the memory of process {pid}"))?;
        json["server_rss_kib"] = kib.into();
    }
    println!("{json}");
    Ok(ExitCode::SUCCESS)
}
