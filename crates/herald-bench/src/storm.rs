//! `storm`: one source repeating one log record as fast as it can (a log storm) beside a
//! source that behaves, publishing distinct records at a steady `rate`. The well-behaved
//! source's delivered rate and latency are measured alone, then while the storm runs; the
//! storm's records are counted as the server saw them (held back into summaries, passed).

use std::time::{Duration, Instant};

use herald_client::{Client, Event, Subscription};
use herald_proto::{Filter, Kind, Priority, Record};
use serde_json::json;

use crate::herald::Numbered;
use crate::report::{percentiles, Report};

/// The well-behaved source's subject, and the storm's.
const NORMAL: &str = "bench.normal";
const STORM: &str = "bench.storm";
/// How often the steady source publishes its share.
const PACE: Duration = Duration::from_millis(1);

/// What one phase measured of the steady source.
struct Phase {
    delivered: u64,
    seconds: f64,
    latencies_us: Vec<u64>,
}

impl Phase {
    fn rate(&self) -> f64 {
        self.delivered as f64 / self.seconds
    }
}

fn record(subject: &str, host: &str, text: &str) -> Record {
    let mut record = Record {
        priority: Priority::Warning,
        text: text.to_string(),
        ..Record::new(Kind::Log, subject)
    };
    record.origin = herald_client::origin::local_origin();
    record.origin.host = host.to_string();
    record
}

/// Publishes `rate` distinct records/s for `seconds` and counts what the subscriber gets.
async fn steady(
    publisher: &Client,
    subscription: &mut Subscription,
    rate: f64,
    seconds: f64,
) -> anyhow::Result<Phase> {
    let mut record = record(NORMAL, "steady", &"x".repeat(128));
    let numbered = Numbered::new(&record.text);
    let total = (rate * seconds) as u64;
    let start = Instant::now();
    let (mut sent, mut delivered) = (0u64, 0u64);
    let mut latencies_us = Vec::with_capacity(total as usize);
    let mut tick = tokio::time::interval(PACE);
    while sent < total {
        tick.tick().await;
        let due = ((start.elapsed().as_secs_f64() * rate) as u64).min(total);
        while sent < due {
            sent += 1;
            record.time = herald_proto::time::now_nanos();
            numbered.write(&mut record.text, sent);
            publisher.publish(&record).await?;
        }
        while let Some(event) = subscription.try_next() {
            note(event, &mut delivered, &mut latencies_us);
        }
    }
    publisher.flush(Duration::from_secs(30)).await?;
    while delivered < total {
        let Ok(Some(event)) =
            tokio::time::timeout(Duration::from_secs(2), subscription.next()).await
        else {
            break;
        };
        note(event, &mut delivered, &mut latencies_us);
    }
    Ok(Phase {
        delivered,
        seconds: start.elapsed().as_secs_f64(),
        latencies_us,
    })
}

/// Counts a delivered record and its age.
fn note(event: Event, delivered: &mut u64, latencies_us: &mut Vec<u64>) {
    if let Event::Record(got) = event {
        *delivered += 1;
        let age = herald_proto::time::now_nanos() - got.time();
        latencies_us.push((age / 1_000).max(0) as u64);
    }
}

/// A counter of the monitor's `storms` section.
async fn storms(client: &Client, name: &str) -> anyhow::Result<u64> {
    let absent = "a server from before log storms";
    crate::herald::section_counter(client, "storms", name, absent).await
}

/// Runs the steady source alone for `seconds`, then again beside a storm of
/// `storm_records` identical records, and reports both.
///
/// # Errors
/// The server cannot be reached, or a record is refused.
pub async fn storm(
    url: &str,
    storm_records: u64,
    rate: f64,
    seconds: f64,
) -> anyhow::Result<Report> {
    // The steady source's subscriber and the storm's are apart: what is measured is what a
    // storm elsewhere does to the others' records.
    let watcher = Client::connect(url).await?;
    let mut normal = watcher.subscribe(Filter::subject(NORMAL)?).await?;
    watcher.flush(Duration::from_secs(10)).await?;
    let storm_watcher = Client::connect(url).await?;
    let mut stormy = storm_watcher.subscribe(Filter::subject(STORM)?).await?;
    storm_watcher.flush(Duration::from_secs(10)).await?;
    let publisher = Client::connect(url).await?;
    let alone = steady(&publisher, &mut normal, rate, seconds).await?;
    let held_before = storms(&watcher, "held").await?;
    let device = Client::connect(url).await?;
    let storming = tokio::spawn(async move {
        let record = record(STORM, "broken-plc", "valve 7 position unknown");
        let start = Instant::now();
        for _ in 0..storm_records {
            device.publish(&record).await?;
        }
        device.flush(Duration::from_secs(60)).await?;
        anyhow::Ok(start.elapsed().as_secs_f64())
    });
    let during = steady(&publisher, &mut normal, rate, seconds).await?;
    let storm_seconds = storming.await??;
    let held = storms(&watcher, "held").await? - held_before;
    let mut storm_delivered = 0u64;
    while let Some(event) = stormy.try_next() {
        storm_delivered += u64::from(matches!(event, Event::Record(_)));
    }
    let (mut a, mut d) = (alone.latencies_us.clone(), during.latencies_us.clone());
    let [a50, a99] = percentiles(&mut a, [0.5, 0.99]);
    let [d50, d99] = percentiles(&mut d, [0.5, 0.99]);
    let ratio = during.rate() / alone.rate();
    let expected = (rate * seconds) as u64;
    let lines = vec![
        format!(
            "herald storm: steady source {rate:.0} records/s offered for {seconds} s; alone \
             {:.0} delivered/s ({} of {expected}), p50 {a50} µs, p99 {a99} µs",
            alone.rate(),
            alone.delivered
        ),
        format!(
            "  beside a storm of {storm_records} identical records ({:.0} records/s for \
             {storm_seconds:.2} s; {held} held back into summaries, {storm_delivered} \
             delivered so far): {:.0} delivered/s ({} of {expected}), p50 {d50} µs, p99 \
             {d99} µs — {:.1} % of its rate alone",
            storm_records as f64 / storm_seconds,
            during.rate(),
            during.delivered,
            ratio * 100.0
        ),
    ];
    Ok(Report {
        lines,
        json: json!({
            "scenario": "storm",
            "rate_offered": rate,
            "seconds": seconds,
            "alone": {"delivered": alone.delivered, "rate": alone.rate(), "p50_us": a50, "p99_us": a99},
            "during": {"delivered": during.delivered, "rate": during.rate(), "p50_us": d50, "p99_us": d99},
            "storm": {"records": storm_records, "seconds": storm_seconds, "held": held, "delivered": storm_delivered},
            "ratio": ratio,
        }),
    })
}
