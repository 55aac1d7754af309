//! One segment file of the disk buffer: records already encoded (the bytes a `PUBLISH` frame
//! carries), appended one after another, each behind a header that lets a reader find a
//! torn tail after a crash. The format is the Python client's (`python/herald/segment.py`),
//! so that either client reads the other's directory.
//!
//! File layout (integers big-endian, as on the wire):
//! ```text
//! magic     8 bytes   b"HRLDSPL1"
//! then entries, one after another:
//!   length    u32     bytes of the record
//!   crc       u32     CRC-32 (zlib's) of what follows it: seq, priority, record
//!   seq       u64     the record's number under the producer
//!   priority  u8      the rank the quota sheds by: the record's priority (1..=11; 0
//!                     unknown), or 12 for a drop report (a WARNING record), shed last
//!   record    `length` bytes: the encoded record map
//! ```
//! A segment grows only at its end, by one write per batch. Shedding rewrites it to
//! `<name>.tmp` and renames that over it (a crash leaves the old or the new file). Opening
//! reads every entry and cuts the file back to the last whole entry whose CRC matches: what
//! is cut is a torn tail, counted as lost.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// The first bytes of every segment.
pub(crate) const MAGIC: &[u8; 8] = b"HRLDSPL1";
/// Bytes of an entry's header: length, crc, seq, priority.
pub(crate) const HEADER_BYTES: u64 = 17;
/// Where the CRC's coverage starts within an entry (at `seq`).
const CHECKED_FROM: usize = 8;
/// Priority wire values run 1..=11; slot 0 counts records of unknown priority, slot 12 the
/// drop reports ([`REPORT_RANK`]).
pub(crate) const PRIORITY_SLOTS: usize = 13;
/// The rank of a drop report on disk: above every priority, so that the quota sheds it last
/// (shed, it would lose the counts it carries). The record itself is a WARNING.
pub(crate) const REPORT_RANK: u8 = 12;

/// A length above this is none a writer wrote (a frame holds at most 64 MiB).
const MAX_ENTRY_BYTES: u32 = 1 << 26;

/// Counts by priority slot.
pub(crate) type Counts = [u64; PRIORITY_SLOTS];

/// One decoded entry: its number, priority and where its record lies in the bytes read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) seq: u64,
    pub(crate) priority: u8,
    pub(crate) record: Range<usize>,
}

/// Appends an entry's bytes to `out`.
pub(crate) fn encode_entry(out: &mut Vec<u8>, seq: u64, priority: u8, record: &[u8]) {
    let length = u32::try_from(record.len()).expect("records are far below 4 GiB");
    let mut checked = [0u8; 9];
    checked[..8].copy_from_slice(&seq.to_be_bytes());
    checked[8] = priority;
    let mut crc = crc32fast::Hasher::new();
    crc.update(&checked);
    crc.update(record);
    out.extend_from_slice(&length.to_be_bytes());
    out.extend_from_slice(&crc.finalize().to_be_bytes());
    out.extend_from_slice(&checked);
    out.extend_from_slice(record);
}

/// Reads the header at `offset`: (length, crc, seq, priority), if it is whole.
fn header(data: &[u8], offset: usize) -> Option<(u32, u32, u64, u8)> {
    let h = data.get(offset..offset + HEADER_BYTES as usize)?;
    let word = |at: usize| u32::from_be_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]);
    let seq = u64::from_be_bytes(h[8..16].try_into().expect("eight bytes"));
    Some((word(0), word(4), seq, h[16]))
}

/// Decodes the whole, intact entries of `data` from `offset` on; returns them and the
/// offset after the last (it stops at the first entry cut short or whose CRC is wrong).
pub(crate) fn decode_entries(data: &[u8], mut offset: usize) -> (Vec<Entry>, usize) {
    let mut entries = Vec::new();
    while let Some((length, crc, seq, priority)) = header(data, offset) {
        let start = offset + HEADER_BYTES as usize;
        let after = start + length as usize;
        if length > MAX_ENTRY_BYTES || after > data.len() {
            break;
        }
        if crc32fast::hash(&data[offset + CHECKED_FROM..after]) != crc {
            break;
        }
        entries.push(Entry {
            seq,
            priority,
            record: start..after,
        });
        offset = after;
    }
    (entries, offset)
}

/// Returns the slot `priority` is counted in (0 for one outside 1..=12).
pub(crate) fn slot(priority: u8) -> usize {
    let slot = usize::from(priority);
    if (1..PRIORITY_SLOTS).contains(&slot) {
        slot
    } else {
        0
    }
}

/// Counts the records of a torn tail from `offset`, by priority slot: entries are walked by
/// their length fields while those look whole; at least one record is counted (slot 0 when
/// even its header is cut).
pub(crate) fn count_torn(data: &[u8], mut offset: usize) -> Counts {
    let mut lost = [0; PRIORITY_SLOTS];
    while offset < data.len() {
        let Some((length, _, _, priority)) = header(data, offset) else {
            lost[0] += 1;
            break;
        };
        lost[slot(priority)] += 1;
        if length > MAX_ENTRY_BYTES {
            break;
        }
        offset += HEADER_BYTES as usize + length as usize;
    }
    lost
}

/// A segment file and what it holds. `ident` orders the segments: lower is older.
#[derive(Debug)]
pub(crate) struct Segment {
    pub(crate) path: PathBuf,
    pub(crate) ident: u64,
    /// Bytes of the file.
    pub(crate) size: u64,
    /// Records by priority slot.
    pub(crate) counts: Counts,
    /// The highest number in it (0 when empty).
    pub(crate) last_seq: u64,
    /// Open for appending, until sealed.
    file: Option<File>,
}

impl Segment {
    fn empty(path: PathBuf, ident: u64) -> Segment {
        Segment {
            path,
            ident,
            size: MAGIC.len() as u64,
            counts: [0; PRIORITY_SLOTS],
            last_seq: 0,
            file: None,
        }
    }

    /// Returns the path of segment `ident` in `directory`.
    pub(crate) fn path_of(directory: &Path, ident: u64) -> PathBuf {
        directory.join(format!("{ident:020}.seg"))
    }

    /// Creates segment `ident` in `directory`, holding only its magic.
    pub(crate) fn create(directory: &Path, ident: u64) -> std::io::Result<Segment> {
        let path = Segment::path_of(directory, ident);
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .open(&path)?;
        file.write_all(MAGIC)?;
        let mut segment = Segment::empty(path, ident);
        segment.file = Some(file);
        Ok(segment)
    }

    /// Reads a segment, cutting a torn tail off the file; returns it and the records the
    /// tail held, by priority slot. A file without the whole magic is removed (its size is
    /// then 0): nothing in it can be read.
    pub(crate) fn open(path: PathBuf, ident: u64) -> std::io::Result<(Segment, Counts)> {
        let data = std::fs::read(&path)?;
        let mut segment = Segment::empty(path, ident);
        if data.get(..MAGIC.len()) != Some(MAGIC.as_slice()) {
            let lost = if data.len() > MAGIC.len() {
                count_torn(&data, MAGIC.len())
            } else {
                [0; PRIORITY_SLOTS]
            };
            std::fs::remove_file(&segment.path)?;
            segment.size = 0;
            return Ok((segment, lost));
        }
        let (entries, good) = decode_entries(&data, MAGIC.len());
        for entry in &entries {
            segment.note(entry.seq, entry.priority);
        }
        let mut lost = [0; PRIORITY_SLOTS];
        if good < data.len() {
            lost = count_torn(&data, good);
            let file = OpenOptions::new().write(true).open(&segment.path)?;
            file.set_len(good as u64)?;
            file.sync_all()?;
        }
        segment.size = good as u64;
        Ok((segment, lost))
    }

    /// Counts an entry in the segment.
    fn note(&mut self, seq: u64, priority: u8) {
        self.counts[slot(priority)] += 1;
        self.last_seq = self.last_seq.max(seq);
    }

    /// Returns the records in the segment.
    pub(crate) fn records(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Appends `entries` (number, priority, record) in one write.
    pub(crate) fn append(&mut self, entries: &[(u64, u8, &[u8])]) -> std::io::Result<()> {
        let mut data = Vec::new();
        for (seq, priority, record) in entries {
            encode_entry(&mut data, *seq, *priority, record);
        }
        if self.file.is_none() {
            self.file = Some(OpenOptions::new().append(true).open(&self.path)?);
        }
        let file = self.file.as_mut().expect("opened above");
        file.write_all(&data)?;
        self.size += data.len() as u64;
        for (seq, priority, _) in entries {
            self.note(*seq, *priority);
        }
        Ok(())
    }

    /// Closes the file for appending, after a sync when `sync`.
    pub(crate) fn seal(&mut self, sync: bool) -> std::io::Result<()> {
        match self.file.take() {
            Some(file) if sync => file.sync_all(),
            _ => Ok(()),
        }
    }

    /// Reads the entries from `offset` on, about `max_bytes` of them (at least one if there
    /// is one: none means the end of the segment); returns the bytes read, the entries in
    /// them and the offset after the last.
    pub(crate) fn read(
        &self,
        offset: u64,
        max_bytes: u64,
    ) -> std::io::Result<(Vec<u8>, Vec<Entry>, u64)> {
        let mut file = File::open(&self.path)?;
        file.seek(SeekFrom::Start(offset))?;
        let mut data = Vec::new();
        (&mut file)
            .take(max_bytes.max(HEADER_BYTES))
            .read_to_end(&mut data)?;
        if let Some((length, ..)) = header(&data, 0) {
            let whole = HEADER_BYTES as usize + length as usize;
            if whole > data.len() && length <= MAX_ENTRY_BYTES {
                // One entry larger than max_bytes: read the whole of it.
                let more = (whole - data.len()) as u64;
                file.take(more).read_to_end(&mut data)?;
            }
        }
        let (entries, end) = decode_entries(&data, 0);
        Ok((data, entries, offset + end as u64))
    }

    /// Rewrites the segment with the entries `keep` accepts (by a `.tmp` file renamed over
    /// it); returns (number, priority) of the entries left out.
    pub(crate) fn rewrite(
        &mut self,
        mut keep: impl FnMut(u64, u8, usize) -> bool,
    ) -> std::io::Result<Vec<(u64, u8)>> {
        self.seal(false)?;
        let data = std::fs::read(&self.path)?;
        let (entries, _) = decode_entries(&data, MAGIC.len());
        let mut kept = MAGIC.to_vec();
        let mut fresh = Segment::empty(self.path.clone(), self.ident);
        let mut dropped = Vec::new();
        for entry in entries {
            let whole = entry.record.start - HEADER_BYTES as usize..entry.record.end;
            if keep(entry.seq, entry.priority, whole.len()) {
                kept.extend_from_slice(&data[whole]);
                fresh.note(entry.seq, entry.priority);
            } else {
                dropped.push((entry.seq, entry.priority));
            }
        }
        let tmp = self.path.with_extension("seg.tmp");
        let mut out = File::create(&tmp)?;
        out.write_all(&kept)?;
        out.sync_all()?;
        std::fs::rename(&tmp, &self.path)?;
        fresh.size = kept.len() as u64;
        *self = fresh;
        Ok(dropped)
    }

    /// Deletes the file.
    pub(crate) fn remove(mut self) -> std::io::Result<()> {
        let _ = self.seal(false);
        match std::fs::remove_file(&self.path) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drop_report_ranks_above_every_priority_in_a_slot_of_its_own() {
        let emergency = herald_proto::Priority::Emergency as u8;
        assert!(
            slot(REPORT_RANK) > slot(emergency),
            "shed after every record"
        );
        let torn = count_torn(&encode_one(REPORT_RANK), 0);
        assert_eq!(torn[usize::from(REPORT_RANK)], 1, "counted in its own slot");
    }

    fn encode_one(priority: u8) -> Vec<u8> {
        let mut data = Vec::new();
        encode_entry(&mut data, 1, priority, b"\x80");
        data
    }

    fn entries(data: &[u8]) -> Vec<(u64, u8, Vec<u8>)> {
        let (entries, _) = decode_entries(data, MAGIC.len());
        entries
            .into_iter()
            .map(|e| (e.seq, e.priority, data[e.record].to_vec()))
            .collect()
    }

    fn sample() -> Vec<u8> {
        let mut data = MAGIC.to_vec();
        encode_entry(&mut data, 7, 6, b"first record");
        encode_entry(&mut data, 8, 9, b"");
        encode_entry(&mut data, 9, 3, b"third");
        data
    }

    #[test]
    fn entries_round_trip_with_the_python_layout() {
        let data = sample();
        assert_eq!(
            entries(&data),
            [
                (7, 6, b"first record".to_vec()),
                (8, 9, Vec::new()),
                (9, 3, b"third".to_vec())
            ]
        );
        // length, crc, seq, priority, big-endian: as python/herald/segment.py packs ">IIQB".
        assert_eq!(&data[8..12], &12u32.to_be_bytes());
        assert_eq!(&data[16..24], &7u64.to_be_bytes());
        assert_eq!(data[24], 6);
        let crc = crc32fast::hash(&data[16..25 + 12]);
        assert_eq!(&data[12..16], &crc.to_be_bytes());
    }

    #[test]
    fn a_torn_tail_is_found_and_counted() {
        let data = sample();
        for cut in [data.len() - 1, data.len() - 6, data.len() - 5 - 10] {
            let (found, end) = decode_entries(&data[..cut], MAGIC.len());
            assert_eq!(found.len(), 2, "cut at {cut}");
            let lost = count_torn(&data[..cut], end);
            assert_eq!(lost.iter().sum::<u64>(), 1);
            let expected = if cut - end >= HEADER_BYTES as usize {
                3
            } else {
                0
            };
            assert_eq!(lost[expected], 1, "cut at {cut}: {lost:?}");
        }
    }

    #[test]
    fn a_crc_mismatch_ends_the_readable_entries() {
        let mut data = sample();
        let second = MAGIC.len() + HEADER_BYTES as usize + 12;
        data[second + 16] ^= 0x01; // the second entry's priority
        assert_eq!(entries(&data).len(), 1);
        let (_, end) = decode_entries(&data, MAGIC.len());
        assert_eq!(count_torn(&data, end).iter().sum::<u64>(), 2);
    }
}
