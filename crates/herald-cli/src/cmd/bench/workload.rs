//! The shared workload: the record every scenario sends, publishing with progress, and
//! subscribers that count what they receive and what gap notices report lost.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use herald_client::{Client, ClientOptions, Event, Subscription};
use herald_proto::{Filter, Kind, Priority, Record};

/// Longest a bench waits without progress before it gives up and reports what it has.
pub const STALL_TIMEOUT: Duration = Duration::from_secs(10);
/// How often progress is printed.
const PROGRESS_INTERVAL: Duration = Duration::from_secs(1);
/// Subject every scenario publishes on.
const SUBJECT: &str = "bench.pub";

/// The record every scenario sends: a log record with subject, type, priority, origin and
/// `size` bytes of text, like a real one.
pub fn bench_record(size: usize) -> Record {
    Record {
        type_name: "bench".to_string(),
        priority: Priority::Info,
        origin: herald_client::origin::local_origin(),
        text: "x".repeat(size),
        ..Record::new(Kind::Log, SUBJECT)
    }
}

/// Connects as `name`.
pub async fn connect(url: &str, name: &str, options: ClientOptions) -> anyhow::Result<Client> {
    let options = ClientOptions {
        name: name.to_string(),
        ..options
    };
    Client::connect_with(url, options)
        .await
        .with_context(|| format!("connecting to {url}"))
}

/// Publishes `count` copies of `record` as fast as the client takes them, then flushes:
/// when this returns, the server has received and routed every record.
pub async fn publish(client: &Client, record: &Record, count: u64) -> anyhow::Result<Duration> {
    let progress = Progress::new("published", count);
    let start = Instant::now();
    for sent in 0..count {
        client.publish(record).await?;
        progress.tick(sent + 1);
    }
    client
        .flush(STALL_TIMEOUT * 6)
        .await
        .context("waiting for the server to take every record")?;
    progress.done();
    Ok(start.elapsed())
}

/// What one subscriber saw.
#[derive(Debug, Clone, Copy)]
pub struct Seen {
    /// Records delivered.
    pub received: u64,
    /// Records reported lost by gap notices.
    pub lost: u64,
    /// From `start` until every record was accounted for (or the run stalled).
    pub elapsed: Duration,
}

impl Seen {
    /// Returns records delivered per second.
    pub fn rate(&self) -> f64 {
        self.received as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Subscribes on the bench subject.
pub async fn subscribe(client: &Client) -> anyhow::Result<Subscription> {
    Ok(client.subscribe(Filter::subject("bench.*")?).await?)
}

/// Counts `subscription` until `total` records are delivered or reported lost. With
/// `rate_limit`, takes at most that many records per second (a slow consumer).
pub fn count(
    mut subscription: Subscription,
    total: u64,
    start: Arc<std::sync::OnceLock<Instant>>,
    rate_limit: Option<f64>,
) -> tokio::task::JoinHandle<Seen> {
    tokio::spawn(async move {
        let (mut received, mut lost) = (0u64, 0u64);
        while received + lost < total {
            // Take what is here without a timer; arm the stall timer only when idle.
            let event = match subscription.try_next() {
                Some(event) => event,
                None => match tokio::time::timeout(STALL_TIMEOUT, subscription.next()).await {
                    Ok(Some(event)) => event,
                    Ok(None) | Err(_) => break,
                },
            };
            match event {
                Event::Record(_) => received += 1,
                Event::Gap(gap) => lost += gap.count,
            }
            if let (Some(limit), Some(start)) = (rate_limit, start.get()) {
                pace(received, limit, *start).await;
            }
        }
        let started = start.get().copied().unwrap_or_else(Instant::now);
        Seen {
            received,
            lost,
            elapsed: started.elapsed(),
        }
    })
}

/// Sleeps whenever `done` records arrived sooner than `limit` per second allows.
async fn pace(done: u64, limit: f64, start: Instant) {
    if !done.is_multiple_of(256) {
        return;
    }
    let due = start + Duration::from_secs_f64(done as f64 / limit);
    let now = Instant::now();
    if due > now {
        tokio::time::sleep(due - now).await;
    }
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
