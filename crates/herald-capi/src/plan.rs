//! Deferred formatting for `HERALD_LOG`: a call site's printf format, read once into a plan
//! of what arguments it takes, so that each log call copies its arguments (numbers as they
//! are, strings' bytes) instead of formatting them, and the logger's background thread
//! makes the text (`render`).
//!
//! Formatting is most of a printf-style log call's cost: glibc's `vsnprintf` takes as long
//! as the rest of the call, and even `herald_logf.h`'s own formatter converts every number
//! on the calling thread. A plan is made only for a site whose format is a string literal
//! (the macro asks the compiler, `herald_log_site.deferrable`), so it cannot change between
//! calls, and only for the conversions it renders exactly as printf would: `%d %i %u %o %x
//! %X` with every length but `L`, `%f %F %e %E %g %G %a %A`, `%c`, `%s`, `%p`, `%n`, `%%`,
//! any flags, `*` widths and precisions. A format with a wide character or string (`%lc`,
//! `%ls`), a `long double` (`%Lf`), an unknown conversion, more than
//! [`HERALD_LOG_PLAN_ARGS`] arguments, or a string precision above 65,533 is formatted on the
//! calling thread as before.
//!
//! # What the C side writes (`herald_fmt_capture` in herald_logf.h)
//! For each argument in order, by its kind in the plan: a string as a 2-byte length in the
//! machine's byte order (`0xFFFF` for NULL) and that many bytes (at most its precision);
//! every other argument as 8 bytes in the machine's byte order: a `double` as it is, an
//! integer or pointer converted to `int64_t` from the type printf would read.

use std::ops::Range;

use std::ffi::c_char;

/// Most arguments (`*` widths and precisions included) a deferred format takes.
pub const HERALD_LOG_PLAN_ARGS: usize = 24;
/// Most bytes of captured arguments a log call keeps; with more it formats on the calling
/// thread.
pub const HERALD_LOG_ARGS_BYTES: usize = 200;
/// A string argument read whole (no precision).
pub const HERALD_ARG_NO_LIMIT: u16 = 0xFFFF;
/// A string argument read up to the precision in the argument before it (`%.*s`).
pub const HERALD_ARG_STAR_LIMIT: u16 = 0xFFFE;

/// An `int` (also `char`, `short` and their unsigned forms, promoted).
pub const HERALD_ARG_INT: u8 = 1;
/// A `long` or `unsigned long`.
pub const HERALD_ARG_LONG: u8 = 2;
/// A `long long` or `unsigned long long`.
pub const HERALD_ARG_LONG_LONG: u8 = 3;
/// An `intmax_t` or `uintmax_t`.
pub const HERALD_ARG_INTMAX: u8 = 4;
/// A `size_t`.
pub const HERALD_ARG_SIZE: u8 = 5;
/// A `ptrdiff_t`.
pub const HERALD_ARG_PTRDIFF: u8 = 6;
/// A `double`.
pub const HERALD_ARG_DOUBLE: u8 = 7;
/// A pointer (`%p`, `%n`).
pub const HERALD_ARG_POINTER: u8 = 8;
/// A `const char *` (`%s`).
pub const HERALD_ARG_STRING: u8 = 9;

// A log call's captured arguments must fit in a logger entry's text.
const _: () = assert!(HERALD_LOG_ARGS_BYTES <= ::herald_client::logger::INLINE_TEXT_BYTES);

/// What `HERALD_LOG` reads from a plan to capture a call's arguments: their count and kinds
/// (`HERALD_ARG_*`), and for strings how much to read (a precision, or
/// `HERALD_ARG_NO_LIMIT`, or `HERALD_ARG_STAR_LIMIT`). Made by the library
/// (`herald_log_site_plan`); never written by the program.
#[repr(C)]
pub struct herald_log_plan {
    /// The format the plan was made from (a call that passes another is formatted on its
    /// thread).
    pub format: *const c_char,
    /// The number of arguments.
    pub count: u32,
    /// Each argument's kind.
    pub kinds: [u8; HERALD_LOG_PLAN_ARGS],
    /// For a string argument, how many bytes at most to read.
    pub limits: [u16; HERALD_LOG_PLAN_ARGS],
}

/// A field's width or a precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Amount {
    None,
    Fixed(u32),
    /// Taken from the argument before the value.
    Star,
}

/// A conversion, read from the format.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Spec {
    pub(crate) left: bool,
    pub(crate) zero: bool,
    pub(crate) plus: bool,
    pub(crate) space: bool,
    pub(crate) alt: bool,
    pub(crate) width: Amount,
    pub(crate) precision: Amount,
    /// `b'H'` hh, `b'h'`, `b'l'`, `b'L'` ll, `b'j'`, `b'z'`, `b't'`, 0 none.
    pub(crate) length: u8,
    pub(crate) conversion: u8,
}

/// A piece of the format.
#[derive(Debug)]
pub(crate) enum Piece {
    /// Bytes of the format written as they are.
    Literal(Range<usize>),
    Conversion(Spec),
}

/// A call site's format, read once: what the C side captures and how the text is made.
/// `c` comes first, so that the pointer C holds is the plan's.
#[repr(C)]
pub struct Plan {
    pub(crate) c: herald_log_plan,
    pub(crate) format: Vec<u8>,
    pub(crate) pieces: Vec<Piece>,
}

// SAFETY: the one pointer in a plan, `c.format`, is only compared with the formats later
// calls pass, never read through; everything else is owned data, never changed once made.
unsafe impl Send for Plan {}
// SAFETY: as for `Send`.
unsafe impl Sync for Plan {}

impl Plan {
    /// Reads `format` (the bytes at `format_at`); `None` if some conversion is one the
    /// background side cannot render exactly as printf (see the module documentation).
    pub(crate) fn new(format: &[u8], format_at: *const c_char) -> Option<Plan> {
        let mut plan = Plan {
            c: herald_log_plan {
                format: format_at,
                count: 0,
                kinds: [0; HERALD_LOG_PLAN_ARGS],
                limits: [HERALD_ARG_NO_LIMIT; HERALD_LOG_PLAN_ARGS],
            },
            format: format.to_vec(),
            pieces: Vec::new(),
        };
        let mut at = 0;
        while at < format.len() {
            let start = at;
            while at < format.len() && format[at] != b'%' {
                at += 1;
            }
            if at > start {
                plan.pieces.push(Piece::Literal(start..at));
            }
            if at == format.len() {
                break;
            }
            // A '%' at the end is written as it stands, as herald_format does.
            let (spec, next) = parse(format, at + 1)?;
            at = next;
            match spec {
                None => plan.pieces.push(Piece::Literal(at - 1..at)),
                Some(spec) => plan.add(spec)?,
            }
        }
        Some(plan)
    }

    /// Adds `spec` and the arguments it takes.
    fn add(&mut self, spec: Spec) -> Option<()> {
        if spec.width == Amount::Star {
            self.take(HERALD_ARG_INT, HERALD_ARG_NO_LIMIT)?;
        }
        if spec.precision == Amount::Star {
            self.take(HERALD_ARG_INT, HERALD_ARG_NO_LIMIT)?;
        }
        let integer = |plan: &mut Plan| {
            let kind = match spec.length {
                b'l' => HERALD_ARG_LONG,
                b'L' => HERALD_ARG_LONG_LONG,
                b'j' => HERALD_ARG_INTMAX,
                b'z' => HERALD_ARG_SIZE,
                b't' => HERALD_ARG_PTRDIFF,
                b'D' => return None,
                _ => HERALD_ARG_INT,
            };
            plan.take(kind, HERALD_ARG_NO_LIMIT)
        };
        match spec.conversion {
            b'%' => {}
            b'd' | b'i' | b'u' | b'o' | b'x' | b'X' => integer(self)?,
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' if spec.length != b'D' => {
                self.take(HERALD_ARG_DOUBLE, HERALD_ARG_NO_LIMIT)?;
            }
            b'c' if spec.length != b'l' => self.take(HERALD_ARG_INT, HERALD_ARG_NO_LIMIT)?,
            b's' if spec.length != b'l' => {
                let limit = match spec.precision {
                    Amount::None => HERALD_ARG_NO_LIMIT,
                    Amount::Star => HERALD_ARG_STAR_LIMIT,
                    Amount::Fixed(n) => u16::try_from(n)
                        .ok()
                        .filter(|&n| n < HERALD_ARG_STAR_LIMIT)?,
                };
                self.take(HERALD_ARG_STRING, limit)?;
            }
            b'p' | b'n' => self.take(HERALD_ARG_POINTER, HERALD_ARG_NO_LIMIT)?,
            _ => return None,
        }
        self.pieces.push(Piece::Conversion(spec));
        Some(())
    }

    fn take(&mut self, kind: u8, limit: u16) -> Option<()> {
        let i = self.c.count as usize;
        if i == HERALD_LOG_PLAN_ARGS {
            return None;
        }
        self.c.kinds[i] = kind;
        self.c.limits[i] = limit;
        self.c.count += 1;
        Some(())
    }
}

/// Reads the conversion whose '%' is just before `at`. Returns `Some((None, at))` for one
/// that is not a conversion (the '%' is written as it stands and the rest read as text),
/// `None` for one that stops the format being deferred.
fn parse(format: &[u8], mut at: usize) -> Option<(Option<Spec>, usize)> {
    let byte = |i: usize| format.get(i).copied().unwrap_or(0);
    let start = at;
    let mut spec = Spec {
        left: false,
        zero: false,
        plus: false,
        space: false,
        alt: false,
        width: Amount::None,
        precision: Amount::None,
        length: 0,
        conversion: 0,
    };
    loop {
        match byte(at) {
            b'-' => spec.left = true,
            b'0' => spec.zero = true,
            b'+' => spec.plus = true,
            b' ' => spec.space = true,
            b'#' => spec.alt = true,
            _ => break,
        }
        at += 1;
    }
    let number = |at: &mut usize| {
        let mut n = 0u32;
        while byte(*at).is_ascii_digit() && n < 100_000 {
            n = n * 10 + u32::from(byte(*at) - b'0');
            *at += 1;
        }
        n
    };
    if byte(at) == b'*' {
        spec.width = Amount::Star;
        at += 1;
    } else if byte(at).is_ascii_digit() {
        spec.width = Amount::Fixed(number(&mut at));
    }
    if byte(at) == b'.' {
        at += 1;
        if byte(at) == b'*' {
            spec.precision = Amount::Star;
            at += 1;
        } else {
            spec.precision = Amount::Fixed(number(&mut at));
        }
    }
    match (byte(at), byte(at + 1)) {
        (b'h', b'h') => (spec.length, at) = (b'H', at + 2),
        (b'l', b'l') => (spec.length, at) = (b'L', at + 2),
        (b'h' | b'l' | b'j' | b'z' | b't', _) => (spec.length, at) = (byte(at), at + 1),
        (b'L', _) => (spec.length, at) = (b'D', at + 1),
        _ => {}
    }
    match byte(at) {
        b'd' | b'i' | b'u' | b'o' | b'x' | b'X' | b'f' | b'F' | b'e' | b'E' | b'g' | b'G'
        | b'a' | b'A' | b'c' | b's' | b'p' | b'n' | b'%' => {
            spec.conversion = byte(at);
            Some((Some(spec), at + 1))
        }
        // Not a conversion: herald_format writes the '%' and reads on as text. A '*' read
        // in it would have taken an argument there, which a plan cannot follow.
        _ if format[start..at].contains(&b'*') => None,
        _ => Some((None, start)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(format: &str) -> Option<Vec<u8>> {
        let plan = Plan::new(format.as_bytes(), std::ptr::null())?;
        Some(plan.c.kinds[..plan.c.count as usize].to_vec())
    }

    #[test]
    fn a_plan_lists_the_arguments_in_order() {
        assert_eq!(kinds("plain"), Some(vec![]));
        assert_eq!(
            kinds("%s step %d of %lu, %zu %td %jd %lld %.2f %p %c %n"),
            Some(vec![
                HERALD_ARG_STRING,
                HERALD_ARG_INT,
                HERALD_ARG_LONG,
                HERALD_ARG_SIZE,
                HERALD_ARG_PTRDIFF,
                HERALD_ARG_INTMAX,
                HERALD_ARG_LONG_LONG,
                HERALD_ARG_DOUBLE,
                HERALD_ARG_POINTER,
                HERALD_ARG_INT,
                HERALD_ARG_POINTER,
            ])
        );
        assert_eq!(
            kinds("[%*d] %.*s %%"),
            Some(vec![
                HERALD_ARG_INT,
                HERALD_ARG_INT,
                HERALD_ARG_INT,
                HERALD_ARG_STRING
            ])
        );
        let plan = Plan::new(b"%.5s %.*s %s", std::ptr::null()).expect("a plan");
        assert_eq!(
            plan.c.limits[..4],
            [
                5,
                HERALD_ARG_NO_LIMIT,
                HERALD_ARG_STAR_LIMIT,
                HERALD_ARG_NO_LIMIT
            ]
        );
    }

    #[test]
    fn formats_printf_would_read_differently_are_not_deferred() {
        for format in ["%ls", "%lc", "%Lf", "%.70000s", "%*y"] {
            assert!(
                Plan::new(format.as_bytes(), std::ptr::null()).is_none(),
                "{format}"
            );
        }
        let many = "%d".repeat(HERALD_LOG_PLAN_ARGS + 1);
        assert!(Plan::new(many.as_bytes(), std::ptr::null()).is_none());
        // Not conversions: written as they stand.
        assert_eq!(kinds("100% %y %"), Some(vec![]));
    }
}
