//! The data directory's lock: one server per directory, for the life of the server.
//!
//! Two servers writing the same information log and archive files would corrupt both, so
//! the server takes an exclusive `flock` on `<data_dir>/herald.lock` before it opens
//! anything there, and writes its PID into the file so a second server can say who holds
//! it. The kernel releases the lock when the process ends, however it ends (SIGKILL too),
//! so a stale lock file never blocks a restart.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Name of the lock file inside the data directory.
pub const LOCK_FILE: &str = "herald.lock";

/// Holds the data directory's lock; dropping it releases the lock.
#[derive(Debug)]
pub struct DataDirGuard {
    _file: File,
    path: PathBuf,
}

impl DataDirGuard {
    /// Creates `data_dir` if needed and locks it.
    ///
    /// # Errors
    /// An I/O error naming the lock file, and the PID of the server holding it when that
    /// is why.
    pub fn acquire(data_dir: &Path) -> std::io::Result<DataDirGuard> {
        std::fs::create_dir_all(data_dir).map_err(|err| {
            std::io::Error::new(
                err.kind(),
                format!("cannot create data directory {}: {err}", data_dir.display()),
            )
        })?;
        let path = data_dir.join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|err| named(&path, "open", err))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Err(held(&path, &mut file)),
            Err(TryLockError::Error(err)) => return Err(named(&path, "lock", err)),
        }
        file.set_len(0).map_err(|err| named(&path, "write", err))?;
        file.seek(SeekFrom::Start(0))
            .and_then(|_| writeln!(file, "{}", std::process::id()))
            .map_err(|err| named(&path, "write", err))?;
        Ok(DataDirGuard { _file: file, path })
    }

    /// Returns the lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn named(path: &Path, what: &str, err: std::io::Error) -> std::io::Error {
    let message = format!("cannot {what} lock file {}: {err}", path.display());
    std::io::Error::new(err.kind(), message)
}

/// Says that another server holds the lock, naming its PID as it wrote it.
fn held(path: &Path, file: &mut File) -> std::io::Error {
    let mut text = String::new();
    let _ = file.read_to_string(&mut text);
    let holder = match text.trim().parse::<u32>() {
        Ok(pid) => format!("another herald server (pid {pid})"),
        Err(_) => "another herald server".to_string(),
    };
    let dir = path.parent().unwrap_or(path);
    std::io::Error::new(
        std::io::ErrorKind::AddrInUse,
        format!(
            "data directory {} is in use by {holder}: it holds the lock {}; stop that server \
             or give this one another --data-dir",
            dir.display(),
            path.display()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_same_directory_names_the_holder() {
        let dir = std::env::temp_dir().join(format!("herald-lock-test-{}", std::process::id()));
        let first = DataDirGuard::acquire(&dir).unwrap();
        let err = DataDirGuard::acquire(&dir).unwrap_err();
        let message = err.to_string();
        assert!(
            message.contains(&format!(
                "in use by another herald server (pid {})",
                std::process::id()
            )),
            "{message}"
        );
        assert!(message.contains(LOCK_FILE), "{message}");
        drop(first);
        let again = DataDirGuard::acquire(&dir).expect("released on drop");
        drop(again);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
