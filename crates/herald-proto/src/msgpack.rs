//! The subset of MessagePack that Herald speaks, written by hand so that the bytes are exact.
//!
//! Writers always choose the shortest form (the same choice Python's `msgpack` makes), so an
//! encode of a decoded value gives back the same bytes. [`Reader`] borrows its input and never
//! allocates; every error says what was expected and at which offset.

use crate::error::DecodeError;

/// MessagePack extension type Herald uses for `time` values: 8 bytes, big-endian signed
/// nanoseconds since the Unix epoch.
pub const EXT_TIME: i8 = 1;

/// Appends a non-negative integer in its shortest form.
///
/// Each form is one append of a constant length (a store, not a call to `memcpy`): every
/// record a client publishes goes through here several times (`cargo bench -p herald-proto
/// --bench encode`).
#[inline]
pub fn write_uint(out: &mut Vec<u8>, value: u64) {
    if value < 0x80 {
        out.push(value as u8);
    } else if value <= u64::from(u8::MAX) {
        out.extend_from_slice(&[0xcc, value as u8]);
    } else if value <= u64::from(u16::MAX) {
        let [a, b] = (value as u16).to_be_bytes();
        out.extend_from_slice(&[0xcd, a, b]);
    } else if value <= u64::from(u32::MAX) {
        let [a, b, c, d] = (value as u32).to_be_bytes();
        out.extend_from_slice(&[0xce, a, b, c, d]);
    } else {
        let [a, b, c, d, e, f, g, h] = value.to_be_bytes();
        out.extend_from_slice(&[0xcf, a, b, c, d, e, f, g, h]);
    }
}

/// Appends a signed integer in its shortest form (non-negative values use the uint forms).
#[inline]
pub fn write_int(out: &mut Vec<u8>, value: i64) {
    if value >= 0 {
        return write_uint(out, value as u64);
    }
    if value >= -32 {
        out.push(value as i8 as u8);
    } else if value >= i64::from(i8::MIN) {
        out.extend_from_slice(&[0xd0, value as i8 as u8]);
    } else if value >= i64::from(i16::MIN) {
        out.push(0xd1);
        out.extend_from_slice(&(value as i16).to_be_bytes());
    } else if value >= i64::from(i32::MIN) {
        out.push(0xd2);
        out.extend_from_slice(&(value as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&value.to_be_bytes());
    }
}

/// Appends a 64-bit float (Herald never writes float32).
pub fn write_f64(out: &mut Vec<u8>, value: f64) {
    out.push(0xcb);
    out.extend_from_slice(&value.to_be_bytes());
}

/// Appends `nil`.
pub fn write_nil(out: &mut Vec<u8>) {
    out.push(0xc0);
}

/// Appends a boolean.
pub fn write_bool(out: &mut Vec<u8>, value: bool) {
    out.push(if value { 0xc3 } else { 0xc2 });
}

/// Appends a UTF-8 string.
#[inline(always)]
pub fn write_str(out: &mut Vec<u8>, value: &str) {
    let len = value.len();
    if len < 32 {
        out.push(0xa0 | len as u8);
    } else if len <= usize::from(u8::MAX) {
        out.extend_from_slice(&[0xd9, len as u8]);
    } else if len <= usize::from(u16::MAX) {
        out.push(0xda);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(0xdb);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
    out.extend_from_slice(value.as_bytes());
}

/// Appends a byte string (`bin` family).
pub fn write_bin(out: &mut Vec<u8>, value: &[u8]) {
    let len = value.len();
    if len <= usize::from(u8::MAX) {
        out.extend_from_slice(&[0xc4, len as u8]);
    } else if len <= usize::from(u16::MAX) {
        out.push(0xc5);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(0xc6);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
    out.extend_from_slice(value);
}

/// Appends an array header for `len` elements.
#[inline]
pub fn write_array_len(out: &mut Vec<u8>, len: u32) {
    if len < 16 {
        out.push(0x90 | len as u8);
    } else if len <= u32::from(u16::MAX) {
        out.push(0xdc);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(0xdd);
        out.extend_from_slice(&len.to_be_bytes());
    }
}

/// Appends a map header for `len` key/value pairs.
#[inline]
pub fn write_map_len(out: &mut Vec<u8>, len: u32) {
    if len < 16 {
        out.push(0x80 | len as u8);
    } else if len <= u32::from(u16::MAX) {
        out.push(0xde);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(0xdf);
        out.extend_from_slice(&len.to_be_bytes());
    }
}

/// Appends a `time` value as extension [`EXT_TIME`].
pub fn write_time(out: &mut Vec<u8>, nanos: i64) {
    out.extend_from_slice(&[0xd7, EXT_TIME as u8]);
    out.extend_from_slice(&nanos.to_be_bytes());
}

/// Converts a collection length to a MessagePack length.
///
/// # Panics
/// Panics if `len` exceeds `u32::MAX`; frames are limited far below that, so a longer
/// collection is a broken invariant.
pub fn len_u32(len: usize) -> u32 {
    u32::try_from(len).expect("collection longer than u32::MAX cannot fit in a frame")
}

/// The kind of the next value in a [`Reader`], as far as Herald cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `nil`.
    Nil,
    /// `true`/`false`.
    Bool,
    /// Any integer form.
    Int,
    /// float32 or float64.
    Float,
    /// A UTF-8 string.
    Str,
    /// A byte string.
    Bin,
    /// An array.
    Array,
    /// A map.
    Map,
    /// An extension value.
    Ext,
}

/// A cursor over borrowed MessagePack bytes.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Starts reading at the beginning of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, pos: 0 }
    }

    /// Starts reading `bytes` at offset `position` (offsets in errors count from the start
    /// of `bytes`), to read a value again after an error.
    pub fn at(bytes: &'a [u8], position: usize) -> Self {
        Reader {
            bytes,
            pos: position.min(bytes.len()),
        }
    }

    /// Returns the offset of the next byte to read.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Returns true when every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// Returns all the bytes, read or not.
    pub(crate) fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Moves on to `position` (at most the end), past bytes checked some other way.
    pub(crate) fn skip_to(&mut self, position: usize) {
        self.pos = position.min(self.bytes.len());
    }

    /// Returns the bytes not read yet.
    pub fn remaining(&self) -> &'a [u8] {
        &self.bytes[self.pos..]
    }

    fn error(&self, expected: &'static str) -> DecodeError {
        match self.bytes.get(self.pos) {
            None => DecodeError::Truncated { offset: self.pos },
            Some(&marker) => DecodeError::UnexpectedType {
                expected,
                found: describe_marker(marker),
                offset: self.pos,
            },
        }
    }

    fn take(&mut self, count: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .pos
            .checked_add(count)
            .filter(|&end| end <= self.bytes.len());
        let Some(end) = end else {
            return Err(DecodeError::Truncated {
                offset: self.bytes.len(),
            });
        };
        let slice = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(slice)
    }

    fn take_array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn peek(&self) -> Result<u8, DecodeError> {
        self.bytes
            .get(self.pos)
            .copied()
            .ok_or(DecodeError::Truncated { offset: self.pos })
    }

    /// Returns the kind of the next value without consuming it.
    #[inline]
    pub fn peek_kind(&self) -> Result<Kind, DecodeError> {
        let marker = self.peek()?;
        Ok(match marker {
            0x00..=0x7f | 0xe0..=0xff | 0xcc..=0xd3 => Kind::Int,
            0x80..=0x8f | 0xde | 0xdf => Kind::Map,
            0x90..=0x9f | 0xdc | 0xdd => Kind::Array,
            0xa0..=0xbf | 0xd9..=0xdb => Kind::Str,
            0xc0 => Kind::Nil,
            0xc2 | 0xc3 => Kind::Bool,
            0xc4..=0xc6 => Kind::Bin,
            0xca | 0xcb => Kind::Float,
            0xc7..=0xc9 | 0xd4..=0xd8 => Kind::Ext,
            0xc1 => {
                return Err(DecodeError::InvalidMarker {
                    marker,
                    offset: self.pos,
                })
            }
        })
    }

    /// Reads `nil` if it is next and returns whether it was.
    pub fn read_nil(&mut self) -> Result<bool, DecodeError> {
        if self.peek()? == 0xc0 {
            self.pos += 1;
            return Ok(true);
        }
        Ok(false)
    }

    /// Reads a boolean.
    pub fn read_bool(&mut self) -> Result<bool, DecodeError> {
        match self.peek()? {
            0xc2 => {
                self.pos += 1;
                Ok(false)
            }
            0xc3 => {
                self.pos += 1;
                Ok(true)
            }
            _ => Err(self.error("a boolean")),
        }
    }

    /// Reads any integer form as `i128`, so both `u64` and `i64` ranges fit.
    fn read_integer(&mut self) -> Result<i128, DecodeError> {
        let marker = self.peek()?;
        let value = match marker {
            0x00..=0x7f => {
                self.pos += 1;
                i128::from(marker)
            }
            0xe0..=0xff => {
                self.pos += 1;
                i128::from(marker as i8)
            }
            0xcc..=0xd3 => {
                self.pos += 1;
                match marker {
                    0xcc => i128::from(u8::from_be_bytes(self.take_array()?)),
                    0xcd => i128::from(u16::from_be_bytes(self.take_array()?)),
                    0xce => i128::from(u32::from_be_bytes(self.take_array()?)),
                    0xcf => i128::from(u64::from_be_bytes(self.take_array()?)),
                    0xd0 => i128::from(i8::from_be_bytes(self.take_array()?)),
                    0xd1 => i128::from(i16::from_be_bytes(self.take_array()?)),
                    0xd2 => i128::from(i32::from_be_bytes(self.take_array()?)),
                    _ => i128::from(i64::from_be_bytes(self.take_array()?)),
                }
            }
            _ => return Err(self.error("an integer")),
        };
        Ok(value)
    }

    /// Reads a non-negative integer that fits in `u64`.
    #[inline]
    pub fn read_uint(&mut self) -> Result<u64, DecodeError> {
        // Fast path: keys, kinds and priorities are positive fixints.
        if let Some(&marker) = self.bytes.get(self.pos) {
            if marker < 0x80 {
                self.pos += 1;
                return Ok(u64::from(marker));
            }
        }
        let offset = self.pos;
        let value = self.read_integer()?;
        u64::try_from(value).map_err(|_| DecodeError::OutOfRange { value, offset })
    }

    /// Reads any integer form that fits in `i64` or `u64`: `Ok(Ok(i))` for one in the
    /// `i64` range, `Ok(Err(u))` for one above `i64::MAX`.
    pub fn read_int_or_uint(&mut self) -> Result<Result<i64, u64>, DecodeError> {
        let offset = self.pos;
        let value = self.read_integer()?;
        if let Ok(v) = i64::try_from(value) {
            return Ok(Ok(v));
        }
        u64::try_from(value)
            .map(Err)
            .map_err(|_| DecodeError::OutOfRange { value, offset })
    }

    /// Reads an integer that fits in `i64`.
    #[inline]
    pub fn read_int(&mut self) -> Result<i64, DecodeError> {
        let offset = self.pos;
        let value = self.read_integer()?;
        i64::try_from(value).map_err(|_| DecodeError::OutOfRange { value, offset })
    }

    /// Reads a float32 or float64 as `f64`.
    pub fn read_f64(&mut self) -> Result<f64, DecodeError> {
        match self.peek()? {
            0xca => {
                self.pos += 1;
                Ok(f64::from(f32::from_be_bytes(self.take_array()?)))
            }
            0xcb => {
                self.pos += 1;
                Ok(f64::from_be_bytes(self.take_array()?))
            }
            _ => Err(self.error("a float")),
        }
    }

    /// Reads a UTF-8 string, borrowed from the input.
    #[inline]
    pub fn read_str(&mut self) -> Result<&'a str, DecodeError> {
        let offset = self.pos;
        let raw = self.read_str_bytes()?;
        std::str::from_utf8(raw).map_err(|_| DecodeError::InvalidUtf8 { offset })
    }

    /// Checks that a UTF-8 string comes next and skips it, returning its byte range. Faster
    /// than [`Reader::read_str`] for ASCII, the common case, when the text is not needed.
    ///
    /// # Errors
    /// The same errors as [`Reader::read_str`].
    #[inline]
    pub fn skip_str(&mut self) -> Result<std::ops::Range<usize>, DecodeError> {
        let offset = self.pos;
        let raw = self.read_str_bytes()?;
        if !raw.is_ascii() && std::str::from_utf8(raw).is_err() {
            return Err(DecodeError::InvalidUtf8 { offset });
        }
        Ok(self.pos - raw.len()..self.pos)
    }

    /// Reads a string's header and returns its bytes, not checked as UTF-8: for bytes
    /// checked before (a record's, once it passed its checks).
    #[inline]
    pub fn read_str_bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let marker = self.peek()?;
        let len = match marker {
            0xa0..=0xbf => {
                self.pos += 1;
                usize::from(marker & 0x1f)
            }
            0xd9 => {
                self.pos += 1;
                usize::from(u8::from_be_bytes(self.take_array()?))
            }
            0xda => {
                self.pos += 1;
                usize::from(u16::from_be_bytes(self.take_array()?))
            }
            0xdb => {
                self.pos += 1;
                u32::from_be_bytes(self.take_array()?) as usize
            }
            _ => return Err(self.error("a string")),
        };
        self.take(len)
    }

    /// Reads a byte string, borrowed from the input.
    pub fn read_bin(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = match self.peek()? {
            0xc4 => {
                self.pos += 1;
                usize::from(u8::from_be_bytes(self.take_array()?))
            }
            0xc5 => {
                self.pos += 1;
                usize::from(u16::from_be_bytes(self.take_array()?))
            }
            0xc6 => {
                self.pos += 1;
                u32::from_be_bytes(self.take_array()?) as usize
            }
            _ => return Err(self.error("a byte string")),
        };
        self.take(len)
    }

    /// Reads an array header and returns the element count.
    #[inline]
    pub fn read_array_len(&mut self) -> Result<u32, DecodeError> {
        let marker = self.peek()?;
        match marker {
            0x90..=0x9f => {
                self.pos += 1;
                Ok(u32::from(marker & 0x0f))
            }
            0xdc => {
                self.pos += 1;
                Ok(u32::from(u16::from_be_bytes(self.take_array()?)))
            }
            0xdd => {
                self.pos += 1;
                Ok(u32::from_be_bytes(self.take_array()?))
            }
            _ => Err(self.error("an array")),
        }
    }

    /// Reads a map header and returns the pair count.
    #[inline]
    pub fn read_map_len(&mut self) -> Result<u32, DecodeError> {
        let marker = self.peek()?;
        match marker {
            0x80..=0x8f => {
                self.pos += 1;
                Ok(u32::from(marker & 0x0f))
            }
            0xde => {
                self.pos += 1;
                Ok(u32::from(u16::from_be_bytes(self.take_array()?)))
            }
            0xdf => {
                self.pos += 1;
                Ok(u32::from_be_bytes(self.take_array()?))
            }
            _ => Err(self.error("a map")),
        }
    }

    /// Reads a `time` extension value (nanoseconds since the Unix epoch).
    pub fn read_time(&mut self) -> Result<i64, DecodeError> {
        let marker = self.peek()?;
        if marker != 0xd7 {
            // Another extension type is named as such: what a reader most needs to hear.
            let type_at = match marker {
                0xd4..=0xd8 => Some(self.pos + 1),
                0xc7 => Some(self.pos + 2),
                0xc8 => Some(self.pos + 3),
                0xc9 => Some(self.pos + 5),
                _ => None,
            };
            if let Some(&ext_type) = type_at.and_then(|at| self.bytes.get(at)) {
                if ext_type as i8 != EXT_TIME {
                    return Err(DecodeError::UnknownExtension {
                        ext_type: ext_type as i8,
                        offset: self.pos,
                    });
                }
            }
            return Err(self.error("a time (ext 1, 8 bytes)"));
        }
        let offset = self.pos;
        self.pos += 1;
        let [ext_type] = self.take_array::<1>()?;
        if ext_type as i8 != EXT_TIME {
            return Err(DecodeError::UnknownExtension {
                ext_type: ext_type as i8,
                offset,
            });
        }
        Ok(i64::from_be_bytes(self.take_array()?))
    }

    /// Skips one whole value of any kind, checking it is well formed.
    pub fn skip_value(&mut self, depth: u32) -> Result<(), DecodeError> {
        if depth > MAX_DEPTH {
            return Err(DecodeError::TooDeep { offset: self.pos });
        }
        match self.peek_kind()? {
            Kind::Nil => self.pos += 1,
            Kind::Bool => {
                self.read_bool()?;
            }
            Kind::Int => {
                self.read_integer()?;
            }
            Kind::Float => {
                self.read_f64()?;
            }
            Kind::Str => {
                self.read_str()?;
            }
            Kind::Bin => {
                self.read_bin()?;
            }
            Kind::Array => {
                for _ in 0..self.read_array_len()? {
                    self.skip_value(depth + 1)?;
                }
            }
            Kind::Map => {
                for _ in 0..self.read_map_len()? {
                    self.skip_value(depth + 1)?;
                    self.skip_value(depth + 1)?;
                }
            }
            Kind::Ext => self.skip_extension()?,
        }
        Ok(())
    }

    /// Skips a well-formed extension value of any type (a record holding one Herald does
    /// not define is refused by its checks, but can be stepped over to the next record).
    fn skip_extension(&mut self) -> Result<(), DecodeError> {
        let marker = self.take_array::<1>()?[0];
        let len = match marker {
            0xd4 => 1,
            0xd5 => 2,
            0xd6 => 4,
            0xd7 => 8,
            0xd8 => 16,
            0xc7 => usize::from(self.take_array::<1>()?[0]),
            0xc8 => usize::from(u16::from_be_bytes(self.take_array()?)),
            0xc9 => u32::from_be_bytes(self.take_array()?) as usize,
            _ => {
                self.pos -= 1;
                return Err(self.error("an extension"));
            }
        };
        self.take(1 + len)?;
        Ok(())
    }
}

/// Deepest nesting of arrays and maps Herald accepts in a value.
pub const MAX_DEPTH: u32 = 32;

/// Names a MessagePack marker byte for error messages.
pub fn describe_marker(marker: u8) -> &'static str {
    match marker {
        0x00..=0x7f | 0xe0..=0xff | 0xcc..=0xd3 => "an integer",
        0x80..=0x8f | 0xde | 0xdf => "a map",
        0x90..=0x9f | 0xdc | 0xdd => "an array",
        0xa0..=0xbf | 0xd9..=0xdb => "a string",
        0xc0 => "nil",
        0xc2 | 0xc3 => "a boolean",
        0xc4..=0xc6 => "a byte string",
        0xca | 0xcb => "a float",
        0xc7..=0xc9 | 0xd4..=0xd8 => "an extension value",
        0xc1 => "the reserved byte 0xc1",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_round_trip_in_shortest_form() {
        let cases: [(i64, usize); 9] = [
            (0, 1),
            (127, 1),
            (128, 2),
            (-1, 1),
            (-32, 1),
            (-33, 2),
            (70_000, 5),
            (i64::MIN, 9),
            (i64::MAX, 9),
        ];
        for (value, len) in cases {
            let mut out = Vec::new();
            write_int(&mut out, value);
            assert_eq!(out.len(), len, "{value}");
            assert_eq!(Reader::new(&out).read_int().unwrap(), value);
        }
    }

    #[test]
    fn strings_and_truncation() {
        let text = "x".repeat(300);
        let mut out = Vec::new();
        write_str(&mut out, &text);
        assert_eq!(Reader::new(&out).read_str().unwrap(), text);
        let err = Reader::new(&out[..10]).read_str().unwrap_err();
        assert!(matches!(err, DecodeError::Truncated { .. }), "{err}");
    }

    #[test]
    fn wrong_type_names_both_sides() {
        let err = Reader::new(&[0xa1, b'x']).read_uint().unwrap_err();
        assert_eq!(
            err.to_string(),
            "expected an integer at byte 0, found a string"
        );
    }
}
