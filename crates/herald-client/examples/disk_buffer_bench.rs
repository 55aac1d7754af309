//! Measures the logger's disk buffer: what a log call costs the logging thread while
//! connected and through a full outage (no server answers: the background side moves every
//! record to disk), at the same steady rate, and the rate at which the records on disk are
//! sent to a server once one answers (until acknowledged). It starts its own server
//! in-process (herald-testkit, the default configuration: archive on).
//!
//!     cargo run --release -p herald-client --example disk_buffer_bench -- [records] [rate]
//!
//! `rate` (records/s, default 100,000) paces the producer: a steady logger, not a flood
//! (one faster than the background side writes to disk fills the memory buffer during an
//! outage, which drops and counts). The texts are made before the timing starts.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use herald_client::{ClientOptions, Logger, LoggerOptions};
use herald_testkit::TestServer;

/// Log calls timed together (an `Instant` costs about as much as a call).
const GROUP: usize = 64;

fn options(dir: &Path) -> LoggerOptions {
    LoggerOptions {
        buffer_dir: Some(dir.to_path_buf()),
        buffer_quota: 1 << 30,
        close_timeout: Duration::from_secs(60),
        ..LoggerOptions::new("BENCH.disk")
    }
}

/// What the calls cost: median, 99th percentile and mean of groups of [`GROUP`] in ns of
/// wall-clock time (preemption included), and the logging thread's own CPU time per call
/// (the loop's pacing included, the same in both runs).
struct Cost {
    median: f64,
    p99: f64,
    mean: f64,
    cpu: f64,
}

/// Nanoseconds the calling thread has run on a CPU (Linux: /proc/thread-self/schedstat).
fn thread_cpu_ns() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

/// Logs `texts` at `rate` records/s.
fn log_calls(logger: &Logger, texts: &[String], rate: f64) -> Cost {
    let mut groups = Vec::with_capacity(texts.len() / GROUP);
    let cpu = thread_cpu_ns();
    let started = Instant::now();
    let mut busy = Duration::ZERO;
    for (index, group) in texts.chunks_exact(GROUP).enumerate() {
        let start = Instant::now();
        for text in group {
            logger.info(text);
        }
        let took = start.elapsed();
        busy += took;
        groups.push(took.as_nanos() as f64 / GROUP as f64);
        let due = started + Duration::from_secs_f64(((index + 1) * GROUP) as f64 / rate);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
    let calls = groups.len() * GROUP;
    let cpu = (thread_cpu_ns() - cpu) / calls as f64;
    groups.sort_by(f64::total_cmp);
    Cost {
        median: groups[groups.len() / 2],
        p99: groups[groups.len() * 99 / 100],
        mean: busy.as_nanos() as f64 / calls as f64,
        cpu,
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let nanos = herald_proto::time::now_nanos();
    std::env::temp_dir().join(format!(
        "herald-bench-{name}-{}-{nanos}",
        std::process::id()
    ))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let records: usize = args.next().map_or(Ok(500_000), |n| n.parse())?;
    let rate: f64 = args.next().map_or(Ok(100_000.0), |n| n.parse())?;
    let texts: Vec<String> = (0..records)
        .map(|i| {
            format!(
                "record {i} of the disk buffer bench, a line of about a hundred bytes as a log has"
            )
        })
        .collect();
    let server = TestServer::start().await;
    println!("{records} records at {rate:.0} records/s, {GROUP} calls timed together");

    let connected_dir = temp_dir("connected");
    let logger = Logger::connect(
        &server.url(),
        ClientOptions::default(),
        options(&connected_dir),
    )?;
    logger.flush(Duration::from_secs(10)).await?;
    let cost = log_calls(&logger, &texts, rate);
    logger.flush(Duration::from_secs(60)).await?;
    println!(
        "connected: median {:.0} ns, p99 {:.0} ns, mean {:.0} ns per call, thread CPU {:.0} ns per call, dropped {}",
        cost.median,
        cost.p99,
        cost.mean,
        cost.cpu,
        logger.dropped()
    );
    drop(logger);
    std::fs::remove_dir_all(&connected_dir)?;

    let dir = temp_dir("outage");
    let free = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    let logger = Logger::connect(
        &format!("herald://{free}"),
        ClientOptions::default(),
        LoggerOptions {
            // No server will answer: the close waits this long for one, then keeps all.
            close_timeout: Duration::from_millis(200),
            ..options(&dir)
        },
    )?;
    let cost = log_calls(&logger, &texts, rate);
    let dropped = logger.dropped();
    let closing = Instant::now();
    drop(logger); // the rest goes to disk
    println!(
        "outage:    median {:.0} ns, p99 {:.0} ns, mean {:.0} ns per call, thread CPU {:.0} ns per call, dropped {dropped}, close {} ms",
        cost.median,
        cost.p99,
        cost.mean,
        cost.cpu,
        closing.elapsed().as_millis()
    );

    let started = Instant::now();
    let logger = Logger::connect(&server.url(), ClientOptions::default(), options(&dir))?;
    logger.flush(Duration::from_secs(120)).await?;
    let elapsed = started.elapsed();
    // What went to disk: the records logged less those the memory buffer dropped.
    let on_disk = records as u64 - dropped;
    println!(
        "replay:    {on_disk} records from disk in {} ms: {:.0} records/s until acknowledged",
        elapsed.as_millis(),
        on_disk as f64 / elapsed.as_secs_f64()
    );
    drop(logger);
    std::fs::remove_dir_all(&dir)?;
    server.stop().await;
    Ok(())
}
