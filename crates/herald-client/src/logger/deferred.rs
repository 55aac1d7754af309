//! Texts made by the background side: a log call that hands over the arguments of its text
//! instead of the text ([`Logger::log_deferred`](super::Logger::log_deferred)).
//!
//! Formatting is most of what a printf-style log call costs (glibc's `vsnprintf` takes
//! about as long as the rest of the call). C's `HERALD_LOG` therefore copies its arguments
//! (numbers as they are, strings' bytes) and the background side turns them into the text,
//! as deferred-formatting loggers do. What turns them into text is a [`DeferredText`] that
//! lives as long as the program: the C API makes one per call site.

/// Turns the arguments a log call captured into its text, on the background side.
pub trait DeferredText: Send + Sync {
    /// Appends the text `args` make to `out`. The bytes should be UTF-8; any that are not
    /// become U+FFFD in the record.
    fn render(&self, args: &[u8], out: &mut Vec<u8>);
}
