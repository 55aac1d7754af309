//! C strings coming in: checked for NULL and UTF-8, borrowed for the call.

use std::ffi::{c_char, CStr};

use crate::status::Failure;

/// Borrows the NUL-terminated string at `ptr` for the call; `what` names the argument in
/// the error.
///
/// # Safety
/// `ptr` is NULL or points to a NUL-terminated string that stays valid and unchanged for
/// `'a`.
pub unsafe fn required<'a>(ptr: *const c_char, what: &str) -> Result<&'a str, Failure> {
    // SAFETY: the caller's contract; NULL is handled by `optional`.
    unsafe { optional(ptr, what) }?.ok_or_else(|| Failure::invalid(format!("{what} is NULL")))
}

/// As [`required`], with NULL meaning none.
///
/// # Safety
/// As [`required`].
pub unsafe fn optional<'a>(ptr: *const c_char, what: &str) -> Result<Option<&'a str>, Failure> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: not NULL, and NUL-terminated and valid for 'a by the caller's contract.
    let bytes = unsafe { CStr::from_ptr(ptr) }.to_bytes();
    std::str::from_utf8(bytes)
        .map(Some)
        .map_err(|e| Failure::invalid(format!("{what} is not UTF-8: {e}")))
}

/// The bytes of a NUL-terminated string that must not be NULL (not checked as UTF-8).
///
/// # Safety
/// `ptr` is NULL or NUL-terminated and valid for `'a`.
pub unsafe fn required_bytes<'a>(ptr: *const c_char, what: &str) -> Result<&'a [u8], Failure> {
    if ptr.is_null() {
        return Err(Failure::invalid(format!("{what} is NULL")));
    }
    // SAFETY: not NULL, NUL-terminated and valid for 'a by the caller's contract.
    Ok(unsafe { CStr::from_ptr(ptr) }.to_bytes())
}

/// Borrows `len` bytes at `ptr` (NULL is fine when `len` is 0).
///
/// # Safety
/// `ptr` points to `len` readable bytes valid for `'a`, or `len` is 0.
pub unsafe fn bytes<'a>(ptr: *const u8, len: usize, what: &str) -> Result<&'a [u8], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Failure::invalid(format!(
            "{what} is NULL with length {len}"
        )));
    }
    // SAFETY: not NULL, `len` readable bytes by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// Borrows `len` bytes of UTF-8 text at `ptr` (not NUL-terminated; NULL when `len` is 0).
///
/// # Safety
/// As [`bytes`].
pub unsafe fn text<'a>(ptr: *const c_char, len: usize, what: &str) -> Result<&'a str, Failure> {
    // SAFETY: the caller's contract.
    let bytes = unsafe { bytes(ptr.cast(), len, what) }?;
    std::str::from_utf8(bytes).map_err(|e| Failure::invalid(format!("{what} is not UTF-8: {e}")))
}

/// A NUL-terminated copy of `bytes` (interior NULs stay; C sees the text up to the first).
pub fn terminated(bytes: &[u8]) -> Box<[u8]> {
    let mut owned = Vec::with_capacity(bytes.len() + 1);
    owned.extend_from_slice(bytes);
    owned.push(0);
    owned.into_boxed_slice()
}
