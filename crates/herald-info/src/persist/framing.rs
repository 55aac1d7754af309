//! Entry framing: `length:u32 body checksum:u32`, and [`EntryReader`], which reads framed
//! entries back and tells a torn last entry from corruption.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::InfoError;

/// Bytes a frame adds to its body: the length before it and the checksum after it.
pub(crate) const FRAME_OVERHEAD_BYTES: u64 = 8;

/// Returns the 32-bit FNV-1a hash of `bytes`: cheap, and enough to tell a torn or
/// overwritten entry from a whole one (this guards against accidents, not attackers).
pub(crate) fn fnv1a32(bytes: &[u8]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for &byte in bytes {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

/// Appends one framed entry whose body `encode` writes.
///
/// # Errors
/// An error message if the body is longer than `u32::MAX` bytes.
pub(crate) fn frame(out: &mut Vec<u8>, encode: impl FnOnce(&mut Vec<u8>)) -> Result<(), String> {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    encode(out);
    let body_len = out.len() - start - 4;
    let Ok(length) = u32::try_from(body_len) else {
        out.truncate(start);
        return Err(format!("an entry of {body_len} bytes is longer than 4 GiB"));
    };
    out[start..start + 4].copy_from_slice(&length.to_be_bytes());
    let checksum = fnv1a32(&out[start + 4..]);
    out.extend_from_slice(&checksum.to_be_bytes());
    Ok(())
}

/// What [`EntryReader::next`] found.
#[derive(Debug, PartialEq)]
pub(crate) enum Next<'a> {
    /// A whole entry starting at `offset`.
    Entry {
        /// Offset of its length field in the file.
        offset: u64,
        /// Its body.
        body: &'a [u8],
    },
    /// The file ends cleanly.
    End,
    /// The last entry, starting at `offset`, is incomplete or fails its checksum.
    Torn {
        /// Where it starts.
        offset: u64,
    },
}

/// Reads framed entries from a file of known length.
pub(crate) struct EntryReader<R> {
    reader: R,
    path: PathBuf,
    offset: u64,
    file_len: u64,
    body: Vec<u8>,
}

impl<R: Read> EntryReader<R> {
    /// Reads entries from `reader`, which is at `offset` in a file of `file_len` bytes.
    pub(crate) fn new(reader: R, path: &Path, offset: u64, file_len: u64) -> Self {
        EntryReader {
            reader,
            path: path.to_path_buf(),
            offset,
            file_len,
            body: Vec::new(),
        }
    }

    /// Returns the offset of the next entry.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads the next entry.
    ///
    /// # Errors
    /// [`InfoError::Corrupt`] for an entry that fails its checksum with more bytes after it,
    /// [`InfoError::Io`] if reading fails.
    pub(crate) fn next(&mut self) -> Result<Next<'_>, InfoError> {
        let offset = self.offset;
        let remaining = self.file_len - offset;
        if remaining == 0 {
            return Ok(Next::End);
        }
        if remaining < FRAME_OVERHEAD_BYTES {
            return Ok(Next::Torn { offset });
        }
        let mut length = [0u8; 4];
        self.read_exact_into(&mut length)?;
        let body_len = u64::from(u32::from_be_bytes(length));
        let frame_len = body_len + FRAME_OVERHEAD_BYTES;
        if frame_len > remaining {
            return Ok(Next::Torn { offset });
        }
        let mut body = std::mem::take(&mut self.body);
        body.resize(body_len as usize, 0);
        let mut checksum = [0u8; 4];
        let read = self
            .read_exact_into(&mut body)
            .and_then(|()| self.read_exact_into(&mut checksum));
        self.body = body;
        read?;
        if fnv1a32(&self.body) != u32::from_be_bytes(checksum) {
            if frame_len == remaining {
                return Ok(Next::Torn { offset });
            }
            return Err(InfoError::Corrupt {
                path: self.path.clone(),
                offset,
                reason: format!(
                    "entry of {body_len} bytes fails its checksum and is not the last one"
                ),
            });
        }
        self.offset += frame_len;
        Ok(Next::Entry {
            offset,
            body: &self.body,
        })
    }

    fn read_exact_into(&mut self, buffer: &mut [u8]) -> Result<(), InfoError> {
        self.reader
            .read_exact(buffer)
            .map_err(InfoError::io("read", &self.path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(bodies: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for body in bodies {
            frame(&mut out, |out| out.extend_from_slice(body)).unwrap();
        }
        out
    }

    fn read_all(bytes: &[u8]) -> Result<(Vec<Vec<u8>>, Option<u64>), InfoError> {
        let mut reader = EntryReader::new(bytes, Path::new("log"), 0, bytes.len() as u64);
        let mut bodies = Vec::new();
        loop {
            match reader.next()? {
                Next::Entry { body, .. } => bodies.push(body.to_vec()),
                Next::End => return Ok((bodies, None)),
                Next::Torn { offset } => return Ok((bodies, Some(offset))),
            }
        }
    }

    #[test]
    fn fnv1a_matches_reference_values() {
        assert_eq!(fnv1a32(b""), 0x811c_9dc5);
        assert_eq!(fnv1a32(b"a"), 0xe40c_292c);
        assert_eq!(fnv1a32(b"foobar"), 0xbf9c_f968);
    }

    #[test]
    fn reads_back_what_was_framed() {
        let bytes = framed(&[b"one", b"", b"three"]);
        assert_eq!(&bytes[..4], &[0, 0, 0, 3]);
        let (bodies, torn) = read_all(&bytes).unwrap();
        assert_eq!(bodies, [b"one".to_vec(), vec![], b"three".to_vec()]);
        assert_eq!(torn, None);
    }

    #[test]
    fn every_cut_of_the_last_entry_is_torn_not_corrupt() {
        let bytes = framed(&[b"first", b"second entry"]);
        let second = 5 + 8;
        for cut in second + 1..bytes.len() {
            let (bodies, torn) = read_all(&bytes[..cut]).unwrap();
            assert_eq!(bodies, [b"first".to_vec()], "cut at {cut}");
            assert_eq!(torn, Some(second as u64), "cut at {cut}");
        }
    }

    #[test]
    fn a_bad_checksum_is_torn_at_the_end_and_corrupt_before() {
        let mut bytes = framed(&[b"first", b"second"]);
        let last = bytes.len() - 6;
        bytes[last] ^= 0xff;
        assert_eq!(read_all(&bytes).unwrap().1, Some(13));
        let mut bytes = framed(&[b"first", b"second"]);
        bytes[5] ^= 0xff;
        let err = read_all(&bytes).unwrap_err();
        assert_eq!(
            err.to_string(),
            "corrupt `log` at byte 0: entry of 5 bytes fails its checksum and is not the last one"
        );
    }
}
