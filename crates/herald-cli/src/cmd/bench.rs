//! `herald bench`: throughput of publishing into a server, and of publishing to a subscriber.
//!
//! Without `--server`, the bench starts a server in this process on a free loopback port, on
//! a runtime of its own, so one command measures the whole path.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use herald_client::{Client, ClientOptions, Event};
use herald_proto::{Filter, Kind, Priority, Record};
use herald_server::{Config, Server};
use serde_json::json;

/// Longest a bench waits without progress before it gives up and reports what it has.
const STALL_TIMEOUT: Duration = Duration::from_secs(10);
/// How often progress is printed.
const PROGRESS_INTERVAL: Duration = Duration::from_secs(1);

/// Measure throughput.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Scenario to run.
    #[arg(value_enum)]
    scenario: Scenario,
    /// Server URL; without it, a server is started in this process.
    #[arg(long)]
    server: Option<String>,
    /// Records to send.
    #[arg(long, short = 'n', default_value_t = 1_000_000)]
    records: u64,
    /// Bytes of text per record.
    #[arg(long, default_value_t = 128)]
    size: usize,
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
}

/// What one run measured.
#[derive(Debug)]
struct Outcome {
    sent: u64,
    received: u64,
    lost: u64,
    elapsed: Duration,
    record_bytes: usize,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let server_runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("herald-server")
        .enable_all()
        .build()
        .context("starting server runtime")?;
    let (url, server) = match &args.server {
        Some(url) => (url.clone(), None),
        None => {
            let config = Config {
                listen: "127.0.0.1:0".parse()?,
                ..Config::default()
            };
            let server = server_runtime.block_on(Server::start(config))?;
            (format!("herald://{}", server.local_addr()), Some(server))
        }
    };
    let client_runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("herald-bench")
        .enable_all()
        .build()
        .context("starting client runtime")?;
    let outcome = client_runtime.block_on(async {
        match args.scenario {
            Scenario::Pub => publish_only(&url, &args).await,
            Scenario::Pubsub => publish_subscribe(&url, &args).await,
        }
    })?;
    let server_dropped = server.as_ref().map(|server| {
        let snapshot = server.monitor().snapshot();
        match herald_client::monitor_value(&snapshot, "dropped") {
            Some(herald_proto::Value::Int(n)) => *n,
            _ => 0,
        }
    });
    if let Some(server) = server {
        server_runtime.block_on(server.shutdown());
    }
    report(&args, &outcome, server_dropped);
    Ok(ExitCode::SUCCESS)
}

/// The record every scenario sends: a log record with subject, type, priority, origin and
/// `size` bytes of text, like a real one.
fn bench_record(size: usize) -> Record {
    Record {
        type_name: "bench".to_string(),
        priority: Priority::Info,
        origin: herald_client::origin::local_origin(),
        text: "x".repeat(size),
        ..Record::new(Kind::Log, "bench.pub")
    }
}

async fn connect(url: &str, name: &str) -> anyhow::Result<Client> {
    let options = ClientOptions {
        name: name.to_string(),
        ..ClientOptions::default()
    };
    Client::connect_with(url, options)
        .await
        .with_context(|| format!("connecting to {url}"))
}

async fn publish_only(url: &str, args: &Args) -> anyhow::Result<Outcome> {
    let client = connect(url, "bench-pub").await?;
    let record = bench_record(args.size);
    let progress = Progress::new("published", args.records);
    let start = Instant::now();
    for sent in 0..args.records {
        client.publish(&record).await?;
        progress.tick(sent + 1);
    }
    client
        .flush(STALL_TIMEOUT * 6)
        .await
        .context("waiting for the server to take every record")?;
    let elapsed = start.elapsed();
    progress.done();
    Ok(Outcome {
        sent: args.records,
        received: 0,
        lost: 0,
        elapsed,
        record_bytes: record.to_bytes().len(),
    })
}

async fn publish_subscribe(url: &str, args: &Args) -> anyhow::Result<Outcome> {
    let subscriber = connect(url, "bench-sub").await?;
    let mut subscription = subscriber.subscribe(Filter::subject("bench.*")?).await?;
    let received = Arc::new(AtomicU64::new(0));
    let lost = Arc::new(AtomicU64::new(0));
    let total = args.records;
    let counter = {
        let (received, lost) = (Arc::clone(&received), Arc::clone(&lost));
        tokio::spawn(async move {
            while received.load(Ordering::Relaxed) + lost.load(Ordering::Relaxed) < total {
                // Take what is here without a timer; arm the stall timer only when idle.
                let event = match subscription.try_next() {
                    Some(event) => event,
                    None => match tokio::time::timeout(STALL_TIMEOUT, subscription.next()).await {
                        Ok(Some(event)) => event,
                        Ok(None) | Err(_) => break,
                    },
                };
                match event {
                    Event::Record(_) => received.fetch_add(1, Ordering::Relaxed),
                    Event::Gap(gap) => lost.fetch_add(gap.count, Ordering::Relaxed),
                };
            }
            Instant::now()
        })
    };
    let publisher = connect(url, "bench-pub").await?;
    let record = bench_record(args.size);
    let progress = Progress::new("published", total);
    let start = Instant::now();
    for sent in 0..total {
        publisher.publish(&record).await?;
        progress.tick(sent + 1);
    }
    publisher
        .flush(STALL_TIMEOUT * 6)
        .await
        .context("waiting for the server to take every record")?;
    let finished = counter.await.context("subscriber task")?;
    progress.done();
    Ok(Outcome {
        sent: total,
        received: received.load(Ordering::Relaxed),
        lost: lost.load(Ordering::Relaxed),
        elapsed: finished.duration_since(start),
        record_bytes: record.to_bytes().len(),
    })
}

fn report(args: &Args, outcome: &Outcome, server_dropped: Option<i64>) {
    let seconds = outcome.elapsed.as_secs_f64().max(1e-9);
    let counted = if args.scenario == Scenario::Pub {
        outcome.sent
    } else {
        outcome.received
    };
    let rate = counted as f64 / seconds;
    let payload_mb = rate * args.size as f64 / 1e6;
    let wire_mb = rate * outcome.record_bytes as f64 / 1e6;
    if args.json {
        let value = json!({
            "scenario": format!("{:?}", args.scenario).to_lowercase(),
            "records": outcome.sent,
            "received": outcome.received,
            "lost": outcome.lost,
            "size": args.size,
            "record_bytes": outcome.record_bytes,
            "seconds": seconds,
            "records_per_second": rate,
            "payload_mb_per_second": payload_mb,
            "record_mb_per_second": wire_mb,
            "server_dropped": server_dropped,
        });
        println!("{value}");
        return;
    }
    println!(
        "{:?}: {} records of {} B text ({} B encoded) in {:.3} s",
        args.scenario, outcome.sent, args.size, outcome.record_bytes, seconds
    );
    if args.scenario == Scenario::Pubsub {
        let server = server_dropped.map_or_else(String::new, |n| {
            format!(", {n} of them by the server's queue")
        });
        println!(
            "  delivered {}  lost {} (reported by gap notices{server})",
            outcome.received, outcome.lost
        );
    }
    println!(
        "  {:.0} records/s  {:.1} MB/s text  {:.1} MB/s records",
        rate, payload_mb, wire_mb
    );
}

/// Prints progress to stderr about once a second on long runs.
struct Progress {
    what: &'static str,
    total: u64,
    start: Instant,
    last: std::cell::Cell<Instant>,
}

impl Progress {
    fn new(what: &'static str, total: u64) -> Self {
        Progress {
            what,
            total,
            start: Instant::now(),
            last: std::cell::Cell::new(Instant::now()),
        }
    }

    fn tick(&self, done: u64) {
        // Checking the clock per record would cost more than publishing; every 64k is plenty.
        if !done.is_multiple_of(65_536) || self.last.get().elapsed() < PROGRESS_INTERVAL {
            return;
        }
        self.last.set(Instant::now());
        let rate = done as f64 / self.start.elapsed().as_secs_f64();
        eprintln!("  {} {done}/{} ({rate:.0}/s)", self.what, self.total);
    }

    fn done(&self) {
        if self.start.elapsed() >= PROGRESS_INTERVAL {
            eprintln!("  {} {}/{} done", self.what, self.total, self.total);
        }
    }
}
