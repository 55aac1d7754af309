//! The logger: `herald_log`, and `herald_log_at` behind the `HERALD_LOG` macro. A log call
//! stamps the time, compares the priority with the threshold and hands the record to the
//! client's Rust logger: no lock, no I/O, it never waits (when the logger's buffer is full
//! the record is dropped, counted and reported).

use std::ffi::{c_char, c_int};

use ::herald_client::logger::Source;
use ::herald_client::LoggerError;

use crate::client::{borrow, herald_client};
use crate::record::priority_of;
use crate::status::{guard, Failure};
use crate::strings::optional;

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
/// threshold go to the logger's flight recorder (sent as context before a later ERROR).
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
        let (c, subject, text) = unsafe {
            (
                borrow(c)?,
                optional(subject, "subject")?,
                crate::strings::required(text, "text")?,
            )
        };
        let priority = priority_of(priority)?;
        logged(
            c.logger
                .log_from(priority, subject, text, Source::default()),
        )
    })
}

/// Logs `len` bytes of `text` at `priority` on `subject` (NULL: the logger's own subject, see `herald_connect`), made at
/// `file`:`line` in function `routine`: what `HERALD_LOG` calls after formatting. `file`
/// and `routine` must stay valid and unchanged as long as the client lives — string
/// literals, `__FILE__` and `__func__` are — because the logger keeps them without copying.
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
        let (c, subject, text) = unsafe {
            (
                borrow(c)?,
                optional(subject, "subject")?,
                crate::strings::text(text, len, "text")?,
            )
        };
        let priority = priority_of(priority)?;
        let source = Source {
            file: file.unwrap_or_default(),
            line,
            routine: routine.unwrap_or_default(),
        };
        logged(c.logger.log_from(priority, subject, text, source))
    })
}
