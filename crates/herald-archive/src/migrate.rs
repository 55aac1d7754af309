//! Moving an archive from the SQLite store (versions before the block store) into the
//! block store: every day file, oldest first, each synced before the next begins.

use std::path::Path;

use crate::backend::Backend;
use crate::blockstore::BlockStore;
use crate::embedded::{export, layout};
use crate::entry::day_name;
use crate::error::ArchiveError;

/// Entries handed to the block store per write.
const BATCH: usize = 20_000;

/// What [`migrate`] moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Migrated {
    /// Day files (of any retention class) read.
    pub days: u64,
    /// Records written into the block store.
    pub records: u64,
    /// Stored records that do not decode (every query already skipped them): left behind.
    pub unreadable: u64,
}

/// One day file done, for progress reports.
#[derive(Debug, Clone)]
pub struct DayDone {
    /// `2026-11-20 (30d)`.
    pub day: String,
    /// Its records moved.
    pub records: u64,
    /// Day files done so far, and in all.
    pub done: usize,
    /// Day files in all.
    pub total: usize,
}

/// Copies every record of the SQLite store under `sqlite_root` into `blocks` (which syncs
/// after each day), calling `progress` after each day file. The SQLite files are left as
/// they are.
///
/// # Errors
/// [`ArchiveError`] reading a day file or writing the block store; what was synced before
/// stays in the block store (running it again writes those records a second time, which
/// reads return once).
pub fn migrate(
    sqlite_root: &Path,
    blocks: &BlockStore,
    progress: &mut dyn FnMut(&DayDone),
) -> Result<Migrated, ArchiveError> {
    let mut slots = layout::list_slots(sqlite_root)?;
    slots.sort_by_key(|slot| (slot.day, slot.keep));
    let mut migrated = Migrated::default();
    for (done, slot) in slots.iter().enumerate() {
        let day = export::export(sqlite_root, *slot, BATCH, &mut |entries| {
            // Only records that pass the checks are exported.
            blocks.write_checked(entries)
        })?;
        blocks.sync()?;
        migrated.days += 1;
        migrated.records += day.records;
        migrated.unreadable += day.unreadable;
        progress(&DayDone {
            day: format!("{} ({})", day_name(slot.day), slot.keep),
            records: day.records,
            done: done + 1,
            total: slots.len(),
        });
    }
    Ok(migrated)
}
