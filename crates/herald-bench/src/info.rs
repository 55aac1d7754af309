//! `info`: the information service — update → subscriber notification latency at a fixed
//! rate, get latency, and the server's memory per object with many objects. Herald only.

use std::sync::Arc;
use std::time::{Duration, Instant};

use herald_client::{Client, Event, InfoChange};
use herald_proto::info::{AttributeData, SelectionData, TypeData, UpdateMode};
use herald_proto::time::now_nanos;
use herald_proto::Value;
use serde_json::json;
use tokio::sync::Semaphore;

use crate::report::{percentiles, resident_kib, Report};

/// Updates or creations in flight at once.
const IN_FLIGHT: usize = 32;
/// Longest wait for a notification before the run reports what it has.
const STALL_TIMEOUT: Duration = Duration::from_secs(10);

fn bench_type() -> TypeData {
    let attribute = |name: &str, attr_type: &str| AttributeData {
        name: name.into(),
        attr_type: attr_type.into(),
        description: format!("bench {name}"),
    };
    TypeData {
        name: "BenchValue".into(),
        base: None,
        description: "a value the bench updates".into(),
        attributes: vec![attribute("value", "double"), attribute("n", "s64")],
    }
}

fn attributes(n: i64) -> Vec<(String, Value)> {
    vec![
        ("value".into(), Value::Float(n as f64 * 0.5)),
        ("n".into(), Value::Int(n)),
    ]
}

/// Runs the three measurements; `pid` is the server's process (for its memory), if known.
pub async fn info(
    url: &str,
    updates: u64,
    rate: f64,
    gets: u64,
    objects: u64,
    pid: u32,
) -> anyhow::Result<Report> {
    let client = Client::connect(url).await?;
    client.declare_type(bench_type()).await?;
    client
        .set_info(
            "Bench.value",
            Some("BenchValue"),
            attributes(0),
            UpdateMode::Upsert,
        )
        .await?;
    let (p50, p99, lost) = notification_latency(url, &client, updates, rate).await?;
    let (get50, get99) = get_latency(&client, gets).await?;
    let before = resident_kib(pid).unwrap_or(0);
    let created = fill(&client, objects).await?;
    let after = resident_kib(pid).unwrap_or(0);
    let per_object = (after.saturating_sub(before) * 1024) as f64 / created.max(1) as f64;
    let us = |ns: u64| ns as f64 / 1000.0;
    Ok(Report {
        lines: vec![
            format!("herald info: update → notification at {rate:.0}/s: p50 {:.1} µs, p99 {:.1} µs ({updates} updates, {lost} lost)", us(p50), us(p99)),
            format!("  get: p50 {:.1} µs, p99 {:.1} µs ({gets} gets, one at a time)", us(get50), us(get99)),
            format!("  memory: {created} objects, server RSS {before} → {after} KiB: {per_object:.0} bytes per object"),
        ],
        json: json!({
            "system": "herald", "scenario": "info", "rate": rate, "updates": updates, "lost": lost,
            "notify_p50_us": us(p50), "notify_p99_us": us(p99),
            "get_p50_us": us(get50), "get_p99_us": us(get99),
            "objects": created, "rss_before_kib": before, "rss_after_kib": after, "bytes_per_object": per_object,
        }),
    })
}

/// Updates `Bench.value` at `rate` per second (several in flight) while a subscriber
/// measures the time from each update's producer time to its notification.
async fn notification_latency(
    url: &str,
    client: &Client,
    updates: u64,
    rate: f64,
) -> anyhow::Result<(u64, u64, u64)> {
    let watcher = Client::connect(url).await?;
    let selection = SelectionData {
        name_regex: Some("Bench\\.value".into()),
        ..SelectionData::default()
    };
    let mut subscription = watcher.subscribe_info(selection).await?;
    let receiver = tokio::spawn(async move {
        let mut latencies = Vec::with_capacity(updates as usize);
        let mut lost = 0;
        while (latencies.len() as u64) + lost < updates {
            match tokio::time::timeout(STALL_TIMEOUT, subscription.next()).await {
                Ok(Some(Event::Record(delivered))) => {
                    let Some(change) = InfoChange::from_delivered(&delivered) else {
                        continue;
                    };
                    if change.reason == "snapshot" {
                        continue;
                    }
                    latencies.push((now_nanos() - change.object.time).max(0) as u64);
                }
                Ok(Some(Event::Gap(gap))) => lost += gap.count,
                Ok(Some(Event::Interrupted(_))) => {}
                Ok(None) | Err(_) => break,
            }
        }
        (latencies, lost)
    });
    let permits = Arc::new(Semaphore::new(IN_FLIGHT));
    let start = Instant::now();
    let per_step = (rate / 1000.0).max(1.0);
    let mut sent = 0u64;
    while sent < updates {
        let due = (start.elapsed().as_secs_f64() * 1000.0 + 1.0) * per_step;
        while (sent as f64) < due && sent < updates {
            let permit = Arc::clone(&permits).acquire_owned().await?;
            let client = client.clone();
            let n = sent as i64 + 1;
            tokio::spawn(async move {
                let _ = client
                    .set_info("Bench.value", None, attributes(n), UpdateMode::Update)
                    .await;
                drop(permit);
            });
            sent += 1;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let (mut latencies, lost) = receiver.await?;
    let [p50, p99] = percentiles(&mut latencies, [0.5, 0.99]);
    Ok((p50, p99, lost))
}

/// Gets `Bench.value` `gets` times, one at a time; returns p50 and p99 in ns.
async fn get_latency(client: &Client, gets: u64) -> anyhow::Result<(u64, u64)> {
    let mut samples = Vec::with_capacity(gets as usize);
    for _ in 0..gets {
        let began = Instant::now();
        client.get_info("Bench.value").await?;
        samples.push(began.elapsed().as_nanos() as u64);
    }
    let [p50, p99] = percentiles(&mut samples, [0.5, 0.99]);
    Ok((p50, p99))
}

/// Creates `count` objects (several in flight); returns how many were created.
async fn fill(client: &Client, count: u64) -> anyhow::Result<u64> {
    let permits = Arc::new(Semaphore::new(IN_FLIGHT * 4));
    let mut tasks = tokio::task::JoinSet::new();
    let mut created = 0;
    for n in 0..count {
        let permit = Arc::clone(&permits).acquire_owned().await?;
        let client = client.clone();
        tasks.spawn(async move {
            let name = format!("Bench.o{n:07}");
            let ok = client
                .set_info(
                    &name,
                    Some("BenchValue"),
                    attributes(n as i64),
                    UpdateMode::Upsert,
                )
                .await
                .is_ok();
            drop(permit);
            ok
        });
        while let Some(done) = tasks.try_join_next() {
            created += u64::from(done?);
        }
    }
    while let Some(done) = tasks.join_next().await {
        created += u64::from(done?);
    }
    Ok(created)
}
