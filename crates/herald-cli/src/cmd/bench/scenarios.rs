//! The scenarios: each runs the shared workload against a server and returns what it
//! measured, as a sentence for people and as JSON for scripts.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use herald_client::ClientOptions;
use serde_json::{json, Value};

use super::workload::{bench_record, connect, count, publish, subscribe, Seen};

/// What a scenario reports.
pub struct Report {
    /// Lines for people.
    pub lines: Vec<String>,
    /// The same for scripts.
    pub json: Value,
}

/// `pub`: records/s into the server, no subscriber.
pub async fn publish_only(url: &str, records: u64, size: usize) -> anyhow::Result<Report> {
    let client = connect(url, "bench-pub", ClientOptions::default()).await?;
    let record = bench_record(size);
    let elapsed = publish(&client, &record, records).await?;
    let rate = records as f64 / elapsed.as_secs_f64();
    let encoded = record.to_bytes().len();
    Ok(Report {
        lines: vec![
            format!(
                "pub: {records} records of {size} B text ({encoded} B encoded) in {:.3} s",
                elapsed.as_secs_f64()
            ),
            format!(
                "  {rate:.0} records/s  {:.1} MB/s text  {:.1} MB/s records",
                rate * size as f64 / 1e6,
                rate * encoded as f64 / 1e6
            ),
        ],
        json: json!({
            "scenario": "pub", "records": records, "size": size, "record_bytes": encoded,
            "seconds": elapsed.as_secs_f64(), "records_per_second": rate,
            "payload_mb_per_second": rate * size as f64 / 1e6,
        }),
    })
}

/// What a fan-out run measured.
pub struct Fanout {
    /// Publisher's time until the server acknowledged the last record.
    pub publish_seconds: f64,
    /// The subscribers that keep up as fast as they can.
    pub fast: Vec<Seen>,
    /// The paced subscriber, if any.
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

    fn lines(&self, records: u64) -> Vec<String> {
        let mut lines = vec![format!(
            "  publisher: {:.0} records/s; {} fast subscribers, slowest {:.0} records/s delivered",
            records as f64 / self.publish_seconds,
            self.fast.len(),
            self.min_fast_rate()
        )];
        for (n, seen) in self.fast.iter().enumerate() {
            lines.push(format!(
                "    fast {n}: delivered {} lost {} ({:.0} records/s)",
                seen.received,
                seen.lost,
                seen.rate()
            ));
        }
        if let Some(slow) = &self.slow {
            lines.push(format!(
                "    slow: delivered {} lost {} (reported by gap notices; {:.0} records/s)",
                slow.received,
                slow.lost,
                slow.rate()
            ));
        }
        lines
    }

    fn json(&self, records: u64) -> Value {
        let seen = |s: &Seen| json!({"received": s.received, "lost": s.lost, "records_per_second": s.rate()});
        json!({
            "publisher_records_per_second": records as f64 / self.publish_seconds,
            "min_fast_records_per_second": self.min_fast_rate(),
            "fast": self.fast.iter().map(seen).collect::<Vec<_>>(),
            "slow": self.slow.as_ref().map(seen),
        })
    }
}

/// Runs 1 publisher → `fast` subscribers (+ one taking at most `slow_rate` records/s).
pub async fn fanout(
    url: &str,
    records: u64,
    size: usize,
    fast: usize,
    slow_rate: Option<f64>,
) -> anyhow::Result<Fanout> {
    let start = Arc::new(OnceLock::new());
    let mut counters = Vec::new();
    for n in 0..fast {
        let client = connect(url, &format!("bench-sub-{n}"), ClientOptions::default()).await?;
        counters.push((
            client.clone(),
            count(subscribe(&client).await?, records, Arc::clone(&start), None),
        ));
    }
    let slow = match slow_rate {
        None => None,
        Some(rate) => {
            let client = connect(url, "bench-slow", ClientOptions::default()).await?;
            Some((
                client.clone(),
                count(
                    subscribe(&client).await?,
                    records,
                    Arc::clone(&start),
                    Some(rate),
                ),
            ))
        }
    };
    let publisher = connect(url, "bench-pub", ClientOptions::default()).await?;
    let record = bench_record(size);
    start.get_or_init(Instant::now);
    let publish_seconds = publish(&publisher, &record, records).await?.as_secs_f64();
    let mut fast_seen = Vec::new();
    for (_client, counter) in counters {
        fast_seen.push(counter.await?);
    }
    let slow = match slow {
        Some((_client, counter)) => Some(counter.await?),
        None => None,
    };
    Ok(Fanout {
        publish_seconds,
        fast: fast_seen,
        slow,
    })
}

/// `pubsub` and `fanout`: 1 publisher → `subscribers`, records/s delivered to each.
pub async fn fanout_report(
    url: &str,
    records: u64,
    size: usize,
    subscribers: usize,
) -> anyhow::Result<Report> {
    let run = fanout(url, records, size, subscribers, None).await?;
    let mut lines = vec![format!(
        "fanout 1 → {subscribers}: {records} records of {size} B text"
    )];
    lines.extend(run.lines(records));
    let mut json = run.json(records);
    json["scenario"] = json!(if subscribers == 1 { "pubsub" } else { "fanout" });
    json["records"] = json!(records);
    json["size"] = json!(size);
    Ok(Report { lines, json })
}

/// `slow`: 5 fast subscribers, first alone, then beside one that takes 1/5 of their rate.
/// The fast ones should keep at least 90% of their rate; the slow one loses what it must,
/// and every loss is reported to it.
pub async fn slow(url: &str, records: u64, size: usize) -> anyhow::Result<Report> {
    const FAST: usize = 5;
    eprintln!("  phase 1: {FAST} fast subscribers");
    let alone = fanout(url, records, size, FAST, None).await?;
    let slow_rate = alone.min_fast_rate() / 5.0;
    eprintln!("  phase 2: {FAST} fast subscribers + 1 taking at most {slow_rate:.0} records/s");
    let beside = fanout(url, records, size, FAST, Some(slow_rate)).await?;
    let ratio = beside.min_fast_rate() / alone.min_fast_rate();
    let publisher_ratio = alone.publish_seconds / beside.publish_seconds;
    let mut lines = vec![format!(
        "slow: {records} records of {size} B text, {FAST} fast subscribers"
    )];
    lines.push("  without a slow subscriber:".to_string());
    lines.extend(alone.lines(records));
    lines.push(format!(
        "  with one at 1/5 of their rate ({slow_rate:.0} records/s):"
    ));
    lines.extend(beside.lines(records));
    lines.push(format!(
        "  fast subscribers keep {:.0}% of their rate; the publisher {:.0}% of its",
        ratio * 100.0,
        publisher_ratio * 100.0
    ));
    Ok(Report {
        lines,
        json: json!({
            "scenario": "slow", "records": records, "size": size,
            "alone": alone.json(records), "with_slow": beside.json(records),
            "fast_rate_ratio": ratio, "publisher_rate_ratio": publisher_ratio,
        }),
    })
}
