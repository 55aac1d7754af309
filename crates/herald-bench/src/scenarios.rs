//! The scenarios, generic over the system under test: each returns a [`Report`].

use std::time::{Duration, Instant};

use serde_json::json;

use crate::report::{percentiles, Report};
use crate::system::{Publisher, Received, Subscriber, System};

/// Longest a scenario waits without progress before it reports what it has.
pub const STALL_TIMEOUT: Duration = Duration::from_secs(10);
/// Subject every scenario publishes on; subscribers listen on exactly this subject.
pub const SUBJECT: &str = "bench.pub";

/// The scenarios every system runs (Herald's own `logger` and `info` are separate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scenario {
    /// Messages/s into the server, no subscriber.
    Pub,
    /// 1 publisher → 1 subscriber, messages/s delivered.
    Pubsub,
    /// 1 publisher → `subscribers` subscribers.
    Fanout,
    /// 5 fast subscribers alone, then beside one that reads at 1/5 of their rate.
    Slow,
    /// End-to-end latency at `rate` messages/s.
    Latency,
}

/// The sizes a scenario runs with.
#[derive(Debug, Clone, Copy)]
pub struct Workload {
    /// Messages to send.
    pub messages: u64,
    /// Bytes of payload per message (Herald: bytes of record text).
    pub size: usize,
    /// Subscribers for `fanout`.
    pub subscribers: usize,
    /// Messages per second for `latency`.
    pub rate: f64,
}

/// Runs `scenario` against `system`.
///
/// # Errors
/// The system's error, e.g. when it cannot be reached.
pub async fn run<S: System>(
    system: &S,
    scenario: Scenario,
    workload: &Workload,
) -> anyhow::Result<Report> {
    let (messages, size) = (workload.messages, workload.size);
    match scenario {
        Scenario::Pub => publish_only(system, messages, size).await,
        Scenario::Pubsub => fanout_report(system, messages, size, 1).await,
        Scenario::Fanout => fanout_report(system, messages, size, workload.subscribers).await,
        Scenario::Slow => slow(system, messages, size).await,
        Scenario::Latency => latency(system, messages, size, workload.rate).await,
    }
}

/// Returns the wall-clock time in ns since the epoch.
fn now_ns() -> i64 {
    herald_proto::time::now_nanos()
}

/// `pub`: messages/s into the system, no subscriber; timed until the system has them all.
pub async fn publish_only<S: System>(
    system: &S,
    count: u64,
    size: usize,
) -> anyhow::Result<Report> {
    let mut publisher = system.publisher(SUBJECT, size).await?;
    let start = Instant::now();
    for _ in 0..count {
        publisher.publish(now_ns()).await?;
    }
    publisher.flush().await?;
    let seconds = start.elapsed().as_secs_f64();
    let rate = count as f64 / seconds;
    Ok(Report {
        lines: vec![format!(
            "{} pub: {count} × {size} B in {seconds:.3} s: {rate:.0} msg/s, {:.1} MB/s",
            system.name(),
            rate * size as f64 / 1e6
        )],
        json: json!({"system": system.name(), "scenario": "pub", "size": size, "messages": count,
                     "seconds": seconds, "messages_per_second": rate}),
    })
}

/// What one subscriber saw in a fan-out.
#[derive(Debug, Clone, Copy)]
pub struct Seen {
    /// Messages delivered.
    pub received: u64,
    /// Messages reported lost.
    pub lost: u64,
    /// From the first publish until every message was accounted for (or the run stalled).
    pub seconds: f64,
}

impl Seen {
    /// Returns messages delivered per second.
    pub fn rate(&self) -> f64 {
        self.received as f64 / self.seconds.max(1e-9)
    }

    fn json(&self) -> serde_json::Value {
        json!({"received": self.received, "lost": self.lost, "messages_per_second": self.rate()})
    }
}

/// Counts what `subscriber` receives until `total` messages are delivered or reported lost,
/// taking at most `limit` messages per second if given (a slow consumer).
async fn count<T: Subscriber>(
    mut subscriber: T,
    total: u64,
    start: Instant,
    limit: Option<f64>,
) -> Seen {
    let (mut received, mut lost) = (0u64, 0u64);
    while received + lost < total {
        match tokio::time::timeout(STALL_TIMEOUT, subscriber.next()).await {
            Ok(Some(Received::Message { .. })) => received += 1,
            Ok(Some(Received::Lost(n))) => lost += n,
            Ok(None) | Err(_) => break,
        }
        if let Some(limit) = limit {
            if received.is_multiple_of(256) {
                let due = start + Duration::from_secs_f64(received as f64 / limit);
                tokio::time::sleep_until(due.into()).await;
            }
        }
    }
    Seen {
        received,
        lost,
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// What a fan-out run measured.
#[derive(Debug, Clone)]
pub struct Fanout {
    /// Publisher's messages per second, until the system had them all.
    pub publisher_rate: f64,
    /// The subscribers that read as fast as they can.
    pub fast: Vec<Seen>,
    /// The slow subscriber, if any.
    pub slow: Option<Seen>,
}

impl Fanout {
    /// Returns the slowest fast subscriber's delivered rate.
    pub fn min_fast_rate(&self) -> f64 {
        self.fast
            .iter()
            .map(Seen::rate)
            .fold(f64::INFINITY, f64::min)
    }

    /// Returns the run as JSON.
    pub fn json(&self) -> serde_json::Value {
        json!({
            "publisher_messages_per_second": self.publisher_rate,
            "min_fast_messages_per_second": self.min_fast_rate(),
            "fast": self.fast.iter().map(Seen::json).collect::<Vec<_>>(),
            "slow": self.slow.as_ref().map(Seen::json),
        })
    }
}

/// 1 publisher → `fast` subscribers (+ one taking at most `slow_rate` messages/s).
pub async fn fanout<S: System>(
    system: &S,
    count_: u64,
    size: usize,
    fast: usize,
    slow_rate: Option<f64>,
) -> anyhow::Result<Fanout> {
    let mut subscribers = Vec::new();
    for _ in 0..fast {
        subscribers.push(system.subscriber(SUBJECT).await?);
    }
    let slow = match slow_rate {
        Some(_) => Some(system.subscriber(SUBJECT).await?),
        None => None,
    };
    let mut publisher = system.publisher(SUBJECT, size).await?;
    // Let subscriptions settle everywhere (Redis and NATS confirm them asynchronously).
    tokio::time::sleep(Duration::from_millis(200)).await;
    let start = Instant::now();
    let counters: Vec<_> = subscribers
        .into_iter()
        .map(|s| tokio::spawn(count(s, count_, start, None)))
        .collect();
    let slow = slow.map(|s| tokio::spawn(count(s, count_, start, slow_rate)));
    for _ in 0..count_ {
        publisher.publish(now_ns()).await?;
    }
    publisher.flush().await?;
    let publisher_rate = count_ as f64 / start.elapsed().as_secs_f64();
    let mut fast_seen = Vec::new();
    for counter in counters {
        fast_seen.push(counter.await?);
    }
    let slow = match slow {
        Some(counter) => Some(counter.await?),
        None => None,
    };
    Ok(Fanout {
        publisher_rate,
        fast: fast_seen,
        slow,
    })
}

/// `pubsub` and `fanout`: 1 publisher → `subscribers`, messages/s delivered to each.
pub async fn fanout_report<S: System>(
    system: &S,
    count: u64,
    size: usize,
    subscribers: usize,
) -> anyhow::Result<Report> {
    let run = fanout(system, count, size, subscribers, None).await?;
    let scenario = if subscribers == 1 { "pubsub" } else { "fanout" };
    let lost: u64 = run.fast.iter().map(|s| s.lost).sum();
    let mut json = run.json();
    json["system"] = json!(system.name());
    json["scenario"] = json!(scenario);
    json["size"] = json!(size);
    json["messages"] = json!(count);
    json["subscribers"] = json!(subscribers);
    Ok(Report {
        lines: vec![format!(
            "{} {scenario} 1 → {subscribers}: {count} × {size} B: publisher {:.0} msg/s, slowest subscriber {:.0} msg/s delivered, {lost} lost",
            system.name(),
            run.publisher_rate,
            run.min_fast_rate()
        )],
        json,
    })
}

/// `slow`: 5 fast subscribers alone, then beside one that takes 1/5 of their rate.
pub async fn slow<S: System>(system: &S, count: u64, size: usize) -> anyhow::Result<Report> {
    const FAST: usize = 5;
    let alone = fanout(system, count, size, FAST, None).await?;
    let slow_rate = alone.min_fast_rate() / 5.0;
    let beside = fanout(system, count, size, FAST, Some(slow_rate)).await?;
    let ratio = beside.min_fast_rate() / alone.min_fast_rate();
    let publisher_ratio = beside.publisher_rate / alone.publisher_rate;
    let slow_seen = beside.slow.expect("a slow subscriber ran");
    Ok(Report {
        lines: vec![format!(
            "{} slow: fast subscribers keep {:.0}% ({:.0} → {:.0} msg/s), publisher {:.0}%; slow one got {} and was told of {} lost",
            system.name(),
            ratio * 100.0,
            alone.min_fast_rate(),
            beside.min_fast_rate(),
            publisher_ratio * 100.0,
            slow_seen.received,
            slow_seen.lost
        )],
        json: json!({"system": system.name(), "scenario": "slow", "size": size, "messages": count,
                     "alone": alone.json(), "with_slow": beside.json(),
                     "fast_rate_ratio": ratio, "publisher_rate_ratio": publisher_ratio}),
    })
}

/// `latency`: one subscriber, messages published at a fixed `rate`; end-to-end latency
/// from the send time carried in each message.
pub async fn latency<S: System>(
    system: &S,
    count: u64,
    size: usize,
    rate: f64,
) -> anyhow::Result<Report> {
    let mut subscriber = system.subscriber(SUBJECT).await?;
    let mut publisher = system.publisher(SUBJECT, size).await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let receiver = tokio::spawn(async move {
        let mut latencies = Vec::with_capacity(count as usize);
        let mut lost = 0;
        while (latencies.len() as u64) + lost < count {
            match tokio::time::timeout(STALL_TIMEOUT, subscriber.next()).await {
                Ok(Some(Received::Message { sent_ns })) => {
                    latencies.push((now_ns() - sent_ns).max(0) as u64)
                }
                Ok(Some(Received::Lost(n))) => lost += n,
                Ok(None) | Err(_) => break,
            }
        }
        (latencies, lost)
    });
    // Send in steps of 1 ms so the rate holds without a timer per message.
    let start = Instant::now();
    let per_step = (rate / 1000.0).max(1.0);
    let mut sent = 0u64;
    while sent < count {
        let due = (start.elapsed().as_secs_f64() * 1000.0 + 1.0) * per_step;
        while (sent as f64) < due && sent < count {
            publisher.publish(now_ns()).await?;
            sent += 1;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    publisher.flush().await?;
    let (mut latencies, lost) = receiver.await?;
    let [p50, p99, p999, max] = percentiles(&mut latencies, [0.5, 0.99, 0.999, 1.0]);
    let us = |ns: u64| ns as f64 / 1000.0;
    Ok(Report {
        lines: vec![format!(
            "{} latency at {rate:.0} msg/s, {size} B: p50 {:.1} µs, p99 {:.1} µs, p99.9 {:.1} µs, max {:.1} µs ({} received, {lost} lost)",
            system.name(),
            us(p50),
            us(p99),
            us(p999),
            us(max),
            latencies.len()
        )],
        json: json!({"system": system.name(), "scenario": "latency", "size": size, "rate": rate,
                     "received": latencies.len(), "lost": lost,
                     "p50_us": us(p50), "p99_us": us(p99), "p999_us": us(p999), "max_us": us(max)}),
    })
}
