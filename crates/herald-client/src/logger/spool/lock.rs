//! The lock of a disk buffer directory: one producer per directory. Two processes sharing
//! one would number their records alike under one producer id, and servers would drop one's
//! records as the other's repeats.
//!
//! The lock is `flock` on `<dir>/lock` (std's `File::try_lock`), held while the buffer is
//! open and let go by the operating system when the process ends, so a crash leaves no stale
//! lock. The file says who holds it (`pid=… host=…`), for the error the next one gets. The
//! Python client locks the same file the same way.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Why the lock could not be taken.
#[derive(Debug)]
pub(crate) enum LockError {
    /// Another process (or logger) holds it; who, as its lock file says.
    Held(String),
    /// The lock file could not be opened, locked or written.
    Io(std::io::Error),
}

/// Holds the lock of a directory until dropped.
#[derive(Debug)]
pub(crate) struct SpoolLock {
    _file: File,
}

impl SpoolLock {
    /// Takes the lock of `directory`, or says who holds it.
    ///
    /// # Errors
    /// [`LockError::Held`] naming the holder, or [`LockError::Io`].
    pub(crate) fn take(directory: &Path) -> Result<SpoolLock, LockError> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(directory.join("lock"))
            .map_err(LockError::Io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                let holder = if holder.is_empty() { "unknown" } else { holder };
                return Err(LockError::Held(holder.to_string()));
            }
            Err(std::fs::TryLockError::Error(error)) => return Err(LockError::Io(error)),
        }
        let holder = format!(
            "pid={} host={}\n",
            std::process::id(),
            crate::origin::local_origin().host
        );
        file.set_len(0).map_err(LockError::Io)?;
        file.seek(SeekFrom::Start(0)).map_err(LockError::Io)?;
        file.write_all(holder.as_bytes()).map_err(LockError::Io)?;
        Ok(SpoolLock { _file: file })
    }
}
