//! The write side of the block store: the files open for appending, their open blocks,
//! and how a sync makes them durable — by the log of open blocks ([`super::wal`]) while
//! they are small, by compressing them into their files once they are large or old.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::layout::FileKey;
use super::read::FileIndex;
use super::wal::{Piece, Wal};
use super::{sample_group, BLOCK_RAW_BYTES, SAMPLE_GROUPS};
use crate::entry::{Entry, Table};
use crate::error::ArchiveError;
use crate::segment::{filter, BlockBuilder, BlockRef, Codec, SegmentWriter, BLOCK_HEADER_BYTES};

/// Segment files kept open for appending; producers' clocks rarely spread wider.
const OPEN_WRITERS: usize = 32;
/// An open block holding this much at a sync is compressed into its file rather than
/// logged: at high rates the log would only double the writes.
const SYNC_BLOCK_BYTES: usize = 64 * 1024;
/// Open blocks are compressed into their files (and the log emptied) at the first sync
/// after the oldest logged entry is this old, or the log this large.
const CHECKPOINT_AGE: Duration = Duration::from_secs(60);
const CHECKPOINT_LOG_BYTES: u64 = 64 * 1024 * 1024;

/// The files open for appending and the log of their open blocks.
#[derive(Debug)]
pub(super) struct Writers {
    open: HashMap<FileKey, OpenFile>,
    order: VecDeque<FileKey>,
    /// Files added to since the last sync.
    dirty: HashSet<FileKey>,
    /// `None` for a read-only store.
    wal: Option<Wal>,
    /// When the log got its first record since it was last emptied.
    logged_since: Option<Instant>,
    /// The next open block's generation (unique within the log).
    next_generation: u64,
}

/// A file open for appending, and its blocks being filled: one for logs, one per sample
/// group for samples.
#[derive(Debug)]
struct OpenFile {
    writer: SegmentWriter,
    blocks: Vec<OpenBlock>,
    index: Arc<FileIndex>,
    /// Blocks appended since the file was last synced.
    unsynced: bool,
}

/// A block being filled, and how much of it is in the log already.
#[derive(Debug)]
struct OpenBlock {
    builder: BlockBuilder,
    generation: u64,
    logged_bytes: usize,
    logged_count: usize,
}

impl Writers {
    /// Returns the write side of a store, with `wal` (none: read-only).
    pub(super) fn new(wal: Option<Wal>) -> Writers {
        Writers {
            open: HashMap::new(),
            order: VecDeque::new(),
            dirty: HashSet::new(),
            wal,
            logged_since: None,
            next_generation: 1,
        }
    }

    /// Adds `entries` (all of `key`'s file, whose index is `index`) to its open blocks,
    /// compressing each block that fills into the file. `checked`: every entry is known to
    /// pass the record checks (the blocks' headers say so unless some entry was not).
    pub(super) fn add(
        &mut self,
        root: &Path,
        key: FileKey,
        index: impl FnOnce() -> Result<Arc<FileIndex>, ArchiveError>,
        entries: &[&Entry],
        checked: bool,
    ) -> Result<(), ArchiveError> {
        if !self.open.contains_key(&key) {
            self.open_file(root, key, index()?)?;
        }
        let file = self.open.get_mut(&key).expect("opened above");
        for entry in entries {
            let (group, hash) = match key.table {
                Table::Samples => {
                    let hash = filter::subject_hash(entry.record.subject_bytes());
                    (sample_group(hash), Some(hash))
                }
                Table::Logs => (0, None),
            };
            let block = &mut file.blocks[group];
            if !checked {
                block.builder.mark_unchecked();
            }
            block.builder.push_hashed(entry, hash);
            if block.builder.raw_len() >= BLOCK_RAW_BYTES {
                file.append_block(group, &mut self.next_generation)?;
            }
        }
        self.dirty.insert(key);
        Ok(())
    }

    /// The entries of `key`'s open blocks (of sample group `group` only, when given), and
    /// whether all of them are known to pass the record checks.
    pub(super) fn pending(&self, key: FileKey, group: Option<usize>) -> (Vec<Entry>, bool) {
        let Some(file) = self.open.get(&key) else {
            return (Vec::new(), true);
        };
        let blocks = match group {
            Some(group) => file.blocks.get(group..=group).unwrap_or_default(),
            None => &file.blocks[..],
        };
        let entries = blocks.iter().flat_map(|b| b.builder.entries()).collect();
        (entries, blocks.iter().all(|b| b.builder.checked()))
    }

    /// Makes everything added so far durable: large open blocks go into their files, the
    /// rest of the open blocks into the log; every file and the log are synced. Once the
    /// log is old or large enough, every open block goes into its file and the log is
    /// emptied.
    pub(super) fn sync(&mut self) -> Result<(), ArchiveError> {
        let due = self
            .logged_since
            .is_some_and(|since| since.elapsed() >= CHECKPOINT_AGE)
            || self
                .wal
                .as_ref()
                .is_some_and(|w| w.len() >= CHECKPOINT_LOG_BYTES);
        if due || self.wal.is_none() {
            return self.checkpoint();
        }
        // A file stays dirty until its sync succeeds.
        let dirty: Vec<FileKey> = self.dirty.iter().copied().collect();
        let mut logged = false;
        for key in &dirty {
            let Some(file) = self.open.get_mut(key) else {
                continue;
            };
            for group in 0..file.blocks.len() {
                let block = &file.blocks[group];
                if block.builder.raw_len() >= SYNC_BLOCK_BYTES {
                    file.append_block(group, &mut self.next_generation)?;
                } else if block.builder.raw_len() > block.logged_bytes {
                    let wal = self.wal.as_mut().expect("checked above");
                    let piece = Piece {
                        key: *key,
                        group: group as u8,
                        generation: block.generation,
                    };
                    let count = block.builder.len() - block.logged_count;
                    wal.append(
                        piece,
                        count as u32,
                        &block.builder.raw()[block.logged_bytes..],
                    )?;
                    let block = &mut file.blocks[group];
                    block.logged_bytes = block.builder.raw_len();
                    block.logged_count = block.builder.len();
                    logged = true;
                }
            }
            file.sync()?;
        }
        if logged {
            self.wal.as_ref().expect("logged").sync()?;
            self.logged_since.get_or_insert_with(Instant::now);
        }
        for key in dirty {
            self.dirty.remove(&key);
        }
        Ok(())
    }

    /// Compresses every open block into its file, syncs every file, and empties the log.
    pub(super) fn checkpoint(&mut self) -> Result<(), ArchiveError> {
        for file in self.open.values_mut() {
            file.append_blocks(&mut self.next_generation)?;
            file.sync()?;
        }
        self.dirty.clear();
        if let Some(wal) = &mut self.wal {
            if wal.len() > 0 {
                wal.clear()?;
            }
        }
        self.logged_since = None;
        Ok(())
    }

    /// Forgets `key`'s file (its hour expired): what its open blocks held goes with it.
    pub(super) fn forget(&mut self, key: &FileKey) {
        self.open.remove(key);
        self.order.retain(|k| k != key);
        self.dirty.remove(key);
    }

    /// Opens `key`'s file for appending, closing the least recently opened one if too many
    /// are open (its blocks appended and synced first).
    fn open_file(
        &mut self,
        root: &Path,
        key: FileKey,
        index: Arc<FileIndex>,
    ) -> Result<(), ArchiveError> {
        if self.open.len() >= OPEN_WRITERS {
            if let Some(&oldest) = self.order.front() {
                if let Some(file) = self.open.get_mut(&oldest) {
                    file.append_blocks(&mut self.next_generation)?;
                    file.sync()?;
                }
                self.forget(&oldest);
            }
        }
        let path = key.path(root);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| ArchiveError::io(&format!("creating {}", dir.display()), e))?;
        }
        let (writer, _repaired) = SegmentWriter::open(&path)?;
        let builders: Vec<BlockBuilder> = match key.table {
            Table::Samples => (0..SAMPLE_GROUPS)
                .map(|group| BlockBuilder::with_subject_filter(group as u8))
                .collect(),
            Table::Logs => vec![BlockBuilder::new()],
        };
        let blocks = builders
            .into_iter()
            .map(|builder| {
                self.next_generation += 1;
                OpenBlock {
                    builder,
                    generation: self.next_generation,
                    logged_bytes: 0,
                    logged_count: 0,
                }
            })
            .collect();
        self.order.push_back(key);
        self.open.insert(
            key,
            OpenFile {
                writer,
                blocks,
                index,
                unsynced: false,
            },
        );
        Ok(())
    }
}

impl OpenFile {
    /// Compresses and appends every open block that holds anything.
    fn append_blocks(&mut self, next_generation: &mut u64) -> Result<(), ArchiveError> {
        for group in 0..self.blocks.len() {
            self.append_block(group, next_generation)?;
        }
        Ok(())
    }

    /// Compresses and appends open block `group`, if it holds anything, and indexes it; the
    /// group's next block gets a new generation.
    fn append_block(
        &mut self,
        group: usize,
        next_generation: &mut u64,
    ) -> Result<(), ArchiveError> {
        let block = &mut self.blocks[group];
        if block.builder.is_empty() {
            return Ok(());
        }
        let (header, bytes) = block.builder.finish(Codec::Lz4);
        *next_generation += 1;
        block.generation = *next_generation;
        block.logged_bytes = 0;
        block.logged_count = 0;
        let offset = self.writer.append(&bytes)?;
        self.unsynced = true;
        let filter_end = BLOCK_HEADER_BYTES + header.filter_len as usize;
        let appended = BlockRef {
            offset,
            header,
            filter: bytes[BLOCK_HEADER_BYTES..filter_end].into(),
        };
        // Indexed once its bytes reached the file: a reader never sees a block before them.
        self.index
            .blocks
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(appended);
        Ok(())
    }

    /// Syncs the file if blocks were appended since.
    fn sync(&mut self) -> Result<(), ArchiveError> {
        if self.unsynced {
            self.writer.sync()?;
            self.unsynced = false;
        }
        Ok(())
    }
}
