//! `logger`: the cost of one `Logger::log` call (128-byte text, INFO) from 1, 2 and 8
//! threads at once, against a server — Herald only: NATS and Redis have no logger. The
//! criterion bench `cargo bench -p herald-client --bench logger` measures the same call
//! against a mutex-guarded writer.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use herald_client::{Client, Logger, LoggerOptions};
use herald_proto::Priority;
use serde_json::json;

use crate::report::{percentiles, Report};

/// Calls timed together; the per-call figure is the batch's time divided by this.
const BATCH_CALLS: usize = 8;
/// Calls per thread: all fit in the thread's buffer shard, so no call finds it full.
const CALLS_PER_THREAD: usize = 24_000;
/// Buffer shards: one per thread at 8 threads.
const SHARDS: usize = 8;

/// Runs the log call from each of `thread_counts` threads at once.
pub async fn logger(url: &str, thread_counts: &[usize]) -> anyhow::Result<Report> {
    let client = Client::connect(url).await?;
    let text = "x".repeat(128);
    let mut lines = vec!["herald logger: ns per log call (batches of 8), 128 B text".to_string()];
    let mut results = Vec::new();
    for &threads in thread_counts {
        let options = LoggerOptions {
            buffer_records: CALLS_PER_THREAD * SHARDS * 2,
            buffer_shards: SHARDS,
            ..LoggerOptions::new("bench.logger")
        };
        let logger = Logger::new(&client, options)?;
        let mut samples = run_threads(&logger, threads, &text);
        logger.flush(Duration::from_secs(60)).await?;
        let dropped = logger.dropped();
        let mean = samples.iter().sum::<u64>() as f64 / samples.len().max(1) as f64;
        let [median, p99] = percentiles(&mut samples, [0.5, 0.99]);
        lines.push(format!("  {threads} threads: median {median} ns, p99 {p99} ns, mean {mean:.0} ns, {dropped} dropped"));
        results.push(json!({"threads": threads, "median_ns": median, "p99_ns": p99, "mean_ns": mean, "dropped": dropped}));
        logger.close(Duration::from_secs(10)).await?;
    }
    Ok(Report {
        lines,
        json: json!({"system": "herald", "scenario": "logger", "threads": results}),
    })
}

/// Returns per-call times (ns, batch means) from `threads` threads logging at once.
fn run_threads(logger: &Logger, threads: usize, text: &str) -> Vec<u64> {
    let start = Arc::new(Barrier::new(threads));
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let (logger, start) = (logger.clone(), Arc::clone(&start));
                scope.spawn(move || {
                    let mut samples = Vec::with_capacity(CALLS_PER_THREAD / BATCH_CALLS);
                    start.wait();
                    for _ in 0..CALLS_PER_THREAD / BATCH_CALLS {
                        let began = Instant::now();
                        for _ in 0..BATCH_CALLS {
                            logger.log(Priority::Info, text, Vec::new());
                        }
                        samples.push(began.elapsed().as_nanos() as u64 / BATCH_CALLS as u64);
                    }
                    samples
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("logging thread"))
            .collect()
    })
}
