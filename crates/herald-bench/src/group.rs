//! `group`: the records of one publisher delivered to one subscriber, then shared by a queue
//! group of three (each record to one member). The rate is records delivered per second from
//! the first publish to the last record read, for the single subscriber and for the group
//! together; the group's should be close to the single subscriber's (the router picks a member
//! per record, and three readers share the reading).

use std::time::{Duration, Instant};

use herald_client::{Client, Event, Subscription};
use herald_proto::{DeliveryOptions, Filter};
use serde_json::json;

use crate::herald::{bench_record, Numbered};
use crate::report::Report;

const SUBJECT: &str = "bench.group";
/// How long a reader waits for a record before it takes the stream as ended.
const IDLE: Duration = Duration::from_secs(2);

/// Reads `subscription` until it is idle for [`IDLE`]; returns (records, gap losses, when
/// the last record came).
async fn read(mut subscription: Subscription) -> (u64, u64, Instant) {
    let (mut records, mut lost, mut last) = (0, 0, Instant::now());
    while let Ok(Some(event)) = tokio::time::timeout(IDLE, subscription.next()).await {
        match event {
            Event::Record(_) => {
                records += 1;
                last = Instant::now();
            }
            Event::Gap(gap) => lost += gap.count,
            Event::Interrupted(_) => {}
        }
    }
    (records, lost, last)
}

/// One run: `members` subscribers (in one group when more than one), `records` published.
async fn run(
    url: &str,
    members: usize,
    records: u64,
    size: usize,
) -> anyhow::Result<(f64, u64, Vec<u64>)> {
    let mut clients = Vec::new();
    let mut readers = Vec::new();
    for n in 0..members {
        let client = Client::connect(&format!("{url}?name=bench-member-{n}")).await?;
        let options = DeliveryOptions {
            group: (members > 1).then(|| "bench".into()),
            ..DeliveryOptions::default()
        };
        let subscription = client
            .subscribe_with_options(Filter::subject(SUBJECT)?, options)
            .await?;
        client.flush(Duration::from_secs(10)).await?;
        readers.push(tokio::spawn(read(subscription)));
        clients.push(client);
    }
    let publisher = Client::connect(&format!("{url}?name=bench-group-pub")).await?;
    let mut record = bench_record(SUBJECT, size);
    let numbered = Numbered::new(&record.text);
    let started = Instant::now();
    for n in 1..=records {
        // Every text its own: identical records would collapse as a log storm.
        numbered.write(&mut record.text, n);
        publisher.publish(&record).await?;
    }
    publisher.flush(Duration::from_secs(60)).await?;
    let (mut delivered, mut lost, mut shares, mut last) = (0, 0, Vec::new(), started);
    for reader in readers {
        let (got, gaps, at) = reader.await?;
        (delivered, lost) = (delivered + got, lost + gaps);
        shares.push(got);
        last = last.max(at);
    }
    let rate = delivered as f64 / last.duration_since(started).as_secs_f64();
    Ok((rate, lost, shares))
}

/// Runs one subscriber, then a group of three, with `records` records of `size` bytes of
/// text each, and reports both rates.
///
/// # Errors
/// The server cannot be reached, or a record is refused.
pub async fn group(url: &str, records: u64, size: usize) -> anyhow::Result<Report> {
    let (single, single_lost, _) = run(url, 1, records, size).await?;
    let (shared, group_lost, shares) = run(url, 3, records, size).await?;
    let lines = vec![
        format!("group: one subscriber: {single:.0} records/s delivered ({single_lost} lost)"),
        format!(
            "group: a queue group of 3: {shared:.0} records/s delivered together ({group_lost} lost; shares {shares:?}): {:.2}× the single subscriber",
            shared / single
        ),
    ];
    Ok(Report {
        lines,
        json: json!({"scenario": "group", "records": records, "size": size,
                     "single": {"rate": single, "lost": single_lost},
                     "group": {"members": 3, "rate": shared, "lost": group_lost, "shares": shares},
                     "ratio": shared / single}),
    })
}
