//! The record checks' fast path: [`RecordMeta::scan`](crate::record::RecordMeta::scan) on
//! the records clients write, in one pass that keeps its state in registers.
//!
//! The general scan reads every value through [`Reader`](crate::msgpack::Reader)'s methods,
//! each returning a `Result` with a [`DecodeError`](crate::DecodeError) that names the
//! problem: a few words wide, so every step goes through memory, and a jump on each key that
//! the processor mispredicts (a fifth of the scan's time, docs/benchmarks.md). This path
//! only says whether a record passes, as `Option`s that stay in registers, and reads the keys
//! in the order every Herald client writes them (ascending), so each key is a branch that
//! goes the same way record after record. Whatever it does not take — a record that fails a
//! check, keys in another order, integer keys in long forms, maps of 16 or more pairs, a
//! subject that is not printable ASCII — goes to the general scan, which gives the same
//! answer for every record this path passes (a test mutates records at random to hold the
//! two to that) and the error for those that fail.

use crate::glob::MAX_PATTERN_BYTES;
use crate::kind::Kind;
use crate::origin;
use crate::priority::{Priority, ALL_PRIORITIES};
use crate::record_meta::{key, RecordMeta};
use crate::value;

/// The priorities by wire value (`None` where none is defined).
const PRIORITIES: [Option<Priority>; 16] = {
    let mut table = [None; 16];
    let mut i = 0;
    while i < ALL_PRIORITIES.len() {
        table[ALL_PRIORITIES[i] as usize] = Some(ALL_PRIORITIES[i]);
        i += 1;
    }
    table
};

/// Past the last key: no pair left.
const END: u8 = u8::MAX;

/// Origin keys whose values are integers (`line`, `stack_level`); every other is a string.
const ORIGIN_NUMBERS: u16 = 1 << origin::LINE | 1 << origin::STACK_LEVEL;

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    #[inline(always)]
    fn byte(&mut self) -> Option<u8> {
        let byte = *self.bytes.get(self.pos)?;
        self.pos += 1;
        Some(byte)
    }

    #[inline(always)]
    fn take(&mut self, count: usize) -> Option<(usize, usize)> {
        let start = self.pos;
        let end = start
            .checked_add(count)
            .filter(|&end| end <= self.bytes.len())?;
        self.pos = end;
        Some((start, end))
    }

    #[inline(always)]
    fn be(&mut self, count: usize) -> Option<u64> {
        let (start, end) = self.take(count)?;
        Some(
            self.bytes[start..end]
                .iter()
                .fold(0u64, |value, &b| value << 8 | u64::from(b)),
        )
    }

    /// A positive fixint (keys, kinds, priorities as clients write them).
    #[inline(always)]
    fn small(&mut self) -> Option<u8> {
        let byte = self.byte()?;
        (byte < 0x80).then_some(byte)
    }

    /// The next key, or [`END`] when `left` pairs are read.
    #[inline(always)]
    fn key(&mut self, left: &mut u8) -> Option<u8> {
        if *left == 0 {
            return Some(END);
        }
        *left -= 1;
        self.small()
    }

    /// A non-negative integer in any form (`u64`).
    #[inline(always)]
    fn uint(&mut self) -> Option<u64> {
        match self.byte()? {
            small @ 0x00..=0x7f => Some(u64::from(small)),
            0xcc => self.be(1),
            0xcd => self.be(2),
            0xce => self.be(4),
            0xcf => self.be(8),
            _ => None,
        }
    }

    /// An integer in any form that fits `i64`.
    #[inline(always)]
    fn int(&mut self) -> Option<i64> {
        match self.byte()? {
            small @ 0x00..=0x7f => Some(i64::from(small)),
            negative @ 0xe0..=0xff => Some(i64::from(negative as i8)),
            0xcc => self.be(1).map(|v| v as i64),
            0xcd => self.be(2).map(|v| v as i64),
            0xce => self.be(4).map(|v| v as i64),
            0xcf => self.be(8).and_then(|v| i64::try_from(v).ok()),
            0xd0 => self.be(1).map(|v| i64::from(v as u8 as i8)),
            0xd1 => self.be(2).map(|v| i64::from(v as u16 as i16)),
            0xd2 => self.be(4).map(|v| i64::from(v as u32 as i32)),
            0xd3 => self.be(8).map(|v| v as i64),
            _ => None,
        }
    }

    /// A string's bytes, not checked.
    #[inline(always)]
    fn str_bytes(&mut self) -> Option<(usize, usize)> {
        let len = match self.byte()? {
            fix @ 0xa0..=0xbf => usize::from(fix & 0x1f),
            0xd9 => self.be(1)? as usize,
            0xda => self.be(2)? as usize,
            0xdb => self.be(4)? as usize,
            _ => return None,
        };
        self.take(len)
    }

    /// A UTF-8 string.
    #[inline(always)]
    fn str(&mut self) -> Option<(usize, usize)> {
        let (start, end) = self.str_bytes()?;
        let bytes = &self.bytes[start..end];
        (bytes.is_ascii() || std::str::from_utf8(bytes).is_ok()).then_some((start, end))
    }

    /// A subject: printable ASCII without wildcards, 1 to 1024 bytes (anything else is
    /// left to the general scan, which accepts other UTF-8 and names what is wrong).
    #[inline(always)]
    fn subject(&mut self) -> Option<(usize, usize)> {
        let (start, end) = self.str_bytes()?;
        // Without an early exit, so that the compiler checks many bytes at a time.
        let printable = self.bytes[start..end].iter().fold(true, |ok, &b| {
            ok & (0x20..0x7f).contains(&b) & (b != b'*') & (b != b'?')
        });
        (printable && end > start && end - start <= MAX_PATTERN_BYTES).then_some((start, end))
    }

    /// A map header of fewer than 16 pairs.
    #[inline(always)]
    fn fixmap(&mut self) -> Option<u8> {
        let byte = self.byte()?;
        (byte & 0xf0 == 0x80).then_some(byte & 0x0f)
    }

    /// The origin map: the ranges of its host, process and log id (`(0, 0)` if absent).
    #[inline(always)]
    fn origin(&mut self) -> Option<[(usize, usize); 3]> {
        let mut parts = [(0, 0); 3];
        let mut seen = 0u16;
        for _ in 0..self.fixmap()? {
            let key = self.small()?;
            if usize::from(key) >= origin::NAMES.len() || seen & 1 << key != 0 {
                return None;
            }
            seen |= 1 << key;
            if ORIGIN_NUMBERS & 1 << key != 0 {
                self.uint()?;
                continue;
            }
            let range = self.str()?;
            match u64::from(key) {
                origin::HOST => parts[0] = range,
                origin::PROCESS => parts[1] = range,
                origin::LOG_ID => parts[2] = range,
                _ => {}
            }
        }
        Some(parts)
    }
}

/// Checks the record at `pos` in `bytes` as [`RecordMeta::scan`] does and returns its
/// meta (offsets from `base`) and where it ends; `None` when it cannot say yes, and the
/// general scan must look.
#[inline]
pub(crate) fn scan(bytes: &[u8], pos: usize, base: usize) -> Option<(RecordMeta, usize)> {
    let mut c = Cursor { bytes, pos };
    let span = |(start, end): (usize, usize)| ((start - base) as u32, (end - base) as u32);
    let mut meta = RecordMeta::START;
    let mut left = c.fixmap()?;
    let mut key = c.key(&mut left)?;
    // Required: kind, subject, time.
    if u64::from(key) != key::KIND {
        return None;
    }
    meta.kind = Kind::from_u8(c.small()?)?;
    key = c.key(&mut left)?;
    if u64::from(key) != key::SUBJECT {
        return None;
    }
    meta.subject = span(c.subject()?);
    key = c.key(&mut left)?;
    if u64::from(key) == key::TYPE {
        meta.type_name = span(c.str()?);
        key = c.key(&mut left)?;
    }
    if u64::from(key) != key::TIME {
        return None;
    }
    meta.time = c.int()?;
    key = c.key(&mut left)?;
    if u64::from(key) == key::PRIORITY {
        meta.priority = (*PRIORITIES.get(usize::from(c.small()?))?)?;
        key = c.key(&mut left)?;
    }
    if u64::from(key) == key::AUDIENCE {
        let start = c.pos;
        let count = match c.byte()? {
            fix @ 0x90..=0x9f => u64::from(fix & 0x0f),
            0xdc => c.be(2)?,
            0xdd => c.be(4)?,
            _ => return None,
        };
        for _ in 0..count {
            c.str()?;
        }
        meta.audience = span((start, c.pos));
        key = c.key(&mut left)?;
    }
    if u64::from(key) == key::ORIGIN {
        let parts = c.origin()?;
        meta.source = parts.map(|part| match part.1 {
            0 => (0, 0),
            _ => span(part),
        });
        key = c.key(&mut left)?;
    }
    if u64::from(key) == key::TEXT {
        meta.text = span(c.str()?);
        key = c.key(&mut left)?;
    }
    if u64::from(key) == key::FIELDS {
        let mut reader = crate::msgpack::Reader::at(bytes, c.pos);
        value::check_fields(&mut reader, 1).ok()?;
        c.pos = reader.position();
        key = c.key(&mut left)?;
    }
    if u64::from(key) == key::REPLY_TO {
        c.subject()?;
        key = c.key(&mut left)?;
    }
    if u64::from(key) == key::ID {
        c.uint()?;
        key = c.key(&mut left)?;
    }
    (key == END).then_some((meta, c.pos))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msgpack::Reader;
    use crate::origin::Origin;
    use crate::value::Value;
    use crate::Record;

    /// Records of every shape a client writes.
    fn samples() -> Vec<Vec<u8>> {
        let full = Record {
            type_name: "fault".into(),
            time: -1_763_604_000_123_456_789,
            priority: Priority::Emergency,
            audience: vec!["operator".into(), "ingénieur".into()],
            origin: Origin {
                host: "dv01".into(),
                process: "mountd".into(),
                thread: "main".into(),
                file: "mount.c".into(),
                line: Some(70_000),
                routine: "step".into(),
                stack_level: Some(3),
                log_id: "ENC-7".into(),
                uri: "herald://x".into(),
                ..Origin::default()
            },
            text: "encoder fault — température".into(),
            fields: vec![
                ("axis".into(), Value::from("az")),
                ("count".into(), Value::Int(-5)),
            ],
            reply_to: Some("_INBOX.7".into()),
            id: Some(u64::MAX),
            ..Record::new(Kind::Message, "ANTENNA.DV01.Mount")
        };
        let bench = Record {
            type_name: "bench".into(),
            time: 1_763_604_000_000_000_000,
            origin: Origin {
                host: "vm".into(),
                process: "herald".into(),
                thread: "tokio-runtime-worker".into(),
                ..Origin::default()
            },
            text: "x".repeat(300),
            ..Record::new(Kind::Log, "bench.pub")
        };
        let bare = Record {
            time: 0,
            ..Record::new(Kind::Info, "s")
        };
        [full, bench, bare].iter().map(Record::to_bytes).collect()
    }

    /// Holds the fast path to the general scan: whatever it passes, the general scan passes
    /// with the same meta and end.
    fn agrees(bytes: &[u8]) -> bool {
        let general = RecordMeta::scan_general(&mut Reader::new(bytes), 0)
            .ok()
            .map(|meta| (meta, bytes.len()));
        let mut reader = Reader::new(bytes);
        let general_end = RecordMeta::scan_general(&mut reader, 0)
            .ok()
            .map(|_| reader.position());
        match scan(bytes, 0, 0) {
            Some((meta, end)) => {
                assert_eq!(
                    general.map(|(m, _)| m),
                    Some(meta),
                    "the fast path passed {bytes:02x?}"
                );
                assert_eq!(general_end, Some(end), "ends differ for {bytes:02x?}");
                true
            }
            None => false,
        }
    }

    #[test]
    fn passes_what_clients_write() {
        for bytes in samples() {
            assert!(agrees(&bytes), "{bytes:02x?}");
            // Offsets count from `base`, as the general scan's.
            let mut framed = vec![0xaa; 5];
            framed.extend_from_slice(&bytes);
            let (fast, end) = scan(&framed, 5, 3).unwrap();
            let general = RecordMeta::scan_general(&mut Reader::at(&framed, 5), 3).unwrap();
            assert_eq!((fast, end), (general, framed.len()));
        }
    }

    #[test]
    fn never_passes_what_the_general_scan_refuses_or_reads_otherwise() {
        let mut next = crate::test_rng::xorshift(0x9e37_79b9_7f4a_7c15);
        const MARKERS: [u8; 16] = [
            0x00, 0x7f, 0x80, 0x8f, 0x90, 0xa0, 0xbf, 0xc0, 0xc1, 0xcc, 0xcf, 0xd3, 0xd9, 0xdb,
            0xde, 0xff,
        ];
        let mut passed = 0;
        for bytes in samples() {
            for _ in 0..20_000 {
                let mut mutated = bytes.clone();
                for _ in 0..1 + next() % 3 {
                    let at = (next() % mutated.len() as u64) as usize;
                    match next() % 5 {
                        0 => mutated[at] = next() as u8,
                        1 => mutated[at] = MARKERS[(next() % 16) as usize],
                        2 => mutated[at] ^= 1 << (next() % 8),
                        3 => mutated.truncate(at),
                        _ => mutated.insert(at, MARKERS[(next() % 16) as usize]),
                    }
                    if mutated.is_empty() {
                        break;
                    }
                }
                passed += usize::from(agrees(&mutated));
            }
        }
        // Many mutations leave a valid record (a changed character of the text): the test
        // compares both paths on those too.
        assert!(passed > 1_000, "{passed}");
    }

    #[test]
    fn leaves_other_key_orders_to_the_general_scan() {
        // kind, time, subject: valid, in an order no Herald client writes.
        let mut bytes = vec![0x83, 0x00, 0x00, 0x03, 0x05, 0x01, 0xa1, b's'];
        assert_eq!(scan(&bytes, 0, 0), None);
        assert!(RecordMeta::scan(&mut Reader::new(&bytes), 0).is_ok());
        bytes[0] = 0x84; // one pair more than there is
        assert!(RecordMeta::scan(&mut Reader::new(&bytes), 0).is_err());
    }
}
