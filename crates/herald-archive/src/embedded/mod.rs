//! The embedded store: SQLite files under the data directory, one per retention class and
//! day (see [`layout`]). Chosen by measurement (docs/benchmarks.md, "Embedded archive
//! engine"): clustered primary keys make a day of one signal one contiguous range, and
//! expiring is deleting files.
//!
//! One connection per open day file writes (the archive has one writer); readers take
//! read-only connections from a small pool, so queries run beside the writer (WAL mode).
//! Memory is bounded whatever the records' times: the writers share one page-cache budget
//! and the pool keeps a fixed number of idle readers in all.

mod chunk;
mod day_file;
pub mod export;
pub mod layout;

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::Connection;

use crate::backend::{Backend, Expired, RowRange, Slot, Source};
use crate::entry::{Entry, Row, Table};
use crate::error::ArchiveError;

/// Day files kept open for writing; producers' clocks rarely spread wider.
const OPEN_WRITERS: usize = 16;
/// The page cache of all open writers together, in KiB, shared evenly among them: one
/// writer (the usual case, every record of today) gets all of it.
const WRITER_CACHE_KIB: i64 = 64 * 1024;
/// The least page cache a writer gets however many are open, in KiB.
const MIN_WRITER_CACHE_KIB: i64 = 4 * 1024;
/// Idle read connections kept, across all day files (each with SQLite's default 2 MiB
/// page cache at most); the least recently used goes first.
const IDLE_READERS: usize = 16;

/// The embedded SQLite store.
#[derive(Debug)]
pub struct EmbeddedBackend {
    root: PathBuf,
    writers: Mutex<Writers>,
    /// Idle readers, least recently used first.
    readers: Mutex<VecDeque<(Slot, Connection)>>,
}

/// What the store holds open, and the page cache its writers may fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFiles {
    /// Day files open for writing.
    pub writers: usize,
    /// The page cache those writers may fill together, in bytes (as SQLite reports it).
    pub writer_cache_bytes: u64,
    /// Idle read connections kept.
    pub idle_readers: usize,
}

#[derive(Debug, Default)]
struct Writers {
    open: HashMap<Slot, Connection>,
    order: VecDeque<Slot>,
    /// Slots written since the last sync.
    dirty: HashSet<Slot>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl EmbeddedBackend {
    /// Opens the store under `root` (created on first write).
    pub fn open(root: &Path) -> EmbeddedBackend {
        EmbeddedBackend {
            root: root.to_path_buf(),
            writers: Mutex::new(Writers::default()),
            readers: Mutex::new(VecDeque::new()),
        }
    }

    /// What the store holds open now.
    ///
    /// # Errors
    /// [`ArchiveError`] if a writer cannot report its cache size.
    pub fn open_files(&self) -> Result<OpenFiles, ArchiveError> {
        let writers = lock(&self.writers);
        let mut writer_cache_bytes = 0u64;
        for connection in writers.open.values() {
            let kib = cache_kib(connection)?;
            writer_cache_bytes += kib.unsigned_abs() * 1024;
        }
        Ok(OpenFiles {
            writers: writers.open.len(),
            writer_cache_bytes,
            idle_readers: lock(&self.readers).len(),
        })
    }

    /// Returns the directory the store keeps its files in.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn with_reader<T>(
        &self,
        slot: Slot,
        read: impl FnOnce(&Connection) -> Result<T, ArchiveError>,
    ) -> Result<Option<T>, ArchiveError> {
        let pooled = {
            let mut readers = lock(&self.readers);
            let at = readers.iter().rposition(|(idle, _)| *idle == slot);
            at.and_then(|at| readers.remove(at)).map(|(_, c)| c)
        };
        let connection = match pooled {
            Some(connection) => connection,
            None => match day_file::open_for_read(&layout::slot_path(&self.root, slot))? {
                Some(connection) => connection,
                None => return Ok(None),
            },
        };
        let result = read(&connection);
        let evicted = {
            let mut readers = lock(&self.readers);
            readers.push_back((slot, connection));
            (readers.len() > IDLE_READERS).then(|| readers.pop_front())
        };
        // Closed outside the lock.
        drop(evicted);
        result.map(Some)
    }
}

impl Writers {
    fn connection(&mut self, root: &Path, slot: Slot) -> Result<&mut Connection, ArchiveError> {
        if !self.open.contains_key(&slot) {
            if self.open.len() >= OPEN_WRITERS {
                if let Some(&oldest) = self.order.front() {
                    // Closing is only allowed once its commits are durable; a failed sync
                    // leaves the file open, dirty and tracked, to be synced again.
                    if self.dirty.contains(&oldest) {
                        sync_wal(root, oldest)?;
                        self.dirty.remove(&oldest);
                    }
                    self.order.pop_front();
                    self.open.remove(&oldest);
                }
            }
            let connection = day_file::open_for_write(&layout::slot_path(root, slot))?;
            self.open.insert(slot, connection);
            self.order.push_back(slot);
            self.share_cache()?;
        }
        Ok(self.open.get_mut(&slot).expect("inserted above"))
    }

    /// Gives each open writer its share of [`WRITER_CACHE_KIB`] (SQLite frees the pages
    /// over a lowered limit at once).
    fn share_cache(&self) -> Result<(), ArchiveError> {
        let writers = i64::try_from(self.open.len().max(1)).unwrap_or(i64::MAX);
        let kib = (WRITER_CACHE_KIB / writers).max(MIN_WRITER_CACHE_KIB);
        for connection in self.open.values() {
            connection.execute_batch(&format!("PRAGMA cache_size=-{kib}"))?;
        }
        Ok(())
    }
}

/// A connection's page cache limit in KiB (negative in SQLite's convention for KiB; a
/// positive value counts pages, and is turned into KiB by the page size).
fn cache_kib(connection: &Connection) -> Result<i64, ArchiveError> {
    let size: i64 = connection.query_row("PRAGMA cache_size", [], |row| row.get(0))?;
    if size < 0 {
        return Ok(-size);
    }
    let page: i64 = connection.query_row("PRAGMA page_size", [], |row| row.get(0))?;
    Ok(size * page / 1024)
}

/// Fsyncs `slot`'s write-ahead log: commits made with `synchronous=NORMAL` are in it.
fn sync_wal(root: &Path, slot: Slot) -> Result<(), ArchiveError> {
    let mut wal = layout::slot_path(root, slot).into_os_string();
    wal.push("-wal");
    let what = || format!("syncing {}", PathBuf::from(&wal).display());
    match std::fs::File::open(&wal) {
        Ok(file) => file
            .sync_data()
            .map_err(|err| ArchiveError::io(&what(), err)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(ArchiveError::io(&what(), err)),
    }
}

/// Samples by name, time and sequence; then logs by time and sequence (their subjects
/// mixed, as a log chunk holds every subject).
fn sort_key(entry: &Entry) -> (bool, &[u8], i64, u64) {
    let logs = entry.table() == Table::Logs;
    let name = if logs {
        &[][..]
    } else {
        entry.record.subject_bytes()
    };
    (logs, name, entry.record.meta.time, entry.seq)
}

impl Backend for EmbeddedBackend {
    fn describe(&self) -> String {
        format!("embedded SQLite in {}", self.root.display())
    }

    fn write(&self, entries: &[Entry]) -> Result<(), ArchiveError> {
        let mut by_slot: HashMap<Slot, Vec<&Entry>> = HashMap::new();
        for entry in entries {
            let slot = Slot {
                day: entry.day(),
                keep: entry.keep,
            };
            by_slot.entry(slot).or_default().push(entry);
        }
        let mut writers = lock(&self.writers);
        for (slot, mut group) in by_slot {
            // In key order: each name's records (and the logs) become chunks, and each
            // insert lands next to the one before instead of all over the B-tree.
            group.sort_unstable_by(|a, b| sort_key(a).cmp(&sort_key(b)));
            let connection = writers.connection(&self.root, slot)?;
            day_file::insert(connection, &group)?;
            writers.dirty.insert(slot);
        }
        Ok(())
    }

    fn sync(&self) -> Result<(), ArchiveError> {
        let mut writers = lock(&self.writers);
        // A slot stays dirty until its sync succeeds: after an error the retry syncs it again
        // (the durability watermark must not pass commits that were never synced).
        let dirty: Vec<Slot> = writers.dirty.iter().copied().collect();
        for slot in dirty {
            sync_wal(&self.root, slot)?;
            writers.dirty.remove(&slot);
        }
        Ok(())
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
        let rows = self.with_reader(slot, |c| day_file::read(c, source, range, limit))?;
        Ok(rows.unwrap_or_default())
    }

    fn last_at(&self, name: &str, slot: Slot, time: i64) -> Result<Option<Row>, ArchiveError> {
        Ok(self
            .with_reader(slot, |c| day_file::last_at(c, name, time))?
            .flatten())
    }

    fn expire(&self, now: i64) -> Result<Expired, ArchiveError> {
        let mut expired = Expired::default();
        for slot in layout::list_slots(&self.root)? {
            if !slot.expired(now) {
                continue;
            }
            {
                let mut writers = lock(&self.writers);
                writers.open.remove(&slot);
                writers.order.retain(|s| *s != slot);
                writers.dirty.remove(&slot);
            }
            lock(&self.readers).retain(|(idle, _)| *idle != slot);
            layout::remove_slot(&self.root, slot)?;
            expired.slots += 1;
        }
        Ok(expired)
    }
}
