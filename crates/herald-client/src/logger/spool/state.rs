//! The disk buffer's `state` file: the producer id, the first number not reserved, and how
//! far the server has acknowledged. The format is the Python client's (`python/herald/spool.py`).
//!
//! 36 bytes, big-endian:
//! ```text
//! magic     8 bytes  b"HRLDST01"
//! producer  u64      the producer id said in HELLO
//! limit     u64      no record has a number at or above it
//! acked     u64      every record on disk numbered at or below it has been acknowledged
//! crc       u32      CRC-32 of the 32 bytes before it
//! ```
//! It is written to `state.tmp`, synced and renamed over `state`.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The first bytes of the state file.
const STATE_MAGIC: &[u8; 8] = b"HRLDST01";
/// Bytes of the state file.
const STATE_BYTES: usize = 36;

/// What the state file says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct State {
    pub(crate) producer: u64,
    pub(crate) limit: u64,
    pub(crate) acked: u64,
}

/// The state file of a directory, and what it says now.
#[derive(Debug)]
pub(crate) struct StateFile {
    path: PathBuf,
    pub(crate) state: State,
}

impl State {
    /// Returns the file's bytes.
    fn encode(&self) -> [u8; STATE_BYTES] {
        let mut out = [0u8; STATE_BYTES];
        out[..8].copy_from_slice(STATE_MAGIC);
        out[8..16].copy_from_slice(&self.producer.to_be_bytes());
        out[16..24].copy_from_slice(&self.limit.to_be_bytes());
        out[24..32].copy_from_slice(&self.acked.to_be_bytes());
        let crc = crc32fast::hash(&out[..32]);
        out[32..].copy_from_slice(&crc.to_be_bytes());
        out
    }

    /// Returns what `data` says, or `None` when it is no intact state file.
    fn decode(data: &[u8]) -> Option<State> {
        if data.len() != STATE_BYTES || &data[..8] != STATE_MAGIC {
            return None;
        }
        let crc = u32::from_be_bytes(data[32..].try_into().ok()?);
        if crc32fast::hash(&data[..32]) != crc {
            return None;
        }
        let word = |at: usize| u64::from_be_bytes(data[at..at + 8].try_into().expect("8 bytes"));
        let producer = word(8);
        (producer != 0).then(|| State {
            producer,
            limit: word(16),
            acked: word(24),
        })
    }
}

impl StateFile {
    /// Reads `<directory>/state`; a missing or damaged one gives a new producer (from
    /// `new_producer`) numbering from 1: its numbers are unknown, and a new id cannot clash.
    ///
    /// # Errors
    /// A read error other than a missing file.
    pub(crate) fn read(
        directory: &Path,
        new_producer: impl FnOnce() -> u64,
    ) -> std::io::Result<StateFile> {
        let path = directory.join("state");
        let data = match std::fs::read(&path) {
            Ok(data) => data,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(error) => return Err(error),
        };
        let state = State::decode(&data).unwrap_or_else(|| State {
            producer: new_producer(),
            limit: 1,
            acked: 0,
        });
        Ok(StateFile { path, state })
    }

    /// Writes the state down: to `state.tmp`, synced, renamed over `state`.
    ///
    /// # Errors
    /// The file system's.
    pub(crate) fn write(&self) -> std::io::Result<()> {
        let tmp = self.path.with_extension("tmp");
        let mut out = File::create(&tmp)?;
        out.write_all(&self.state.encode())?;
        out.sync_all()?;
        std::fs::rename(&tmp, &self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_round_trips_and_a_damaged_one_is_refused() {
        let state = State {
            producer: 0x5eed_cafe,
            limit: 65_537,
            acked: 42,
        };
        let bytes = state.encode();
        assert_eq!(&bytes[..8], b"HRLDST01");
        assert_eq!(State::decode(&bytes), Some(state));
        let mut damaged = bytes;
        damaged[20] ^= 1;
        assert_eq!(State::decode(&damaged), None);
        assert_eq!(State::decode(&bytes[..35]), None);
    }
}
