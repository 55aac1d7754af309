//! Errors of decoding bytes into frames, records and values.

/// Why bytes could not be decoded. Offsets count from the start of the frame body or record.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The value ends before its declared length.
    #[error("truncated value: input ends at byte {offset}")]
    Truncated {
        /// Where the input ended.
        offset: usize,
    },
    /// A value of another MessagePack type was found.
    #[error("expected {expected} at byte {offset}, found {found}")]
    UnexpectedType {
        /// What the decoder wanted.
        expected: &'static str,
        /// What it found.
        found: &'static str,
        /// Where.
        offset: usize,
    },
    /// The reserved marker 0xc1 or another byte that starts no value.
    #[error("invalid MessagePack marker 0x{marker:02x} at byte {offset}")]
    InvalidMarker {
        /// The byte.
        marker: u8,
        /// Where.
        offset: usize,
    },
    /// An integer does not fit the field.
    #[error("integer {value} at byte {offset} is out of range")]
    OutOfRange {
        /// The integer.
        value: i128,
        /// Where.
        offset: usize,
    },
    /// A string is not valid UTF-8.
    #[error("string at byte {offset} is not valid UTF-8")]
    InvalidUtf8 {
        /// Where the string starts.
        offset: usize,
    },
    /// An extension type Herald does not define.
    #[error("unknown extension type {ext_type} at byte {offset}")]
    UnknownExtension {
        /// The extension type.
        ext_type: i8,
        /// Where.
        offset: usize,
    },
    /// Arrays and maps nested deeper than [`crate::msgpack::MAX_DEPTH`].
    #[error("value nested too deep at byte {offset}")]
    TooDeep {
        /// Where.
        offset: usize,
    },
    /// A map key this message does not define.
    #[error("unknown field {key} in {message}")]
    UnknownField {
        /// The key as found.
        key: String,
        /// The message being decoded (`record`, `origin`, `hello`, …).
        message: &'static str,
    },
    /// A key appears twice in one map.
    #[error("field `{field}` appears twice in {message}")]
    DuplicateField {
        /// The field name.
        field: &'static str,
        /// The message being decoded.
        message: &'static str,
    },
    /// A required field is absent.
    #[error("{message} is missing required field `{field}`")]
    MissingField {
        /// The field name.
        field: &'static str,
        /// The message being decoded.
        message: &'static str,
    },
    /// A field holds a value that is not allowed there.
    #[error("invalid {field}: {reason}")]
    InvalidField {
        /// The field name.
        field: &'static str,
        /// What is wrong, quoting the value.
        reason: String,
    },
    /// An array has another length than the message defines.
    #[error("{message} must be an array of {expected} elements, found {found}")]
    WrongLength {
        /// The message being decoded.
        message: &'static str,
        /// Expected element count.
        expected: u32,
        /// Found element count.
        found: u32,
    },
    /// Bytes remain after the last value of a frame.
    #[error("{count} unexpected bytes after the end of the {message} frame")]
    TrailingBytes {
        /// How many.
        count: usize,
        /// The frame type.
        message: &'static str,
    },
}

/// Why a frame could not be taken from a byte stream.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The length prefix exceeds the negotiated maximum.
    #[error("frame of {size} bytes exceeds the maximum of {max} bytes")]
    TooLarge {
        /// Declared length.
        size: u64,
        /// Configured maximum.
        max: u64,
    },
    /// A length prefix of zero: every frame has at least its type byte.
    #[error("empty frame: a frame has at least its type byte")]
    Empty,
    /// The bytes look like an HTTP request sent to the native port.
    #[error("this is Herald's native protocol port; it received an HTTP request")]
    Http,
    /// A type byte Herald does not define.
    #[error("unknown frame type 0x{0:02x}")]
    UnknownType(u8),
    /// The frame body is malformed.
    #[error("malformed {frame} frame: {source}")]
    Malformed {
        /// The frame type's name.
        frame: &'static str,
        /// What was wrong.
        source: DecodeError,
    },
}
