//! The snapshot: every type and object, written whole to a temporary file and renamed into
//! place, so it is always complete.

use std::fs::File;
use std::io::{BufReader, BufWriter, ErrorKind, Read, Write};
use std::path::Path;

use super::entry::{self, Entry};
use super::framing::{frame, EntryReader, Next};
use super::{sync_dir, HEADER_BYTES, SNAPSHOT_FILE, SNAPSHOT_MAGIC, SNAPSHOT_TEMP_FILE};
use crate::error::InfoError;
use crate::object::InfoObject;
use crate::registry::TypeRegistry;

/// Buffer size for reading and writing snapshots.
const SNAPSHOT_BUFFER_BYTES: usize = 1 << 20;

/// Loads the snapshot in `dir`, handing every entry before the end entry to `apply`.
/// A missing snapshot is an empty one. Returns the number of entries.
///
/// # Errors
/// [`InfoError::Io`], or [`InfoError::Corrupt`] for any damage: a snapshot is renamed into
/// place only once complete, so unlike the log it never has a torn tail.
pub(crate) fn load(
    dir: &Path,
    mut apply: impl FnMut(Entry) -> Result<(), String>,
) -> Result<u64, InfoError> {
    let path = dir.join(SNAPSHOT_FILE);
    let file = match File::open(&path) {
        Ok(file) => file,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(0),
        Err(err) => return Err(InfoError::io("open", &path)(err)),
    };
    let corrupt = |offset: u64, reason: String| InfoError::Corrupt {
        path: path.clone(),
        offset,
        reason,
    };
    let file_len = file
        .metadata()
        .map_err(InfoError::io("read metadata of", &path))?
        .len();
    let mut reader = BufReader::with_capacity(SNAPSHOT_BUFFER_BYTES, file);
    let mut header = [0u8; HEADER_BYTES as usize];
    if file_len < HEADER_BYTES {
        return Err(corrupt(0, "the file is shorter than its header".into()));
    }
    reader
        .read_exact(&mut header)
        .map_err(InfoError::io("read", &path))?;
    if header != SNAPSHOT_MAGIC {
        return Err(corrupt(
            0,
            "not a Herald info snapshot (the header is wrong)".into(),
        ));
    }
    let mut entries = EntryReader::new(reader, &path, HEADER_BYTES, file_len);
    let mut count = 0u64;
    loop {
        let (offset, entry) = match entries.next()? {
            Next::Entry { offset, body } => (offset, Entry::decode(body)),
            Next::Torn { offset } => {
                return Err(corrupt(
                    offset,
                    "the last entry is incomplete or damaged".into(),
                ))
            }
            Next::End => {
                let reason = "the snapshot ends without its end entry".into();
                return Err(corrupt(entries.offset(), reason));
            }
        };
        match entry {
            Ok(Entry::End { count: expected }) if expected == count => break,
            Ok(Entry::End { count: expected }) => {
                let reason = format!("the end entry counts {expected} entries, found {count}");
                return Err(corrupt(offset, reason));
            }
            Ok(other) => apply(other).map_err(|reason| corrupt(offset, reason))?,
            Err(reason) => return Err(corrupt(offset, reason)),
        }
        count += 1;
    }
    if entries.offset() != file_len {
        return Err(corrupt(
            entries.offset(),
            "bytes follow the end entry".into(),
        ));
    }
    Ok(count)
}

/// Writes every type (in declaration order) and object to `dir`'s snapshot, atomically:
/// a temporary file, fsynced, renamed over the old snapshot, and the directory fsynced.
///
/// # Errors
/// [`InfoError::Io`]; the old snapshot is then untouched.
pub(crate) fn write<'a>(
    dir: &Path,
    registry: &TypeRegistry,
    objects: impl Iterator<Item = &'a InfoObject>,
) -> Result<(), InfoError> {
    let temp = dir.join(SNAPSHOT_TEMP_FILE);
    let result = write_temp(&temp, registry, objects);
    let result = result.and_then(|()| {
        let path = dir.join(SNAPSHOT_FILE);
        std::fs::rename(&temp, &path).map_err(InfoError::io("rename snapshot to", path))
    });
    if result.is_err() {
        // Best effort: a leftover temporary file is also removed at the next open.
        let _ = std::fs::remove_file(&temp);
        return result;
    }
    sync_dir(dir)
}

fn write_temp<'a>(
    temp: &Path,
    registry: &TypeRegistry,
    objects: impl Iterator<Item = &'a InfoObject>,
) -> Result<(), InfoError> {
    let file = File::create(temp).map_err(InfoError::io("create", temp))?;
    let mut out = BufWriter::with_capacity(SNAPSHOT_BUFFER_BYTES, file);
    write_entries(&mut out, registry, objects).map_err(InfoError::io("write", temp))?;
    let file = out
        .into_inner()
        .map_err(|err| InfoError::io("write", temp)(err.into_error()))?;
    file.sync_all().map_err(InfoError::io("fsync", temp))
}

fn write_entries<'a>(
    out: &mut impl Write,
    registry: &TypeRegistry,
    objects: impl Iterator<Item = &'a InfoObject>,
) -> std::io::Result<()> {
    out.write_all(&SNAPSHOT_MAGIC)?;
    let mut framed = Vec::new();
    let mut put = |encode: &dyn Fn(&mut Vec<u8>)| {
        framed.clear();
        frame(&mut framed, encode)
            .map_err(|message| std::io::Error::new(ErrorKind::InvalidInput, message))?;
        out.write_all(&framed)
    };
    let mut count = 0u64;
    for def in registry.types_in_declaration_order() {
        put(&|body| entry::encode_declare(body, def))?;
        count += 1;
    }
    for object in objects {
        put(&|body| entry::encode_put(body, object))?;
        count += 1;
    }
    put(&|body| entry::encode_end(body, count))
}

/// Removes a snapshot left half-written by a crash.
///
/// # Errors
/// [`InfoError::Io`] if it exists and cannot be removed.
pub(crate) fn remove_stale_temp(dir: &Path) -> Result<(), InfoError> {
    let temp = dir.join(SNAPSHOT_TEMP_FILE);
    match std::fs::remove_file(&temp) {
        Err(err) if err.kind() != ErrorKind::NotFound => Err(InfoError::io("remove", temp)(err)),
        _ => Ok(()),
    }
}
