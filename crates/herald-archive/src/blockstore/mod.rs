//! The block store: the archive as append-only segment files of compressed blocks
//! ([`crate::segment`]), one file per retention class, hour and table ([`layout`]).
//!
//! A write adds its entries to the open blocks of their file (logs: one; samples: one per
//! sample group, see [`SAMPLE_GROUPS`]); a block is compressed (LZ4) and appended when it
//! holds [`BLOCK_RAW_BYTES`]. A block holds the records exactly as they arrived, behind a
//! header that says their time range, priorities and group and, for samples, a filter of
//! their subjects: nothing is sorted or re-encoded on the way in. Reads pick blocks by
//! their headers and filters (see `read`) and also see the open blocks; expiring deletes
//! whole hour files.
//!
//! **Syncs** ([`Backend::sync`], every `fsync_interval` while records come, and for every
//! `stored` acknowledgement) write what the open blocks gained to one log file (`wal.log`,
//! see `wal`) and fsync it, leaving the blocks open, so that a slow stream still makes
//! large blocks; a block of 64 KiB or more goes into its file instead. Once a minute (or
//! when the log reaches 64 MiB) every open block goes into its file and the log is emptied
//! (`writers`). After a crash the log is replayed into open blocks at the next start.
//!
//! **One writer.** [`BlockStore::open`] locks the directory (`LOCK`, an advisory file lock)
//! for as long as the store lives: a second server, or `herald archive migrate`, on the
//! same data is refused with a message saying so. [`BlockStore::open_read_only`] takes no
//! lock and writes nothing, for tools that read beside a running server.
//!
//! **Crashes.** The store writes a marker file (`RUNNING`) while it is open and removes it
//! when it is dropped. Opened with the marker still there, it repairs every file written
//! since the marker was made (a block a crash left half-written is cut, see
//! [`segment::repair`](crate::segment::repair)) and reports what it cut
//! ([`BlockStore::repairs`]).

pub mod layout;
mod read;
mod wal;
mod writers;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use bytes::Bytes;

use crate::backend::{Backend, Expired, Recovery, RowRange, Slot, Source};
use crate::entry::{Entry, Row, Table};
use crate::error::{ArchiveError, ArchiveErrorKind};
use crate::segment::{decode_raw, filter, scan, Repair};
use layout::FileKey;
use read::FileIndex;
use writers::Writers;

/// Sample groups: a name's samples go to the blocks of group `subject_hash(name) mod
/// SAMPLE_GROUPS` (part of the file format), so that a read of one name's samples decodes
/// only its group's blocks, a sixteenth of a busy hour's samples.
pub const SAMPLE_GROUPS: usize = 16;

/// Returns the sample group of a subject with [`filter::subject_hash`] `hash`.
pub fn sample_group(hash: u64) -> usize {
    (hash % SAMPLE_GROUPS as u64) as usize
}

/// Raw bytes of entries that make a block (before compression).
pub const BLOCK_RAW_BYTES: usize = 256 * 1024;
/// The marker of an open store.
const MARKER: &str = "RUNNING";
/// The file a writing store holds locked.
const LOCK: &str = "LOCK";

/// A file the store cut at start-up, and what it cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repaired {
    /// The file.
    pub path: PathBuf,
    /// What was kept and cut.
    pub repair: Repair,
}

/// The block store.
#[derive(Debug)]
pub struct BlockStore {
    root: PathBuf,
    writers: Mutex<Writers>,
    /// Block indexes of the files read or written so far.
    indexes: Mutex<HashMap<FileKey, Arc<FileIndex>>>,
    /// Blocks read lately, decoded.
    decoded: read::Decoded,
    repairs: Vec<Repaired>,
    recovery: Recovery,
    /// The locked file, held while the store writes; `None`: opened read-only.
    lock: Option<std::fs::File>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl BlockStore {
    /// Opens the store under `root` (created if missing), repairing the files a crash may
    /// have left torn.
    ///
    /// # Errors
    /// [`ArchiveError`] if the directory cannot be made or a file cannot be repaired.
    pub fn open(root: &Path) -> Result<BlockStore, ArchiveError> {
        std::fs::create_dir_all(root)
            .map_err(|e| ArchiveError::io(&format!("creating {}", root.display()), e))?;
        let lock = lock_dir(root)?;
        let marker = root.join(MARKER);
        let mut repairs = Vec::new();
        let mut recovery = Recovery::default();
        if let Ok(since) = std::fs::metadata(&marker).and_then(|m| m.modified()) {
            let checked;
            (repairs, checked) = repair_since(root, since)?;
            recovery = Recovery {
                unclean: true,
                files_checked: checked,
                files_cut: repairs.len() as u64,
                bytes_cut: repairs.iter().map(|r| r.repair.cut_bytes).sum(),
                replayed: 0,
            };
        }
        std::fs::write(&marker, b"")
            .map_err(|e| ArchiveError::io(&format!("writing {}", marker.display()), e))?;
        let logged = wal::read(root)?;
        let mut store = BlockStore {
            root: root.to_path_buf(),
            writers: Mutex::new(Writers::new(Some(wal::Wal::open(root)?))),
            indexes: Mutex::new(HashMap::new()),
            decoded: read::Decoded::default(),
            repairs,
            recovery,
            lock: Some(lock),
        };
        if !logged.is_empty() {
            store.recovery.replayed = store.replay(logged)?;
            store.recovery.unclean = true;
        }
        Ok(store)
    }

    /// Puts the open blocks a crash left in the log back into the store, then compresses
    /// them into their files and empties the log. Returns the entries replayed.
    fn replay(&self, logged: Vec<(wal::Piece, u32, Vec<u8>)>) -> Result<u64, ArchiveError> {
        // A block's pieces, in the order they were logged, make its bytes again.
        let mut blocks: Vec<(wal::Piece, u32, Vec<u8>)> = Vec::new();
        let mut at: HashMap<wal::Piece, usize> = HashMap::new();
        for (piece, count, bytes) in logged {
            match at.get(&piece) {
                Some(&i) => {
                    blocks[i].1 += count;
                    blocks[i].2.extend_from_slice(&bytes);
                }
                None => {
                    at.insert(piece, blocks.len());
                    blocks.push((piece, count, bytes));
                }
            }
        }
        let mut replayed = 0;
        for (piece, count, bytes) in blocks {
            let entries = decode_raw(Bytes::from(bytes), count, piece.key.keep).map_err(|e| {
                ArchiveError::new(
                    e.kind,
                    format!(
                        "replaying {} (an open block of {}): {e}",
                        self.root.join("wal.log").display(),
                        piece.key.path(&self.root).display()
                    ),
                )
            })?;
            replayed += entries.len() as u64;
            self.write(&entries)?;
        }
        lock(&self.writers).checkpoint()?;
        Ok(replayed)
    }

    /// Opens the store under `root` for reading only: no lock, no repair, and writes are
    /// refused. Blocks a running server appends later are not seen by this handle once it
    /// has read their file.
    pub fn open_read_only(root: &Path) -> BlockStore {
        BlockStore {
            root: root.to_path_buf(),
            writers: Mutex::new(Writers::new(None)),
            indexes: Mutex::new(HashMap::new()),
            decoded: read::Decoded::default(),
            repairs: Vec::new(),
            recovery: Recovery::default(),
            lock: None,
        }
    }

    /// Lets go of the store as a crash would: nothing synced, the `RUNNING` marker left for
    /// the next start to find (the lock goes with the handle). For tests of the repair.
    pub fn abandon(mut self) {
        drop(self.lock.take());
    }

    /// Returns the files cut at start-up (a crash left their last block torn).
    pub fn repairs(&self) -> &[Repaired] {
        &self.repairs
    }

    /// Returns the directory the store keeps its files in.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Returns the block index of `key`'s file, scanning the file the first time.
    fn index(&self, key: FileKey) -> Result<Arc<FileIndex>, ArchiveError> {
        if let Some(index) = lock(&self.indexes).get(&key) {
            return Ok(Arc::clone(index));
        }
        let path = key.path(&self.root);
        let blocks = if path.exists() {
            scan(&path)?
        } else {
            Vec::new()
        };
        let index = Arc::new(FileIndex {
            blocks: blocks.into(),
        });
        // Another thread may have loaded it meanwhile: the first one in stays.
        Ok(Arc::clone(lock(&self.indexes).entry(key).or_insert(index)))
    }
}

impl Drop for BlockStore {
    fn drop(&mut self) {
        // A clean close: every block in its file, the log empty, no repair at the next start.
        if self.lock.is_none() {
            return;
        }
        match lock(&self.writers).checkpoint() {
            Ok(()) => {
                let _ = std::fs::remove_file(self.root.join(MARKER));
            }
            // The log and the marker stay: the next start repairs and replays.
            Err(err) => tracing::warn!(
                store = %self.root.display(),
                error = %err,
                "archive: the block store could not write its open blocks at close; the \
                 next start puts them back from its log"
            ),
        }
    }
}

/// Locks `root` for one writing store.
fn lock_dir(root: &Path) -> Result<std::fs::File, ArchiveError> {
    let path = root.join(LOCK);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| ArchiveError::io(&format!("opening {}", path.display()), e))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(ArchiveError::new(
            ArchiveErrorKind::Unavailable,
            format!(
                "the archive in {} is in use by another process (a running herald server?)",
                root.display()
            ),
        )),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(ArchiveError::io(&format!("locking {}", path.display()), e))
        }
    }
}

/// Repairs every segment file under `root` modified since `since`; returns the files cut
/// and the number checked.
fn repair_since(root: &Path, since: SystemTime) -> Result<(Vec<Repaired>, u64), ArchiveError> {
    let mut repairs = Vec::new();
    let mut checked = 0;
    for key in layout::list_files(root)? {
        let path = key.path(root);
        let modified = std::fs::metadata(&path).and_then(|m| m.modified());
        if modified.is_ok_and(|m| m >= since) {
            checked += 1;
            let repair = crate::segment::repair(&path)?;
            if repair.cut_bytes > 0 {
                repairs.push(Repaired { path, repair });
            }
        }
    }
    Ok((repairs, checked))
}

impl BlockStore {
    /// Adds `entries` to their files' open blocks; `checked`: all are known to pass the
    /// record checks.
    fn add(&self, entries: &[Entry], checked: bool) -> Result<(), ArchiveError> {
        if self.lock.is_none() {
            return Err(ArchiveError::new(
                ArchiveErrorKind::BadQuery,
                format!(
                    "the archive in {} was opened read-only",
                    self.root.display()
                ),
            ));
        }
        // A batch touches few files (usually one): a short list beats hashing every entry.
        let mut by_file: Vec<(FileKey, Vec<&Entry>)> = Vec::new();
        let mut last = usize::MAX;
        for entry in entries {
            let key = FileKey::of(entry);
            if by_file.get(last).is_none_or(|(k, _)| *k != key) {
                last = match by_file.iter().position(|(k, _)| *k == key) {
                    Some(at) => at,
                    None => {
                        by_file.push((key, Vec::new()));
                        by_file.len() - 1
                    }
                };
            }
            by_file[last].1.push(entry);
        }
        let mut writers = lock(&self.writers);
        for (key, group) in by_file {
            writers.add(&self.root, key, || self.index(key), &group, checked)?;
        }
        Ok(())
    }
}

impl Backend for BlockStore {
    fn describe(&self) -> String {
        format!("embedded block store in {}", self.root.display())
    }

    fn write(&self, entries: &[Entry]) -> Result<(), ArchiveError> {
        self.add(entries, false)
    }

    fn write_checked(&self, entries: &[Entry]) -> Result<(), ArchiveError> {
        self.add(entries, true)
    }

    fn sync(&self) -> Result<(), ArchiveError> {
        lock(&self.writers).sync()
    }

    fn slots(
        &self,
        _source: Source<'_>,
        first_day: i32,
        last_day: i32,
    ) -> Result<Vec<Slot>, ArchiveError> {
        let mut slots = layout::list_slots(&self.root)?;
        slots.retain(|slot| (first_day..=last_day).contains(&slot.day));
        Ok(slots)
    }

    fn read(
        &self,
        source: Source<'_>,
        slot: Slot,
        range: &RowRange,
        limit: usize,
    ) -> Result<Vec<Row>, ArchiveError> {
        let mut rows = Vec::new();
        let lower = range.after.map_or(range.from, |c| c.time.max(range.from));
        let group = match source {
            Source::Samples(name) => Some(sample_group(filter::subject_hash(name.as_bytes()))),
            Source::Logs => None,
        };
        for key in layout::slot_files(&self.root, slot)? {
            if key.table != source.table() || key.end() <= lower || key.start() >= range.to {
                continue;
            }
            if rows.len() >= limit {
                // Files are in hour order: a later hour cannot hold an earlier row.
                break;
            }
            let index = self.index(key)?;
            read::read_rows(
                (key, &key.path(&self.root)),
                &index,
                &self.decoded,
                lock(&self.writers).pending(key, group),
                source,
                range,
                limit,
                &mut rows,
            )?;
        }
        Ok(rows)
    }

    fn last_at(&self, name: &str, slot: Slot, time: i64) -> Result<Option<Row>, ArchiveError> {
        let mut files = layout::slot_files(&self.root, slot)?;
        files.retain(|key| key.table == Table::Samples && key.start() <= time);
        let group = sample_group(filter::subject_hash(name.as_bytes()));
        for key in files.into_iter().rev() {
            let index = self.index(key)?;
            let pending = lock(&self.writers).pending(key, Some(group));
            let path = key.path(&self.root);
            let found = read::last_at((key, &path), &index, &self.decoded, pending, name, time)?;
            if let Some(row) = found {
                return Ok(Some(row));
            }
        }
        Ok(None)
    }

    fn recovery(&self) -> Recovery {
        self.recovery
    }

    fn expire(&self, now: i64) -> Result<Expired, ArchiveError> {
        let mut expired = Expired::default();
        for slot in layout::list_slots(&self.root)? {
            let files = layout::slot_files(&self.root, slot)?;
            let gone: Vec<FileKey> = files.iter().copied().filter(|k| k.expired(now)).collect();
            if gone.is_empty() {
                continue;
            }
            {
                let mut writers = lock(&self.writers);
                for key in &gone {
                    writers.forget(key);
                }
            }
            let mut indexes = lock(&self.indexes);
            for key in &gone {
                indexes.remove(key);
                self.decoded.forget(*key);
                let path = key.path(&self.root);
                match std::fs::remove_file(&path) {
                    Ok(()) => {}
                    Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                    Err(err) => {
                        return Err(ArchiveError::io(
                            &format!("removing {}", path.display()),
                            err,
                        ))
                    }
                }
            }
            drop(indexes);
            if gone.len() == files.len() {
                let dir = layout::day_dir(&self.root, slot);
                // Only an empty directory goes; a file written meanwhile keeps it.
                if std::fs::remove_dir(&dir).is_ok() {
                    expired.slots += 1;
                }
            }
        }
        Ok(expired)
    }
}
