//! What one log call leaves in the buffer: the caller's part of a record.
//!
//! An [`Entry`] holds no pointer into state that other threads write: short texts and the
//! thread name are copied into the entry itself, the subject is a number in the logger's
//! [`SubjectTable`](super::subjects::SubjectTable), and the source location points at
//! `'static` data. So a log call allocates nothing for a text up to
//! [`INLINE_TEXT_BYTES`] without fields, touches no reference count, and the background
//! side frees nothing that the logging thread's allocator has to take back under its lock.

use std::fmt;

use herald_proto::value::Field;
use herald_proto::Priority;

/// Longest text (in bytes) kept inside the entry; longer texts go to the heap.
pub const INLINE_TEXT_BYTES: usize = 200;
/// Longest thread name (in bytes) kept on a record; longer names are cut at a character.
pub const THREAD_NAME_BYTES: usize = 40;

/// A string of at most `N` bytes (`N` < 256) stored in place: UTF-8 when made from `&str`s
/// (thread names), any bytes when made with [`InlineStr::push_bytes`] (a C program's text,
/// read lossily by the background side).
#[derive(Clone, Copy)]
pub(crate) struct InlineStr<const N: usize> {
    len: u8,
    bytes: [u8; N],
}

impl<const N: usize> InlineStr<N> {
    const EMPTY: Self = InlineStr {
        len: 0,
        bytes: [0; N],
    };

    /// Returns `text` if it fits, else `None`.
    fn new(text: &str) -> Option<Self> {
        Self::from_bytes(text.as_bytes())
    }

    /// Returns `bytes` if they fit, else `None`.
    fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let mut inline = Self::EMPTY;
        inline.push_bytes(bytes).then_some(inline)
    }

    /// Returns `text` cut to the longest prefix of whole characters that fits.
    fn truncated(text: &str) -> Self {
        let mut end = text.len().min(N);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        Self::new(&text[..end]).unwrap_or(Self::EMPTY)
    }

    /// Appends `text` if it fits; leaves `self` unchanged and returns false if not.
    fn push(&mut self, text: &str) -> bool {
        self.push_bytes(text.as_bytes())
    }

    /// Appends `bytes` if they fit; leaves `self` unchanged and returns false if not.
    fn push_bytes(&mut self, bytes: &[u8]) -> bool {
        debug_assert!(N <= usize::from(u8::MAX));
        let start = usize::from(self.len);
        let end = start + bytes.len();
        if end > N {
            return false;
        }
        self.bytes[start..end].copy_from_slice(bytes);
        // `end <= N <= 255`, checked above.
        self.len = end as u8;
        true
    }

    /// Returns the string (empty if it was made from bytes that are not UTF-8: use
    /// [`InlineStr::as_bytes`] for those).
    pub(crate) fn as_str(&self) -> &str {
        std::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

/// The text of an entry: in place when short, on the heap when long. Its bytes are UTF-8
/// unless a C program gave others; the background side reads it lossily ([`Text::to_str`]).
pub(crate) enum Text {
    Inline(InlineStr<INLINE_TEXT_BYTES>),
    Heap(Vec<u8>),
}

impl Text {
    /// Copies `text`.
    pub(crate) fn new(text: &str) -> Text {
        Text::from_bytes(text.as_bytes())
    }

    /// Copies `bytes`, which should be UTF-8 (others become U+FFFD when the record is made).
    pub(crate) fn from_bytes(bytes: &[u8]) -> Text {
        match InlineStr::from_bytes(bytes) {
            Some(inline) => Text::Inline(inline),
            None => Text::Heap(bytes.to_vec()),
        }
    }

    /// Formats `args`, in place while the result fits.
    pub(crate) fn from_args(args: fmt::Arguments<'_>) -> Text {
        if let Some(text) = args.as_str() {
            return Text::new(text);
        }
        let mut text = Text::Inline(InlineStr::EMPTY);
        // Writing to a `Text` cannot fail; a `Display` impl that fails leaves a partial text.
        let _ = fmt::write(&mut text, args);
        text
    }

    /// Returns the text, each sequence of bytes that is not UTF-8 replaced by U+FFFD.
    pub(crate) fn to_str(&self) -> std::borrow::Cow<'_, str> {
        let bytes = match self {
            Text::Inline(inline) => inline.as_bytes(),
            Text::Heap(bytes) => bytes,
        };
        String::from_utf8_lossy(bytes)
    }
}

impl fmt::Write for Text {
    fn write_str(&mut self, part: &str) -> fmt::Result {
        match self {
            Text::Inline(inline) => {
                if !inline.push(part) {
                    let held = inline.as_bytes();
                    let mut heap = Vec::with_capacity(2 * (held.len() + part.len()));
                    heap.extend_from_slice(held);
                    heap.extend_from_slice(part.as_bytes());
                    *self = Text::Heap(heap);
                }
            }
            Text::Heap(text) => text.extend_from_slice(part.as_bytes()),
        }
        Ok(())
    }
}

/// The subject of an entry.
#[derive(Debug)]
pub(crate) enum SubjectRef {
    /// An id in the logger's subject table: the usual case, no allocation.
    Id(u32),
    /// A subject that did not fit the table.
    Owned(Box<str>),
}

/// Where in the program a log call was made. Empty strings and line 0 mean unknown.
/// The strings are the program's own (source file names and function names are static in
/// every language that logs through this crate), so a log call copies none of them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Source {
    /// The source file.
    pub file: &'static str,
    /// The line in it.
    pub line: u32,
    /// The function or method.
    pub routine: &'static str,
}

impl Source {
    /// Returns the location of the caller of the `#[track_caller]` function this runs in.
    #[track_caller]
    pub fn caller() -> Source {
        let location = std::panic::Location::caller();
        Source {
            file: location.file(),
            line: location.line(),
            routine: "",
        }
    }
}

thread_local! {
    /// This thread's name, worked out once per thread.
    static THREAD_NAME: InlineStr<THREAD_NAME_BYTES> =
        InlineStr::truncated(&crate::origin::thread_name());
}

/// Returns this thread's name (or `ThreadId(n)`), cut to [`THREAD_NAME_BYTES`].
fn thread_name() -> InlineStr<THREAD_NAME_BYTES> {
    // During thread teardown the thread-local may be gone; the record then has no thread.
    THREAD_NAME
        .try_with(|name| *name)
        .unwrap_or(InlineStr::EMPTY)
}

/// One log call, waiting for the background side.
pub(crate) struct Entry {
    /// When the call was made: a stamp of the logger's clock (see `clock`), turned into
    /// ns since the epoch by the background side.
    pub(crate) time: i64,
    pub(crate) priority: Priority,
    pub(crate) subject: SubjectRef,
    pub(crate) text: Text,
    pub(crate) fields: Vec<Field>,
    pub(crate) thread: InlineStr<THREAD_NAME_BYTES>,
    pub(crate) source: Source,
    /// Flight-recorder entries sent just before this one (empty unless it triggered).
    pub(crate) context: Vec<Entry>,
}

impl Entry {
    /// Makes an entry stamped `time` (the logger's clock) on this thread.
    #[inline]
    pub(crate) fn new(
        time: i64,
        priority: Priority,
        subject: SubjectRef,
        text: Text,
        fields: Vec<Field>,
        source: Source,
    ) -> Entry {
        Entry {
            time,
            priority,
            subject,
            text,
            fields,
            thread: thread_name(),
            source,
            context: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_texts_stay_inline_and_long_ones_move_to_the_heap() {
        let short = "x".repeat(INLINE_TEXT_BYTES);
        assert!(matches!(Text::new(&short), Text::Inline(_)));
        assert_eq!(Text::new(&short).to_str(), short);
        let long = "x".repeat(INLINE_TEXT_BYTES + 1);
        assert!(matches!(Text::new(&long), Text::Heap(_)));
        assert_eq!(Text::new(&long).to_str(), long);
        // Bytes that are not UTF-8 (from C) are kept, and read with U+FFFD in their place.
        assert_eq!(
            Text::from_bytes(b"bad \xff byte").to_str(),
            "bad \u{fffd} byte"
        );
        let long_bad = [b"x".repeat(INLINE_TEXT_BYTES), vec![0xfe]].concat();
        assert!(Text::from_bytes(&long_bad).to_str().ends_with('\u{fffd}'));
    }

    #[test]
    fn formatting_spills_to_the_heap_when_the_text_grows() {
        let value = 42;
        let text = Text::from_args(format_args!("value {value}"));
        assert!(matches!(text, Text::Inline(_)));
        assert_eq!(text.to_str(), "value 42");
        let long = "é".repeat(INLINE_TEXT_BYTES);
        let text = Text::from_args(format_args!("{value} {long}"));
        assert_eq!(text.to_str(), format!("42 {long}"));
    }

    #[test]
    fn an_entry_stays_small() {
        // Every log call moves its entry a few times; keep it within six cache lines.
        assert!(
            std::mem::size_of::<Entry>() <= 384,
            "{}",
            std::mem::size_of::<Entry>()
        );
    }

    #[test]
    fn thread_names_are_cut_at_a_character_boundary() {
        let name = format!("a{}", "é".repeat(THREAD_NAME_BYTES));
        let cut = InlineStr::<THREAD_NAME_BYTES>::truncated(&name);
        assert_eq!(cut.as_str().len(), THREAD_NAME_BYTES - 1);
        assert!(name.starts_with(cut.as_str()));
        let named = std::thread::Builder::new()
            .name("worker-7".into())
            .spawn(|| thread_name().as_str().to_string())
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(named, "worker-7");
    }
}
