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

use super::deferred::DeferredText;

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

/// The text of an entry: its bytes, in place when short and on the heap when long, and,
/// for a deferred text (see `deferred`), what makes the text from them on the background
/// side. The bytes are UTF-8 unless a C program gave others; the background side reads
/// them lossily ([`Text::write_to`]).
///
/// A log call makes its entry with an empty text and fills it where it lies
/// ([`Text::set_bytes`] and friends): an entry is several cache lines, and a text made
/// apart and moved into it cost two more copies of it per call.
pub(crate) struct Text {
    render: Option<&'static dyn DeferredText>,
    bytes: Bytes,
}

enum Bytes {
    Inline(InlineStr<INLINE_TEXT_BYTES>),
    Heap(Vec<u8>),
}

impl Text {
    /// No text.
    pub(crate) const EMPTY: Text = Text {
        render: None,
        bytes: Bytes::Inline(InlineStr::EMPTY),
    };

    /// Copies `text`.
    #[cfg(test)]
    pub(crate) fn new(text: &str) -> Text {
        Text::from_bytes(text.as_bytes())
    }

    /// Copies `bytes`.
    #[cfg(test)]
    pub(crate) fn from_bytes(bytes: &[u8]) -> Text {
        let mut text = Text::EMPTY;
        text.set_bytes(bytes);
        text
    }

    /// Makes the text `bytes`, which should be UTF-8 (others become U+FFFD when the record
    /// is made).
    #[inline]
    pub(crate) fn set_bytes(&mut self, bytes: &[u8]) {
        self.render = None;
        self.put(bytes);
    }

    /// Makes the text what `render` makes of `args`, on the background side.
    #[inline]
    pub(crate) fn set_deferred(&mut self, render: &'static dyn DeferredText, args: &[u8]) {
        self.render = Some(render);
        self.put(args);
    }

    /// Makes the text `args` formatted, in place while the result fits.
    pub(crate) fn set_args(&mut self, args: fmt::Arguments<'_>) {
        if let Some(text) = args.as_str() {
            return self.set_bytes(text.as_bytes());
        }
        self.set_bytes(b"");
        // Writing to a `Text` cannot fail; a `Display` impl that fails leaves a partial text.
        let _ = fmt::write(self, args);
    }

    /// Replaces the bytes with `bytes`: in place if they fit.
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        if let Bytes::Inline(inline) = &mut self.bytes {
            inline.len = 0;
            if inline.push_bytes(bytes) {
                return;
            }
        }
        self.bytes = Bytes::Heap(bytes.to_vec());
    }

    fn as_bytes(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Inline(inline) => inline.as_bytes(),
            Bytes::Heap(bytes) => bytes,
        }
    }

    /// Returns the text, each sequence of bytes that is not UTF-8 replaced by U+FFFD.
    #[cfg(test)]
    pub(crate) fn to_str(&self) -> String {
        let mut text = String::new();
        self.write_to(&mut text, &mut Vec::new());
        text
    }

    /// Replaces `target` with the text (bad UTF-8 as U+FFFD); `scratch` is room for a
    /// deferred text to be rendered into, kept between calls.
    pub(crate) fn write_to(&self, target: &mut String, scratch: &mut Vec<u8>) {
        let bytes = match self.render {
            None => self.as_bytes(),
            Some(render) => {
                scratch.clear();
                render.render(self.as_bytes(), scratch);
                scratch
            }
        };
        target.clear();
        match std::str::from_utf8(bytes) {
            Ok(text) => target.push_str(text),
            Err(_) => target.push_str(&String::from_utf8_lossy(bytes)),
        }
    }
}

impl fmt::Write for Text {
    fn write_str(&mut self, part: &str) -> fmt::Result {
        match &mut self.bytes {
            Bytes::Inline(inline) => {
                if !inline.push(part) {
                    let held = inline.as_bytes();
                    let mut heap = Vec::with_capacity(2 * (held.len() + part.len()));
                    heap.extend_from_slice(held);
                    heap.extend_from_slice(part.as_bytes());
                    self.bytes = Bytes::Heap(heap);
                }
            }
            Bytes::Heap(text) => text.extend_from_slice(part.as_bytes()),
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
        assert!(matches!(Text::new(&short).bytes, Bytes::Inline(_)));
        assert_eq!(Text::new(&short).to_str(), short);
        let long = "x".repeat(INLINE_TEXT_BYTES + 1);
        assert!(matches!(Text::new(&long).bytes, Bytes::Heap(_)));
        assert_eq!(Text::new(&long).to_str(), long);
        // Bytes that are not UTF-8 (from C) are kept, and read with U+FFFD in their place.
        assert_eq!(
            Text::from_bytes(b"bad \xff byte").to_str(),
            "bad \u{fffd} byte"
        );
        let long_bad = [b"x".repeat(INLINE_TEXT_BYTES), vec![0xfe]].concat();
        assert!(Text::from_bytes(&long_bad).to_str().ends_with('\u{fffd}'));
    }

    /// Renders its arguments in capitals.
    struct Upper;

    impl DeferredText for Upper {
        fn render(&self, args: &[u8], out: &mut Vec<u8>) {
            out.extend(args.iter().map(u8::to_ascii_uppercase));
        }
    }

    #[test]
    fn deferred_texts_are_rendered_when_read() {
        static UPPER: Upper = Upper;
        let mut text = Text::new("earlier text");
        text.set_deferred(&UPPER, b"abc");
        assert_eq!(text.to_str(), "ABC");
        text.set_deferred(&UPPER, b"a\xffb");
        assert_eq!(text.to_str(), "A\u{fffd}B");
        // Arguments too long to keep in the entry go to the heap, rendered all the same.
        let long = vec![b'x'; INLINE_TEXT_BYTES + 1];
        text.set_deferred(&UPPER, &long);
        assert!(matches!(text.bytes, Bytes::Heap(_)));
        assert_eq!(text.to_str(), "X".repeat(INLINE_TEXT_BYTES + 1));
        text.set_bytes(b"plain again");
        assert_eq!(text.to_str(), "plain again");
    }

    #[test]
    fn formatting_spills_to_the_heap_when_the_text_grows() {
        let value = 42;
        let mut text = Text::EMPTY;
        text.set_args(format_args!("value {value}"));
        assert!(matches!(text.bytes, Bytes::Inline(_)));
        assert_eq!(text.to_str(), "value 42");
        let long = "é".repeat(INLINE_TEXT_BYTES);
        text.set_args(format_args!("{value} {long}"));
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
