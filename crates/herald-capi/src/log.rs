//! The logger: `herald_log`, `herald_log_at`, and `herald_log_site_at` behind the
//! `HERALD_LOG` macro (a static call site whose strings are checked once). A log call
//! stamps the time, compares the priority with the threshold and hands the record to the
//! client's Rust logger: no lock, no I/O, it never waits (when the logger's buffer is full
//! the record is dropped, counted and reported).

use std::ffi::{c_char, c_int, CStr};

use ::herald_client::logger::Source;
use ::herald_client::LoggerError;
use herald_proto::Priority;

use crate::client::{borrow, herald_client};
use crate::record::priority_of;
use crate::site::{checked_site, herald_log_site, Site};
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
    // The logger's own subject, named again (as `HERALD_LOG(c, p, "SUBJECT", ...)` calls
    // often do): recognised in one pass, without measuring the string first.
    let own = c.logger.subject().as_bytes();
    // SAFETY: NUL-terminated by the caller's contract, and the loop stops at the first
    // byte that differs: a NUL before the end of `own` differs from `own`'s byte (a subject
    // has no NUL), so no byte past the string's end is read.
    let same = unsafe {
        own.iter()
            .enumerate()
            .all(|(i, &b)| *subject.add(i).cast::<u8>() == b)
            && *subject.add(own.len()) == 0
    };
    if same {
        return Ok(None);
    }
    // SAFETY: not NULL, NUL-terminated and valid for 'a by the caller's contract.
    let bytes = unsafe { CStr::from_ptr(subject) }.to_bytes();
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
        // SAFETY: the caller's contract.
        let call = unsafe { SiteCall::new(c, priority, subject, site, text.cast(), len, "text")? };
        logged(call.client.logger.log_bytes_from(
            call.priority,
            call.subject,
            call.bytes,
            call.site.source,
        ))
    })
}

/// What a log call from a call site names, checked.
struct SiteCall<'a> {
    client: &'a herald_client,
    priority: Priority,
    subject: Option<&'a str>,
    site: &'static Site,
    bytes: &'a [u8],
}

impl<'a> SiteCall<'a> {
    /// Checks the arguments of a call from `site` with `len` bytes at `bytes` (named `what`).
    ///
    /// # Safety
    /// As `herald_log_site_at`'s.
    unsafe fn new(
        c: *const herald_client,
        priority: c_int,
        subject: *const c_char,
        site: *mut herald_log_site,
        bytes: *const u8,
        len: usize,
        what: &str,
    ) -> Result<SiteCall<'a>, Failure> {
        if site.is_null() {
            return Err(Failure::invalid("site is NULL"));
        }
        // SAFETY: the caller's contract.
        let client = unsafe { borrow(c)? };
        // SAFETY: the caller's contract.
        let (site, subject, bytes) = unsafe {
            (
                checked_site(site)?,
                subject_of(client, subject)?,
                crate::strings::bytes(bytes, len, what)?,
            )
        };
        let priority = priority_of(priority)?;
        Ok(SiteCall {
            client,
            priority,
            subject,
            site,
            bytes,
        })
    }
}

/// Logs from call site `site` at `priority` on `subject` (NULL: the logger's own subject)
/// the text the site's format makes with the `len` bytes of arguments at `args`, captured
/// with the plan `herald_log_site_plan` gave for the site (herald_logf.h's
/// `herald_fmt_capture`): what `HERALD_LOG` calls for a format that is a string literal.
/// The text is made on the logger's background thread, exactly as printf would make it.
/// Arguments longer than `HERALD_LOG_ARGS_BYTES` are kept on the heap. A site without a
/// plan is `HERALD_E_INVALID`.
///
/// # Safety
/// `c` is NULL or a live client; `subject` NULL or NUL-terminated; `site` NULL or a live
/// site as `herald_log_site` says; `args` points to `len` bytes captured with the site's
/// plan.
#[no_mangle]
pub unsafe extern "C" fn herald_log_site_args(
    c: *const herald_client,
    priority: c_int,
    subject: *const c_char,
    site: *mut herald_log_site,
    args: *const u8,
    len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let call = unsafe { SiteCall::new(c, priority, subject, site, args, len, "args")? };
        let plan = call.site.plan().ok_or_else(|| {
            Failure::invalid("the site has no plan: herald_log_site_plan gave none")
        })?;
        logged(call.client.logger.log_deferred(
            call.priority,
            call.subject,
            call.site.source,
            plan,
            call.bytes,
        ))
    })
}
