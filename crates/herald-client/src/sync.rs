//! The one lock helper every layer uses.

use std::sync::{Mutex, MutexGuard};

/// Locks `mutex`; a panic while it was held leaves plain data behind, which is used as is.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
