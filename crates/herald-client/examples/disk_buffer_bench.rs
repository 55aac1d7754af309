//! Measures the logger's disk buffer: the median cost of a log call while connected and
//! through a full outage (no server answers: the background side moves every record to
//! disk), and the rate at which the records on disk are sent to a server once one answers
//! (until acknowledged). It starts its own server in-process (herald-testkit).
//!
//!     cargo run --release -p herald-client --example disk_buffer_bench -- [records]

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
        buffer_records: 1 << 20,
        close_timeout: Duration::from_secs(60),
        ..LoggerOptions::new("BENCH.disk")
    }
}

/// Logs `records` records; returns the median and mean cost of a call, in ns.
fn log_calls(logger: &Logger, records: usize) -> (f64, f64) {
    let mut groups = Vec::with_capacity(records / GROUP);
    let started = Instant::now();
    for group in 0..records / GROUP {
        let start = Instant::now();
        for i in 0..GROUP {
            logger.info(&format!("record {} of the bench", group * GROUP + i));
        }
        groups.push(start.elapsed().as_nanos() as f64 / GROUP as f64);
        if group % 64 == 63 {
            std::thread::sleep(Duration::from_millis(1)); // a paced producer, not a flood
        }
    }
    let total = started.elapsed().as_nanos() as f64 / records as f64;
    groups.sort_by(f64::total_cmp);
    (groups[groups.len() / 2], total)
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
    let records: usize = std::env::args().nth(1).map_or(Ok(500_000), |n| n.parse())?;
    let server = TestServer::start().await;

    let connected_dir = temp_dir("connected");
    let logger = Logger::connect(
        &server.url(),
        ClientOptions::default(),
        options(&connected_dir),
    )?;
    logger.flush(Duration::from_secs(10)).await?;
    let (median, mean) = log_calls(&logger, records);
    logger.flush(Duration::from_secs(60)).await?;
    println!(
        "connected: median {median:.0} ns, mean {mean:.0} ns per call, dropped {}",
        logger.dropped()
    );
    drop(logger);
    std::fs::remove_dir_all(&connected_dir)?;

    let dir = temp_dir("outage");
    let free = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    let logger = Logger::connect(
        &format!("herald://{free}"),
        ClientOptions::default(),
        options(&dir),
    )?;
    let (median, mean) = log_calls(&logger, records);
    let dropped = logger.dropped();
    let closing = Instant::now();
    drop(logger); // the rest goes to disk
    println!(
        "outage:    median {median:.0} ns, mean {mean:.0} ns per call, dropped {dropped}, close {} ms",
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
