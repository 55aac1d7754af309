//! `archive`: sustained ingest into the archive while the server routes the same records to
//! a live subscriber, then the read time of one day of one 1 Hz signal (86,400 points) and of
//! the same day folded into 1,000 buckets — end to end through the client ([`archive`]),
//! and, for the embedded store of a server in this process, straight from the store once
//! that server has stopped ([`store_measurements`]: a stopped server has put every open
//! block into its files).

use std::path::Path;
use std::time::{Duration, Instant};

use bytes::Bytes;
use herald_archive::query::{self, Budget};
use herald_archive::{Backend, BlockStore, Entry, Keep};
use herald_client::{Client, Event};
use herald_proto::archive::{BucketQuery, SampleQuery};
use herald_proto::frame::RawRecord;
use herald_proto::time::now_nanos;
use herald_proto::{Filter, Kind, Record, Value};
use serde_json::json;

use crate::report::Report;

/// Signals the ingest spreads its records over.
const SIGNALS: u64 = 1_000;
/// Bytes of values per record: an 8-byte float and a 52-byte blob.
const PAD_BYTES: usize = 52;
/// Points in a day at 1 Hz.
const DAY_POINTS: i64 = 86_400;
/// Other signals written beside the day's signal, interleaved.
const NEIGHBOURS: i64 = 9;
/// Reads timed per measurement (the median is reported).
const READS: usize = 5;
/// Longest the archive may stay without progress before the run gives up.
const STALL: Duration = Duration::from_secs(30);
const SECOND: i64 = 1_000_000_000;
const DAY: i64 = 86_400 * SECOND;

fn sample(subject: String, time: i64, value: f64) -> Record {
    Record {
        time,
        fields: vec![
            ("value".into(), Value::Float(value)),
            ("pad".into(), Value::Bytes(vec![0x5a; PAD_BYTES])),
        ],
        ..Record::new(Kind::Info, subject)
    }
}

/// Returns the archive's counter `name` from the server's monitor (`written`, `dropped`…).
///
/// # Errors
/// When the server has no archive or the monitor lacks the counter.
pub(crate) async fn archive_counter(client: &Client, name: &str) -> anyhow::Result<u64> {
    let absent = "a server without archive: archive.backend = \"none\"?";
    crate::herald::section_counter(client, "archive", name, absent).await
}

/// Waits until the archive has written (or dropped) `target` records in all.
async fn settled(client: &Client, target: u64) -> anyhow::Result<(u64, u64)> {
    let mut last = (0, Instant::now());
    loop {
        let written = archive_counter(client, "written").await?;
        let dropped = archive_counter(client, "dropped").await?;
        if written + dropped >= target {
            return Ok((written, dropped));
        }
        if written != last.0 {
            last = (written, Instant::now());
        } else if last.1.elapsed() > STALL {
            anyhow::bail!("the archive stalled at {written} of {target} records");
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

async fn timed<T, F: std::future::Future<Output = anyhow::Result<T>>>(
    mut run: impl FnMut() -> F,
) -> anyhow::Result<(f64, T)> {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..READS {
        let started = Instant::now();
        last = Some(run().await?);
        times.push(started.elapsed().as_secs_f64() * 1e3);
    }
    Ok((median(times), last.expect("READS > 0")))
}

/// Runs the measurements against the server at `url`; returns the report and the start of
/// the day it wrote (for [`store_measurements`]).
pub async fn archive(url: &str, records: u64, rate: Option<f64>) -> anyhow::Result<(Report, i64)> {
    let client = Client::connect(url).await?;
    let (ingest_rate, delivered, dropped) = ingest(&client, url, records, rate).await?;
    let day_start = (now_nanos() / DAY - 1) * DAY;
    write_day(&client, day_start).await?;
    let name = "DAY.Signal";
    let (read_ms, read) = timed(|| async {
        Ok(client
            .samples(name, day_start, day_start + DAY)
            .await?
            .len())
    })
    .await?;
    anyhow::ensure!(
        read as i64 == DAY_POINTS,
        "read {read} points, expected {DAY_POINTS}"
    );
    let buckets = day_buckets(day_start);
    let (buckets_ms, _) = timed(|| async { Ok(client.buckets(buckets.clone()).await?) }).await?;
    let lines = vec![
        format!(
            "archive ingest: {ingest_rate:.0} records/s written ({records} records of 60-byte values over {SIGNALS} signals, offered {}), live subscriber got {delivered}, archive dropped {dropped}",
            rate.map_or("as fast as the client can".to_string(), |r| format!("at {r:.0}/s"))
        ),
        format!("read one day of a 1 Hz signal ({DAY_POINTS} points) through the client: {read_ms:.1} ms"),
        format!("the same day in 1,000 buckets through the client: {buckets_ms:.1} ms"),
    ];
    let report = json!({
        "scenario": "archive", "records": records, "ingest_per_s": ingest_rate,
        "delivered_live": delivered, "archive_dropped": dropped,
        "day_read_client_ms": read_ms, "day_buckets_client_ms": buckets_ms,
    });
    Ok((
        Report {
            lines,
            json: report,
        },
        day_start,
    ))
}

/// Adds to `report` the reads of the day that starts at `day_start` straight from the
/// embedded store in `dir`, whose server has stopped, and the same day written as a 1 Hz
/// system writes it (one batch per second) into a fresh store beside it.
///
/// # Errors
/// When a store does not open or a read does not give the whole day.
pub fn store_measurements(dir: &Path, day_start: i64, report: &mut Report) -> anyhow::Result<()> {
    let buckets = day_buckets(day_start);
    let store = BlockStore::open(dir)?;
    let (store_read, store_buckets) = store_reads(&store, day_start, &buckets)?;
    drop(store);
    report.lines.push(format!("read one day straight from the embedded store: {store_read:.1} ms; in 1,000 buckets: {store_buckets:.1} ms"));
    report.json["day_read_store_ms"] = json!(store_read);
    report.json["day_buckets_store_ms"] = json!(store_buckets);
    // The same day written as it arrives live: one batch per second, so one row per point.
    let live_dir = dir.with_file_name("archive-live-day");
    let (live_read, live_buckets) = live_day_reads(&live_dir, day_start, &buckets)?;
    let _ = std::fs::remove_dir_all(&live_dir);
    report.lines.push(format!("the day written live (one batch per second, one row per point), from the store: {live_read:.1} ms; in 1,000 buckets: {live_buckets:.1} ms"));
    report.json["day_read_live_store_ms"] = json!(live_read);
    report.json["day_buckets_live_store_ms"] = json!(live_buckets);
    Ok(())
}

/// The bucket query of the day's signal.
fn day_buckets(day_start: i64) -> BucketQuery {
    BucketQuery {
        name: "DAY.Signal".into(),
        from: day_start,
        to: day_start + DAY,
        buckets: 1_000,
        field: Some("value".into()),
    }
}

/// Publishes `records` samples while a subscriber takes them live; returns the archive's
/// sustained rate (records written per second from the first publish until the last is
/// written), the deliveries and the archive's drops.
async fn ingest(
    client: &Client,
    url: &str,
    records: u64,
    rate: Option<f64>,
) -> anyhow::Result<(f64, u64, u64)> {
    let subscriber = Client::connect(url).await?;
    let mut subscription = subscriber.subscribe(Filter::subject("SIG.*")?).await?;
    let live = tokio::spawn(async move {
        let mut delivered = 0u64;
        while delivered < records {
            match tokio::time::timeout(Duration::from_secs(2), subscription.next()).await {
                Ok(Some(Event::Record(_))) => delivered += 1,
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
        delivered
    });
    let before =
        archive_counter(client, "written").await? + archive_counter(client, "dropped").await?;
    let base = now_nanos() - 3_600 * SECOND;
    let started = Instant::now();
    for i in 0..records {
        if let Some(rate) = rate.filter(|_| i % 1_000 == 0) {
            // Paced: hold the offered rate at `rate` records/s, in steps of 1,000.
            let due = Duration::from_secs_f64(i as f64 / rate);
            if let Some(wait) = due.checked_sub(started.elapsed()) {
                tokio::time::sleep(wait).await;
            }
        }
        let subject = format!("SIG.{:04}", i % SIGNALS);
        let time = base + (i / SIGNALS) as i64 * SECOND / 10 + (i % SIGNALS) as i64;
        client.publish(&sample(subject, time, i as f64)).await?;
    }
    client.flush(Duration::from_secs(60)).await?;
    let (written, dropped) = settled(client, before + records).await?;
    let elapsed = started.elapsed().as_secs_f64();
    let delivered = live.await?;
    let dropped_now = dropped.saturating_sub(before.saturating_sub(written.min(before)));
    Ok((
        (records - dropped_now.min(records)) as f64 / elapsed,
        delivered,
        dropped_now,
    ))
}

/// Writes one day of `DAY.Signal` at 1 Hz, interleaved with its neighbours.
async fn write_day(client: &Client, day_start: i64) -> anyhow::Result<()> {
    let before =
        archive_counter(client, "written").await? + archive_counter(client, "dropped").await?;
    for second in 0..DAY_POINTS {
        let time = day_start + second * SECOND;
        client
            .publish(&sample("DAY.Signal".into(), time, (second % 3_600) as f64))
            .await?;
        for k in 0..NEIGHBOURS {
            client
                .publish(&sample(format!("DAY.Other{k}"), time, k as f64))
                .await?;
        }
    }
    client.flush(Duration::from_secs(60)).await?;
    settled(client, before + (DAY_POINTS * (NEIGHBOURS + 1)) as u64).await?;
    Ok(())
}

/// Writes the day into a fresh store at `dir` one second (ten signals) per write, as the
/// archive writer sees a 1 Hz system, then times its reads.
fn live_day_reads(dir: &Path, day_start: i64, buckets: &BucketQuery) -> anyhow::Result<(f64, f64)> {
    let store = BlockStore::open(dir)?;
    let mut seq = 0;
    for second in 0..DAY_POINTS {
        let time = day_start + second * SECOND;
        let mut batch = Vec::with_capacity(NEIGHBOURS as usize + 1);
        for k in 0..=NEIGHBOURS {
            let subject = if k == 0 {
                "DAY.Signal".to_string()
            } else {
                format!("DAY.Other{k}")
            };
            let record = sample(subject, time, (second % 3_600) as f64);
            seq += 1;
            batch.push(Entry {
                seq,
                received: time,
                keep: Keep::days(30),
                record: RawRecord::new(Bytes::from(record.to_bytes()))?,
            });
        }
        // As the archive writer hands over what the server's decoder checked.
        store.write_checked(&batch)?;
    }
    store.sync()?;
    drop(store);
    store_reads(&BlockStore::open(dir)?, day_start, buckets)
}

/// Times the day's read and buckets straight from `store`.
fn store_reads(
    store: &BlockStore,
    day_start: i64,
    buckets: &BucketQuery,
) -> anyhow::Result<(f64, f64)> {
    let query = SampleQuery {
        name: buckets.name.clone(),
        from: day_start,
        to: day_start + DAY,
        after: None,
        limit: 100_000,
    };
    let mut read_times = Vec::new();
    let mut bucket_times = Vec::new();
    for _ in 0..READS {
        let started = Instant::now();
        let (page, _) = query::samples(store as &dyn Backend, &query, Budget::records(usize::MAX))?;
        let bytes: usize = page.records.iter().map(|s| s.record.len()).sum();
        anyhow::ensure!(
            page.records.len() as i64 == DAY_POINTS && bytes > 0,
            "store read {} points",
            page.records.len()
        );
        read_times.push(started.elapsed().as_secs_f64() * 1e3);
        let started = Instant::now();
        // In parts of a default frame, as the server answers.
        let part_bytes = herald_proto::frame::DEFAULT_MAX_FRAME_BYTES as usize;
        herald_archive::decimate::buckets(store, buckets, part_bytes, |_, _| true)?;
        bucket_times.push(started.elapsed().as_secs_f64() * 1e3);
    }
    Ok((median(read_times), median(bucket_times)))
}
