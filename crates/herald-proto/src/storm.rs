//! Log storms: the rule that collapses identical log records, shared by the server and the
//! clients' loggers so that a storm is cut the same way wherever it is first seen.
//!
//! Two log records are *identical* when they come from the same source (host and process)
//! about the same subject at the same priority, with the same log id — or, when they have
//! none, the same text. Their time, thread and fields may differ. Within one window (10 s
//! unless configured) the first `repeats` identical records (10) pass as they are; past
//! that the storm *starts*: the next record passes marked [`STORM_FIELD`] `= "collapsing"`
//! and those after it are held back and counted. At the end of each window in which some
//! were held back, the last of them passes as a summary, marked `"repeated"` with the
//! count and the first and last times ([`REPEATED_FIELD`], [`FROM_FIELD`],
//! [`TO_FIELD`]). A window with no more than `repeats` identical records ends the storm:
//! its summary (or, when none was held back, the last record seen again) is marked
//! `"ended"` and carries the storm's total ([`TOTAL_FIELD`]). Nothing is lost without a
//! count: every record held back is in exactly one summary.
//!
//! [`Collapser`] keeps that state for any record type; the caller says what is identical
//! (a [`key`]) and builds the marked records from [`Summary`].

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

use crate::error::DecodeError;
use crate::frame::RawRecord;
use crate::msgpack::Reader;
use crate::origin::Origin;
use crate::record::key as record_key;

/// The field that marks a record of a storm: `collapsing`, `repeated` or `ended`.
pub const STORM_FIELD: &str = "herald.storm";
/// Records held back since the last summary (in `repeated` and `ended` records).
pub const REPEATED_FIELD: &str = "herald.repeated";
/// The time of the first record a summary counts.
pub const FROM_FIELD: &str = "herald.repeated_from";
/// The time of the last record a summary counts.
pub const TO_FIELD: &str = "herald.repeated_to";
/// Records held back over the whole storm (in the `ended` record).
pub const TOTAL_FIELD: &str = "herald.repeated_total";

/// Window unless configured.
pub const DEFAULT_WINDOW_NS: i64 = 10_000_000_000;
/// Identical records passed per window unless configured.
pub const DEFAULT_REPEATS: u32 = 10;
/// Distinct records followed at once; past that, new ones pass untracked (and are counted
/// as such), so a stream of ever-different records cannot grow the state without bound.
pub const MAX_TRACKED: usize = 16_384;

/// When identical records collapse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StormRule {
    /// The window, in ns.
    pub window_ns: i64,
    /// Identical records passed per window; 0 turns collapsing off.
    pub repeats: u32,
}

impl Default for StormRule {
    fn default() -> Self {
        StormRule {
            window_ns: DEFAULT_WINDOW_NS,
            repeats: DEFAULT_REPEATS,
        }
    }
}

impl StormRule {
    /// Whether records collapse at all.
    pub fn is_on(&self) -> bool {
        self.repeats > 0 && self.window_ns > 0
    }
}

/// What becomes of one record offered to a [`Collapser`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// It passes as it is.
    Pass,
    /// It passes marked `collapsing`: the storm starts with it.
    Starts,
    /// It is held back and counted (in a later summary).
    Held,
}

/// What the state kept since the start of the window says at its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary<T> {
    /// The record to pass: the last one held back, or (an `ended` record with nothing held
    /// back) the last one seen.
    pub record: T,
    /// Records held back since the last summary (0 in an `ended` record with none).
    pub repeated: u64,
    /// Time of the first and last of them (the record's own time when none).
    pub from: i64,
    /// See `from`.
    pub to: i64,
    /// `Some(total held back over the storm)` when the storm ended.
    pub ended: Option<u64>,
}

/// Returns the key of a log record: what makes two records identical.
pub fn key(
    subject: &[u8],
    priority: u8,
    host: &str,
    process: &str,
    log_id: &str,
    text: &str,
) -> u64 {
    let mut hasher = HASH.build_hasher();
    hasher.write(subject);
    hasher.write_u8(priority);
    for part in [host, process] {
        hasher.write_usize(part.len());
        hasher.write(part.as_bytes());
    }
    // A log id names the message; without one the text is all there is.
    let (tag, what) = match log_id.is_empty() {
        false => (1u8, log_id),
        true => (2u8, text),
    };
    hasher.write_u8(tag);
    hasher.write(what.as_bytes());
    hasher.finish()
}

/// What one record is, to the storm rule and the source quota.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keys {
    /// Its [`key`]: equal for identical records.
    pub identity: u64,
    /// Its source, host and process ([`source_key`]); `None` when the origin names
    /// neither.
    pub source: Option<u64>,
}

/// Returns the keys of a checked record, reading only its origin and text.
///
/// # Errors
/// A [`DecodeError`] only for bytes that were never checked as a record.
pub fn raw_keys(record: &RawRecord) -> Result<Keys, DecodeError> {
    let mut reader = Reader::new(&record.bytes);
    let (mut parts, mut text) = ([""; 3], "");
    let (mut previous, mut in_order) = (0, true);
    for _ in 0..reader.read_map_len()? {
        let field = reader.read_uint()?;
        in_order &= field >= previous;
        previous = field;
        match field {
            record_key::ORIGIN => parts = Origin::source_parts(&mut reader)?,
            record_key::TEXT => {
                text = reader.read_str()?;
                // Keys written in order (as every Herald writer does): no origin follows.
                if in_order {
                    break;
                }
            }
            _ => reader.skip_value(1)?,
        }
    }
    let [host, process, log_id] = parts;
    let priority = record.meta.priority as u8;
    Ok(Keys {
        identity: key(
            record.subject_bytes(),
            priority,
            host,
            process,
            log_id,
            text,
        ),
        source: (!host.is_empty() || !process.is_empty()).then(|| source_key(host, process)),
    })
}

/// Returns the key of a source: a host and a process.
pub fn source_key(host: &str, process: &str) -> u64 {
    let mut hasher = HASH.build_hasher();
    for part in [host, process] {
        hasher.write_usize(part.len());
        hasher.write(part.as_bytes());
    }
    hasher.finish()
}

/// A fixed seed, so that keys are the same in every process (and tests).
const HASH: foldhash::fast::FixedState = foldhash::fast::FixedState::with_seed(0x6865_7261_6c64);

/// One followed record.
#[derive(Debug)]
struct Entry<T> {
    window_start: i64,
    /// Identical records seen in this window.
    count: u64,
    storming: bool,
    /// Held back since the last summary, and the first and last of their times.
    held: u64,
    from: i64,
    to: i64,
    /// Held back over the storm.
    total: u64,
    /// The last record held back (or, before any was, the last seen).
    last: T,
}

/// The collapse state of one stream of records (a server, a logger).
#[derive(Debug)]
pub struct Collapser<T> {
    rule: StormRule,
    entries: HashMap<u64, Entry<T>>,
    /// Records that passed untracked because [`MAX_TRACKED`] were followed.
    pub untracked: u64,
}

impl<T: Clone> Collapser<T> {
    /// Collapses by `rule`.
    pub fn new(rule: StormRule) -> Self {
        Collapser {
            rule,
            entries: HashMap::new(),
            untracked: 0,
        }
    }

    /// The rule.
    pub fn rule(&self) -> StormRule {
        self.rule
    }

    /// Storms under way.
    pub fn storms(&self) -> usize {
        self.entries.values().filter(|e| e.storming).count()
    }

    /// Offers a record with `key` at `now` (the collapser's clock, ns) and the record's own
    /// `time`; `record` makes the copy kept for a summary, only when one is needed.
    pub fn offer(&mut self, key: u64, now: i64, time: i64, record: impl FnOnce() -> T) -> Verdict {
        if !self.rule.is_on() {
            return Verdict::Pass;
        }
        let repeats = u64::from(self.rule.repeats);
        if !self.entries.contains_key(&key) {
            if self.entries.len() >= MAX_TRACKED {
                self.untracked += 1;
                return Verdict::Pass;
            }
            let entry = Entry {
                window_start: now,
                count: 1,
                storming: false,
                held: 0,
                from: time,
                to: time,
                total: 0,
                last: record(),
            };
            self.entries.insert(key, entry);
            return Verdict::Pass;
        }
        let entry = self.entries.get_mut(&key).expect("present");
        entry.count += 1;
        if !entry.storming && entry.count <= repeats {
            return Verdict::Pass;
        }
        if !entry.storming {
            entry.storming = true;
            entry.last = record();
            return Verdict::Starts;
        }
        if entry.held == 0 {
            entry.from = time;
        }
        entry.held += 1;
        entry.total += 1;
        entry.to = time;
        entry.last = record();
        Verdict::Held
    }

    /// Ends the windows that are over at `now`: appends the summaries due to `out` and
    /// forgets records not seen for a whole window.
    pub fn tick(&mut self, now: i64, out: &mut Vec<Summary<T>>) {
        let (window, repeats) = (self.rule.window_ns, u64::from(self.rule.repeats));
        self.entries.retain(|_, entry| {
            if now - entry.window_start < window {
                return true;
            }
            let calm = entry.count <= repeats;
            if entry.storming && (entry.held > 0 || calm) {
                out.push(Summary {
                    record: entry.last.clone(),
                    repeated: entry.held,
                    from: entry.from,
                    to: entry.to,
                    ended: calm.then_some(entry.total),
                });
            }
            let keep = entry.count > 0 && !(entry.storming && calm);
            if calm {
                entry.storming = false;
                entry.total = 0;
            }
            entry.held = 0;
            entry.count = 0;
            entry.window_start = now;
            keep
        });
    }

    /// Ends every storm now (a closing stream): their last summaries, marked `ended`.
    pub fn finish(&mut self, out: &mut Vec<Summary<T>>) {
        for (_, entry) in self.entries.drain() {
            if entry.storming {
                out.push(Summary {
                    record: entry.last,
                    repeated: entry.held,
                    from: entry.from,
                    to: entry.to,
                    ended: Some(entry.total),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    fn rule() -> StormRule {
        StormRule {
            window_ns: 10 * S,
            repeats: 3,
        }
    }

    #[test]
    fn the_first_repeats_pass_then_one_starts_the_storm_and_the_rest_are_counted() {
        let mut c = Collapser::new(rule());
        let verdicts: Vec<Verdict> = (0..8).map(|i| c.offer(7, i, i, || i)).collect();
        use Verdict::*;
        assert_eq!(verdicts, [Pass, Pass, Pass, Starts, Held, Held, Held, Held]);
        let mut out = Vec::new();
        c.tick(9 * S, &mut out);
        assert!(out.is_empty(), "the window is not over");
        c.tick(10 * S, &mut out);
        assert_eq!(
            out,
            [Summary {
                record: 7,
                repeated: 4,
                from: 4,
                to: 7,
                ended: None
            }]
        );
        assert_eq!(c.storms(), 1, "8 in the window: the storm goes on");
        // A quiet window ends it, and says how many were held back over it.
        out.clear();
        c.offer(7, 11 * S, 100, || 100);
        c.tick(20 * S, &mut out);
        assert_eq!(
            out,
            [Summary {
                record: 100,
                repeated: 1,
                from: 100,
                to: 100,
                ended: Some(5)
            }]
        );
        assert_eq!(c.storms(), 0);
        // After it, identical records pass again.
        assert_eq!(c.offer(7, 21 * S, 0, || 0), Pass);
    }

    #[test]
    fn a_window_without_records_ends_the_storm_with_the_last_record_seen() {
        let mut c = Collapser::new(rule());
        for i in 0..4 {
            c.offer(1, i, i, || i);
        }
        let mut out = Vec::new();
        c.tick(10 * S, &mut out);
        assert!(
            out.is_empty(),
            "4 in the window: not calm, and nothing held back"
        );
        c.tick(20 * S, &mut out);
        assert_eq!(
            out,
            [Summary {
                record: 3,
                repeated: 0,
                from: 0,
                to: 0,
                ended: Some(0)
            }]
        );
        assert_eq!(c.entries.len(), 0, "forgotten");
        out.clear();
        c.tick(30 * S, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn every_held_record_is_counted_once_across_windows() {
        let mut c = Collapser::new(rule());
        let mut out = Vec::new();
        let mut held = 0;
        for i in 0..10_000i64 {
            if c.offer(5, i * S / 100, i, || i) == Verdict::Held {
                held += 1;
            }
            if i % 37 == 0 {
                c.tick(i * S / 100, &mut out);
            }
        }
        c.finish(&mut out);
        assert_eq!(out.iter().map(|s| s.repeated).sum::<u64>(), held);
        assert_eq!(out.last().unwrap().ended, Some(held));
    }

    #[test]
    fn distinct_keys_are_apart_and_the_state_is_bounded() {
        let mut c = Collapser::new(rule());
        for key in 0..(MAX_TRACKED as u64 + 5) {
            assert_eq!(c.offer(key, 0, 0, || 0), Verdict::Pass);
        }
        assert_eq!(c.untracked, 5);
        let off = StormRule {
            repeats: 0,
            ..rule()
        };
        let mut c = Collapser::new(off);
        assert!((0..100).all(|i| c.offer(1, i, i, || i) == Verdict::Pass));
    }

    #[test]
    fn a_raw_record_has_the_key_of_its_parts() {
        use crate::{Kind, Priority, Record};
        use bytes::Bytes;
        let record = Record {
            priority: Priority::Error,
            origin: Origin {
                host: "dv01".into(),
                process: "mountd".into(),
                thread: "t1".into(),
                ..Origin::default()
            },
            text: "encoder fault".into(),
            fields: vec![("n".into(), crate::Value::Int(1))],
            ..Record::new(Kind::Log, "DV01.mount")
        };
        let raw = |r: &Record| RawRecord::new(Bytes::from(r.to_bytes())).unwrap();
        let expected = key(
            b"DV01.mount",
            Priority::Error as u8,
            "dv01",
            "mountd",
            "",
            "encoder fault",
        );
        let keys = raw_keys(&raw(&record)).unwrap();
        assert_eq!(keys.identity, expected);
        assert_eq!(keys.source, Some(source_key("dv01", "mountd")));
        let mut other = record.clone();
        other.time = 5;
        other.origin.thread = "t2".into();
        other.fields.clear();
        let identity = |r: &Record| raw_keys(&raw(r)).unwrap().identity;
        assert_eq!(identity(&other), expected, "time, thread, fields aside");
        other.origin.log_id = "E7".into();
        assert_ne!(identity(&other), expected);
        other.origin = Origin::default();
        assert_eq!(raw_keys(&raw(&other)).unwrap().source, None);
    }

    #[test]
    fn keys_tell_apart_sources_subjects_priorities_and_texts_but_not_times() {
        let base = key(b"a.b", 4, "h", "p", "", "text");
        assert_eq!(base, key(b"a.b", 4, "h", "p", "", "text"));
        for other in [
            key(b"a.c", 4, "h", "p", "", "text"),
            key(b"a.b", 5, "h", "p", "", "text"),
            key(b"a.b", 4, "h2", "p", "", "text"),
            key(b"a.b", 4, "h", "hp", "", "text"),
            key(b"a.b", 4, "hp", "", "", "text"),
            key(b"a.b", 4, "h", "p", "", "text2"),
            key(b"a.b", 4, "h", "p", "text", "x"),
        ] {
            assert_ne!(base, other);
        }
        // With a log id, the text does not matter.
        assert_eq!(
            key(b"a", 4, "h", "p", "E12", "x=1"),
            key(b"a", 4, "h", "p", "E12", "x=2")
        );
    }
}
