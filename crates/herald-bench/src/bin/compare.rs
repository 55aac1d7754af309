//! `herald-bench-compare`: runs one scenario of the shared workload against Herald, NATS or
//! Redis and prints its JSON report on one line. `bench/compare.sh` drives it.
//!
//! ```text
//! cargo run --release -p herald-bench --features peers --bin herald-bench-compare -- \
//!     --system nats --url nats://127.0.0.1:4222 --scenario pubsub -n 1000000 --size 128
//! ```

use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, ValueEnum};
use herald_bench::herald::Herald;
use herald_bench::nats::Nats;
use herald_bench::redis::Redis;
use herald_bench::{scenarios, Report, System};

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
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum SystemName {
    Herald,
    Nats,
    Redis,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Scenario {
    /// Messages/s into the server, no subscriber.
    Pub,
    /// 1 publisher → 1 subscriber, messages/s delivered.
    Pubsub,
    /// 1 publisher → `--subscribers` subscribers.
    Fanout,
    /// 5 fast subscribers alone, then beside one that reads at 1/5 of their rate.
    Slow,
    /// End-to-end latency at `--rate` messages/s.
    Latency,
}

fn main() -> anyhow::Result<ExitCode> {
    let args = Args::parse();
    // The same client runtime as `herald bench`: two worker threads.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the bench runtime")?;
    let url = args.url.clone();
    let report = runtime.block_on(async {
        match args.system {
            SystemName::Herald => run(&Herald { url }, &args).await,
            SystemName::Nats => run(&Nats { url }, &args).await,
            SystemName::Redis => run(&Redis { url }, &args).await,
        }
    })?;
    let mut json = report.json;
    if let Some(pid) = args.pid {
        json["server_rss_kib"] = resident_kib(pid)?.into();
    }
    println!("{json}");
    Ok(ExitCode::SUCCESS)
}

async fn run<S: System>(system: &S, args: &Args) -> anyhow::Result<Report> {
    let (messages, size) = (args.messages, args.size);
    match args.scenario {
        Scenario::Pub => scenarios::publish_only(system, messages, size).await,
        Scenario::Pubsub => scenarios::fanout_report(system, messages, size, 1).await,
        Scenario::Fanout => {
            scenarios::fanout_report(system, messages, size, args.subscribers).await
        }
        Scenario::Slow => scenarios::slow(system, messages, size).await,
        Scenario::Latency => scenarios::latency(system, messages, size, args.rate).await,
    }
}

/// Returns the resident memory of process `pid` in KiB (`VmRSS` in `/proc/PID/status`).
fn resident_kib(pid: u32) -> anyhow::Result<u64> {
    let path = format!("/proc/{pid}/status");
    let status = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .with_context(|| format!("no VmRSS in {path}"))?;
    let kib = line.trim().trim_end_matches("kB").trim();
    kib.parse()
        .with_context(|| format!("VmRSS `{kib}` in {path} is not a number"))
}
