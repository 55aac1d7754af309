//! Source quotas: a token bucket per source that refills at `source_quota` records per
//! second and holds a second's worth. A record finding it empty is refused. Once per window
//! a source that had records refused is reported in a record on subject `herald.quota`
//! (`state` `over`, the count, the source), and once more (`state` `ended`, the total) after
//! a window without refusals.

use herald_proto::frame::RawRecord;
use herald_proto::storm::KeyMap;
use herald_proto::{Kind, Priority, Record, Value};

/// Mixed into a connection id to make the source of records whose origin names no host or
/// process (so that it cannot equal a host-and-process key by chance more than any two
/// keys can).
pub const CONNECTION_SOURCE: u64 = 0x636f_6e6e_6563_7469;

/// The subject of quota reports.
pub const REPORT_SUBJECT: &str = "herald.quota";

/// Sources followed at once; records of further sources pass.
const MAX_SOURCES: usize = 65_536;

/// One source's bucket.
#[derive(Debug)]
struct Bucket {
    tokens: f64,
    last: i64,
    window_start: i64,
    /// Refused in this window, and since the source went over.
    refused: u64,
    total: u64,
    over: bool,
    /// Who the source is, for reports: set at its first refusal.
    name: Option<(String, String)>,
    connection: u64,
}

/// Every source's bucket.
#[derive(Debug)]
pub struct Quotas {
    rate: u64,
    window_ns: i64,
    buckets: KeyMap<Bucket>,
}

impl Quotas {
    /// `rate` records per second per source, reported per `window_ns`.
    pub fn new(rate: u64, window_ns: i64) -> Quotas {
        Quotas {
            rate,
            window_ns,
            buckets: KeyMap::default(),
        }
    }

    /// Takes a token from `source`'s bucket at `now`: false when it has none.
    pub fn take(&mut self, source: u64, connection: u64, now: i64, record: &RawRecord) -> bool {
        let capacity = self.rate as f64;
        if !self.buckets.contains_key(&source) {
            if self.buckets.len() >= MAX_SOURCES {
                return true;
            }
            let bucket = Bucket {
                tokens: capacity,
                last: now,
                window_start: now,
                refused: 0,
                total: 0,
                over: false,
                name: None,
                connection,
            };
            self.buckets.insert(source, bucket);
        }
        let bucket = self.buckets.get_mut(&source).expect("present");
        let elapsed = (now - bucket.last).max(0) as f64;
        bucket.tokens = (bucket.tokens + elapsed * capacity / 1e9).min(capacity);
        bucket.last = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            return true;
        }
        bucket.refused += 1;
        if bucket.name.is_none() {
            bucket.name = Some(names(record));
        }
        false
    }

    /// What a producer is told about records of `source` refused.
    pub fn refusal(&self, source: u64) -> String {
        let who = self
            .buckets
            .get(&source)
            .map_or_else(String::new, |b| describe(b.name.as_ref(), b.connection));
        format!("source {who} is over its quota of {} records/s", self.rate)
    }

    /// Sources over their quota now.
    pub fn over(&self) -> usize {
        self.buckets
            .values()
            .filter(|b| b.over || b.refused > 0)
            .count()
    }

    /// Ends the windows over at `now`: the reports due; forgets sources that are idle.
    pub fn tick(&mut self, now: i64) -> Vec<RawRecord> {
        let (rate, window) = (self.rate, self.window_ns);
        let mut reports = Vec::new();
        self.buckets.retain(|_, bucket| {
            if now - bucket.window_start < window {
                return true;
            }
            bucket.window_start = now;
            if bucket.refused > 0 {
                bucket.total += bucket.refused;
                bucket.over = true;
                reports.push(report(bucket, rate, window, "over"));
                bucket.refused = 0;
                return true;
            }
            if bucket.over {
                reports.push(report(bucket, rate, window, "ended"));
                bucket.over = false;
                bucket.total = 0;
            }
            // A full bucket is a source that may as well start afresh.
            let idle = (now - bucket.last) as f64 >= 1e9;
            !idle
        });
        reports
    }
}

/// The host and process a record names.
fn names(record: &RawRecord) -> (String, String) {
    Record::from_bytes(&record.bytes)
        .map(|r| (r.origin.host, r.origin.process))
        .unwrap_or_default()
}

fn describe(name: Option<&(String, String)>, connection: u64) -> String {
    match name {
        Some((host, process)) if !host.is_empty() || !process.is_empty() => {
            format!("{host}/{process}")
        }
        _ => format!("connection {connection}"),
    }
}

/// A `herald.quota` record about `bucket`.
fn report(bucket: &Bucket, rate: u64, window_ns: i64, state: &str) -> RawRecord {
    let who = describe(bucket.name.as_ref(), bucket.connection);
    let seconds = window_ns as f64 / 1e9;
    let text = match state {
        "over" => format!(
            "source {who} is over its quota of {rate} records/s: {} records refused in the \
             last {seconds} s",
            bucket.refused
        ),
        _ => format!(
            "source {who} is within its quota of {rate} records/s again: {} records were \
             refused while it was over",
            bucket.total
        ),
    };
    let (host, process) = bucket.name.clone().unwrap_or_default();
    let int = |n: u64| Value::from(n);
    let record = Record {
        type_name: REPORT_SUBJECT.to_string(),
        priority: Priority::Warning,
        time: herald_proto::time::now_nanos(),
        text,
        fields: vec![
            ("state".into(), Value::from(state)),
            ("source_host".into(), Value::Str(host)),
            ("source_process".into(), Value::Str(process)),
            ("connection".into(), int(bucket.connection)),
            ("quota".into(), int(rate)),
            ("refused".into(), int(bucket.refused)),
            ("refused_total".into(), int(bucket.total)),
        ],
        ..Record::new(Kind::Log, REPORT_SUBJECT)
    };
    RawRecord::from_record(&record).expect("a record made here is valid")
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    fn record() -> RawRecord {
        let mut r = Record::new(Kind::Log, "a.b");
        r.origin.host = "dv01".into();
        r.origin.process = "mountd".into();
        RawRecord::from_record(&r).unwrap()
    }

    #[test]
    fn a_source_gets_its_rate_and_the_rest_is_refused_and_reported() {
        let mut q = Quotas::new(100, 10 * S);
        let r = record();
        // A second's worth at once, then 100 per second.
        let taken = (0..150).filter(|_| q.take(1, 7, 0, &r)).count();
        assert_eq!(taken, 100);
        let taken = (0..150).filter(|i| q.take(1, 7, S / 2 + i, &r)).count();
        assert_eq!(taken, 50);
        assert!(q.take(2, 8, S, &r), "another source has its own bucket");
        assert_eq!(
            q.refusal(1),
            "source dv01/mountd is over its quota of 100 records/s"
        );
        let reports = q.tick(10 * S);
        assert_eq!(reports.len(), 1);
        let report = Record::from_bytes(&reports[0].bytes).unwrap();
        assert_eq!(report.subject, REPORT_SUBJECT);
        assert!(
            report.text.contains("150 records refused"),
            "{}",
            report.text
        );
        assert_eq!(q.over(), 1);
        // A quiet window: the source is within its quota again.
        let ended = q.tick(20 * S);
        let ended = Record::from_bytes(&ended[0].bytes).unwrap();
        assert!(
            ended.text.contains("150 records were refused"),
            "{}",
            ended.text
        );
        assert_eq!(q.over(), 0);
    }
}
