//! How an [`InfoStore`](crate::InfoStore) keeps its state on disk: a snapshot plus an
//! append-only log, in one directory.
//!
//! # Files
//! ```text
//! <dir>/snapshot       every type and object at the last compaction
//! <dir>/snapshot.tmp   a snapshot being written (removed when found at open)
//! <dir>/log            every change since that snapshot
//! ```
//!
//! # Bytes
//! Both files are an 8-byte header followed by entries. Integers are big-endian.
//! ```text
//! file     = header entry*
//! header   = "HRLDSNP" 0x01     (snapshot)
//!          | "HRLDLOG" 0x01     (log)
//! entry    = length:u32  body:[length bytes]  checksum:u32
//!            checksum = FNV-1a 32 of the body
//! body     = MessagePack array [op, payload]
//!   op 0  declare type    payload = [name, base or nil, description,
//!                                    [[attribute, type text, description], …]]
//!   op 1  put object      payload = [name, type, time, version, {attribute: value, …}]
//!   op 2  delete object   payload = [name, time, version]
//!   op 3  end             payload = number of entries before it (snapshot only, last)
//! ```
//! The payloads of ops 0 and 1 are the wire forms `TypeData` and `ObjectData` of
//! `herald_proto::info` (docs/protocol.md), so values are MessagePack exactly as on the wire
//! (`time` as extension 1). A put holds the whole object after the change, never a delta.
//!
//! A snapshot lists every type in declaration order (each after its base and nested types),
//! then every object by name, then the end entry.
//!
//! # Replay
//! Opening the store loads the snapshot, then applies the log's entries in order. Applying is
//! idempotent: a put overwrites, a delete of a missing object does nothing, declaring an
//! identical type does nothing. So replaying a log over a snapshot that already contains its
//! changes gives the same state, which makes compaction safe at every step:
//! 1. write `snapshot.tmp`, fsync it, rename it over `snapshot`, fsync the directory;
//! 2. truncate `log` to its header and fsync it.
//!
//! A crash between the steps leaves the new snapshot and the old log, which replays to the
//! same state.
//!
//! # Damage
//! Every change is one `write` of one whole entry, so a crash can only leave the log's last
//! entry torn: running past the end of the file, or (when the file system extended the file
//! before writing its data) with a checksum that does not match. Such a last entry is dropped,
//! the log truncated to the entry before it, and the count reported in
//! [`Recovery`](crate::Recovery). Anything else — a bad checksum or undecodable body with more
//! entries after it, a bad header, a damaged snapshot — is corruption: the store refuses to
//! open with [`InfoError::Corrupt`](crate::InfoError::Corrupt), naming the file and the
//! entry's offset, rather than silently lose data.

pub(crate) mod entry;
pub(crate) mod framing;
pub(crate) mod log_file;
pub(crate) mod snapshot;

/// Header of the snapshot file.
pub const SNAPSHOT_MAGIC: [u8; 8] = *b"HRLDSNP\x01";

/// Header of the log file.
pub const LOG_MAGIC: [u8; 8] = *b"HRLDLOG\x01";

/// Length of either header, in bytes.
pub const HEADER_BYTES: u64 = 8;

/// Name of the snapshot file in the store's directory.
pub const SNAPSHOT_FILE: &str = "snapshot";

/// Name of the snapshot being written.
pub const SNAPSHOT_TEMP_FILE: &str = "snapshot.tmp";

/// Name of the log file in the store's directory.
pub const LOG_FILE: &str = "log";

/// fsyncs a directory, so a file created or renamed in it survives a machine crash.
pub(crate) fn sync_dir(dir: &std::path::Path) -> Result<(), crate::InfoError> {
    #[cfg(unix)]
    {
        std::fs::File::open(dir)
            .and_then(|handle| handle.sync_all())
            .map_err(crate::InfoError::io("fsync directory", dir))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}
