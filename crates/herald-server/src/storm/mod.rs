//! Log storms and source quotas, applied to every record published here (native
//! connections, syslog, OpenTelemetry) before it is routed or archived; records relayed by
//! other members and mirrors were checked where they came in.
//!
//! Identical log records collapse by [`herald_proto::storm`]'s rule: the storm's first
//! record passes marked `collapsing`, the rest are held back and come out as one `repeated`
//! summary per window, the last marked `ended` ([`mark`] writes the marks). Each source
//! (host and process; the connection when the origin names neither) may publish
//! `source_quota` records per second ([`quota`]); records past it are refused, counted as
//! dropped (reason `quota`) and reported in a `herald.quota` record per window. Records at
//! or above the protected priority are never held back by the quota.
//!
//! A reload that changes the rule, the quota or the protected priority puts new state in
//! place ([`Storms::reconfigure`]); the old state's storms end at the sampler's next tick,
//! so what they held back still comes out as summaries.

pub mod mark;
pub mod quota;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;

use herald_proto::frame::RawRecord;
use herald_proto::storm::{self, Collapser, StormRule, Summary, Verdict};
use herald_proto::value::{Field, Value};
use herald_proto::{Kind, Priority};

use crate::Config;
use quota::Quotas;

/// What the storm rule and the quotas did, for the monitor's `storms` section.
#[derive(Debug, Default)]
pub struct StormStats {
    /// Storms started.
    pub started: AtomicU64,
    /// Records held back into summaries.
    pub held: AtomicU64,
    /// Summaries passed (`repeated` and `ended`).
    pub summaries: AtomicU64,
    /// Records refused over their source's quota.
    pub quota_refused: AtomicU64,
    /// `herald.quota` reports made.
    pub quota_reports: AtomicU64,
}

/// What became of a batch.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Which records go on (`None`: all of them).
    pub keep: Option<Vec<bool>>,
    /// Records that start a storm, marked: routed after the batch, in its place.
    pub marked: Vec<RawRecord>,
    /// Records held back into a later summary: taken, and counted there.
    pub held: u64,
    /// Records refused over their source's quota.
    pub refused: u64,
    /// Why, for the producer: the first source over its quota.
    pub refusal: Option<String>,
}

/// The server's storm and quota state.
#[derive(Debug)]
pub struct Storms {
    active: ArcSwap<Active>,
    /// State a reload replaced, ended at the next tick.
    retired: Mutex<Vec<Arc<Active>>>,
    /// The counters.
    pub stats: StormStats,
}

/// The state of one configuration: open storms and quota windows.
#[derive(Debug)]
struct Active {
    collapser: Option<Mutex<Collapser<RawRecord>>>,
    quotas: Option<Mutex<Quotas>>,
    protected: Priority,
    window_ns: i64,
}

impl Active {
    fn new(config: &Config) -> Active {
        let rule: StormRule = config.storm;
        Active {
            collapser: rule.is_on().then(|| Mutex::new(Collapser::new(rule))),
            quotas: (config.source_quota > 0)
                .then(|| Mutex::new(Quotas::new(config.source_quota, rule.window_ns))),
            protected: config.queue.protected,
            window_ns: rule.window_ns,
        }
    }
}

impl Storms {
    /// The rule and quota `config` sets.
    pub fn new(config: &Config) -> Storms {
        Storms {
            active: ArcSwap::from_pointee(Active::new(config)),
            retired: Mutex::new(Vec::new()),
            stats: StormStats::default(),
        }
    }

    /// Puts the rule, quota and protected priority of `config` in force for the batches
    /// that come next; the storms and windows open now end at the next [`Storms::tick`].
    pub fn reconfigure(&self, config: &Config) {
        let old = self.active.swap(Arc::new(Active::new(config)));
        lock(&self.retired).push(old);
    }

    /// Applies the rule and the quotas to a batch published by `connection` at `now`; with
    /// `collapse` false (a batch whose producer waits for `stored`: what it is told is
    /// stored must be), the quotas alone.
    pub fn filter(
        &self,
        records: &[RawRecord],
        connection: u64,
        now: i64,
        collapse: bool,
    ) -> Outcome {
        let mut outcome = Outcome::default();
        let active = self.active.load();
        let collapsing = collapse && active.collapser.is_some();
        if !collapsing && active.quotas.is_none() {
            return outcome;
        }
        // Read before the locks are taken: other connections' batches wait only for the
        // counting. A record whose keys cannot be read (it was checked when it came in, so
        // none) passes.
        let keys: Vec<Option<storm::Keys>> = records
            .iter()
            .map(|record| {
                let wanted = active.quotas.is_some() || record.meta.kind == Kind::Log;
                wanted.then(|| storm::raw_keys(record).ok()).flatten()
            })
            .collect();
        let mut collapser = active
            .collapser
            .as_ref()
            .filter(|_| collapse)
            .map(|c| lock(c));
        let mut quotas = active.quotas.as_ref().map(|q| lock(q));
        for (index, (record, keys)) in records.iter().zip(keys).enumerate() {
            let is_log = record.meta.kind == Kind::Log;
            let Some(keys) = keys else {
                continue;
            };
            if let Some(quotas) = quotas.as_mut() {
                let source = keys.source.unwrap_or(connection ^ quota::CONNECTION_SOURCE);
                let exempt = record.meta.priority >= active.protected;
                if !exempt && !quotas.take(source, connection, now, record) {
                    outcome.refused += 1;
                    if outcome.refusal.is_none() {
                        outcome.refusal = Some(quotas.refusal(source));
                    }
                    refuse(&mut outcome, records.len(), index);
                    continue;
                }
            }
            let Some(collapser) = collapser.as_mut().filter(|_| is_log) else {
                continue;
            };
            let (time, copy) = (record.meta.time, || owned(record));
            let marked = || storm::is_marked(&record.bytes);
            match collapser.offer(keys.identity, now, time, copy, marked) {
                Verdict::Pass => {}
                Verdict::Starts => {
                    self.stats.started.fetch_add(1, Ordering::Relaxed);
                    outcome
                        .marked
                        .push(mark::collapsing(record, active.window_ns));
                    refuse(&mut outcome, records.len(), index);
                }
                Verdict::Held => {
                    outcome.held += 1;
                    refuse(&mut outcome, records.len(), index);
                }
            }
        }
        let stats = &self.stats;
        stats.held.fetch_add(outcome.held, Ordering::Relaxed);
        stats
            .quota_refused
            .fetch_add(outcome.refused, Ordering::Relaxed);
        outcome
    }

    /// Ends the windows over at `now`: the summaries and quota reports to route (and every
    /// window of state a reload replaced).
    pub fn tick(&self, now: i64) -> Vec<RawRecord> {
        let mut out = self.finish_retired();
        let active = self.active.load();
        if let Some(collapser) = &active.collapser {
            let mut summaries: Vec<Summary<RawRecord>> = Vec::new();
            lock(collapser).tick(now, &mut summaries);
            self.stats
                .summaries
                .fetch_add(summaries.len() as u64, Ordering::Relaxed);
            out.extend(summaries.iter().map(mark::summary));
        }
        if let Some(quotas) = &active.quotas {
            let reports = lock(quotas).tick(now);
            self.stats
                .quota_reports
                .fetch_add(reports.len() as u64, Ordering::Relaxed);
            out.extend(reports);
        }
        out
    }

    /// Ends every storm and quota window now (the server stops): their last summaries and
    /// reports, so that what was held back is counted somewhere.
    pub fn finish(&self) -> Vec<RawRecord> {
        let mut out = self.finish_retired();
        self.finish_state(&self.active.load(), &mut out);
        out
    }

    fn finish_retired(&self) -> Vec<RawRecord> {
        let retired = std::mem::take(&mut *lock(&self.retired));
        let mut out = Vec::new();
        for state in &retired {
            self.finish_state(state, &mut out);
        }
        out
    }

    fn finish_state(&self, state: &Active, out: &mut Vec<RawRecord>) {
        if let Some(collapser) = &state.collapser {
            let mut summaries: Vec<Summary<RawRecord>> = Vec::new();
            lock(collapser).finish(&mut summaries);
            self.stats
                .summaries
                .fetch_add(summaries.len() as u64, Ordering::Relaxed);
            out.extend(summaries.iter().map(mark::summary));
        }
        if let Some(quotas) = &state.quotas {
            let reports = lock(quotas).tick(i64::MAX);
            self.stats
                .quota_reports
                .fetch_add(reports.len() as u64, Ordering::Relaxed);
            out.extend(reports);
        }
    }

    /// The monitor's `storms` section.
    pub fn snapshot(&self) -> Value {
        let int = |n: u64| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
        let load = |counter: &AtomicU64| int(counter.load(Ordering::Relaxed));
        let s = &self.stats;
        let active = self.active.load();
        let (storms, untracked) = active.collapser.as_ref().map_or((0, 0), |c| {
            let c = lock(c);
            (c.storms() as u64, c.untracked)
        });
        let over = active.quotas.as_ref().map_or(0, |q| lock(q).over() as u64);
        let fields: Vec<Field> = vec![
            ("storms".into(), int(storms)),
            ("started".into(), load(&s.started)),
            ("held".into(), load(&s.held)),
            ("summaries".into(), load(&s.summaries)),
            ("untracked".into(), int(untracked)),
            ("sources_over_quota".into(), int(over)),
            ("quota_refused".into(), load(&s.quota_refused)),
            ("quota_reports".into(), load(&s.quota_reports)),
        ];
        Value::Map(fields)
    }
}

/// A copy of `record` that owns its bytes: a slice of a frame would keep the whole frame
/// alive for as long as the storm keeps the record.
fn owned(record: &RawRecord) -> RawRecord {
    RawRecord {
        bytes: bytes::Bytes::copy_from_slice(&record.bytes),
        meta: record.meta,
    }
}

/// Marks record `index` of a batch of `len` as not going on.
fn refuse(outcome: &mut Outcome, len: usize, index: usize) {
    outcome.keep.get_or_insert_with(|| vec![true; len])[index] = false;
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
