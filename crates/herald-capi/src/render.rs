//! Makes a deferred text: a plan's format with the arguments a log call captured (see
//! `plan` for their layout), written exactly as printf writes it. Runs on the logger's
//! background thread. Integers, characters and strings are converted here, as
//! `herald_logf.h` converts them; every other conversion (floats, `%p`, flags such as `+`,
//! an integer precision) goes to the C library's `snprintf`, one conversion at a time.
//! Arguments that run short (which `HERALD_LOG` never sends) end the text there.

use std::ffi::{c_char, c_int, c_long, c_longlong, c_uint, c_ulong, c_ulonglong, c_void, CString};

use ::herald_client::logger::DeferredText;

use crate::plan::{Amount, Piece, Plan, Spec};

extern "C" {
    fn snprintf(buf: *mut c_char, size: usize, format: *const c_char, ...) -> c_int;
}

/// A plan's text is made here, on the logger's thread, from the arguments the call captured.
impl DeferredText for Plan {
    fn render(&self, args: &[u8], out: &mut Vec<u8>) {
        render(self, args, out);
    }
}

/// The captured arguments, read in order.
struct Args<'a> {
    bytes: &'a [u8],
}

impl<'a> Args<'a> {
    /// A number, pointer or `double`: 8 bytes in the machine's order.
    fn word(&mut self) -> Option<[u8; 8]> {
        let (word, rest) = self.bytes.split_first_chunk::<8>()?;
        self.bytes = rest;
        Some(*word)
    }

    fn int(&mut self) -> Option<i64> {
        self.word().map(i64::from_ne_bytes)
    }

    /// A string: `Some(None)` for NULL.
    fn string(&mut self) -> Option<Option<&'a [u8]>> {
        let (len, rest) = self.bytes.split_first_chunk::<2>()?;
        let len = u16::from_ne_bytes(*len);
        if len == u16::MAX {
            self.bytes = rest;
            return Some(None);
        }
        let (text, rest) = rest.split_at_checked(usize::from(len))?;
        self.bytes = rest;
        Some(Some(text))
    }
}

/// A conversion with its `*` amounts filled in: -1 for none, as herald_logf.h has them.
struct Resolved {
    spec: Spec,
    width: i64,
    precision: i64,
}

/// Appends `plan`'s text made with `args` to `out`.
pub(crate) fn render(plan: &Plan, args: &[u8], out: &mut Vec<u8>) {
    let mut args = Args { bytes: args };
    for piece in &plan.pieces {
        match piece {
            Piece::Literal(range) => out.extend_from_slice(&plan.format[range.clone()]),
            Piece::Conversion(spec) => {
                if convert(*spec, &mut args, out).is_none() {
                    return;
                }
            }
        }
    }
}

/// Writes one conversion, taking its arguments; `None` when they run short.
fn convert(spec: Spec, args: &mut Args<'_>, out: &mut Vec<u8>) -> Option<()> {
    let mut resolved = Resolved {
        spec,
        width: -1,
        precision: -1,
    };
    match spec.width {
        Amount::None => {}
        Amount::Fixed(n) => resolved.width = i64::from(n),
        Amount::Star => {
            // As printf: a negative width is a '-' flag and its size.
            let width = i64::from(args.int()? as c_int);
            if width < 0 {
                resolved.spec.left = true;
                resolved.width = if width == i64::from(c_int::MIN) {
                    0
                } else {
                    -width
                };
            } else {
                resolved.width = width;
            }
        }
    }
    match spec.precision {
        Amount::None => {}
        Amount::Fixed(n) => resolved.precision = i64::from(n),
        Amount::Star => resolved.precision = i64::from(args.int()? as c_int).max(-1),
    }
    let r = &resolved;
    let fast = !(spec.plus || spec.space || spec.alt);
    match spec.conversion {
        b'%' => out.push(b'%'),
        b'd' | b'i' => {
            let value = signed(spec.length, args.int()?);
            if fast && r.precision < 0 {
                integer(out, r, value.unsigned_abs(), value < 0);
            } else {
                fallback_signed(out, r, value);
            }
        }
        b'u' | b'o' | b'x' | b'X' => {
            let value = unsigned(spec.length, args.int()?);
            if fast && r.precision < 0 {
                integer(out, r, value, false);
            } else {
                fallback_unsigned(out, r, value);
            }
        }
        b'c' => {
            let value = args.int()? as c_int;
            if fast && !spec.zero {
                // As printf: the int converted to unsigned char.
                field(out, &[value as u8], r.width, spec.left);
            } else {
                let format = respell(r);
                // SAFETY: a format of one %c conversion, given the int it reads.
                snprintf_into(out, |buf, cap| unsafe {
                    snprintf(buf, cap, format.as_ptr(), value)
                });
            }
        }
        b's' => {
            let text = args.string()?;
            if fast && !spec.zero {
                let text = match text {
                    Some(text) => text,
                    None if r.precision < 0 || r.precision >= 6 => b"(null)",
                    None => b"",
                };
                let n = match usize::try_from(r.precision) {
                    Ok(precision) => text.len().min(precision),
                    Err(_) => text.len(),
                };
                field(out, &text[..n], r.width, spec.left);
            } else {
                let format = respell(r);
                // Captured from a C string, so without a NUL inside.
                let text = text.map(|t| CString::new(t).unwrap_or_default());
                let ptr = text.as_ref().map_or(std::ptr::null(), |t| t.as_ptr());
                // SAFETY: a format of one %s conversion, given a C string (or NULL, which
                // the C library prints as "(null)").
                snprintf_into(out, |buf, cap| unsafe {
                    snprintf(buf, cap, format.as_ptr(), ptr)
                });
            }
        }
        b'p' => {
            let value = args.int()? as usize as *const c_void;
            let format = respell(r);
            // SAFETY: a format of one %p conversion, given a pointer it only prints.
            snprintf_into(out, |buf, cap| unsafe {
                snprintf(buf, cap, format.as_ptr(), value)
            });
        }
        b'n' => {
            // Writes nothing through its argument, as herald_format.
            args.int()?;
        }
        _ => {
            let value = f64::from_ne_bytes(args.word()?);
            let format = respell(r);
            // SAFETY: a format of one floating conversion (not `L`: no plan has one), given
            // the double it reads.
            snprintf_into(out, |buf, cap| unsafe {
                snprintf(buf, cap, format.as_ptr(), value)
            });
        }
    }
    Some(())
}

/// A captured signed integer as printf reads it for `length`.
// `long` is 64 bits here but 32 on other platforms: the casts through it are not idle.
#[allow(clippy::unnecessary_cast)]
fn signed(length: u8, value: i64) -> i64 {
    match length {
        b'H' => i64::from(value as i8),
        b'h' => i64::from(value as i16),
        b'l' => value as c_long as i64,
        b'L' | b'j' | b'z' | b't' => value,
        _ => i64::from(value as c_int),
    }
}

/// A captured unsigned integer as printf reads it for `length`.
#[allow(clippy::unnecessary_cast)]
fn unsigned(length: u8, value: i64) -> u64 {
    match length {
        b'H' => u64::from(value as u8),
        b'h' => u64::from(value as u16),
        b'l' => value as c_ulong as u64,
        b'L' | b'j' | b'z' | b't' => value as u64,
        _ => u64::from(value as c_uint),
    }
}

/// Writes an integer with flags '-' and '0' and a width, as herald_logf.h's
/// `herald_fmt_integer`.
fn integer(out: &mut Vec<u8>, r: &Resolved, mut magnitude: u64, negative: bool) {
    let digits: &[u8; 16] = if r.spec.conversion == b'X' {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    let base = match r.spec.conversion {
        b'x' | b'X' => 16,
        b'o' => 8,
        _ => 10,
    };
    let mut text = [0u8; 24];
    let mut at = text.len();
    loop {
        at -= 1;
        text[at] = digits[(magnitude % base) as usize];
        magnitude /= base;
        if magnitude == 0 {
            break;
        }
    }
    let width = usize::try_from(r.width).unwrap_or(0);
    let n = text.len() - at;
    let zeros = r.spec.zero && !r.spec.left;
    if negative {
        if zeros {
            out.push(b'-');
            pad(out, b'0', width.saturating_sub(n + 1));
            out.extend_from_slice(&text[at..]);
            return;
        }
        at -= 1;
        text[at] = b'-';
    } else if zeros {
        pad(out, b'0', width.saturating_sub(n));
        out.extend_from_slice(&text[at..]);
        return;
    }
    field(out, &text[at..], r.width, r.spec.left);
}

/// Writes `text` in a field of `width` (none if negative), on the left when `left`.
fn field(out: &mut Vec<u8>, text: &[u8], width: i64, left: bool) {
    let fill = usize::try_from(width)
        .unwrap_or(0)
        .saturating_sub(text.len());
    if !left {
        pad(out, b' ', fill);
    }
    out.extend_from_slice(text);
    if left {
        pad(out, b' ', fill);
    }
}

fn pad(out: &mut Vec<u8>, byte: u8, n: usize) {
    out.resize(out.len() + n, byte);
}

/// The conversion `r` as a format of its own, with its `*` amounts written out.
fn respell(r: &Resolved) -> CString {
    let s = &r.spec;
    let mut format = String::from("%");
    for (on, flag) in [
        (s.left, '-'),
        (s.zero, '0'),
        (s.plus, '+'),
        (s.space, ' '),
        (s.alt, '#'),
    ] {
        if on {
            format.push(flag);
        }
    }
    if r.width >= 0 {
        format.push_str(&r.width.to_string());
    }
    if r.precision >= 0 {
        format.push('.');
        format.push_str(&r.precision.to_string());
    }
    format.push_str(match s.length {
        b'H' => "hh",
        b'h' => "h",
        b'l' => "l",
        b'L' => "ll",
        b'j' => "j",
        b'z' => "z",
        b't' => "t",
        _ => "",
    });
    format.push(char::from(s.conversion));
    CString::new(format).unwrap_or_default()
}

fn fallback_signed(out: &mut Vec<u8>, r: &Resolved, value: i64) {
    let format = respell(r);
    let f = format.as_ptr();
    // SAFETY: each call gives a format of one signed conversion the argument of the type
    // its length reads (`hh` and `h` read an int, as printf promotes them).
    snprintf_into(out, |buf, cap| unsafe {
        match r.spec.length {
            b'l' => snprintf(buf, cap, f, value as c_long),
            b'L' => snprintf(buf, cap, f, value as c_longlong),
            b'j' => snprintf(buf, cap, f, value),
            b'z' | b't' => snprintf(buf, cap, f, value as isize),
            _ => snprintf(buf, cap, f, value as c_int),
        }
    });
}

fn fallback_unsigned(out: &mut Vec<u8>, r: &Resolved, value: u64) {
    let format = respell(r);
    let f = format.as_ptr();
    // SAFETY: as in `fallback_signed`, for the unsigned conversions.
    snprintf_into(out, |buf, cap| unsafe {
        match r.spec.length {
            b'l' => snprintf(buf, cap, f, value as c_ulong),
            b'L' => snprintf(buf, cap, f, value as c_ulonglong),
            b'j' => snprintf(buf, cap, f, value),
            b'z' | b't' => snprintf(buf, cap, f, value as usize),
            _ => snprintf(buf, cap, f, value as c_uint),
        }
    });
}

/// Appends what `write` (an snprintf into the buffer and size it is given) writes.
fn snprintf_into(out: &mut Vec<u8>, write: impl Fn(*mut c_char, usize) -> c_int) {
    let mut buf = [0u8; 128];
    let Ok(n) = usize::try_from(write(buf.as_mut_ptr().cast(), buf.len())) else {
        return;
    };
    if n < buf.len() {
        out.extend_from_slice(&buf[..n]);
        return;
    }
    let start = out.len();
    out.resize(start + n + 1, 0);
    let written = usize::try_from(write(out[start..].as_mut_ptr().cast(), n + 1)).unwrap_or(0);
    out.truncate(start + written.min(n));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captures as herald_logf.h's `herald_fmt_capture` does.
    enum Arg<'a> {
        Int(i64),
        Double(f64),
        Str(Option<&'a str>),
    }

    fn render_with(format: &str, args: &[Arg<'_>]) -> String {
        let plan = Plan::new(format.as_bytes(), std::ptr::null()).expect("deferrable");
        let mut bytes = Vec::new();
        for arg in args {
            match arg {
                Arg::Int(v) => bytes.extend_from_slice(&v.to_ne_bytes()),
                Arg::Double(v) => bytes.extend_from_slice(&v.to_ne_bytes()),
                Arg::Str(None) => bytes.extend_from_slice(&u16::MAX.to_ne_bytes()),
                Arg::Str(Some(s)) => {
                    bytes.extend_from_slice(&(s.len() as u16).to_ne_bytes());
                    bytes.extend_from_slice(s.as_bytes());
                }
            }
        }
        let mut out = Vec::new();
        render(&plan, &bytes, &mut out);
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn renders_as_printf() {
        use Arg::*;
        let padding = "the azimuth encoder";
        assert_eq!(
            render_with("%s step %d of %d", &[Str(Some(padding)), Int(12), Int(-3)]),
            "the azimuth encoder step 12 of -3"
        );
        assert_eq!(
            render_with(
                "[%5d][%-5d][%05d][%05d][%x][%X][%o]",
                &[
                    Int(42),
                    Int(42),
                    Int(42),
                    Int(-42),
                    Int(255),
                    Int(255),
                    Int(8)
                ]
            ),
            "[   42][42   ][00042][-0042][ff][FF][10]"
        );
        assert_eq!(
            render_with("%u %hhd %hu", &[Int(-1), Int(300), Int(-1)]),
            "4294967295 44 65535"
        );
        assert_eq!(
            render_with("[%*d][%-*d]", &[Int(-4), Int(7), Int(3), Int(7)]),
            "[7   ][7  ]"
        );
        assert_eq!(
            render_with("[%.3d][%+d][%#x]", &[Int(5), Int(5), Int(255)]),
            "[005][+5][0xff]"
        );
        assert_eq!(
            render_with(
                "%.2f|%e|%g",
                &[Double(1.23456), Double(12345.678), Double(0.0001)]
            ),
            "1.23|1.234568e+04|0.0001"
        );
        assert_eq!(
            render_with(
                "%s|%.2s|%5s|%.*s|%s|%.3s",
                &[
                    Str(Some("abc")),
                    Str(Some("ab")),
                    Str(Some("abc")),
                    Int(1),
                    Str(Some("x")),
                    Str(None),
                    Str(None)
                ]
            ),
            "abc|ab|  abc|x|(null)|"
        );
        assert_eq!(
            render_with(
                "%c%3c%-3c|%%|%5%|100%",
                &[
                    Int(i64::from(b'a')),
                    Int(i64::from(b'b')),
                    Int(i64::from(b'c'))
                ]
            ),
            "a  bc  |%|%|100%"
        );
        assert_eq!(render_with("%p", &[Int(0x1234)]), "0x1234");
        assert_eq!(render_with("ab%ncd", &[Int(0)]), "abcd");
    }

    #[test]
    fn arguments_that_run_short_end_the_text() {
        assert_eq!(render_with("a %d b %d c", &[Arg::Int(1)]), "a 1 b ");
        assert_eq!(render_with("%s!", &[]), "");
    }
}
