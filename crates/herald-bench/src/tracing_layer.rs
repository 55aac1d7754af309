//! `tracing`: the cost of one `tracing::info!` call (a 128-byte message and one field) from
//! 1, 2 and 8 threads, through Herald's layer (`Logger::tracing_layer`, to a server) and,
//! beside it, through `tracing-subscriber`'s fmt layer writing to a file behind
//! `tracing-appender`'s non-blocking writer (its defaults: 128,000 lines buffered, lossy).

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use herald_client::{Client, Logger, LoggerOptions};
use serde_json::json;
use tracing::Dispatch;
use tracing_subscriber::layer::SubscriberExt;

use crate::report::{percentiles, Report};

/// Calls timed together; the per-call figure is the batch's time divided by this.
const BATCH_CALLS: usize = 8;
/// Calls per thread.
const CALLS_PER_THREAD: usize = 24_000;
/// The Herald logger's buffer shards: one per thread at 8 threads.
const SHARDS: usize = 8;

/// Runs the call through both subscribers from each of `thread_counts` threads at once.
pub async fn tracing_calls(url: &str, thread_counts: &[usize]) -> anyhow::Result<Report> {
    let client = Client::connect(url).await?;
    let text = "x".repeat(128);
    let mut lines =
        vec!["tracing::info! (128 B message, one field): ns per call (batches of 8)".to_string()];
    let mut results = Vec::new();
    let dir = std::env::temp_dir().join(format!("herald-bench-tracing-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    for &threads in thread_counts {
        let options = LoggerOptions {
            buffer_records: CALLS_PER_THREAD * SHARDS * 2,
            buffer_shards: SHARDS,
            ..LoggerOptions::new("bench.tracing")
        };
        let logger = Logger::new(&client, options)?;
        let herald = Dispatch::new(tracing_subscriber::registry().with(logger.tracing_layer()));
        let mut samples = run_threads(&herald, threads, &text);
        logger.flush(Duration::from_secs(60)).await?;
        let dropped = logger.dropped();
        logger.close(Duration::from_secs(10)).await?;
        let [median, p99] = percentiles(&mut samples, [0.5, 0.99]);

        let file = std::fs::File::create(dir.join(format!("{threads}.log")))?;
        let (writer, guard) = tracing_appender::non_blocking(file);
        let fmt = tracing_subscriber::fmt::layer()
            .with_writer(writer)
            .with_ansi(false);
        let appender = Dispatch::new(tracing_subscriber::registry().with(fmt));
        let mut appender_samples = run_threads(&appender, threads, &text);
        drop(appender);
        drop(guard); // flushes the file
        let written = std::fs::read_to_string(dir.join(format!("{threads}.log")))?
            .lines()
            .count();
        let [a_median, a_p99] = percentiles(&mut appender_samples, [0.5, 0.99]);
        let calls = threads * CALLS_PER_THREAD;
        lines.push(format!(
            "  {threads} threads: Herald layer median {median} ns, p99 {p99} ns ({dropped} dropped) · fmt + tracing-appender non-blocking median {a_median} ns, p99 {a_p99} ns ({} of {calls} lines written)",
            written
        ));
        results.push(json!({"threads": threads,
            "herald": {"median_ns": median, "p99_ns": p99, "dropped": dropped},
            "tracing_appender": {"median_ns": a_median, "p99_ns": a_p99, "written": written, "calls": calls}}));
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(Report {
        lines,
        json: json!({"scenario": "tracing", "threads": results}),
    })
}

/// Returns per-call times (ns, batch means) from `threads` threads calling at once under
/// `dispatch`.
fn run_threads(dispatch: &Dispatch, threads: usize, text: &str) -> Vec<u64> {
    let start = Arc::new(Barrier::new(threads));
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let (dispatch, start) = (dispatch.clone(), Arc::clone(&start));
                scope.spawn(move || {
                    tracing::dispatcher::with_default(&dispatch, || {
                        let mut samples = Vec::with_capacity(CALLS_PER_THREAD / BATCH_CALLS);
                        start.wait();
                        for round in 0..CALLS_PER_THREAD / BATCH_CALLS {
                            let began = Instant::now();
                            for _ in 0..BATCH_CALLS {
                                tracing::info!(round, "{text}");
                            }
                            samples.push(began.elapsed().as_nanos() as u64 / BATCH_CALLS as u64);
                        }
                        samples
                    })
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("calling thread"))
            .collect()
    })
}
