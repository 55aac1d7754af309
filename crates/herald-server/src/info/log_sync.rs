//! [`LogSync`]: the information store's log made durable on an interval — and only when
//! changes were written to it since the last time (the store counts the bytes it appended,
//! a count compaction does not reset), so that an idle server no longer flushes the disk ten
//! times a second.

use std::path::PathBuf;
use std::sync::Mutex;

/// The log's path, and how much had been appended to it at the last sync.
#[derive(Debug)]
pub struct LogSync {
    path: PathBuf,
    /// [`InfoStore::log_appended`](herald_info::InfoStore::log_appended) read before the last
    /// sync.
    synced: Mutex<Option<u64>>,
}

impl LogSync {
    /// Syncs the log at `path` when asked.
    pub fn new(path: PathBuf) -> LogSync {
        LogSync {
            path,
            synced: Mutex::new(None),
        }
    }

    /// Returns the log's path.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Flushes the log to disk unless nothing was appended since the last sync (`appended`,
    /// the store's count, read before this call); returns whether it did. The file is
    /// opened anew each time because it is not this handle's: what is appended while this
    /// runs is synced by the next call.
    ///
    /// # Errors
    /// Opening or syncing the file.
    pub fn sync(&self, appended: u64) -> std::io::Result<bool> {
        let mut synced = self.synced.lock().unwrap_or_else(|p| p.into_inner());
        if *synced == Some(appended) {
            return Ok(false);
        }
        std::fs::File::open(&self.path)?.sync_data()?;
        *synced = Some(appended);
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_is_synced_when_something_was_appended_since_and_not_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("info.log");
        std::fs::write(&path, b"first").unwrap();
        let log = LogSync::new(path);
        assert!(log.sync(0).unwrap(), "never synced");
        assert!(!log.sync(0).unwrap(), "nothing appended since");
        assert!(log.sync(40).unwrap(), "appended to");
        assert!(!log.sync(40).unwrap());
    }

    #[test]
    fn a_log_that_cannot_be_synced_is_tried_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("absent.log");
        let log = LogSync::new(path.clone());
        assert!(log.sync(7).is_err());
        std::fs::write(&path, b"now").unwrap();
        assert!(log.sync(7).unwrap(), "the failed sync is not taken as done");
    }
}
