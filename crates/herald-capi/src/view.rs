//! A record as plain C data: [`herald_record_view`] and its [`herald_field`]s, pointing into
//! a cache the record keeps until it changes or is freed.

use std::ffi::{c_char, c_int};
use std::ptr;

use herald_proto::value::{Field, Value};
use herald_proto::Record;

use crate::strings::terminated;

/// A boolean field (`i` is 0 or 1).
pub const HERALD_BOOL: c_int = 1;
/// A signed 64-bit integer field (`i`).
pub const HERALD_INT: c_int = 2;
/// A 64-bit float field (`f`).
pub const HERALD_FLOAT: c_int = 3;
/// A UTF-8 string field (`s`, NUL-terminated, and `len` bytes).
pub const HERALD_STR: c_int = 4;
/// A bytes field (`s` and `len`).
pub const HERALD_BYTES: c_int = 5;
/// A time field: ns since the Unix epoch, UTC (`i`).
pub const HERALD_TIME: c_int = 6;
/// An array field (`items`, `count`; the items have no name).
pub const HERALD_ARRAY: c_int = 7;
/// A map field (`items`, `count`; named values in order).
pub const HERALD_MAP: c_int = 8;
/// An unsigned 64-bit integer above `INT64_MAX` (`(uint64_t)i`); smaller non-negative
/// integers are `HERALD_INT`, since both travel the same.
pub const HERALD_UINT: c_int = 9;

/// One named, typed value of a record (or an item of an array or map field).
#[repr(C)]
pub struct herald_field {
    /// The name; NULL for an array's items.
    pub name: *const c_char,
    /// `HERALD_BOOL` … `HERALD_UINT`.
    pub r#type: c_int,
    /// The value of a bool (0 or 1), int or time; the bits of a uint.
    pub i: i64,
    /// The value of a float.
    pub f: f64,
    /// A string (NUL-terminated; it may hold further NULs, `len` is its length) or bytes.
    pub s: *const c_char,
    /// The length of `s` in bytes, without the terminating NUL.
    pub len: usize,
    /// The items of an array or map.
    pub items: *const herald_field,
    /// How many items.
    pub count: usize,
}

/// A record as plain C data. Every pointer points into the record and stays valid until the
/// record is changed or freed (for a record in a callback: until the callback returns).
/// Strings are NUL-terminated, empty (never NULL) when absent, except `reply_to`.
#[repr(C)]
pub struct herald_record_view {
    /// `HERALD_KIND_LOG`, `HERALD_KIND_MESSAGE` or `HERALD_KIND_INFO`.
    pub kind: c_int,
    /// What it is about; for an information object its name.
    pub subject: *const c_char,
    /// The message type, log type, or info type name.
    pub r#type: *const c_char,
    /// The producer's time, ns since the Unix epoch.
    pub time: i64,
    /// `HERALD_TRACE` … `HERALD_EMERGENCY`.
    pub priority: c_int,
    /// The text (for a change of an information object: why, `snapshot`, `created` …).
    pub text: *const c_char,
    /// Its length in bytes.
    pub text_len: usize,
    /// Origin: host name.
    pub host: *const c_char,
    /// Origin: process name.
    pub process: *const c_char,
    /// Origin: thread name.
    pub thread: *const c_char,
    /// Origin: source file.
    pub file: *const c_char,
    /// Origin: source line (0 when unknown).
    pub line: u64,
    /// Origin: function or method.
    pub routine: *const c_char,
    /// Origin: free context (component, container …).
    pub context: *const c_char,
    /// Origin: stack id of a chain of errors.
    pub stack_id: *const c_char,
    /// Origin: level within that stack.
    pub stack_level: u64,
    /// Origin: identifier of the log statement.
    pub log_id: *const c_char,
    /// Origin: a URI for more information.
    pub uri: *const c_char,
    /// The audiences (none means everyone).
    pub audience: *const *const c_char,
    /// How many audiences.
    pub audience_count: usize,
    /// The fields (for an information object: its attributes).
    pub fields: *const herald_field,
    /// How many fields.
    pub field_count: usize,
    /// The subject a reply goes to; NULL unless the record is a request.
    pub reply_to: *const c_char,
    /// The correlation id of a request or reply; for an information object its version.
    pub id: u64,
    /// The server's sequence number (delivered records; 0 otherwise).
    pub seq: u64,
    /// The server's receive time, ns (delivered records; 0 otherwise).
    pub received: i64,
}

/// What a view points into: every string made NUL-terminated once, every field array.
pub struct ViewCache {
    pub view: herald_record_view,
    // Owned storage the view's pointers point into; moving the boxes does not move their
    // contents.
    _strings: Vec<Box<[u8]>>,
    _audience: Box<[*const c_char]>,
    _fields: Vec<Box<[herald_field]>>,
}

// SAFETY: the raw pointers point into the cache's own boxes, which are never changed after
// the cache is built; sharing them between threads is sharing immutable data.
unsafe impl Send for ViewCache {}
// SAFETY: as for Send.
unsafe impl Sync for ViewCache {}

struct Builder {
    strings: Vec<Box<[u8]>>,
    fields: Vec<Box<[herald_field]>>,
}

impl Builder {
    fn string(&mut self, text: &str) -> *const c_char {
        self.bytes(text.as_bytes())
    }

    fn bytes(&mut self, bytes: &[u8]) -> *const c_char {
        let owned = terminated(bytes);
        let ptr = owned.as_ptr().cast();
        self.strings.push(owned);
        ptr
    }

    fn fields<'a>(
        &mut self,
        items: impl ExactSizeIterator<Item = (Option<&'a str>, &'a Value)>,
    ) -> (*const herald_field, usize) {
        let count = items.len();
        let fields: Box<[herald_field]> =
            items.map(|(name, value)| self.field(name, value)).collect();
        let ptr = if count == 0 {
            ptr::null()
        } else {
            fields.as_ptr()
        };
        self.fields.push(fields);
        (ptr, count)
    }

    fn field(&mut self, name: Option<&str>, value: &Value) -> herald_field {
        let mut field = herald_field {
            name: name.map_or(ptr::null(), |name| self.string(name)),
            r#type: 0,
            i: 0,
            f: 0.0,
            s: ptr::null(),
            len: 0,
            items: ptr::null(),
            count: 0,
        };
        match value {
            Value::Bool(v) => (field.r#type, field.i) = (HERALD_BOOL, i64::from(*v)),
            Value::Int(v) => (field.r#type, field.i) = (HERALD_INT, *v),
            Value::UInt(v) => {
                (field.r#type, field.i) = match i64::try_from(*v) {
                    Ok(small) => (HERALD_INT, small),
                    Err(_) => (HERALD_UINT, *v as i64),
                };
            }
            Value::Float(v) => (field.r#type, field.f) = (HERALD_FLOAT, *v),
            Value::Time(v) => (field.r#type, field.i) = (HERALD_TIME, *v),
            Value::Str(v) => {
                (field.r#type, field.s, field.len) = (HERALD_STR, self.string(v), v.len());
            }
            Value::Bytes(v) => {
                (field.r#type, field.s, field.len) = (HERALD_BYTES, self.bytes(v), v.len());
            }
            Value::Array(items) => {
                let (items, count) = self.fields(items.iter().map(|v| (None, v)));
                (field.r#type, field.items, field.count) = (HERALD_ARRAY, items, count);
            }
            Value::Map(entries) => {
                let (items, count) = self.fields(map_items(entries));
                (field.r#type, field.items, field.count) = (HERALD_MAP, items, count);
            }
        }
        field
    }
}

fn map_items(fields: &[Field]) -> impl ExactSizeIterator<Item = (Option<&str>, &Value)> {
    fields
        .iter()
        .map(|(name, value)| (Some(name.as_str()), value))
}

impl ViewCache {
    /// Builds the view of `record`, delivered with `seq` and `received` (0 otherwise).
    pub fn new(record: &Record, seq: u64, received: i64) -> Box<ViewCache> {
        let mut b = Builder {
            strings: Vec::new(),
            fields: Vec::new(),
        };
        let origin = &record.origin;
        let audience: Box<[*const c_char]> = record.audience.iter().map(|a| b.string(a)).collect();
        let (fields, field_count) = b.fields(map_items(&record.fields));
        let view = herald_record_view {
            kind: record.kind as c_int,
            subject: b.string(&record.subject),
            r#type: b.string(&record.type_name),
            time: record.time,
            priority: record.priority as c_int,
            text: b.string(&record.text),
            text_len: record.text.len(),
            host: b.string(&origin.host),
            process: b.string(&origin.process),
            thread: b.string(&origin.thread),
            file: b.string(&origin.file),
            line: origin.line.unwrap_or(0),
            routine: b.string(&origin.routine),
            context: b.string(&origin.context),
            stack_id: b.string(&origin.stack_id),
            stack_level: origin.stack_level.unwrap_or(0),
            log_id: b.string(&origin.log_id),
            uri: b.string(&origin.uri),
            audience: if audience.is_empty() {
                ptr::null()
            } else {
                audience.as_ptr()
            },
            audience_count: audience.len(),
            fields,
            field_count,
            reply_to: record
                .reply_to
                .as_deref()
                .map_or(ptr::null(), |r| b.string(r)),
            id: record.id.unwrap_or(0),
            seq,
            received,
        };
        Box::new(ViewCache {
            view,
            _strings: b.strings,
            _audience: audience,
            _fields: b.fields,
        })
    }
}
