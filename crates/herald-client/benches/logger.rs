//! The cost of one `Logger::log` call (128-byte text, INFO, above the threshold) from 1, 2
//! and 8 threads at once, against a baseline of a `Mutex<BufWriter<_>>` that formats the
//! same line under its lock, as a classic logger does.
//!
//! Run:
//!     cargo bench -p herald-client --bench logger
//!
//! Criterion reports the mean per call and thread. After the group the bench measures again
//! in batches of `BATCH_CALLS` calls timed with `Instant` and prints the median and p99 per
//! call (each batch's time divided by its calls, so p99 is that of the batch means).
//!
//! The records go to an in-process server; the bench waits (untimed) whenever the logger's
//! buffer is half full, so what is timed is the call with room in the buffer, never the drop.
//! `herald` times the calls while the background side and the server run on the same cores
//! (as in a loaded program; on a 2-core machine their CPU shows in p99); `herald_quiet`
//! pauses every thread while the buffer is drained, so only the call itself is timed.

use std::io::{BufWriter, Write};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use herald_client::{Client, Logger, LoggerOptions};
use herald_proto::Priority;
use herald_testkit::TestServer;

/// The text logged by every call: 128 bytes.
const TEXT: &str = "azimuth encoder reports position 181.25 deg, velocity 0.003 deg/s, \
                    servo loop nominal, tracking error within 0.5 arcsec, all ok.";
const _: () = assert!(TEXT.len() == 128);
/// Calls timed together for the median and p99.
const BATCH_CALLS: usize = 8;
/// Calls between two (untimed) looks at the logger's buffer.
const CHECK_EVERY: usize = 512;
/// The logger's buffer, in records, and its shards (fixed, so that runs on machines with
/// other core counts compare): each of up to 8 threads gets a shard of its own.
const BUFFER_RECORDS: usize = 1 << 16;
const BUFFER_SHARDS: usize = 8;
const SHARD_RECORDS: usize = BUFFER_RECORDS / BUFFER_SHARDS;
/// Calls per thread in the percentile pass.
const PERCENTILE_CALLS: usize = 400_000;
const THREAD_COUNTS: [usize; 3] = [1, 2, 8];

/// Something that logs one line per call.
trait Target: Sync {
    fn call(&self);
    /// Calls each thread makes between two (untimed) pauses.
    fn chunk(&self, _threads: usize) -> usize {
        CHECK_EVERY
    }
    /// Returns true if all threads pause between chunks while one runs `drain`; if not,
    /// each thread calls `make_room` on its own.
    fn pauses(&self) -> bool {
        false
    }
    /// Runs, untimed, on one thread while all threads pause.
    fn drain(&self) {}
    /// Waits, untimed, until a call would not find the buffer full.
    fn make_room(&self) {}
}

/// The logger with its background side running while the calls are timed: it shares the
/// two cores with the calls, as in a real program under load.
struct Herald {
    logger: Logger,
}

impl Target for Herald {
    #[inline]
    fn call(&self) {
        self.logger.log(Priority::Info, TEXT, Vec::new());
    }

    fn make_room(&self) {
        // One thread fills only its shard: keep every shard below half full.
        if self.logger.pending() < SHARD_RECORDS / 2 - CHECK_EVERY {
            return;
        }
        while self.logger.pending() > SHARD_RECORDS / 8 {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

/// The logger with its background side idle while the calls are timed (no tick, no batch
/// wake); all threads pause while it drains and the server catches up. This isolates the
/// call's own cost from the CPU the background side and the in-process server take.
struct HeraldQuiet {
    logger: Logger,
    runtime: tokio::runtime::Handle,
}

impl Target for HeraldQuiet {
    #[inline]
    fn call(&self) {
        self.logger.log(Priority::Info, TEXT, Vec::new());
    }

    fn chunk(&self, _threads: usize) -> usize {
        SHARD_RECORDS / 4
    }

    fn pauses(&self) -> bool {
        true
    }

    fn drain(&self) {
        let flushed = self
            .runtime
            .block_on(self.logger.flush(Duration::from_secs(60)));
        flushed.expect("the quiet logger flushes");
    }
}

/// The baseline: time, lock, format the whole line into a buffered writer, unlock.
struct MutexWriter {
    writer: Mutex<BufWriter<std::io::Sink>>,
}

thread_local! {
    static THREAD_NAME: String = std::thread::current().name().unwrap_or("?").to_string();
}

impl Target for MutexWriter {
    #[inline]
    fn call(&self) {
        let time = herald_proto::time::now_nanos();
        THREAD_NAME.with(|thread| {
            let mut writer = self.writer.lock().unwrap();
            let _ = writeln!(writer, "{time} INFO BENCH.logger {thread} {TEXT}");
        });
    }
}

/// Runs `calls` calls on each of `threads` threads; returns the mean time per call and
/// thread, and (if `batches` is given) the per-call time of every batch in ns.
fn run(target: &dyn Target, threads: usize, calls: usize, batches: bool) -> (Duration, Vec<f64>) {
    let barrier = Barrier::new(threads);
    let results: Vec<(Duration, Vec<f64>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|n| {
                let barrier = &barrier;
                std::thread::Builder::new()
                    .name(format!("bench-{n}"))
                    .spawn_scoped(scope, move || {
                        one_thread(target, barrier, threads, calls, batches)
                    })
                    .unwrap()
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let total: Duration = results.iter().map(|(d, _)| *d).sum();
    let samples = results.into_iter().flat_map(|(_, s)| s).collect();
    (total / threads as u32, samples)
}

fn one_thread(
    target: &dyn Target,
    barrier: &Barrier,
    threads: usize,
    calls: usize,
    batches: bool,
) -> (Duration, Vec<f64>) {
    target.call(); // thread-local setup, untimed
    let mut samples = Vec::with_capacity(if batches { calls / BATCH_CALLS + 1 } else { 0 });
    let mut timed = Duration::ZERO;
    barrier.wait();
    let mut done = 0;
    while done < calls {
        pause(target, barrier);
        let chunk = target.chunk(threads).min(calls - done);
        if batches {
            for _ in 0..chunk.div_ceil(BATCH_CALLS) {
                let start = Instant::now();
                for _ in 0..BATCH_CALLS {
                    target.call();
                }
                let elapsed = start.elapsed();
                timed += elapsed;
                samples.push(elapsed.as_nanos() as f64 / BATCH_CALLS as f64);
            }
        } else {
            let start = Instant::now();
            for _ in 0..chunk {
                target.call();
            }
            timed += start.elapsed();
        }
        done += chunk;
    }
    (timed, samples)
}

/// Pauses all threads while one drains, or lets this thread make room on its own.
fn pause(target: &dyn Target, barrier: &Barrier) {
    if !target.pauses() {
        return target.make_room();
    }
    if barrier.wait().is_leader() {
        target.drain();
    }
    barrier.wait();
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[rank]
}

fn bench_logger_call(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let _entered = runtime.enter();
    let (server, client) = runtime.block_on(async {
        let server = TestServer::start().await;
        let client = Client::connect(&server.url()).await.unwrap();
        (server, client)
    });
    let options = LoggerOptions {
        buffer_records: BUFFER_RECORDS,
        buffer_shards: BUFFER_SHARDS,
        ..LoggerOptions::new("BENCH.logger")
    };
    let herald = Herald {
        logger: Logger::new(&client, options).unwrap(),
    };
    let quiet_options = LoggerOptions {
        buffer_records: BUFFER_RECORDS,
        buffer_shards: BUFFER_SHARDS,
        tick: Duration::from_secs(3600),
        batch_records: 2 * BUFFER_RECORDS,
        ..LoggerOptions::new("BENCH.quiet")
    };
    let quiet = HeraldQuiet {
        logger: Logger::new(&client, quiet_options).unwrap(),
        runtime: runtime.handle().clone(),
    };
    let baseline = MutexWriter {
        writer: Mutex::new(BufWriter::new(std::io::sink())),
    };
    let targets: [(&str, &dyn Target); 2] = [("herald", &herald), ("mutex_bufwriter", &baseline)];

    let mut group = c.benchmark_group("logger_call");
    for (name, target) in targets {
        for threads in THREAD_COUNTS {
            group.bench_with_input(BenchmarkId::new(name, threads), &threads, |b, &threads| {
                b.iter_custom(|iters| run(target, threads, iters as usize, false).0)
            });
        }
    }
    group.finish();

    println!("\nper call, batches of {BATCH_CALLS} calls, {PERCENTILE_CALLS} calls per thread:");
    println!(
        "{:<16} {:>7} {:>10} {:>10} {:>10}",
        "target", "threads", "median ns", "p99 ns", "mean ns"
    );
    // `cargo bench … -- herald/8` runs only the matching lines here too.
    let filter = std::env::args().skip(1).find(|arg| !arg.starts_with('-'));
    let with_quiet: [(&str, &dyn Target); 3] = [targets[0], ("herald_quiet", &quiet), targets[1]];
    for (name, target) in with_quiet {
        for threads in THREAD_COUNTS {
            let id = format!("{name}/{threads}");
            if filter.as_ref().is_some_and(|f| !id.contains(f.as_str())) {
                continue;
            }
            let (mean, mut samples) = run(target, threads, PERCENTILE_CALLS, true);
            samples.sort_by(f64::total_cmp);
            println!(
                "{name:<16} {threads:>7} {:>10.1} {:>10.1} {:>10.1}",
                percentile(&samples, 0.5),
                percentile(&samples, 0.99),
                mean.as_nanos() as f64 / PERCENTILE_CALLS as f64
            );
        }
    }
    println!(
        "dropped by the background side (client send buffer full): herald {}, herald_quiet {}\n",
        herald.logger.dropped(),
        quiet.logger.dropped()
    );
    drop(herald);
    drop(quiet);
    runtime.block_on(server.stop());
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = bench_logger_call
}
criterion_main!(benches);
