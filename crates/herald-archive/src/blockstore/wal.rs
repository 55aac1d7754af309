//! The block store's log of open blocks (`wal.log`): what makes a sync durable without
//! closing the blocks being filled, so that a slow stream still makes large blocks.
//!
//! At a sync the store appends, for every open block, the entry bytes it gained since the
//! last sync, and fsyncs this one file. When the open blocks are later compressed into
//! their segment files and those are synced (a checkpoint), the log is emptied. After a
//! crash the store replays the log into open blocks again. A record:
//! `magic "HWAL" | body length u32 | body CRC-32 u32 | body`, the body
//! `keep seconds u64 | hour i64 | table u8 | group u8 | generation u64 | count u32 | bytes`:
//! `count` entries' bytes (as [`BlockBuilder::raw`](crate::segment::BlockBuilder::raw)
//! makes them) that continue the open block `generation` of that file and group. A torn
//! last record (the crash came while it was written, before its sync) is ignored: it was
//! never acknowledged as stored.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::layout::FileKey;
use crate::entry::Table;
use crate::error::ArchiveError;
use crate::keep::Keep;

const MAGIC: u32 = u32::from_le_bytes(*b"HWAL");
/// Bytes of a record's body before the entries.
const BODY_HEAD: usize = 8 + 8 + 1 + 1 + 8 + 4;

/// Where a piece of an open block goes: a file, a group and the block's generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Piece {
    pub(super) key: FileKey,
    pub(super) group: u8,
    pub(super) generation: u64,
}

/// The log, open for appending.
#[derive(Debug)]
pub(super) struct Wal {
    path: PathBuf,
    file: File,
    len: u64,
}

impl Wal {
    /// Opens (creating) the log under `root` for appending.
    pub(super) fn open(root: &Path) -> Result<Wal, ArchiveError> {
        let path = root.join("wal.log");
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| io(&path, "open", e))?;
        let len = file.metadata().map_err(|e| io(&path, "stat", e))?.len();
        Ok(Wal { path, file, len })
    }

    /// Returns the log's length in bytes.
    pub(super) fn len(&self) -> u64 {
        self.len
    }

    /// Appends `count` entries' `bytes` continuing `piece` (not yet synced).
    pub(super) fn append(
        &mut self,
        piece: Piece,
        count: u32,
        bytes: &[u8],
    ) -> Result<(), ArchiveError> {
        let mut body = Vec::with_capacity(BODY_HEAD + bytes.len());
        body.extend_from_slice(&piece.key.keep.as_secs().to_le_bytes());
        body.extend_from_slice(&piece.key.hour.to_le_bytes());
        body.push(u8::from(piece.key.table == Table::Samples));
        body.push(piece.group);
        body.extend_from_slice(&piece.generation.to_le_bytes());
        body.extend_from_slice(&count.to_le_bytes());
        body.extend_from_slice(bytes);
        let mut record = Vec::with_capacity(12 + body.len());
        record.extend_from_slice(&MAGIC.to_le_bytes());
        record.extend_from_slice(&(body.len() as u32).to_le_bytes());
        record.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
        record.extend_from_slice(&body);
        self.file
            .write_all(&record)
            .map_err(|e| io(&self.path, "append", e))?;
        self.len += record.len() as u64;
        Ok(())
    }

    /// Makes what was appended durable.
    pub(super) fn sync(&self) -> Result<(), ArchiveError> {
        self.file.sync_data().map_err(|e| io(&self.path, "sync", e))
    }

    /// Empties the log (everything in it is in synced segment files).
    pub(super) fn clear(&mut self) -> Result<(), ArchiveError> {
        self.file
            .set_len(0)
            .map_err(|e| io(&self.path, "clear", e))?;
        self.file
            .sync_all()
            .map_err(|e| io(&self.path, "sync", e))?;
        self.len = 0;
        Ok(())
    }
}

/// Reads the log under `root`: its whole records in order (a torn last one is left out).
pub(super) fn read(root: &Path) -> Result<Vec<(Piece, u32, Vec<u8>)>, ArchiveError> {
    let path = root.join("wal.log");
    let mut bytes = Vec::new();
    match File::open(&path) {
        Ok(mut file) => {
            file.read_to_end(&mut bytes)
                .map_err(|e| io(&path, "read", e))?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(&path, "open", e)),
    }
    let mut records = Vec::new();
    let mut at = 0;
    let u32_at = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap_or_default()))
    };
    while let (Some(MAGIC), Some(len), Some(crc)) = (u32_at(at), u32_at(at + 4), u32_at(at + 8)) {
        let Some(body) = bytes.get(at + 12..at + 12 + len as usize) else {
            break;
        };
        if crc32fast::hash(body) != crc || body.len() < BODY_HEAD {
            break;
        }
        let u64_at =
            |at: usize| u64::from_le_bytes(body[at..at + 8].try_into().unwrap_or_default());
        let key = FileKey {
            keep: Keep::seconds(u64_at(0)),
            hour: u64_at(8) as i64,
            table: if body[16] == 1 {
                Table::Samples
            } else {
                Table::Logs
            },
        };
        let piece = Piece {
            key,
            group: body[17],
            generation: u64_at(18),
        };
        let count = u32::from_le_bytes(body[26..30].try_into().unwrap_or_default());
        records.push((piece, count, body[BODY_HEAD..].to_vec()));
        at += 12 + len as usize;
    }
    Ok(records)
}

fn io(path: &Path, what: &str, err: std::io::Error) -> ArchiveError {
    ArchiveError::io(&format!("log {what} {}", path.display()), err)
}
