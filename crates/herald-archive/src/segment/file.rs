//! One segment file: a 16-byte header (`HRLDSEG` 0, version u32, reserved u32), then blocks
//! back to back. Appends only; a crash can leave a torn last block, which [`repair`] cuts
//! off (and says how much) before the file is appended to again.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::block::{BlockHeader, BLOCK_HEADER_BYTES};
use crate::error::{ArchiveError, ArchiveErrorKind};

/// The header every segment file starts with.
pub const SEGMENT_HEADER: [u8; 16] = *b"HRLDSEG\0\x01\0\0\0\0\0\0\0";

/// Where a block is in its file, its header and its subject filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockRef {
    /// Offset of the block's header in the file.
    pub offset: u64,
    /// The header.
    pub header: BlockHeader,
    /// The subject filter (empty for blocks without one).
    pub filter: Box<[u8]>,
}

/// What [`repair`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Repair {
    /// Whole blocks kept.
    pub blocks: u64,
    /// Bytes kept (the file's length after the repair).
    pub kept_bytes: u64,
    /// Bytes cut from the end: a block a crash left half-written, or what follows a block
    /// that does not read.
    pub cut_bytes: u64,
}

/// Appends blocks to a segment file.
#[derive(Debug)]
pub struct SegmentWriter {
    file: File,
    len: u64,
}

impl SegmentWriter {
    /// Opens `path` for appending: a new file gets the segment header; an existing one is
    /// [`repair`]ed first, and the repair is returned with the writer.
    ///
    /// # Errors
    /// I/O errors; [`ArchiveErrorKind::Corrupt`] for a file that is not a segment.
    pub fn open(path: &Path) -> Result<(SegmentWriter, Repair), ArchiveError> {
        let repaired = if path.exists() {
            repair(path)?
        } else {
            Repair::default()
        };
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| io(path, "open", e))?;
        let mut len = repaired.kept_bytes;
        if len == 0 {
            file.write_all(&SEGMENT_HEADER)
                .map_err(|e| io(path, "write", e))?;
            len = SEGMENT_HEADER.len() as u64;
        }
        Ok((SegmentWriter { file, len }, repaired))
    }

    /// Appends one block (as [`BlockBuilder::finish`](super::BlockBuilder::finish) made it)
    /// and returns its offset. The bytes reach the operating system; [`SegmentWriter::sync`]
    /// makes them durable.
    ///
    /// # Errors
    /// I/O errors.
    pub fn append(&mut self, block: &[u8]) -> Result<u64, ArchiveError> {
        let offset = self.len;
        self.file
            .write_all(block)
            .map_err(|e| ArchiveError::io("segment append", e))?;
        self.len += block.len() as u64;
        Ok(offset)
    }

    /// Makes every appended block durable (fdatasync).
    ///
    /// # Errors
    /// I/O errors.
    pub fn sync(&self) -> Result<(), ArchiveError> {
        self.file
            .sync_data()
            .map_err(|e| ArchiveError::io("segment sync", e))
    }

    /// Returns the file's length.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Returns whether the file holds no block.
    pub fn is_empty(&self) -> bool {
        self.len <= SEGMENT_HEADER.len() as u64
    }
}

/// Lists the blocks of a segment file by their headers and filters, reading no payload
/// (a payload's checksum is checked when the block is read). Stops at the first block that
/// does not read whole (a torn tail); [`repair`] tells how much that is.
///
/// # Errors
/// I/O errors; [`ArchiveErrorKind::Corrupt`] for a file that is not a segment.
pub fn scan(path: &Path) -> Result<Vec<BlockRef>, ArchiveError> {
    Ok(walk(path, false)?.0)
}

/// Reads the stored payload of the block at `offset`, whose header is `header`.
///
/// # Errors
/// I/O errors, or a file shorter than the block.
pub fn read_block(
    file: &mut File,
    offset: u64,
    header: &BlockHeader,
) -> Result<Vec<u8>, ArchiveError> {
    let mut payload = vec![0u8; header.stored_len as usize];
    let start = offset + BLOCK_HEADER_BYTES as u64 + u64::from(header.filter_len);
    file.seek(SeekFrom::Start(start))
        .and_then(|_| file.read_exact(&mut payload))
        .map_err(|e| ArchiveError::io("segment read", e))?;
    Ok(payload)
}

/// Cuts a torn tail off a segment file: everything from the first block whose header,
/// filter or payload does not read whole and match its checksums. Returns what was kept
/// and cut.
///
/// # Errors
/// I/O errors; [`ArchiveErrorKind::Corrupt`] for a file that is not a segment.
pub fn repair(path: &Path) -> Result<Repair, ArchiveError> {
    let (blocks, kept, len) = walk(path, true)?;
    if kept < len {
        let file = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| io(path, "open", e))?;
        file.set_len(kept).map_err(|e| io(path, "cut", e))?;
        file.sync_all().map_err(|e| io(path, "sync", e))?;
    }
    Ok(Repair {
        blocks: blocks.len() as u64,
        kept_bytes: kept,
        cut_bytes: len - kept,
    })
}

/// Reads a segment file's blocks: the whole ones, where they end, and the file's length.
/// Payload checksums are checked only when `payloads` is set.
fn walk(path: &Path, payloads: bool) -> Result<(Vec<BlockRef>, u64, u64), ArchiveError> {
    let mut file = File::open(path).map_err(|e| io(path, "open", e))?;
    let len = file.metadata().map_err(|e| io(path, "stat", e))?.len();
    let mut header = [0u8; 16];
    if len < header.len() as u64 {
        // A file the crash caught before its header was whole holds nothing.
        return Ok((Vec::new(), 0, len));
    }
    file.read_exact(&mut header)
        .map_err(|e| io(path, "read", e))?;
    if header[..8] != SEGMENT_HEADER[..8] {
        return Err(ArchiveError::new(
            ArchiveErrorKind::Corrupt,
            format!("{} is not a segment file", path.display()),
        ));
    }
    let mut blocks = Vec::new();
    let mut offset = SEGMENT_HEADER.len() as u64;
    let mut bytes = [0u8; BLOCK_HEADER_BYTES];
    let mut payload = Vec::new();
    while offset + BLOCK_HEADER_BYTES as u64 <= len {
        file.seek(SeekFrom::Start(offset))
            .map_err(|e| io(path, "seek", e))?;
        file.read_exact(&mut bytes)
            .map_err(|e| io(path, "read", e))?;
        let Ok(block) = BlockHeader::decode(&bytes) else {
            break;
        };
        let end = offset + block.block_len();
        if end > len {
            break;
        }
        let mut filter = vec![0u8; block.filter_len as usize];
        file.read_exact(&mut filter)
            .map_err(|e| io(path, "read", e))?;
        if crc32fast::hash(&filter) != block.filter_crc {
            break;
        }
        if payloads {
            payload.resize(block.stored_len as usize, 0);
            file.read_exact(&mut payload)
                .map_err(|e| io(path, "read", e))?;
            if crc32fast::hash(&payload) != block.payload_crc {
                break;
            }
        }
        blocks.push(BlockRef {
            offset,
            header: block,
            filter: filter.into_boxed_slice(),
        });
        offset = end;
    }
    Ok((blocks, offset, len))
}

fn io(path: &Path, what: &str, err: std::io::Error) -> ArchiveError {
    ArchiveError::io(&format!("segment {what} {}", path.display()), err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keep::Keep;
    use crate::segment::block::tests::entry;
    use crate::segment::block::{decode_entries, BlockBuilder, Codec};
    use herald_proto::Priority;

    fn blocks(count: u64) -> Vec<Vec<u8>> {
        (0..count)
            .map(|b| {
                let mut builder = BlockBuilder::new();
                for n in 0..50 {
                    builder.push(&entry(
                        b * 50 + n,
                        (b * 50 + n) as i64,
                        Priority::Info,
                        "a reading",
                    ));
                }
                builder.finish(Codec::Lz4).1
            })
            .collect()
    }

    #[test]
    fn blocks_appended_are_scanned_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00.seg");
        let (mut writer, repaired) = SegmentWriter::open(&path).unwrap();
        assert_eq!(repaired, Repair::default());
        for block in blocks(3) {
            writer.append(&block).unwrap();
        }
        writer.sync().unwrap();
        drop(writer);
        let found = scan(&path).unwrap();
        assert_eq!(found.len(), 3);
        let mut file = File::open(&path).unwrap();
        let payload = read_block(&mut file, found[2].offset, &found[2].header).unwrap();
        let entries = decode_entries(&found[2].header, &payload, Keep::days(1)).unwrap();
        assert_eq!((entries[0].seq, entries.len()), (100, 50));
        // Opened again, the file is appended to after its last block.
        let (mut writer, repaired) = SegmentWriter::open(&path).unwrap();
        assert_eq!((repaired.blocks, repaired.cut_bytes), (3, 0));
        writer.append(&blocks(1)[0]).unwrap();
        drop(writer);
        assert_eq!(scan(&path).unwrap().len(), 4);
    }

    #[test]
    fn a_torn_tail_is_cut_back_to_the_last_whole_block_wherever_the_crash_came() {
        let dir = tempfile::tempdir().unwrap();
        let all = blocks(3);
        let whole: u64 =
            SEGMENT_HEADER.len() as u64 + all[..2].iter().map(|b| b.len() as u64).sum::<u64>();
        for cut in 1..all[2].len() {
            let path = dir.path().join(format!("torn-{cut}.seg"));
            let mut bytes = SEGMENT_HEADER.to_vec();
            for block in &all[..2] {
                bytes.extend_from_slice(block);
            }
            bytes.extend_from_slice(&all[2][..cut]);
            std::fs::write(&path, &bytes).unwrap();
            let repaired = repair(&path).unwrap();
            assert_eq!(
                repaired,
                Repair {
                    blocks: 2,
                    kept_bytes: whole,
                    cut_bytes: cut as u64
                },
                "cut at {cut}"
            );
            assert_eq!(std::fs::metadata(&path).unwrap().len(), whole);
            assert_eq!(scan(&path).unwrap().len(), 2);
        }
    }

    #[test]
    fn a_file_that_is_not_a_segment_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.seg");
        std::fs::write(&path, b"SQLite format 3\0 and more bytes").unwrap();
        let error = scan(&path).unwrap_err();
        assert!(error.to_string().contains("not a segment file"), "{error}");
        assert!(SegmentWriter::open(&path).is_err());
    }
}
