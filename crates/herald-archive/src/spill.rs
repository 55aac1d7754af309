//! [`Spill`]: where the archive's buffer overflows to, on the embedded path, instead of
//! dropping: append-only files under `<archive>/spill/`, rotated every [`FILE_BYTES`], read
//! back oldest first once the memory buffer is drained, deleted once written. Files left by
//! a server that stopped are picked up by the next one. Past `max_bytes` records are dropped
//! and counted like any other loss.
//!
//! A file is a sequence of `seq u64 | received i64 | keep u64 | length u32 | record`,
//! little-endian. A torn last entry (a crash while appending) is ignored.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use bytes::Bytes;
use herald_proto::frame::RawRecord;

use crate::entry::Entry;
use crate::keep::Keep;

/// Size at which a spill file is closed and the next one started.
pub const FILE_BYTES: u64 = 8 << 20;
const HEADER: usize = 28;

/// The spill files of one archive.
#[derive(Debug)]
pub struct Spill {
    dir: PathBuf,
    max_bytes: u64,
    bytes: u64,
    records: u64,
    closed: VecDeque<(PathBuf, u64)>,
    open: Option<(PathBuf, BufWriter<File>, u64)>,
    /// The file taken last, deleted once its records are written.
    taken: Option<(PathBuf, u64)>,
    next: u64,
}

impl Spill {
    /// Opens the spill directory `dir`, taking up files a previous run left.
    ///
    /// # Errors
    /// The directory cannot be created or listed.
    pub fn open(dir: &Path, max_bytes: u64) -> std::io::Result<Spill> {
        std::fs::create_dir_all(dir)?;
        let mut found: Vec<(u64, PathBuf, u64)> = Vec::new();
        for file in std::fs::read_dir(dir)?.flatten() {
            let name = file.file_name();
            let Some(number) = name.to_str().and_then(|n| n.strip_suffix(".spill")) else {
                continue;
            };
            let Ok(number) = number.parse::<u64>() else {
                continue;
            };
            found.push((number, file.path(), file.metadata()?.len()));
        }
        found.sort();
        let next = found.last().map_or(0, |(n, _, _)| n + 1);
        let bytes = found.iter().map(|(_, _, len)| len).sum();
        Ok(Spill {
            dir: dir.to_path_buf(),
            max_bytes,
            bytes,
            records: 0,
            closed: found
                .into_iter()
                .map(|(_, path, len)| (path, len))
                .collect(),
            open: None,
            taken: None,
            next,
        })
    }

    /// Returns the bytes waiting on disk.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Returns whether anything waits on disk.
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// Returns how many records were spilled since the start.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Appends `entry`; returns false (and writes nothing) when the spill is full.
    ///
    /// # Errors
    /// Writing failed; the caller counts the record as dropped.
    pub fn push(&mut self, entry: &Entry) -> std::io::Result<bool> {
        let record = &entry.record.bytes;
        let size = (HEADER + record.len()) as u64;
        if self.bytes + size > self.max_bytes {
            return Ok(false);
        }
        if self
            .open
            .as_ref()
            .is_none_or(|(_, _, len)| *len >= FILE_BYTES)
        {
            self.rotate()?;
            let path = self.dir.join(format!("{:012}.spill", self.next));
            self.next += 1;
            self.open = Some((path.clone(), BufWriter::new(File::create(path)?), 0));
        }
        let (_, writer, len) = self.open.as_mut().expect("opened above");
        writer.write_all(&entry.seq.to_le_bytes())?;
        writer.write_all(&entry.received.to_le_bytes())?;
        writer.write_all(&entry.keep.as_secs().to_le_bytes())?;
        writer.write_all(&(record.len() as u32).to_le_bytes())?;
        writer.write_all(record)?;
        *len += size;
        self.bytes += size;
        self.records += 1;
        Ok(true)
    }

    /// Hands what was appended to the operating system, so another process (the next
    /// server, after this one stops) finds it whole.
    ///
    /// # Errors
    /// Writing failed.
    pub fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.open {
            Some((_, writer, _)) => writer.flush(),
            None => Ok(()),
        }
    }

    /// Closes the file being written, so it can be read back.
    fn rotate(&mut self) -> std::io::Result<()> {
        if let Some((path, mut writer, len)) = self.open.take() {
            writer.flush()?;
            self.closed.push_back((path, len));
        }
        Ok(())
    }

    /// Returns the oldest spill file's entries (closing the current file if it is the only
    /// one); empty when nothing is spilled. The file is deleted by [`Spill::written`], so
    /// a crash before the records are in the store loses nothing.
    ///
    /// # Errors
    /// Reading failed; the file stays for the next attempt.
    pub fn take(&mut self) -> std::io::Result<Vec<Entry>> {
        if self.closed.is_empty() {
            self.rotate()?;
        }
        while let Some((path, len)) = self.closed.front().cloned() {
            let mut data = Vec::new();
            File::open(&path)?.read_to_end(&mut data)?;
            self.closed.pop_front();
            self.taken = Some((path, len));
            let entries = decode(Bytes::from(data));
            if !entries.is_empty() {
                return Ok(entries);
            }
            // Nothing whole in it (a crash right after it was created): it holds nothing to
            // write, so it goes now, or its bytes would count against the quota for ever.
            self.written()?;
        }
        Ok(Vec::new())
    }

    /// The records of the file taken last are in the store: deletes it.
    ///
    /// # Errors
    /// Deleting failed.
    pub fn written(&mut self) -> std::io::Result<()> {
        if let Some((path, len)) = self.taken.take() {
            self.bytes = self.bytes.saturating_sub(len);
            std::fs::remove_file(path)?;
        }
        Ok(())
    }
}

/// Reads a spill file's entries, stopping at a torn or invalid one.
fn decode(data: Bytes) -> Vec<Entry> {
    let mut entries = Vec::new();
    let mut at = 0;
    while at + HEADER <= data.len() {
        let word = |offset: usize| -> [u8; 8] {
            data[at + offset..at + offset + 8]
                .try_into()
                .expect("8 bytes")
        };
        let length_bytes: [u8; 4] = data[at + 24..at + 28].try_into().expect("4 bytes");
        let length = u32::from_le_bytes(length_bytes) as usize;
        let start = at + HEADER;
        if start + length > data.len() {
            break;
        }
        let Ok(record) = RawRecord::new(data.slice(start..start + length)) else {
            break;
        };
        entries.push(Entry {
            seq: u64::from_le_bytes(word(0)),
            received: i64::from_le_bytes(word(8)),
            keep: Keep::seconds(u64::from_le_bytes(word(16))),
            record,
        });
        at = start + length;
    }
    entries
}
