//! One block of a segment: a header, a subject filter, then the entries compressed.
//!
//! The header (68 bytes, little-endian): `magic u32 | checks << 4 | codec (u8) | group u8 | priorities
//! u16 | count u32 | raw_len u32 | stored_len u32 | min_time i64 | max_time i64 | first_seq
//! u64 | last_seq u64 | payload_crc u32 | filter_len u32 | filter_crc u32 | header_crc u32`.
//! `checks` is the edition of the record checks ([`RECORD_CHECKS`]) every entry passed when
//! it was written (0: not known for all; such blocks, and those written before the field,
//! have their records checked when read).
//! `group` is the store's sample group of every entry in the block (0 for logs; see
//! [`crate::blockstore`]); `priorities` has bit *n* set when an entry of priority *n* is in
//! the block; times are the
//! producers' (what queries select on); `payload_crc` is the CRC-32 of the stored payload,
//! `filter_crc` of the filter, `header_crc` of the 64 bytes before it. The filter
//! (`filter_len` bytes, none for log blocks) is a Bloom filter of the entries' subjects
//! ([`super::filter`]); the payload follows it.
//!
//! The payload, once decompressed, is the entries one after another: `seq | received |
//! time` (each a zigzag varint of the difference from the entry before, the first from 0),
//! `kind << 4 | priority` (u8), the routing fields' positions in the record (`subject`,
//! `type`, `audience`: start and length varints each), `length varint | record`, the
//! record exactly as it arrived. The positions are kept so that a reader gets the entry's
//! routing fields without checking the record again — a record that does not decode (kept
//! as it came, counted when read) stays readable for everything else in its block.

use std::collections::HashSet;

use bytes::Bytes;
use herald_proto::frame::RawRecord;
use herald_proto::record::RecordMeta;
use herald_proto::record::RECORD_CHECKS;
use herald_proto::{Kind, Priority};

use crate::entry::Entry;
use crate::error::{ArchiveError, ArchiveErrorKind};
use crate::keep::Keep;
use crate::segment::filter;

/// Bytes of a block header.
pub const BLOCK_HEADER_BYTES: usize = 68;
/// The first four bytes of every block: `HBLK`.
const MAGIC: u32 = u32::from_le_bytes(*b"HBLK");

/// How a block's payload is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Codec {
    /// Stored as it is.
    None = 0,
    /// LZ4 block format (`lz4_flex`).
    Lz4 = 1,
}

impl Codec {
    fn from_u8(value: u8) -> Option<Codec> {
        match value {
            0 => Some(Codec::None),
            1 => Some(Codec::Lz4),
            _ => None,
        }
    }
}

/// What a reader learns from a block's header without reading the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockHeader {
    /// How the payload is compressed.
    pub codec: Codec,
    /// The edition of the record checks ([`RECORD_CHECKS`]) every entry passed when it was
    /// written, so that reads need not check them again; 0: not known for every entry
    /// (they are checked when read). Kept in the high half of the codec's byte.
    pub checks: u8,
    /// The sample group of every entry (0 for logs).
    pub group: u8,
    /// Bit *n* set: an entry of priority *n* is in the block.
    pub priorities: u16,
    /// Entries in the block.
    pub count: u32,
    /// Bytes of the payload once decompressed.
    pub raw_len: u32,
    /// Bytes of the payload as stored (after the header).
    pub stored_len: u32,
    /// Earliest producer's time in the block.
    pub min_time: i64,
    /// Latest producer's time in the block.
    pub max_time: i64,
    /// Lowest server sequence number.
    pub first_seq: u64,
    /// Highest server sequence number.
    pub last_seq: u64,
    /// CRC-32 of the stored payload.
    pub payload_crc: u32,
    /// Bytes of the subject filter between the header and the payload (0: none).
    pub filter_len: u32,
    /// CRC-32 of the filter.
    pub filter_crc: u32,
}

impl BlockHeader {
    /// Returns the header's bytes.
    pub fn encode(&self) -> [u8; BLOCK_HEADER_BYTES] {
        let mut out = [0u8; BLOCK_HEADER_BYTES];
        out[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        out[4] = self.codec as u8 | (self.checks.min(15) << 4);
        out[5] = self.group;
        out[6..8].copy_from_slice(&self.priorities.to_le_bytes());
        out[8..12].copy_from_slice(&self.count.to_le_bytes());
        out[12..16].copy_from_slice(&self.raw_len.to_le_bytes());
        out[16..20].copy_from_slice(&self.stored_len.to_le_bytes());
        out[20..28].copy_from_slice(&self.min_time.to_le_bytes());
        out[28..36].copy_from_slice(&self.max_time.to_le_bytes());
        out[36..44].copy_from_slice(&self.first_seq.to_le_bytes());
        out[44..52].copy_from_slice(&self.last_seq.to_le_bytes());
        out[52..56].copy_from_slice(&self.payload_crc.to_le_bytes());
        out[56..60].copy_from_slice(&self.filter_len.to_le_bytes());
        out[60..64].copy_from_slice(&self.filter_crc.to_le_bytes());
        let header_crc = crc32fast::hash(&out[..64]);
        out[64..68].copy_from_slice(&header_crc.to_le_bytes());
        out
    }

    /// Reads a header, checking its magic and checksum.
    ///
    /// # Errors
    /// [`ArchiveErrorKind::Corrupt`] naming what does not hold.
    pub fn decode(bytes: &[u8; BLOCK_HEADER_BYTES]) -> Result<BlockHeader, ArchiveError> {
        let u32_at =
            |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or_default());
        let u64_at =
            |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default());
        if u32_at(0) != MAGIC {
            return Err(corrupt("not a block header (bad magic)"));
        }
        if u32_at(64) != crc32fast::hash(&bytes[..64]) {
            return Err(corrupt("block header checksum does not match"));
        }
        let codec = Codec::from_u8(bytes[4] & 0x0f)
            .ok_or_else(|| corrupt(format!("unknown block codec {}", bytes[4] & 0x0f)))?;
        Ok(BlockHeader {
            codec,
            checks: bytes[4] >> 4,
            group: bytes[5],
            priorities: u16::from_le_bytes([bytes[6], bytes[7]]),
            count: u32_at(8),
            raw_len: u32_at(12),
            stored_len: u32_at(16),
            min_time: u64_at(20) as i64,
            max_time: u64_at(28) as i64,
            first_seq: u64_at(36),
            last_seq: u64_at(44),
            payload_crc: u32_at(52),
            filter_len: u32_at(56),
            filter_crc: u32_at(60),
        })
    }

    /// Returns the bytes of the whole block: header, filter and payload.
    pub fn block_len(&self) -> u64 {
        BLOCK_HEADER_BYTES as u64 + u64::from(self.filter_len) + u64::from(self.stored_len)
    }

    /// Returns whether every entry passed this version's record checks when written.
    pub fn checked(&self) -> bool {
        self.checks == RECORD_CHECKS
    }

    /// Returns whether the block may hold entries with a producer's time in `[from, to)`.
    pub fn overlaps(&self, from: i64, to: i64) -> bool {
        self.count > 0 && self.min_time < to && self.max_time >= from
    }
}

thread_local! {
    /// Room for a block's compressed payload, kept from block to block by the thread that
    /// finishes them (the archive's writer): `lz4_flex::block::compress` made and zeroed a
    /// new buffer of the worst case's size for every block, 2 % of a default-configuration
    /// server's CPU (scylla's default features turn on lz4_flex's `safe-encode`, which
    /// zeroes it). One per thread rather than per builder: a segment file of samples has a
    /// builder for each of its groups.
    static COMPRESSED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Gathers entries into one block.
#[derive(Debug, Default)]
pub struct BlockBuilder {
    raw: Vec<u8>,
    count: u32,
    priorities: u16,
    min_time: i64,
    max_time: i64,
    first_seq: u64,
    last_seq: u64,
    /// The entry before, which the next one's numbers are written against.
    previous: Previous,
    /// Hashes of the distinct subjects, when the block gets a subject filter.
    subjects: Option<HashSet<u64>>,
    /// The sample group written in the header.
    group: u8,
    /// Set once an entry not known to pass the record checks was added.
    unchecked: bool,
}

/// What an entry's numbers are written against: the entry before it.
#[derive(Debug, Default, Clone, Copy)]
struct Previous {
    seq: u64,
    received: i64,
    time: i64,
}

impl BlockBuilder {
    /// Returns an empty builder for a block without a subject filter (log records, read
    /// by time across subjects).
    pub fn new() -> BlockBuilder {
        BlockBuilder::default()
    }

    /// Returns an empty builder for a block of sample group `group` with a subject filter
    /// (samples, read by name).
    pub fn with_subject_filter(group: u8) -> BlockBuilder {
        BlockBuilder {
            subjects: Some(HashSet::new()),
            group,
            ..BlockBuilder::default()
        }
    }

    /// Notes that an entry added (or to be added) to this block is not known to pass the
    /// record checks: the block's header will not say they all did.
    pub fn mark_unchecked(&mut self) {
        self.unchecked = true;
    }

    /// Returns whether every entry added so far is known to pass the record checks.
    pub fn checked(&self) -> bool {
        !self.unchecked
    }

    /// Adds `entry` (its record's bytes as they are).
    pub fn push(&mut self, entry: &Entry) {
        let hash = self
            .subjects
            .is_some()
            .then(|| filter::subject_hash(entry.record.subject_bytes()));
        self.push_hashed(entry, hash);
    }

    /// Adds `entry`, whose subject's [`filter::subject_hash`] the caller has worked out
    /// (needed only for a block with a subject filter).
    pub fn push_hashed(&mut self, entry: &Entry, subject_hash: Option<u64>) {
        let record = &entry.record;
        let meta = &record.meta;
        let time = meta.time;
        if self.count == 0 {
            (self.min_time, self.max_time) = (time, time);
            (self.first_seq, self.last_seq) = (entry.seq, entry.seq);
        } else {
            self.min_time = self.min_time.min(time);
            self.max_time = self.max_time.max(time);
            self.first_seq = self.first_seq.min(entry.seq);
            self.last_seq = self.last_seq.max(entry.seq);
        }
        self.priorities |= 1 << (meta.priority as u16);
        self.count += 1;
        if let Some(subjects) = &mut self.subjects {
            let hash = subject_hash.unwrap_or_else(|| filter::subject_hash(record.subject_bytes()));
            subjects.insert(hash);
        }
        let previous = self.previous;
        // The entry's head is made on the stack and appended whole, with the record: two
        // appends rather than a check for room at every byte.
        let mut head = Head::default();
        head.varint(zigzag(entry.seq.wrapping_sub(previous.seq) as i64));
        head.varint(zigzag(entry.received.wrapping_sub(previous.received)));
        head.varint(zigzag(time.wrapping_sub(previous.time)));
        head.byte(((meta.kind as u8) << 4) | meta.priority as u8);
        for (start, end) in [meta.subject, meta.type_name, meta.audience] {
            head.varint(u64::from(start));
            head.varint(u64::from(end.wrapping_sub(start)));
        }
        head.varint(record.bytes.len() as u64);
        let raw = &mut self.raw;
        raw.reserve(head.len + record.bytes.len());
        raw.extend_from_slice(&head.bytes[..head.len]);
        raw.extend_from_slice(&record.bytes);
        self.previous = Previous {
            seq: entry.seq,
            received: entry.received,
            time,
        };
    }

    /// Returns the entries added so far.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// Returns whether no entry was added.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Returns the bytes of the entries before compression.
    pub fn raw_len(&self) -> usize {
        self.raw.len()
    }

    /// Returns the entries' bytes so far, before compression: what [`decode_raw`] reads.
    pub fn raw(&self) -> &[u8] {
        &self.raw
    }

    /// Returns the earliest producer's time of the entries so far (`None` when empty).
    pub fn min_time(&self) -> Option<i64> {
        (self.count > 0).then_some(self.min_time)
    }

    /// Returns a copy of the entries added so far, for readers of a block not yet written.
    pub fn entries(&self) -> Vec<Entry> {
        let raw = Bytes::copy_from_slice(&self.raw);
        // The builder wrote these bytes itself: they always read back.
        decode_raw(raw, self.count, Keep::days(1)).unwrap_or_default()
    }

    /// Returns the block's bytes (header, filter and payload, compressed with `codec`) and
    /// its header, and empties the builder for the next block (which gets a subject filter
    /// if this one did).
    pub fn finish(&mut self, codec: Codec) -> (BlockHeader, Vec<u8>) {
        let mut compressed = COMPRESSED.take();
        let payload: &[u8] = match codec {
            Codec::None => &self.raw,
            Codec::Lz4 => {
                let most = lz4_flex::block::get_maximum_output_size(self.raw.len());
                if compressed.len() < most {
                    compressed.resize(most, 0);
                }
                let length = lz4_flex::block::compress_into(&self.raw, &mut compressed)
                    .expect("room for the longest compressed form");
                &compressed[..length]
            }
        };
        let subject_filter = match &mut self.subjects {
            Some(subjects) => {
                let hashes: Vec<u64> = subjects.drain().collect();
                filter::build(&hashes)
            }
            None => Vec::new(),
        };
        let header = BlockHeader {
            codec,
            checks: if self.unchecked { 0 } else { RECORD_CHECKS },
            group: self.group,
            priorities: self.priorities,
            count: self.count,
            raw_len: self.raw.len() as u32,
            stored_len: payload.len() as u32,
            min_time: self.min_time,
            max_time: self.max_time,
            first_seq: self.first_seq,
            last_seq: self.last_seq,
            payload_crc: crc32fast::hash(payload),
            filter_len: subject_filter.len() as u32,
            filter_crc: crc32fast::hash(&subject_filter),
        };
        let mut block =
            Vec::with_capacity(BLOCK_HEADER_BYTES + subject_filter.len() + payload.len());
        block.extend_from_slice(&header.encode());
        block.extend_from_slice(&subject_filter);
        block.extend_from_slice(payload);
        // Kept unless an outsized block made it large.
        if compressed.capacity() <= 4 << 20 {
            COMPRESSED.set(compressed);
        }
        *self = BlockBuilder {
            raw: std::mem::take(&mut self.raw),
            subjects: self.subjects.take(),
            group: self.group,
            ..BlockBuilder::default()
        };
        self.raw.clear();
        (header, block)
    }
}

/// Reads the entries of a block from its stored payload, checking the payload's checksum
/// and each record; the entries get retention class `keep` (a block holds one class).
///
/// # Errors
/// [`ArchiveErrorKind::Corrupt`] naming what does not hold.
pub fn decode_entries(
    header: &BlockHeader,
    payload: &[u8],
    keep: Keep,
) -> Result<Vec<Entry>, ArchiveError> {
    if payload.len() != header.stored_len as usize {
        return Err(corrupt(format!(
            "block payload of {} bytes, the header says {}",
            payload.len(),
            header.stored_len
        )));
    }
    if crc32fast::hash(payload) != header.payload_crc {
        return Err(corrupt("block payload checksum does not match"));
    }
    let raw = match header.codec {
        Codec::None => payload.to_vec(),
        Codec::Lz4 => lz4_flex::block::decompress(payload, header.raw_len as usize)
            .map_err(|e| corrupt(format!("block does not decompress: {e}")))?,
    };
    decode_raw(Bytes::from(raw), header.count, keep)
}

/// Reads `count` entries from a block's payload once decompressed (or from bytes
/// [`BlockBuilder::raw`] gave), giving them retention class `keep`.
///
/// # Errors
/// [`ArchiveErrorKind::Corrupt`] naming what does not hold.
pub fn decode_raw(raw: Bytes, count: u32, keep: Keep) -> Result<Vec<Entry>, ArchiveError> {
    let mut entries = Vec::with_capacity(count as usize);
    let mut at = 0;
    let mut previous = Previous::default();
    while at < raw.len() {
        let mut delta = || read_varint(&raw, &mut at).map(unzigzag);
        let seq = previous.seq.wrapping_add(delta()? as u64);
        let received = previous.received.wrapping_add(delta()?);
        let time = previous.time.wrapping_add(delta()?);
        previous = Previous {
            seq,
            received,
            time,
        };
        let entry = read_entry(&raw, &mut at, time)?;
        entries.push(Entry {
            seq,
            received,
            keep,
            record: entry,
        });
    }
    if entries.len() != count as usize {
        return Err(corrupt(format!(
            "block holds {} entries, the header says {count}",
            entries.len(),
        )));
    }
    Ok(entries)
}

/// Reads an entry's kind, priority, field positions and record, at `*at`.
fn read_entry(raw: &Bytes, at: &mut usize, time: i64) -> Result<RawRecord, ArchiveError> {
    let byte = *raw
        .get(*at)
        .ok_or_else(|| corrupt("block ends inside an entry"))?;
    *at += 1;
    let kind = Kind::from_u8(byte >> 4)
        .ok_or_else(|| corrupt(format!("unknown record kind {} in block", byte >> 4)))?;
    let priority = Priority::from_u8(byte & 0x0f)
        .map_err(|_| corrupt(format!("unknown priority {} in block", byte & 0x0f)))?;
    let mut range = || -> Result<(u32, u32), ArchiveError> {
        let start = read_varint(raw, at)?;
        let len = read_varint(raw, at)?;
        let end = start
            .checked_add(len)
            .filter(|end| *end <= u64::from(u32::MAX));
        let end = end.ok_or_else(|| corrupt("field position in block out of range"))?;
        Ok((start as u32, end as u32))
    };
    let (subject, type_name, audience) = (range()?, range()?, range()?);
    let len = usize::try_from(read_varint(raw, at)?).unwrap_or(usize::MAX);
    let end = at
        .checked_add(len)
        .filter(|end| *end <= raw.len())
        .ok_or_else(|| corrupt("block entry runs past the block"))?;
    let bytes = raw.slice(*at..end);
    *at = end;
    if [subject, type_name, audience]
        .iter()
        .any(|(start, end)| start > end || *end as usize > bytes.len())
    {
        return Err(corrupt("field position in block past its record"));
    }
    Ok(RawRecord {
        bytes,
        meta: RecordMeta {
            kind,
            priority,
            time,
            subject,
            type_name,
            audience,
            // Not kept in blocks: read again from the record when wanted.
            source: [(0, 0); 3],
            text: (0, 0),
        },
    })
}

fn corrupt(message: impl Into<String>) -> ArchiveError {
    ArchiveError::new(ArchiveErrorKind::Corrupt, message)
}

fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

fn unzigzag(value: u64) -> i64 {
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}

/// An entry's head as it is made: at most three 64-bit varints, a byte and seven 32-bit
/// ones (as 64-bit: 10 bytes each).
struct Head {
    bytes: [u8; 11 * 10 + 1],
    len: usize,
}

impl Default for Head {
    fn default() -> Head {
        Head {
            bytes: [0; 11 * 10 + 1],
            len: 0,
        }
    }
}

impl Head {
    #[inline(always)]
    fn byte(&mut self, byte: u8) {
        self.bytes[self.len] = byte;
        self.len += 1;
    }

    #[inline(always)]
    fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.byte((value as u8) | 0x80);
            value >>= 7;
        }
        self.byte(value as u8);
    }
}

fn read_varint(bytes: &[u8], at: &mut usize) -> Result<u64, ArchiveError> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes
            .get(*at)
            .ok_or_else(|| corrupt("block ends inside a number"))?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(corrupt("number in block longer than 64 bits"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use herald_proto::{Kind, Priority, Record};

    pub(crate) fn entry(seq: u64, time: i64, priority: Priority, text: &str) -> Entry {
        let record = Record {
            time,
            priority,
            text: text.to_string(),
            ..Record::new(Kind::Log, "ANTENNA.DV01.Mount")
        };
        Entry {
            seq,
            received: time + 5,
            keep: Keep::days(7),
            record: RawRecord::new(record.to_bytes().into()).unwrap(),
        }
    }

    #[test]
    fn a_block_gives_back_its_entries_byte_for_byte_with_a_header_that_describes_them() {
        for codec in [Codec::None, Codec::Lz4] {
            let entries: Vec<Entry> = (0..500)
                .map(|n| {
                    entry(
                        1000 + n,
                        1_700_000_000_000_000_000 + n as i64 * 7,
                        if n % 50 == 0 {
                            Priority::Error
                        } else {
                            Priority::Info
                        },
                        &format!("encoder step {n}"),
                    )
                })
                .collect();
            let mut builder = BlockBuilder::new();
            for e in &entries {
                builder.push(e);
            }
            let (header, block) = builder.finish(codec);
            assert!(builder.is_empty());
            let read =
                BlockHeader::decode(block[..BLOCK_HEADER_BYTES].try_into().unwrap()).unwrap();
            assert_eq!(read, header);
            assert_eq!(
                (header.count, header.first_seq, header.last_seq),
                (500, 1000, 1499)
            );
            assert_eq!(header.priorities, (1 << 4) | (1 << 8));
            assert!(header.overlaps(1_700_000_000_000_000_000, 1_700_000_000_000_000_001));
            assert!(!header.overlaps(0, 1_700_000_000_000_000_000));
            let back =
                decode_entries(&header, &block[BLOCK_HEADER_BYTES..], Keep::days(7)).unwrap();
            assert_eq!(back.len(), 500);
            for (a, b) in back.iter().zip(&entries) {
                assert_eq!(
                    (a.seq, a.received, &a.record.bytes),
                    (b.seq, b.received, &b.record.bytes)
                );
            }
        }
    }

    #[test]
    fn a_header_says_whether_every_entry_passed_the_record_checks() {
        let mut builder = BlockBuilder::new();
        let header_of = |block: &[u8]| {
            BlockHeader::decode(block[..BLOCK_HEADER_BYTES].try_into().unwrap()).unwrap()
        };
        builder.push(&entry(1, 1, Priority::Info, "checked"));
        let (header, block) = builder.finish(Codec::Lz4);
        assert!(header.checked());
        assert_eq!(header_of(&block).checks, RECORD_CHECKS);
        assert_eq!(header_of(&block).codec, Codec::Lz4);
        builder.push(&entry(2, 2, Priority::Info, "checked"));
        builder.mark_unchecked();
        builder.push(&entry(3, 3, Priority::Info, "not known"));
        let (header, block) = builder.finish(Codec::None);
        assert!(!header.checked());
        assert_eq!(
            (header_of(&block).checks, header_of(&block).codec),
            (0, Codec::None)
        );
        // The next block starts afresh.
        builder.push(&entry(4, 4, Priority::Info, "checked"));
        assert!(builder.finish(Codec::Lz4).0.checked());
    }

    #[test]
    fn lz4_blocks_of_repetitive_logs_are_several_times_smaller() {
        let mut builder = BlockBuilder::new();
        for n in 0..500 {
            builder.push(&entry(
                n,
                1_700_000_000_000_000_000 + n as i64,
                Priority::Info,
                &format!("encoder step {n} of the azimuth axis"),
            ));
        }
        let raw = builder.raw_len();
        let (header, _) = builder.finish(Codec::Lz4);
        assert!(
            header.stored_len as usize * 3 < raw,
            "{} of {raw}",
            header.stored_len
        );
    }

    #[test]
    fn a_changed_byte_anywhere_is_found() {
        let mut builder = BlockBuilder::new();
        for n in 0..20 {
            builder.push(&entry(n, n as i64, Priority::Info, "x"));
        }
        let (_, block) = builder.finish(Codec::Lz4);
        for at in 0..block.len() {
            let mut bad = block.clone();
            bad[at] ^= 0x01;
            let header = BlockHeader::decode(bad[..BLOCK_HEADER_BYTES].try_into().unwrap());
            let found = match header {
                Err(_) => true,
                Ok(header) => {
                    decode_entries(&header, &bad[BLOCK_HEADER_BYTES..], Keep::days(1)).is_err()
                }
            };
            assert!(found, "a flipped bit at byte {at} went unnoticed");
        }
    }

    #[test]
    fn varints_and_zigzag_round_trip() {
        for value in [
            0i64,
            1,
            -1,
            63,
            -64,
            i64::MAX,
            i64::MIN,
            1_700_000_000_000_000_000,
        ] {
            let mut head = Head::default();
            head.varint(zigzag(value));
            let out = &head.bytes[..head.len];
            let mut at = 0;
            assert_eq!(unzigzag(read_varint(out, &mut at).unwrap()), value);
            assert_eq!(at, out.len());
        }
    }
}
