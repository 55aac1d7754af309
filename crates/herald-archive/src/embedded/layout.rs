//! Where the embedded store keeps its files: one SQLite file per retention class and day,
//! `<root>/<keep>/<YYYY-MM-DD>.sqlite` (e.g. `archive/30d/2026-11-20.sqlite`). Expiring a
//! day is deleting its file; a day of one signal is one range of one file's primary key.

use std::path::{Path, PathBuf};

use crate::backend::Slot;
use crate::entry::{day_name, parse_day_name};
use crate::error::ArchiveError;
use crate::keep::Keep;

/// File name suffix of a day file.
const SUFFIX: &str = ".sqlite";

/// Returns the path of `slot`'s file under `root`.
pub fn slot_path(root: &Path, slot: Slot) -> PathBuf {
    root.join(slot.keep.to_string())
        .join(format!("{}{SUFFIX}", day_name(slot.day)))
}

/// Lists every slot that has a file under `root`, skipping anything else found there.
///
/// # Errors
/// [`ArchiveError`] if a directory cannot be read.
pub fn list_slots(root: &Path) -> Result<Vec<Slot>, ArchiveError> {
    let mut slots = Vec::new();
    let classes = match std::fs::read_dir(root) {
        Ok(classes) => classes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(slots),
        Err(err) => {
            return Err(ArchiveError::io(
                &format!("listing {}", root.display()),
                err,
            ))
        }
    };
    for class in classes.flatten() {
        let Some(keep) = class
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<Keep>().ok())
        else {
            continue;
        };
        let days = std::fs::read_dir(class.path())
            .map_err(|err| ArchiveError::io(&format!("listing {}", class.path().display()), err))?;
        for file in days.flatten() {
            let name = file.file_name();
            let Some(day) = name
                .to_str()
                .and_then(|n| n.strip_suffix(SUFFIX))
                .and_then(parse_day_name)
            else {
                continue;
            };
            slots.push(Slot { day, keep });
        }
    }
    Ok(slots)
}

/// Deletes `slot`'s file and its SQLite companions (`-wal`, `-shm`).
///
/// # Errors
/// [`ArchiveError`] if a file exists and cannot be removed.
pub fn remove_slot(root: &Path, slot: Slot) -> Result<(), ArchiveError> {
    let path = slot_path(root, slot);
    for suffix in ["", "-wal", "-shm"] {
        let mut name = path.clone().into_os_string();
        name.push(suffix);
        match std::fs::remove_file(&name) {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => {
                let what = format!("removing {}", PathBuf::from(name).display());
                return Err(ArchiveError::io(&what, err));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_files_are_listed_back_and_strangers_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let slot = Slot {
            day: 20_412,
            keep: Keep::days(30),
        };
        let path = slot_path(dir.path(), slot);
        assert!(
            path.ends_with("30d/2025-11-20.sqlite"),
            "{}",
            path.display()
        );
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"").unwrap();
        std::fs::write(path.with_file_name("notes.txt"), b"").unwrap();
        std::fs::create_dir_all(dir.path().join("spill")).unwrap();
        assert_eq!(list_slots(dir.path()).unwrap(), vec![slot]);
        remove_slot(dir.path(), slot).unwrap();
        assert!(list_slots(dir.path()).unwrap().is_empty());
    }
}
