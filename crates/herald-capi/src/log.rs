//! The logger: `herald_log`, `herald_log_at`, and `herald_log_site_at` behind the
//! `HERALD_LOG` macro (a static call site whose strings are checked once). A log call
//! stamps the time, compares the priority with the threshold and hands the record to the
//! client's Rust logger: no lock, no I/O, it never waits (when the logger's buffer is full
//! the record is dropped, counted and reported).

use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

use ::herald_client::logger::Source;
use ::herald_client::LoggerError;

use crate::client::{borrow, herald_client};
use crate::record::priority_of;
use crate::status::{guard, Failure};
use crate::strings::optional;

/// The subject a log call names: `None` for NULL or for the logger's own (recognised by its
/// bytes: it was checked when the logger was made), else the name, checked as UTF-8.
///
/// # Safety
/// `subject` is NULL or NUL-terminated and valid for `'a`.
unsafe fn subject_of<'a>(
    c: &herald_client,
    subject: *const c_char,
) -> Result<Option<&'a str>, Failure> {
    if subject.is_null() {
        return Ok(None);
    }
    // SAFETY: not NULL, NUL-terminated and valid for 'a by the caller's contract.
    let bytes = unsafe { CStr::from_ptr(subject) }.to_bytes();
    if bytes == c.logger.subject().as_bytes() {
        return Ok(None);
    }
    std::str::from_utf8(bytes)
        .map(Some)
        .map_err(|e| Failure::invalid(format!("subject is not UTF-8: {e}")))
}

/// A log call's outcome: a subject that cannot be published to is named (the logger has
/// counted the record as dropped too).
fn logged(outcome: Result<(), LoggerError>) -> Result<(), Failure> {
    outcome.map_err(|e| match e {
        LoggerError::InvalidSubject(why) => Failure::invalid(format!("subject: {why}")),
        other => Failure::invalid(other),
    })
}

/// Returns 1 if a record at `priority` would be sent (at or above the threshold), else 0
/// (also for a NULL client or an unknown priority). `HERALD_LOG` calls it first and does
/// not format below the threshold.
///
/// # Safety
/// `c` is NULL or a live client.
#[no_mangle]
pub unsafe extern "C" fn herald_log_enabled(c: *const herald_client, priority: c_int) -> c_int {
    // SAFETY: the caller's contract.
    let Some(c) = (unsafe { c.as_ref() }) else {
        return 0;
    };
    priority_of(priority).map_or(0, |p| c_int::from(c.logger.enabled(p)))
}

/// Logs `text` at `priority` on `subject` (NULL: the logger's own subject, see `herald_connect`) through the client's
/// logger, with this host, process and thread as origin. Never blocks. Records below the
/// threshold go to the logger's flight recorder (sent as context before a later ERROR). A
/// text that is not UTF-8 is sent with U+FFFD in place of each bad sequence (a log call never
/// loses its record for its text).
///
/// # Safety
/// `c` is NULL or a live client; `subject` and `text` NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn herald_log(
    c: *const herald_client,
    priority: c_int,
    subject: *const c_char,
    text: *const c_char,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let c = unsafe { borrow(c)? };
        // SAFETY: the caller's contract.
        let (subject, text) = unsafe {
            (
                subject_of(c, subject)?,
                crate::strings::required_bytes(text, "text")?,
            )
        };
        let priority = priority_of(priority)?;
        logged(
            c.logger
                .log_bytes_from(priority, subject, text, Source::default()),
        )
    })
}

/// Logs `len` bytes of `text` at `priority` on `subject` (NULL: the logger's own subject, see `herald_connect`), made at
/// `file`:`line` in function `routine` (`herald_log_site_at` checks those once per call
/// site instead of at every call). `file` and `routine` must stay valid and unchanged as
/// long as the client lives — string literals, `__FILE__` and `__func__` are — because the
/// logger keeps them without copying.
/// A text that is not UTF-8 is sent with U+FFFD in place of each bad sequence.
///
/// # Safety
/// `c` is NULL or a live client; `subject` NULL or NUL-terminated; `file` and `routine`
/// NULL or NUL-terminated and valid for the client's life; `text` points to `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn herald_log_at(
    c: *const herald_client,
    priority: c_int,
    subject: *const c_char,
    file: *const c_char,
    line: u32,
    routine: *const c_char,
    text: *const c_char,
    len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract: `file` and `routine` outlive the client, so
        // borrowing them as 'static is sound for as long as the logger can use them.
        let (file, routine): (Option<&'static str>, Option<&'static str>) =
            unsafe { (optional(file, "file")?, optional(routine, "routine")?) };
        // SAFETY: the caller's contract.
        let c = unsafe { borrow(c)? };
        // SAFETY: the caller's contract.
        let (subject, text) = unsafe {
            (
                subject_of(c, subject)?,
                crate::strings::bytes(text.cast(), len, "text")?,
            )
        };
        let priority = priority_of(priority)?;
        let source = Source {
            file: file.unwrap_or_default(),
            line,
            routine: routine.unwrap_or_default(),
        };
        logged(c.logger.log_bytes_from(priority, subject, text, source))
    })
}

/// A `HERALD_LOG` call site: where it is in the program, its strings checked once. The
/// macro makes one `static` per call and fills `file`, `routine` and `line`; `checked` is
/// NULL until the library first logs from the site and then points at what it checked.
/// `file` and `routine` must stay valid and unchanged for the process's life (`__FILE__`
/// and `__func__` are).
#[repr(C)]
pub struct herald_log_site {
    /// The source file (`__FILE__`), or NULL.
    pub file: *const c_char,
    /// The function (`__func__`), or NULL.
    pub routine: *const c_char,
    /// The line (`__LINE__`).
    pub line: u32,
    /// The library's: NULL in a new site.
    pub checked: *mut c_void,
}

/// Returns the site's file, line and routine, checked the first time and kept.
///
/// # Safety
/// `site` points to a live `herald_log_site` whose `checked` only this library writes, and
/// whose strings are NULL or NUL-terminated and valid for the process's life.
unsafe fn checked_site(site: *mut herald_log_site) -> Result<&'static Source, Failure> {
    // SAFETY: a live site by the caller's contract; `checked` is a pointer-sized, aligned
    // field written only through this atomic view.
    let slot = unsafe { AtomicPtr::<Source>::from_ptr(ptr::addr_of_mut!((*site).checked).cast()) };
    let seen = slot.load(Ordering::Acquire);
    if !seen.is_null() {
        // SAFETY: only a `Source` leaked below is ever stored in the slot.
        return Ok(unsafe { &*seen });
    }
    // SAFETY: the caller's contract: the strings live as long as the process.
    let (file, routine, line): (Option<&'static str>, Option<&'static str>, u32) = unsafe {
        (
            optional((*site).file, "file")?,
            optional((*site).routine, "routine")?,
            (*site).line,
        )
    };
    // One per call site, for the process's life: the site is static too.
    let checked: &'static mut Source = Box::leak(Box::new(Source {
        file: file.unwrap_or_default(),
        line,
        routine: routine.unwrap_or_default(),
    }));
    let checked = ptr::from_mut(checked);
    match slot.compare_exchange(
        ptr::null_mut(),
        checked,
        Ordering::AcqRel,
        Ordering::Acquire,
    ) {
        // SAFETY: just leaked, never freed.
        Ok(_) => Ok(unsafe { &*checked }),
        Err(winner) => {
            // Another thread checked the site first: its `Source` is the site's, and this
            // one, never shared, is freed.
            // SAFETY: `checked` came from `Box::leak` above and nothing else points to it.
            drop(unsafe { Box::from_raw(checked) });
            // SAFETY: only a leaked `Source` is ever stored in the slot.
            Ok(unsafe { &*winner })
        }
    }
}

/// Logs `len` bytes of `text` at `priority` on `subject` (NULL: the logger's own subject)
/// from call site `site`: what `HERALD_LOG` calls after formatting. The site's file and
/// routine are checked once, the first time; a subject equal to the logger's own is
/// recognised without checking it again. A text that is not UTF-8 is sent with U+FFFD in
/// place of each bad sequence (the check is on the logger's background side).
///
/// # Safety
/// `c` is NULL or a live client; `subject` NULL or NUL-terminated; `site` NULL or a live
/// site as `herald_log_site` says; `text` points to `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn herald_log_site_at(
    c: *const herald_client,
    priority: c_int,
    subject: *const c_char,
    site: *mut herald_log_site,
    text: *const c_char,
    len: usize,
) -> c_int {
    guard(|| {
        if site.is_null() {
            return Err(Failure::invalid("site is NULL"));
        }
        // SAFETY: the caller's contract.
        let c = unsafe { borrow(c)? };
        // SAFETY: the caller's contract.
        let (source, subject, text) = unsafe {
            (
                checked_site(site)?,
                subject_of(c, subject)?,
                crate::strings::bytes(text.cast(), len, "text")?,
            )
        };
        let priority = priority_of(priority)?;
        logged(c.logger.log_bytes_from(priority, subject, text, *source))
    })
}
