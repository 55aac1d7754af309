//! `herald_record`: a record the program builds (to publish, to send as a request, to set
//! an information object) or one it received (delivered, a reply, an object read back).
//! Building one allocates; publishing it again and again does not.

use std::ffi::{c_char, c_int};
use std::sync::OnceLock;

use herald_proto::{Kind, Priority, Record};

use crate::out::{self, give};
use crate::status::{guard, Failure, HERALD_E_NOT_FOUND};
use crate::strings::{bytes, required};
use crate::view::{herald_field, herald_record_view, ViewCache};

/// A log record.
pub const HERALD_KIND_LOG: c_int = 0;
/// A publish/subscribe message (also requests and replies).
pub const HERALD_KIND_MESSAGE: c_int = 1;
/// An information object (or a change of one).
pub const HERALD_KIND_INFO: c_int = 2;

/// Priority: finest detail.
pub const HERALD_TRACE: c_int = 1;
/// Priority: debugging detail meant to be removed again.
pub const HERALD_DELOUSE: c_int = 2;
/// Priority: debugging.
pub const HERALD_DEBUG: c_int = 3;
/// Priority: normal operation (the default).
pub const HERALD_INFO: c_int = 4;
/// Priority: normal but significant.
pub const HERALD_NOTICE: c_int = 5;
/// Priority: something may be wrong.
pub const HERALD_WARNING: c_int = 6;
/// Priority: something failed. (7 is not a priority.)
pub const HERALD_ERROR: c_int = 8;
/// Priority: a part of the system is unusable.
pub const HERALD_CRITICAL: c_int = 9;
/// Priority: someone must act now.
pub const HERALD_ALERT: c_int = 10;
/// Priority: the system is unusable.
pub const HERALD_EMERGENCY: c_int = 11;

/// A record: opaque; read it with `herald_record_read`.
pub struct herald_record {
    pub(crate) record: Record,
    /// The server's sequence number and receive time of a delivered record.
    pub(crate) seq: u64,
    pub(crate) received: i64,
    view: OnceLock<Box<ViewCache>>,
    encoded: OnceLock<Box<[u8]>>,
}

impl herald_record {
    /// Wraps `record` (delivered with `seq` and `received`, or 0).
    pub fn boxed(record: Record, seq: u64, received: i64) -> Box<herald_record> {
        Box::new(herald_record {
            record,
            seq,
            received,
            view: OnceLock::new(),
            encoded: OnceLock::new(),
        })
    }

    /// The view, built on first use.
    pub fn view(&self) -> &herald_record_view {
        &self
            .view
            .get_or_init(|| ViewCache::new(&self.record, self.seq, self.received))
            .view
    }

    /// Runs `change` on the record, then drops what was cached from it. Dropped after, not
    /// before: the change may read its argument from the record's own view (setting the
    /// text from `view.text`), which points into the cache.
    pub(crate) fn change<T>(&mut self, change: impl FnOnce(&mut Record) -> T) -> T {
        let changed = change(&mut self.record);
        self.view = OnceLock::new();
        self.encoded = OnceLock::new();
        changed
    }
}

/// Returns the priority with number `value`.
#[inline]
pub fn priority_of(value: c_int) -> Result<Priority, Failure> {
    // A match, not `Priority::from_u8`'s search: every log call converts its priority.
    let known = match value {
        HERALD_TRACE => Some(Priority::Trace),
        HERALD_DELOUSE => Some(Priority::Delouse),
        HERALD_DEBUG => Some(Priority::Debug),
        HERALD_INFO => Some(Priority::Info),
        HERALD_NOTICE => Some(Priority::Notice),
        HERALD_WARNING => Some(Priority::Warning),
        HERALD_ERROR => Some(Priority::Error),
        HERALD_CRITICAL => Some(Priority::Critical),
        HERALD_ALERT => Some(Priority::Alert),
        HERALD_EMERGENCY => Some(Priority::Emergency),
        _ => None,
    };
    known.ok_or_else(|| {
        Failure::invalid(format!(
            "priority {value} is not defined (HERALD_TRACE 1 … HERALD_EMERGENCY 11, without 7)"
        ))
    })
}

fn kind_of(value: c_int) -> Result<Kind, Failure> {
    match value {
        HERALD_KIND_LOG => Ok(Kind::Log),
        HERALD_KIND_MESSAGE => Ok(Kind::Message),
        HERALD_KIND_INFO => Ok(Kind::Info),
        _ => Err(Failure::invalid(format!(
            "kind {value} is not HERALD_KIND_LOG, HERALD_KIND_MESSAGE or HERALD_KIND_INFO"
        ))),
    }
}

/// Checks a subject the way the server will, so that the mistake is named at the call.
pub fn check_subject(subject: &str, what: &str) -> Result<(), Failure> {
    herald_proto::record::check_subject(subject)
        .map_err(|why| Failure::invalid(format!("{what}: {why}")))
}

/// Borrows the record behind `r` for reading.
///
/// # Safety
/// `r` is NULL or a record made by this library and not freed.
pub unsafe fn borrow<'a>(r: *const herald_record) -> Result<&'a herald_record, Failure> {
    // SAFETY: the caller's contract.
    unsafe { r.as_ref() }.ok_or_else(|| Failure::invalid("record is NULL"))
}

/// Borrows the record behind `r` for changing.
///
/// # Safety
/// As [`borrow`], and no other thread uses the record meanwhile.
pub(crate) unsafe fn borrow_mut<'a>(
    r: *mut herald_record,
) -> Result<&'a mut herald_record, Failure> {
    // SAFETY: the caller's contract.
    unsafe { r.as_mut() }.ok_or_else(|| Failure::invalid("record is NULL"))
}

/// Makes a record of `kind` (`HERALD_KIND_*`) about `subject`, priority INFO, stamped with
/// the current time, and stores it in `*out`; free it with `herald_record_free`.
///
/// # Safety
/// `subject` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn herald_record_new(
    kind: c_int,
    subject: *const c_char,
    out: *mut *mut herald_record,
) -> c_int {
    guard(|| {
        let kind = kind_of(kind)?;
        // SAFETY: the caller's contract.
        let subject = unsafe { required(subject, "subject") }?;
        check_subject(subject, "subject")?;
        // SAFETY: the caller's contract.
        unsafe { give(out, herald_record::boxed(Record::new(kind, subject), 0, 0)) }
    })
}

/// Reads the wire encoding of one record (`len` bytes at `data`) into a new record in
/// `*out`. `HERALD_E_INVALID` names what is wrong with bytes that are not a record.
///
/// # Safety
/// `data` points to `len` readable bytes; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn herald_record_decode(
    data: *const u8,
    len: usize,
    out: *mut *mut herald_record,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let data = unsafe { bytes(data, len, "data") }?;
        let record =
            Record::from_bytes(data).map_err(|e| Failure::invalid(format!("not a record: {e}")))?;
        // SAFETY: the caller's contract.
        unsafe { give(out, herald_record::boxed(record, 0, 0)) }
    })
}

/// Gives the record's wire encoding: `*data` points to `*len` bytes owned by the record,
/// valid until it is changed or freed.
///
/// # Safety
/// `r` is NULL or a live record; `data` and `len` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn herald_record_encode(
    r: *const herald_record,
    data: *mut *const u8,
    len: *mut usize,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let r = unsafe { borrow(r) }?;
        if data.is_null() || len.is_null() {
            return Err(Failure::invalid("data or len is NULL"));
        }
        let encoded = r
            .encoded
            .get_or_init(|| r.record.to_bytes().into_boxed_slice());
        // SAFETY: both checked not NULL, writable by the caller's contract.
        unsafe {
            *data = encoded.as_ptr();
            *len = encoded.len();
        }
        Ok(())
    })
}

/// Fills `*out` with the record as plain C data (see `herald_record_view`).
///
/// # Safety
/// `r` is NULL or a live record; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn herald_record_read(
    r: *const herald_record,
    out: *mut herald_record_view,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let r = unsafe { borrow(r) }?;
        out::check(out)?;
        let view = r.view();
        // SAFETY: writable by the caller's contract; the view is plain data (pointers into
        // the record's cache), copied bit for bit.
        unsafe { std::ptr::copy_nonoverlapping(view, out, 1) };
        Ok(())
    })
}

/// Finds the first field called `name` and stores a pointer to it in `*out` (valid as a
/// view is); `HERALD_E_NOT_FOUND` when there is none.
///
/// # Safety
/// `r` is NULL or a live record; `name` is NULL or a NUL-terminated string; `out` is NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn herald_record_field(
    r: *const herald_record,
    name: *const c_char,
    out: *mut *const herald_field,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let (r, name) = unsafe { (borrow(r)?, required(name, "name")?) };
        out::check(out)?;
        let index = r
            .record
            .fields
            .iter()
            .position(|(key, _)| key == name)
            .ok_or_else(|| Failure::new(HERALD_E_NOT_FOUND, format!("no field `{name}`")))?;
        // SAFETY: `index` is within the view's `field_count` fields (one per record field);
        // `out` is writable by the caller's contract.
        unsafe { *out = r.view().fields.add(index) };
        Ok(())
    })
}

/// Frees a record. NULL is fine.
///
/// # Safety
/// `r` is NULL or a record made by this library and not freed yet; nothing uses it after.
#[no_mangle]
pub unsafe extern "C" fn herald_record_free(r: *mut herald_record) {
    if !r.is_null() {
        // SAFETY: made by Box::into_raw in `give`, freed once by the caller's contract.
        drop(unsafe { Box::from_raw(r) });
    }
}

/// Returns the current time in ns since the Unix epoch, as records are stamped.
#[no_mangle]
pub extern "C" fn herald_now() -> i64 {
    herald_proto::time::now_nanos()
}
