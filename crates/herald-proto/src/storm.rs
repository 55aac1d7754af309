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
use crate::value::{Field, Value};

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
/// The window, in ms (in the `collapsing` record).
pub const WINDOW_FIELD: &str = "herald.storm_window_ms";

/// Window unless configured.
pub const DEFAULT_WINDOW_NS: i64 = 10_000_000_000;
/// Identical records passed per window unless configured.
pub const DEFAULT_REPEATS: u32 = 10;
/// Distinct records followed at once. When as many are followed, a new one takes the place
/// of the oldest seen only once in its window (a storm's records, seen again and again,
/// keep theirs), so that a flood of ever-different records cannot hide a storm nor grow the
/// state without bound; one that finds no such place passes untracked, and is counted.
pub const MAX_TRACKED: usize = 16_384;
/// Places looked at, oldest first, for one to give up before a new record passes untracked.
const EVICTION_TRIES: usize = 8;
/// Slots of the table of records seen once lately (a power of two). A record is followed
/// from its second sighting: a flood of ever-different records then costs one slot each,
/// not a place in the followed records (measured: following each cost the publish path
/// ~5 %). A record seen again before 16,384 others overwrote its slot (16 ms at 1M
/// different records/s) is followed.
const RECENT: usize = 16_384;
/// What an empty slot holds: any value would do (a key equal to it is followed one
/// sighting early, no harm), but not 0 or `u64::MAX`, which tests and small keys use.
const EMPTY_SLOT: u64 = 0x9e37_79b9_7f4a_7c15;

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

/// The fields that mark the record starting a storm.
pub fn collapsing_fields(window_ns: i64) -> Vec<Field> {
    vec![
        (STORM_FIELD.into(), Value::from("collapsing")),
        (WINDOW_FIELD.into(), Value::Int(window_ns / 1_000_000)),
    ]
}

/// The fields that mark a summary.
pub fn summary_fields<T>(summary: &Summary<T>) -> Vec<Field> {
    let state = match summary.ended {
        Some(_) => "ended",
        None => "repeated",
    };
    let mut fields = vec![
        (STORM_FIELD.into(), Value::from(state)),
        (REPEATED_FIELD.into(), Value::from(summary.repeated)),
        (FROM_FIELD.into(), Value::Time(summary.from)),
        (TO_FIELD.into(), Value::Time(summary.to)),
    ];
    if let Some(total) = summary.ended {
        fields.push((TOTAL_FIELD.into(), Value::from(total)));
    }
    fields
}

/// The field name [`STORM_FIELD`] as MessagePack writes it (a fixstr of 12 bytes).
const STORM_FIELD_ENCODED: &[u8; 13] = b"\xacherald.storm";

/// Whether an encoded record carries [`STORM_FIELD`]: a storm's mark or summary that a
/// client's logger made, whose counts must not be collapsed again.
pub fn is_marked(record: &[u8]) -> bool {
    memchr::memmem::find(record, STORM_FIELD_ENCODED).is_some()
}

/// Puts `marks` into `fields`, replacing fields of the same names.
pub fn put_marks(fields: &mut Vec<Field>, marks: Vec<Field>) {
    fields.retain(|(name, _)| !marks.iter().any(|(mark, _)| mark == name));
    fields.extend(marks);
}

/// Returns the key of a log record: what makes two records identical.
pub fn key(
    subject: &[u8],
    priority: u8,
    host: &[u8],
    process: &[u8],
    log_id: &[u8],
    text: &[u8],
) -> u64 {
    let mut hasher = HASH.build_hasher();
    hasher.write_usize(subject.len());
    hasher.write(subject);
    hasher.write_u8(priority);
    for part in [host, process] {
        hasher.write_usize(part.len());
        hasher.write(part);
    }
    // A log id names the message; without one the text is all there is.
    let (tag, what) = match log_id.is_empty() {
        false => (1u8, log_id),
        true => (2u8, text),
    };
    hasher.write_u8(tag);
    hasher.write(what);
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
    let meta = &record.meta;
    let known = meta
        .source
        .iter()
        .chain([&meta.text])
        .any(|(_, end)| *end > 0);
    let ([host, process, log_id], text) = match known {
        // Where the record's check found them.
        true => {
            let at = |(start, end): (u32, u32)| &record.bytes[start as usize..end as usize];
            (meta.source.map(at), at(meta.text))
        }
        false => read_source_and_text(record)?,
    };
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

/// Reads the origin's host, process and log id, and the text, of a record whose meta does not
/// say where they are.
fn read_source_and_text(record: &RawRecord) -> Result<([&[u8]; 3], &[u8]), DecodeError> {
    let mut reader = Reader::new(&record.bytes);
    let (mut parts, mut text): ([&[u8]; 3], &[u8]) = ([b""; 3], b"");
    let (mut previous, mut in_order) = (0, true);
    for _ in 0..reader.read_map_len()? {
        let field = reader.read_uint()?;
        in_order &= field >= previous;
        previous = field;
        match field {
            record_key::ORIGIN => parts = Origin::source_parts(&mut reader)?,
            record_key::SUBJECT | record_key::TYPE | record_key::REPLY_TO => {
                reader.read_str_bytes()?;
            }
            record_key::TEXT => {
                text = reader.read_str_bytes()?;
                // Keys written in order (as every Herald writer does): no origin follows.
                if in_order {
                    break;
                }
            }
            _ => reader.skip_value(1)?,
        }
    }
    Ok((parts, text))
}

/// Returns the key of a source: a host and a process.
pub fn source_key(host: &[u8], process: &[u8]) -> u64 {
    let mut hasher = HASH.build_hasher();
    for part in [host, process] {
        hasher.write_usize(part.len());
        hasher.write(part);
    }
    hasher.finish()
}

/// A hasher for keys that are hashes already: passes them through.
#[derive(Debug, Default, Clone, Copy)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only u64 keys are hashed with it; anything else is folded in, still correct.
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }
    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

/// Maps keyed by [`key`]s (or [`source_key`]s), which need no hashing again.
pub type KeyMap<V> = HashMap<u64, V, std::hash::BuildHasherDefault<KeyHasher>>;

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
    /// The last record held back (or the one that started the storm); none before a storm,
    /// so that following a record keeps no copy of it.
    last: Option<T>,
}

/// The collapse state of one stream of records (a server, a logger).
#[derive(Debug)]
pub struct Collapser<T> {
    rule: StormRule,
    entries: KeyMap<Entry<T>>,
    /// Keys in the order they were first followed (and again after a second chance); keys
    /// forgotten since are skipped when met.
    order: std::collections::VecDeque<u64>,
    /// Records seen once lately, by their key's low bits.
    recent: Box<[u64]>,
    /// Records that passed untracked because [`MAX_TRACKED`] were followed.
    pub untracked: u64,
}

impl<T: Clone> Collapser<T> {
    /// Collapses by `rule`.
    pub fn new(rule: StormRule) -> Self {
        Collapser {
            rule,
            entries: KeyMap::default(),
            order: std::collections::VecDeque::new(),
            recent: vec![EMPTY_SLOT; RECENT].into_boxed_slice(),
            untracked: 0,
        }
    }

    /// Makes room for one more record, if one followed may give its place up: the oldest
    /// not storming and not seen since it was followed. Returns whether there is room.
    fn make_room(&mut self) -> bool {
        if self.entries.len() < MAX_TRACKED {
            return true;
        }
        for _ in 0..EVICTION_TRIES {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            match self.entries.get(&oldest) {
                // Forgotten already (a tick): its place is free.
                None => {}
                Some(entry) if entry.storming || entry.count > 2 => {
                    self.order.push_back(oldest);
                    continue;
                }
                Some(_) => {
                    self.entries.remove(&oldest);
                }
            }
            if self.entries.len() < MAX_TRACKED {
                return true;
            }
        }
        false
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
    /// `time`; `record` makes the copy kept for a summary, only in a storm (it should own
    /// what it holds: it may be kept for a window). `marked` says whether the record is a
    /// storm's mark or summary already (a client's logger collapsed it): asked only where
    /// the record would be held back, such a record passes and is not counted, so that a
    /// client's counts are never collapsed again.
    pub fn offer(
        &mut self,
        key: u64,
        now: i64,
        time: i64,
        record: impl FnOnce() -> T,
        marked: impl FnOnce() -> bool,
    ) -> Verdict {
        if !self.rule.is_on() {
            return Verdict::Pass;
        }
        let repeats = u64::from(self.rule.repeats);
        let Some(entry) = self.entries.get_mut(&key) else {
            // Its first sighting is noted in a slot; the second makes it followed, counted
            // as seen twice.
            let slot = &mut self.recent[(key as usize) & (RECENT - 1)];
            if *slot != key {
                *slot = key;
                return Verdict::Pass;
            }
            if !self.make_room() {
                self.untracked += 1;
                return Verdict::Pass;
            }
            self.order.push_back(key);
            if self.order.len() > 4 * MAX_TRACKED {
                // Keys forgotten (and some followed again) pile up: start the line afresh
                // from what is followed, once in 3 × MAX_TRACKED new records at most.
                self.order = self.entries.keys().copied().collect();
                self.order.push_back(key);
            }
            let entry = Entry {
                window_start: now,
                count: 2,
                storming: false,
                held: 0,
                from: time,
                to: time,
                total: 0,
                last: None,
            };
            self.entries.insert(key, entry);
            return Verdict::Pass;
        };
        if (entry.storming || entry.count >= repeats) && marked() {
            return Verdict::Pass;
        }
        entry.count += 1;
        if !entry.storming && entry.count <= repeats {
            return Verdict::Pass;
        }
        if !entry.storming {
            entry.storming = true;
            (entry.from, entry.to) = (time, time);
            entry.last = Some(record());
            return Verdict::Starts;
        }
        if entry.held == 0 {
            entry.from = time;
        }
        entry.held += 1;
        entry.total += 1;
        entry.to = time;
        entry.last = Some(record());
        Verdict::Held
    }

    /// Ends the windows that are over at `now`: appends the summaries due to `out` and
    /// forgets records not seen for a whole window. While more than half of
    /// [`MAX_TRACKED`] are followed, records not seen since they were followed are forgotten
    /// too,
    /// so that a flood of distinct records leaves room to see a storm start.
    pub fn tick(&mut self, now: i64, out: &mut Vec<Summary<T>>) {
        let (window, repeats) = (self.rule.window_ns, u64::from(self.rule.repeats));
        let crowded = self.entries.len() > MAX_TRACKED / 2;
        self.entries.retain(|_, entry| {
            if now - entry.window_start < window {
                return !(crowded && !entry.storming && entry.count <= 2);
            }
            let calm = entry.count <= repeats;
            let last = entry.last.as_ref().filter(|_| entry.storming);
            if let Some(last) = last.filter(|_| entry.held > 0 || calm) {
                // With nothing held back, the record passed again is the last one seen.
                let from = if entry.held > 0 { entry.from } else { entry.to };
                out.push(Summary {
                    record: last.clone(),
                    repeated: entry.held,
                    from,
                    to: entry.to,
                    ended: calm.then_some(entry.total),
                });
            }
            let keep = entry.count > 0 && !(entry.storming && calm);
            if calm {
                entry.storming = false;
                entry.total = 0;
                entry.last = None;
            }
            entry.held = 0;
            entry.count = 0;
            entry.window_start = now;
            keep
        });
    }

    /// Ends every storm now (a closing stream): their last summaries, marked `ended`.
    pub fn finish(&mut self, out: &mut Vec<Summary<T>>) {
        self.order.clear();
        for (_, entry) in self.entries.drain() {
            if let Some(last) = entry.last.filter(|_| entry.storming) {
                let from = if entry.held > 0 { entry.from } else { entry.to };
                out.push(Summary {
                    record: last,
                    repeated: entry.held,
                    from,
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
        let verdicts: Vec<Verdict> = (0..8).map(|i| c.offer(7, i, i, || i, || false)).collect();
        use Verdict::*;
        assert_eq!(verdicts, [Pass, Pass, Pass, Starts, Held, Held, Held, Held]);
        let mut out = Vec::new();
        // Followed from its second sighting (at 1): its window ends at 10 s + 1.
        c.tick(10 * S, &mut out);
        assert!(out.is_empty(), "the window is not over");
        c.tick(10 * S + 1, &mut out);
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
        c.offer(7, 11 * S, 100, || 100, || false);
        c.tick(20 * S + 1, &mut out);
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
        assert_eq!(c.offer(7, 21 * S, 0, || 0, || false), Pass);
    }

    #[test]
    fn a_record_already_marked_passes_uncounted() {
        let mut c = Collapser::new(rule());
        for i in 0..4 {
            c.offer(9, i, i, || i, || false);
        }
        // A client's summary in the middle of the server's storm: passed, not held.
        assert_eq!(c.offer(9, 5, 5, || 5, || true), Verdict::Pass);
        assert_eq!(c.offer(9, 6, 6, || 6, || false), Verdict::Held);
        let mut out = Vec::new();
        c.finish(&mut out);
        assert_eq!(out[0].repeated, 1);
        let mut record = crate::Record::new(crate::Kind::Log, "a");
        assert!(!is_marked(&record.to_bytes()));
        record.fields = collapsing_fields(1);
        assert!(is_marked(&record.to_bytes()));
    }

    #[test]
    fn a_window_without_records_ends_the_storm_with_the_last_record_seen() {
        let mut c = Collapser::new(rule());
        for i in 0..4 {
            c.offer(1, i, i, || i, || false);
        }
        let mut out = Vec::new();
        c.tick(10 * S + 1, &mut out);
        assert!(
            out.is_empty(),
            "4 in the window: not calm, and nothing held back"
        );
        c.tick(20 * S + 1, &mut out);
        assert_eq!(
            out,
            [Summary {
                record: 3,
                repeated: 0,
                from: 3,
                to: 3,
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
            if c.offer(5, i * S / 100, i, || i, || false) == Verdict::Held {
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
        // A storm, then a flood of distinct records, each seen once: they take no place.
        for _ in 0..5 {
            c.offer(u64::MAX, 0, 0, || 0, || false);
        }
        for key in 0..(3 * MAX_TRACKED as u64) {
            assert_eq!(c.offer(key, 0, 0, || 0, || false), Verdict::Pass);
        }
        assert_eq!(c.entries.len(), 1);
        assert_eq!(c.offer(u64::MAX, 0, 0, || 0, || false), Verdict::Held);
        // Records seen twice are followed; when as many as can be are, a new one takes the
        // place of the oldest not seen since, and a storm keeps its place.
        for key in 0..(2 * MAX_TRACKED as u64) {
            c.offer(key, 0, 0, || 0, || false);
            c.offer(key, 0, 0, || 0, || false);
        }
        assert_eq!(c.entries.len(), MAX_TRACKED);
        assert_eq!(c.offer(u64::MAX, 0, 0, || 0, || false), Verdict::Held);
        // A storm that starts in the flood is seen.
        let storm = 7 * MAX_TRACKED as u64;
        let verdicts: Vec<Verdict> = (0..6)
            .map(|_| c.offer(storm, 0, 0, || 0, || false))
            .collect();
        assert_eq!(verdicts[3], Verdict::Starts);
        assert_eq!(c.untracked, 0);
        // Full of records seen since they were followed, a new one passes untracked.
        let mut full = Collapser::new(rule());
        for key in 0..MAX_TRACKED as u64 {
            for _ in 0..3 {
                full.offer(key, 0, 0, || 0, || false);
            }
        }
        full.offer(u64::MAX, 0, 0, || 0, || false);
        assert_eq!(full.offer(u64::MAX, 0, 0, || 0, || false), Verdict::Pass);
        assert_eq!(full.untracked, 1);
        // Crowded, records not seen since they were followed are forgotten at the next
        // look, the others are not.
        let mut out = Vec::new();
        full.tick(1, &mut out);
        assert_eq!(full.entries.len(), MAX_TRACKED);
        let mut twice = Collapser::new(rule());
        for key in 0..MAX_TRACKED as u64 {
            twice.offer(key, 0, 0, || 0, || false);
            twice.offer(key, 0, 0, || 0, || false);
        }
        assert_eq!(twice.entries.len(), MAX_TRACKED);
        twice.tick(1, &mut out);
        assert_eq!(twice.entries.len(), 0);
        assert!(out.is_empty());
        let off = StormRule {
            repeats: 0,
            ..rule()
        };
        let mut c = Collapser::new(off);
        assert!((0..100).all(|i| c.offer(1, i, i, || i, || false) == Verdict::Pass));
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
            b"dv01",
            b"mountd",
            b"",
            b"encoder fault",
        );
        let keys = raw_keys(&raw(&record)).unwrap();
        assert_eq!(keys.identity, expected);
        assert_eq!(keys.source, Some(source_key(b"dv01", b"mountd")));
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
    fn keys_from_the_checked_positions_equal_keys_read_again() {
        use crate::{Kind, Record};
        use bytes::Bytes;
        let mut records = Vec::new();
        for (host, process, log_id, text) in [
            ("dv01", "mountd", "", "encoder fault"),
            ("", "", "E7", ""),
            ("h", "", "", "only a host"),
            ("", "", "", ""),
            ("", "", "", "only text"),
        ] {
            let mut record = Record::new(Kind::Log, "DV01.mount");
            record.origin = Origin {
                host: host.into(),
                process: process.into(),
                log_id: log_id.into(),
                routine: "r".into(),
                line: Some(9),
                ..Origin::default()
            };
            record.text = text.into();
            records.push(record);
        }
        for record in records {
            let raw = RawRecord::new(Bytes::from(record.to_bytes())).unwrap();
            // As a record read back from an archive block: positions not known.
            let mut unknown = raw.clone();
            (unknown.meta.source, unknown.meta.text) = ([(0, 0); 3], (0, 0));
            assert_eq!(
                raw_keys(&raw).unwrap(),
                raw_keys(&unknown).unwrap(),
                "{record:?}"
            );
        }
    }

    #[test]
    fn keys_tell_apart_sources_subjects_priorities_and_texts_but_not_times() {
        let base = key(b"a.b", 4, b"h", b"p", b"", b"text");
        assert_eq!(base, key(b"a.b", 4, b"h", b"p", b"", b"text"));
        for other in [
            key(b"a.c", 4, b"h", b"p", b"", b"text"),
            key(b"a.b", 5, b"h", b"p", b"", b"text"),
            key(b"a.b", 4, b"h2", b"p", b"", b"text"),
            key(b"a.b", 4, b"h", b"hp", b"", b"text"),
            key(b"a.b", 4, b"hp", b"", b"", b"text"),
            key(b"a.b", 4, b"h", b"p", b"", b"text2"),
            key(b"a.b", 4, b"h", b"p", b"text", b"x"),
        ] {
            assert_ne!(base, other);
        }
        // With a log id, the text does not matter.
        assert_eq!(
            key(b"a", 4, b"h", b"p", b"E12", b"x=1"),
            key(b"a", 4, b"h", b"p", b"E12", b"x=2")
        );
    }
}
