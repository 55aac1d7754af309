//! `HERALD_LOG`'s call sites: a `static herald_log_site` per call, whose file and routine
//! the library checks once, and whose format, when it is a string literal, it reads once
//! into a plan (`plan`) so that later calls capture their arguments instead of formatting.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;

use ::herald_client::logger::Source;

use crate::plan::{herald_log_plan, Plan};
use crate::status::{report, Failure};
use crate::strings::optional;

/// A `HERALD_LOG` call site: where it is in the program, its strings checked once. The
/// macro makes one `static` per call and fills `file`, `routine`, `line` and `deferrable`;
/// `checked` is NULL until the library first logs from the site and then points at what it
/// checked. `file` and `routine` must stay valid and unchanged for the process's life
/// (`__FILE__` and `__func__` are). A site of your own is best written with designated
/// initializers, the rest left zero: `{.file = __FILE__, .routine = __func__, .line =
/// __LINE__}` formats on the calling thread.
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
    /// 1 if every call from the site passes the same string literal as its format (the
    /// macro asks the compiler): the library may then read the format once and format on
    /// the logger's background thread. 0 otherwise.
    pub deferrable: c_int,
    /// The library's: NULL in a new site, then the plan of its format, if it has one (so
    /// that `HERALD_LOG` need not ask `herald_log_site_plan` again).
    pub plan: *const herald_log_plan,
}

/// What the library keeps for a site: its checked source, and the plan of its format once
/// asked for (`None` if the format cannot be deferred).
pub(crate) struct Site {
    pub(crate) source: Source,
    plan: OnceLock<Option<Plan>>,
}

impl Site {
    /// The site's plan, once made.
    pub(crate) fn plan(&'static self) -> Option<&'static Plan> {
        self.plan.get().and_then(Option::as_ref)
    }
}

/// Returns the site's file, line and routine, checked the first time and kept.
///
/// # Safety
/// `site` points to a live `herald_log_site` whose `checked` only this library writes, and
/// whose strings are NULL or NUL-terminated and valid for the process's life.
pub(crate) unsafe fn checked_site(site: *mut herald_log_site) -> Result<&'static Site, Failure> {
    // SAFETY: a live site by the caller's contract; `checked` is a pointer-sized, aligned
    // field written only through this atomic view.
    let slot = unsafe { AtomicPtr::<Site>::from_ptr(ptr::addr_of_mut!((*site).checked).cast()) };
    let seen = slot.load(Ordering::Acquire);
    if !seen.is_null() {
        // SAFETY: only a `Site` leaked below is ever stored in the slot.
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
    let checked: &'static mut Site = Box::leak(Box::new(Site {
        source: Source {
            file: file.unwrap_or_default(),
            line,
            routine: routine.unwrap_or_default(),
        },
        plan: OnceLock::new(),
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
            // Another thread checked the site first: its `Site` is the site's, and this
            // one, never shared, is freed.
            // SAFETY: `checked` came from `Box::leak` above and nothing else points to it.
            drop(unsafe { Box::from_raw(checked) });
            // SAFETY: only a leaked `Site` is ever stored in the slot.
            Ok(unsafe { &*winner })
        }
    }
}

/// Returns the plan of `format` for the call site `site`: what `HERALD_LOG` captures of a
/// call's arguments (herald_logf.h's `herald_fmt_capture`) before `herald_log_site_args`.
/// The site's file and routine are checked and the format read the first time; later calls
/// cost one comparison. Returns NULL (format on the calling thread, `herald_logf_site`'s
/// other path) for a NULL argument, a site whose `deferrable` is 0, a format that is not
/// the one the plan was made from, one the library cannot render exactly as printf (see
/// docs/c-api.md), or a site whose file or routine is not UTF-8.
///
/// # Safety
/// `site` NULL or a live site as `herald_log_site` says; `format` NULL or NUL-terminated
/// and, when the site is deferrable, the same unchanging string at every call.
#[no_mangle]
pub unsafe extern "C" fn herald_log_site_plan(
    site: *mut herald_log_site,
    format: *const c_char,
) -> *const herald_log_plan {
    // SAFETY: the caller's contract.
    if site.is_null() || format.is_null() || unsafe { (*site).deferrable } == 0 {
        return ptr::null();
    }
    // SAFETY: the caller's contract.
    let Ok(checked) = (unsafe { checked_site(site) }) else {
        return ptr::null();
    };
    let plan = checked.plan.get_or_init(|| {
        // SAFETY: not NULL, NUL-terminated by the caller's contract.
        let bytes = unsafe { CStr::from_ptr(format) }.to_bytes();
        Plan::new(bytes, format)
    });
    match plan {
        Some(plan) if plan.c.format == format => {
            let plan = ptr::from_ref(&plan.c);
            // SAFETY: a live site by the caller's contract; `plan` is a pointer-sized,
            // aligned field written only through this atomic view (with the same plan every
            // time), and read by herald_logf.h with an atomic load.
            unsafe {
                AtomicPtr::<herald_log_plan>::from_ptr(ptr::addr_of_mut!((*site).plan).cast())
            }
            .store(plan.cast_mut(), Ordering::Release);
            plan
        }
        _ => ptr::null(),
    }
}

/// Renders, as the logger's background thread does, the `len` bytes of arguments at `args`
/// that `herald_fmt_capture` captured with `plan`: writes at most `cap - 1` bytes and a NUL
/// to `out` (nothing if `cap` is 0) and returns the length of the whole text, as snprintf.
/// For tests and tools; a log call needs none of it. Returns `HERALD_E_INVALID` (and the
/// message in `herald_last_error`) for a NULL plan, or NULL `args` or `out` with a length.
///
/// # Safety
/// `plan` NULL or returned by `herald_log_site_plan`; `args` points to `len` bytes; `out`
/// to `cap` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn herald_log_plan_render(
    plan: *const herald_log_plan,
    args: *const u8,
    len: usize,
    out: *mut c_char,
    cap: usize,
) -> c_int {
    if plan.is_null() {
        return report(Failure::invalid("plan is NULL"));
    }
    if out.is_null() && cap > 0 {
        return report(Failure::invalid(format!("out is NULL with capacity {cap}")));
    }
    // SAFETY: `args` points to `len` bytes by the caller's contract.
    let args = match unsafe { crate::strings::bytes(args, len, "args") } {
        Ok(args) => args,
        Err(failure) => return report(failure),
    };
    // SAFETY: a plan pointer from `herald_log_site_plan` points at the `c` field, the first
    // of a `#[repr(C)]` `Plan` that is never freed.
    let plan = unsafe { &*plan.cast::<Plan>() };
    let mut text = Vec::new();
    crate::render::render(plan, args, &mut text);
    if cap > 0 {
        let n = text.len().min(cap - 1);
        // SAFETY: `out` has `cap` writable bytes by the caller's contract; `n + 1 <= cap`.
        unsafe {
            ptr::copy_nonoverlapping(text.as_ptr(), out.cast::<u8>(), n);
            *out.add(n) = 0;
        }
    }
    c_int::try_from(text.len()).unwrap_or(c_int::MAX)
}
