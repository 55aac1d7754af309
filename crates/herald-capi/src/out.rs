//! Out-parameters: checked for NULL before any work is done, written once it succeeded.

use crate::status::Failure;

/// Fails for a NULL out-parameter, before a call does anything it could not hand back.
pub fn check<T>(out: *mut T) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::invalid("out is NULL"));
    }
    Ok(())
}

/// Writes `value` through `out`.
///
/// # Safety
/// `out` is NULL or points to writable storage for a `T`.
pub unsafe fn put<T>(out: *mut T, value: T) -> Result<(), Failure> {
    check(out)?;
    // SAFETY: not NULL, writable by the caller's contract.
    unsafe { out.write(value) };
    Ok(())
}

/// Hands `value` to the program through `out`; the program frees it with the matching
/// `herald_*_free` (or close) function.
///
/// # Safety
/// As [`put`].
pub unsafe fn give<T>(out: *mut *mut T, value: Box<T>) -> Result<(), Failure> {
    // Checked before the box is let go of, so that a NULL `out` frees it.
    check(out)?;
    // SAFETY: the caller's contract.
    unsafe { put(out, Box::into_raw(value)) }
}
