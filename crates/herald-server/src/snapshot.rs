//! The monitor's whole snapshot: the monitor's own counters with what the other parts of a
//! server count (archive, storms, cluster, syslog, OTLP, mirrors, HTTP, queues), as
//! `MONITOR`, `GET /monitor` and `GET /metrics` give it.

use std::sync::atomic::Ordering;

use herald_proto::value::{Field, Value};

use crate::shared::Shared;

/// Returns the monitor's snapshot with every section — the archive's counters, if there is an
/// archive, the storms, the cluster, syslog, OTLP, the mirrors, HTTP and the queues: the body
/// of a `MONITOR_REPLY` and of `GET /monitor`.
pub fn monitor_snapshot(shared: &Shared) -> Vec<Field> {
    let mut data = shared.monitor.snapshot();
    let duplicates = i64::try_from(shared.producers.duplicates()).unwrap_or(i64::MAX);
    let after = data
        .iter()
        .position(|(name, _)| name == "refused_records")
        .map_or(data.len(), |i| i + 1);
    data.insert(after, ("duplicates".into(), Value::Int(duplicates)));
    let quota_refused = shared.storms.stats.quota_refused.load(Ordering::Relaxed);
    count_drops(&mut data, "quota", quota_refused);
    if let Some(archive) = &shared.archive {
        let stats = archive.stats();
        count_drops(&mut data, "archive", stats.dropped);
        data.push(("archive".into(), crate::archive::stats_value(&stats)));
    }
    data.push(("storms".into(), shared.storms.snapshot()));
    if let Some(cluster) = shared.cluster.get() {
        data.push(("cluster".into(), cluster.snapshot()));
    }
    if shared.syslog.is_on() {
        data.push(("syslog".into(), shared.syslog.snapshot()));
    }
    if let Some(otlp) = shared.otlp.snapshot() {
        data.push(("otlp".into(), otlp));
    }
    if let Some(mirrors) = shared.mirrors.get().filter(|m| !m.is_empty()) {
        let mirrors = mirrors.iter().map(|m| m.snapshot()).collect();
        data.push(("mirrors".into(), Value::Array(mirrors)));
    }
    if !shared.mirrored.is_empty() {
        let globs = |list: &[herald_proto::glob::Glob]| {
            Value::Array(list.iter().map(|g| Value::Str(g.to_string())).collect())
        };
        let feeds = shared
            .mirrored
            .feeds()
            .iter()
            .map(|f| {
                Value::Map(vec![
                    ("source".into(), Value::Str(f.source.clone())),
                    ("subjects".into(), globs(&f.subjects)),
                    ("objects".into(), globs(&f.objects)),
                ])
            })
            .collect();
        data.push(("mirrored".into(), Value::Array(feeds)));
    }
    data.push((
        "http".into(),
        shared.monitor.http_value(shared.http_connections.open()),
    ));
    let int = |n: usize| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
    data.push((
        "queues".into(),
        Value::Map(vec![
            ("bytes".into(), int(shared.queue_budget.used())),
            ("budget_bytes".into(), int(shared.queue_budget.max_bytes())),
        ]),
    ));
    data
}

/// Adds records lost outside the subscriber queues — those the archive dropped (its buffer
/// and spill full), those refused over a source quota — to the monitor's `dropped`, and to
/// `drops` as `reason`: every loss in the server's totals.
fn count_drops(data: &mut [Field], reason: &str, count: u64) {
    let count = i64::try_from(count).unwrap_or(i64::MAX);
    for (name, value) in data.iter_mut() {
        match (name.as_str(), value) {
            ("dropped", Value::Int(total)) => *total = total.saturating_add(count),
            ("drops", Value::Map(reasons)) => {
                reasons.push((reason.into(), Value::Int(count)));
            }
            _ => {}
        }
    }
}
