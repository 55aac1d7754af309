//! What the router needs of a record ([`RecordMeta`]) and the record map's wire keys
//! ([`key`]): below both the general scan (`record.rs`, re-exported there) and its fast path
//! (`record_scan.rs`), which fill it in.

use crate::kind::Kind;
use crate::priority::Priority;

/// Wire keys of the record map.
pub mod key {
    /// `kind`: 0 log, 1 message, 2 info.
    pub const KIND: u64 = 0;
    /// `subject`: what the record is about.
    pub const SUBJECT: u64 = 1;
    /// `type`: free string.
    pub const TYPE: u64 = 2;
    /// `time`: producer's timestamp, ns since the epoch.
    pub const TIME: u64 = 3;
    /// `priority`: 1..11.
    pub const PRIORITY: u64 = 4;
    /// `audience`: array of names.
    pub const AUDIENCE: u64 = 5;
    /// `origin`: map, see [`crate::origin`].
    pub const ORIGIN: u64 = 6;
    /// `text`: human-readable text.
    pub const TEXT: u64 = 7;
    /// `fields`: map of named values.
    pub const FIELDS: u64 = 8;
    /// `reply_to`: subject for the reply to a request.
    pub const REPLY_TO: u64 = 9;
    /// `id`: request/reply correlation.
    pub const ID: u64 = 10;
}

/// What the router needs of a record, read without allocating: the record itself stays in
/// its encoded bytes and is shared by reference among subscribers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordMeta {
    /// Kind.
    pub kind: Kind,
    /// Priority.
    pub priority: Priority,
    /// Producer's time.
    pub time: i64,
    /// Byte range of the subject string within the record.
    pub subject: (u32, u32),
    /// Byte range of the type string (empty when absent).
    pub type_name: (u32, u32),
    /// Byte range of the encoded audience array (empty when absent).
    pub audience: (u32, u32),
    /// Byte ranges of the origin's host, process and log id strings, and of the text:
    /// a record's source and storm keys are made of them without reading it again. `(0, 0)`
    /// when absent, or not known (records read back from an archive block).
    pub source: [(u32, u32); 3],
    /// See `source`.
    pub text: (u32, u32),
}

impl RecordMeta {
    /// What a scan starts from: a log record at `INFO` whose parts are not located yet.
    pub(crate) const START: RecordMeta = RecordMeta {
        kind: Kind::Log,
        priority: Priority::Info,
        time: 0,
        subject: (0, 0),
        type_name: (0, 0),
        audience: (0, 0),
        source: [(0, 0); 3],
        text: (0, 0),
    };
}
