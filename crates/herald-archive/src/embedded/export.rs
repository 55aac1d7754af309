//! Reading a whole day file back as entries, in batches: what `herald archive migrate`
//! moves into the block store.

use bytes::Bytes;
use herald_proto::frame::RawRecord;

use super::{chunk, day_file, layout};
use crate::backend::Slot;
use crate::entry::Entry;
use crate::error::ArchiveError;

/// What [`export`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Exported {
    /// Records handed over.
    pub records: u64,
    /// Stored records that do not decode (every query skips them too): not handed over.
    pub unreadable: u64,
}

/// Calls `sink` with every record of `slot`'s day file under `root`, in batches of about
/// `batch` entries (samples first, then logs). A missing file exports nothing.
///
/// # Errors
/// [`ArchiveError`] reading the file, or the first error `sink` returns.
pub fn export(
    root: &std::path::Path,
    slot: Slot,
    batch: usize,
    sink: &mut dyn FnMut(&[Entry]) -> Result<(), ArchiveError>,
) -> Result<Exported, ArchiveError> {
    let mut exported = Exported::default();
    let Some(connection) = day_file::open_for_read(&layout::slot_path(root, slot))? else {
        return Ok(exported);
    };
    let mut entries = Vec::with_capacity(batch);
    for table in ["samples", "logs"] {
        let mut statement = connection.prepare(&format!("SELECT data FROM {table}"))?;
        let mut rows = statement.query([])?;
        while let Some(row) = rows.next()? {
            let data: Vec<u8> = row.get(0)?;
            let data = Bytes::from(data);
            let mut located = Vec::new();
            chunk::decode(&data, 0, |entry| located.push(entry))?;
            for at in located {
                match RawRecord::new(data.slice(at.start..at.end)) {
                    Ok(record) => entries.push(Entry {
                        seq: at.seq,
                        received: at.received,
                        keep: slot.keep,
                        record,
                    }),
                    Err(_) => exported.unreadable += 1,
                }
            }
            if entries.len() >= batch {
                exported.records += entries.len() as u64;
                sink(&entries)?;
                entries.clear();
            }
        }
    }
    if !entries.is_empty() {
        exported.records += entries.len() as u64;
        sink(&entries)?;
    }
    Ok(exported)
}
