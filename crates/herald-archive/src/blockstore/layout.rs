//! Where the block store keeps its files: one segment file per retention class, hour (of
//! the producers' time) and table, `<root>/<keep>/<YYYY-MM-DD>/<HH>.<table>.seg` (e.g.
//! `segments/30d/2026-11-20/07.logs.seg`). Expiring is deleting whole hour files; a day
//! directory is a [`Slot`].

use std::path::{Path, PathBuf};

use crate::backend::Slot;
use crate::entry::{day_name, day_of, parse_day_name, Entry, Table};
use crate::error::ArchiveError;
use crate::keep::Keep;

/// Nanoseconds in an hour.
pub const HOUR_NANOS: i64 = 3_600_000_000_000;
/// File name suffix of a segment file.
const SUFFIX: &str = ".seg";

/// One segment file: a retention class, an hour and a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileKey {
    /// Retention class.
    pub keep: Keep,
    /// Hours since the epoch (UTC) of the producers' time.
    pub hour: i64,
    /// Logs or samples.
    pub table: Table,
}

impl FileKey {
    /// Returns the file `entry` goes to.
    pub fn of(entry: &Entry) -> FileKey {
        FileKey {
            keep: entry.keep,
            hour: entry.record.meta.time.div_euclid(HOUR_NANOS),
            table: entry.table(),
        }
    }

    /// Returns the day (slot) the file belongs to.
    pub fn slot(&self) -> Slot {
        Slot {
            day: day_of(self.start()),
            keep: self.keep,
        }
    }

    /// Returns the first nanosecond of the file's hour.
    pub fn start(&self) -> i64 {
        self.hour.saturating_mul(HOUR_NANOS)
    }

    /// Returns the first nanosecond after the file's hour.
    pub fn end(&self) -> i64 {
        self.start().saturating_add(HOUR_NANOS)
    }

    /// Returns whether everything in the file is past its retention at `now`.
    pub fn expired(&self, now: i64) -> bool {
        self.end().saturating_add(self.keep.as_nanos()) <= now
    }

    /// Returns the file's path under `root`.
    pub fn path(&self, root: &Path) -> PathBuf {
        let hour = self.hour.rem_euclid(24);
        day_dir(root, self.slot()).join(format!("{hour:02}.{}{SUFFIX}", self.table.name()))
    }
}

/// Returns the directory of `slot`'s files.
pub fn day_dir(root: &Path, slot: Slot) -> PathBuf {
    root.join(slot.keep.to_string()).join(day_name(slot.day))
}

/// Parses `07.logs.seg` into an hour of the day and a table.
fn parse_file(name: &str) -> Option<(i64, Table)> {
    let (hour, rest) = name.strip_suffix(SUFFIX)?.split_once('.')?;
    let hour: i64 = hour.parse().ok().filter(|h| (0..24).contains(h))?;
    let table = [Table::Logs, Table::Samples]
        .into_iter()
        .find(|t| t.name() == rest)?;
    Some((hour, table))
}

fn entries(dir: &Path) -> Result<Vec<std::fs::DirEntry>, ArchiveError> {
    match std::fs::read_dir(dir) {
        Ok(entries) => Ok(entries.flatten().collect()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(err) => Err(ArchiveError::io(&format!("listing {}", dir.display()), err)),
    }
}

/// Lists every slot (class and day directory) under `root`, skipping anything else.
///
/// # Errors
/// [`ArchiveError`] if a directory cannot be read.
pub fn list_slots(root: &Path) -> Result<Vec<Slot>, ArchiveError> {
    let mut slots = Vec::new();
    for class in entries(root)? {
        let Some(keep) = class.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        for day in entries(&class.path())? {
            if let Some(day) = day.file_name().to_str().and_then(parse_day_name) {
                slots.push(Slot { day, keep });
            }
        }
    }
    Ok(slots)
}

/// Lists the files of `slot`, in hour order.
///
/// # Errors
/// [`ArchiveError`] if the directory cannot be read.
pub fn slot_files(root: &Path, slot: Slot) -> Result<Vec<FileKey>, ArchiveError> {
    let first_hour = i64::from(slot.day) * 24;
    let mut files: Vec<FileKey> = entries(&day_dir(root, slot))?
        .iter()
        .filter_map(|file| file.file_name().to_str().and_then(parse_file))
        .map(|(hour, table)| FileKey {
            keep: slot.keep,
            hour: first_hour + hour,
            table,
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Lists every file under `root`.
///
/// # Errors
/// [`ArchiveError`] if a directory cannot be read.
pub fn list_files(root: &Path) -> Result<Vec<FileKey>, ArchiveError> {
    let mut files = Vec::new();
    for slot in list_slots(root)? {
        files.extend(slot_files(root, slot)?);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_named_by_class_day_hour_and_table_and_listed_back() {
        let dir = tempfile::tempdir().unwrap();
        let key = FileKey {
            keep: Keep::days(30),
            hour: 20_412 * 24 + 7,
            table: Table::Logs,
        };
        let path = key.path(dir.path());
        assert!(
            path.ends_with("30d/2025-11-20/07.logs.seg"),
            "{}",
            path.display()
        );
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"").unwrap();
        std::fs::write(path.with_file_name("notes.txt"), b"").unwrap();
        std::fs::write(path.with_file_name("25.logs.seg"), b"").unwrap();
        assert_eq!(list_files(dir.path()).unwrap(), vec![key]);
        assert_eq!(key.slot().day, 20_412);
        assert!(!key.expired(key.end() + Keep::days(30).as_nanos() - 1));
        assert!(key.expired(key.end() + Keep::days(30).as_nanos()));
    }
}
