//! [`LogFile`]: the append-only log of changes since the last snapshot.

use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::entry::Entry;
use super::framing::{EntryReader, Next};
use super::{sync_dir, HEADER_BYTES, LOG_MAGIC};
use crate::error::InfoError;
use crate::options::FsyncPolicy;

/// What opening the log found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LogReplay {
    /// Whole entries applied.
    pub(crate) entries: u64,
    /// Bytes of a torn last entry (or header) that were dropped.
    pub(crate) torn_bytes: u64,
}

/// The open log, positioned for appending.
#[derive(Debug)]
pub(crate) struct LogFile {
    path: PathBuf,
    file: File,
    /// Bytes of whole entries (and the header) in the file.
    len: u64,
    policy: FsyncPolicy,
    last_sync: Instant,
    unsynced: bool,
    /// Bytes of entries appended since the log was opened: only grows (compaction does not
    /// reset it), so a reader can tell whether anything was written since it last looked.
    appended: u64,
    /// Set when a failed write could not be undone: the file's tail is unknown, so further
    /// appends could land after garbage and be lost on replay.
    broken: bool,
}

impl LogFile {
    /// Opens (or creates) the log at `path`, hands every whole entry to `apply`, and drops a
    /// torn last entry.
    ///
    /// # Errors
    /// [`InfoError::Io`], or [`InfoError::Corrupt`] for a bad header, a damaged entry before
    /// the last, or an entry `apply` refuses.
    pub(crate) fn open(
        path: &Path,
        policy: FsyncPolicy,
        mut apply: impl FnMut(Entry) -> Result<(), String>,
    ) -> Result<(LogFile, LogReplay), InfoError> {
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(InfoError::io("open", path))?;
        let file_len = file
            .metadata()
            .map_err(InfoError::io("read metadata of", path))?
            .len();
        let mut log = LogFile {
            path: path.to_path_buf(),
            file,
            len: 0,
            policy,
            last_sync: Instant::now(),
            unsynced: false,
            appended: 0,
            broken: false,
        };
        let mut replay = LogReplay::default();
        if !log.read_header(file_len)? {
            replay.torn_bytes = file_len;
            log.write_header()?;
            return Ok((log, replay));
        }
        let reader = BufReader::with_capacity(1 << 16, &log.file);
        let mut entries = EntryReader::new(reader, path, HEADER_BYTES, file_len);
        let torn_at = loop {
            match entries.next()? {
                Next::End => break None,
                Next::Torn { offset } => break Some(offset),
                Next::Entry { offset, body } => {
                    let entry = Entry::decode(body).and_then(&mut apply);
                    entry.map_err(|reason| InfoError::Corrupt {
                        path: path.to_path_buf(),
                        offset,
                        reason,
                    })?;
                    replay.entries += 1;
                }
            }
        };
        log.len = entries.offset();
        if let Some(offset) = torn_at {
            replay.torn_bytes = file_len - offset;
            log.truncate(offset)?;
        }
        Ok((log, replay))
    }

    /// Checks the header. Returns false for a file too short to hold one that starts like
    /// one (a crash while creating it), which the caller rewrites.
    fn read_header(&mut self, file_len: u64) -> Result<bool, InfoError> {
        let mut header = [0u8; HEADER_BYTES as usize];
        let have = file_len.min(HEADER_BYTES) as usize;
        (&self.file)
            .seek(SeekFrom::Start(0))
            .and_then(|_| (&self.file).read_exact(&mut header[..have]))
            .map_err(InfoError::io("read", &self.path))?;
        if header[..have] != LOG_MAGIC[..have] {
            return Err(InfoError::Corrupt {
                path: self.path.clone(),
                offset: 0,
                reason: "not a Herald info log (the header is wrong)".into(),
            });
        }
        Ok(have == LOG_MAGIC.len())
    }

    fn write_header(&mut self) -> Result<(), InfoError> {
        self.truncate(0)?;
        (&self.file)
            .write_all(&LOG_MAGIC)
            .and_then(|()| self.file.sync_all())
            .map_err(InfoError::io("write", &self.path))?;
        self.len = HEADER_BYTES;
        sync_dir(self.path.parent().unwrap_or(Path::new(".")))
    }

    fn truncate(&mut self, len: u64) -> Result<(), InfoError> {
        self.file
            .set_len(len)
            .and_then(|()| self.file.sync_all())
            .map_err(InfoError::io("truncate", &self.path))?;
        self.len = len;
        Ok(())
    }

    /// Returns the log's length in bytes.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Appends framed entries with one `write`, then fsyncs if the policy says so. On error
    /// the log is cut back to where it was, so the file holds only whole entries.
    ///
    /// # Errors
    /// [`InfoError::Io`]; the change must then not be applied.
    pub(crate) fn append(&mut self, framed: &[u8]) -> Result<(), InfoError> {
        if self.broken {
            return Err(InfoError::Io {
                operation: "append to",
                path: self.path.clone(),
                source: std::io::Error::other(
                    "an earlier failed write could not be undone; reopen the store",
                ),
            });
        }
        if let Err(source) = (&self.file).write_all(framed) {
            if self.file.set_len(self.len).is_err() {
                self.broken = true;
            }
            return Err(InfoError::Io {
                operation: "write",
                path: self.path.clone(),
                source,
            });
        }
        self.len += framed.len() as u64;
        self.appended += framed.len() as u64;
        self.unsynced = true;
        let due = match self.policy {
            FsyncPolicy::Always => true,
            FsyncPolicy::Interval(interval) => self.last_sync.elapsed() >= interval,
            FsyncPolicy::Never => false,
        };
        if due {
            self.sync()?;
        }
        Ok(())
    }

    /// fsyncs what was appended since the last fsync, if anything.
    ///
    /// # Errors
    /// [`InfoError::Io`].
    pub(crate) fn sync(&mut self) -> Result<(), InfoError> {
        if !self.unsynced {
            return Ok(());
        }
        self.file
            .sync_data()
            .map_err(InfoError::io("fsync", &self.path))?;
        self.unsynced = false;
        self.last_sync = Instant::now();
        Ok(())
    }

    /// Empties the log down to its header, once a snapshot holds everything in it.
    ///
    /// # Errors
    /// [`InfoError::Io`]; the log then still replays correctly over the new snapshot.
    pub(crate) fn reset(&mut self) -> Result<(), InfoError> {
        self.truncate(HEADER_BYTES)?;
        self.unsynced = false;
        self.broken = false;
        Ok(())
    }

    /// Returns the bytes of entries appended since the log was opened (never reset).
    pub(crate) fn appended(&self) -> u64 {
        self.appended
    }

    /// Returns whether appended entries await an fsync.
    pub(crate) fn is_unsynced(&self) -> bool {
        self.unsynced
    }
}
