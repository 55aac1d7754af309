//! Timestamps: integer nanoseconds since the Unix epoch (UTC), shown as ISO 8601.

use std::time::{SystemTime, UNIX_EPOCH};

/// Returns the current wall-clock time in nanoseconds since the Unix epoch.
pub fn now_nanos() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(elapsed) => i64::try_from(elapsed.as_nanos()).unwrap_or(i64::MAX),
        Err(before) => -i64::try_from(before.duration().as_nanos()).unwrap_or(i64::MAX),
    }
}

/// Returns the UTC year of `nanos`.
pub fn utc_year(nanos: i64) -> i64 {
    civil_from_days(nanos.div_euclid(86_400_000_000_000)).0
}

/// Returns the instant (nanoseconds since the epoch) of a UTC date and time of day, as
/// [`parse_iso8601`] reads `YYYY-MM-DDTHH:MM:SSZ`: `None` for a date or a time of day that
/// does not exist (second 60 among them) or an instant outside 64-bit nanoseconds.
pub fn utc_instant(
    (year, month, day): (i64, i64, i64),
    (hour, minute, second): (i64, i64, i64),
) -> Option<i64> {
    if !(1..=days_in_month(year, month)).contains(&day)
        || !(0..24).contains(&hour)
        || !(0..60).contains(&minute)
        || !(0..60).contains(&second)
    {
        return None;
    }
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
    seconds.checked_mul(1_000_000_000)
}

/// Formats `nanos` as `2026-11-20T02:00:00.123Z` (UTC, milliseconds).
pub fn format_iso8601(nanos: i64) -> String {
    let secs = nanos.div_euclid(1_000_000_000);
    let millis = nanos.rem_euclid(1_000_000_000) / 1_000_000;
    let days = secs.div_euclid(86_400);
    let of_day = secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60
    )
}

/// Formats `nanos` exactly: as [`format_iso8601`] when the time is a whole millisecond,
/// else with 6 or 9 fraction digits (`2026-11-20T02:00:00.123456Z`), so that
/// [`parse_iso8601`] gives back the same nanoseconds.
pub fn format_iso8601_exact(nanos: i64) -> String {
    let fraction = nanos.rem_euclid(1_000_000_000);
    let millis_text = format_iso8601(nanos);
    if fraction % 1_000_000 == 0 {
        return millis_text;
    }
    let digits = if fraction % 1_000 == 0 {
        format!("{:06}", fraction / 1_000)
    } else {
        format!("{fraction:09}")
    };
    // `…:SS.mmmZ`: keep everything up to the dot, then write the longer fraction.
    let seconds_end = millis_text.len() - ".mmmZ".len();
    format!("{}.{digits}Z", &millis_text[..seconds_end])
}

/// Parses a time as people type it in a query: `now`; relative to `now` (`-1h`, `-30m`,
/// `-2d`, `-10s`, `-500ms`, also with `+`); ISO 8601 as [`parse_iso8601`] takes it; or the
/// same without seconds (`2026-11-20T02:00`), without a time (`2026-11-20`, midnight) or
/// without a zone, which then means UTC.
///
/// # Errors
/// [`TimeError`] quoting the text and the accepted forms.
pub fn parse_time_spec(text: &str, now: i64) -> Result<i64, TimeSpecError> {
    let trimmed = text.trim();
    if trimmed.eq_ignore_ascii_case("now") {
        return Ok(now);
    }
    if let Some(sign) = trimmed.chars().next().filter(|c| matches!(c, '-' | '+')) {
        let offset = parse_span(&trimmed[1..]).ok_or_else(|| TimeSpecError {
            text: text.chars().take(64).collect(),
            reason: "a relative time is a sign, a number and a unit (ms, s, m, h, d, w)"
                .to_string(),
        })?;
        let signed = if sign == '-' { -offset } else { offset };
        return Ok(now.saturating_add(signed));
    }
    let fail = |err: TimeError| TimeSpecError {
        text: text.chars().take(64).collect(),
        reason: err.reason,
    };
    // Every absolute form is ASCII and the checks below index bytes, which inside a
    // multi-byte character would panic: other text goes straight to `parse_iso8601`, which
    // refuses it.
    if !trimmed.is_ascii() {
        return parse_iso8601(trimmed).map_err(fail);
    }
    // A zone offset (`+09:00`) can only follow a time of day, past the date's own dashes.
    let offset_at = trimmed.len().saturating_sub(6);
    let has_zone = trimmed.ends_with(['Z', 'z'])
        || (offset_at > 10 && matches!(trimmed.as_bytes()[offset_at], b'+' | b'-'));
    let mut full = trimmed.to_string();
    if full.len() == 10 {
        full.push_str("T00:00:00");
    } else if full.len() == 16 || (has_zone && full.len() > 16 && full.as_bytes()[16] != b':') {
        full.insert_str(16, ":00");
    }
    if !has_zone {
        full.push('Z');
    }
    parse_iso8601(&full).map_err(fail)
}

/// Why text is not a time [`parse_time_spec`] accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "bad time `{text}`: {reason} (expected `now`, a relative time such as `-1h`, or ISO 8601 \
     such as `2026-11-20T02:00`, UTC unless a zone is given)"
)]
pub struct TimeSpecError {
    /// The text as given (cut at 64 characters).
    pub text: String,
    /// What is wrong with it.
    pub reason: String,
}

/// Parses `90m`, `2d`, `500ms` into nanoseconds.
fn parse_span(text: &str) -> Option<i64> {
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let number: i64 = text[..split].parse().ok()?;
    let unit: i64 = match &text[split..] {
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        "w" => 7 * 86_400_000_000_000,
        _ => return None,
    };
    number.checked_mul(unit)
}

/// Why text is not a time [`parse_iso8601`] accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "bad time `{text}`: {reason} (expected ISO 8601 with a zone, e.g. `2026-11-20T02:00:00.123Z`)"
)]
pub struct TimeError {
    /// The text as given (cut at 64 characters).
    pub text: String,
    /// What is wrong with it.
    pub reason: String,
}

/// Parses an RFC 3339 / ISO 8601 time with a zone — `2026-11-20T02:00:00Z`,
/// `2026-11-20T02:00:00.123456789Z`, `2026-11-20 11:00:00+09:00` — into nanoseconds since the
/// epoch. Up to nine fraction digits; `T`, `t` or a space between date and time; `Z`, `z` or
/// `±HH:MM` for the zone, which is required (a time without one means nothing to a server).
///
/// # Errors
/// [`TimeError`] quoting the text and saying what is wrong.
pub fn parse_iso8601(text: &str) -> Result<i64, TimeError> {
    // syslog reads a time stamp per message: the usual forms go through a pass over the
    // bytes; anything else (and every error, for its message) through the checked parse.
    match parse_iso8601_fast(text.as_bytes()) {
        Some(nanos) => Ok(nanos),
        None => parse_iso8601_checked(text),
    }
}

/// The two digits at `at` as a number, if they are digits.
#[inline]
fn two_digits(bytes: &[u8], at: usize) -> Option<i64> {
    let (tens, ones) = (
        bytes[at].wrapping_sub(b'0'),
        bytes[at + 1].wrapping_sub(b'0'),
    );
    (tens < 10 && ones < 10).then(|| i64::from(tens * 10 + ones))
}

/// [`parse_iso8601`] of the forms it accepts, in one pass over the bytes: the same answer
/// as [`parse_iso8601_checked`] (a test holds them together), or `None` for the checked
/// parse to decide and explain. Every byte is looked at, so a string that is not ASCII
/// never passes.
fn parse_iso8601_fast(bytes: &[u8]) -> Option<i64> {
    if bytes.len() < 20
        || bytes[4] != b'-'
        || bytes[7] != b'-'
        || !matches!(bytes[10], b'T' | b't' | b' ')
        || bytes[13] != b':'
        || bytes[16] != b':'
    {
        return None;
    }
    let year = two_digits(bytes, 0)? * 100 + two_digits(bytes, 2)?;
    let (month, day) = (two_digits(bytes, 5)?, two_digits(bytes, 8)?);
    let (hour, minute, second) = (
        two_digits(bytes, 11)?,
        two_digits(bytes, 14)?,
        two_digits(bytes, 17)?,
    );
    if day < 1 || day > days_in_month(year, month) || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let mut at = 19;
    let mut nanos = 0i64;
    if bytes[at] == b'.' {
        at += 1;
        let start = at;
        while at < bytes.len() && at - start < 9 && bytes[at].is_ascii_digit() {
            nanos = nanos * 10 + i64::from(bytes[at] - b'0');
            at += 1;
        }
        let digits = at - start;
        if digits == 0 {
            return None;
        }
        nanos *= 10_i64.pow(9 - digits as u32);
    }
    let offset_seconds = match &bytes[at..] {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (hours, minutes) = (two_digits(bytes, at + 1)?, two_digits(bytes, at + 4)?);
            if hours > 23 || minutes > 59 {
                return None;
            }
            let offset = hours * 3600 + minutes * 60;
            if *sign == b'-' {
                -offset
            } else {
                offset
            }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_seconds;
    // Outside 64-bit nanoseconds (or at their edge, where a fraction brings a second back
    // in range): the checked parse decides.
    seconds.checked_mul(1_000_000_000)?.checked_add(nanos)
}

/// [`parse_iso8601`], every part checked and every error named.
fn parse_iso8601_checked(text: &str) -> Result<i64, TimeError> {
    let fail = |reason: &str| TimeError {
        text: text.chars().take(64).collect(),
        reason: reason.to_string(),
    };
    let bytes = text.as_bytes();
    if bytes.len() < 19 || !text.is_ascii() {
        return Err(fail("too short or not ASCII"));
    }
    let number = |range: std::ops::Range<usize>, what: &str| -> Result<i64, TimeError> {
        let part = &text[range];
        if !part.bytes().all(|b| b.is_ascii_digit()) {
            return Err(fail(&format!("{what} `{part}` is not a number")));
        }
        // At most 9 digits, all checked: no overflow, no sign, so no `str::parse` (syslog
        // reads a time stamp per message).
        Ok(part
            .bytes()
            .fold(0i64, |value, digit| value * 10 + i64::from(digit - b'0')))
    };
    let separators = [(4, b'-'), (7, b'-'), (13, b':'), (16, b':')];
    if separators.iter().any(|(at, want)| bytes[*at] != *want)
        || !matches!(bytes[10], b'T' | b't' | b' ')
    {
        return Err(fail("expected `YYYY-MM-DDTHH:MM:SS`"));
    }
    let (year, month, day) = (
        number(0..4, "year")?,
        number(5..7, "month")?,
        number(8..10, "day")?,
    );
    let (hour, minute, second) = (
        number(11..13, "hour")?,
        number(14..16, "minute")?,
        number(17..19, "second")?,
    );
    let month_days = days_in_month(year, month);
    if month_days == 0 || day < 1 || day > month_days {
        return Err(fail("no such date"));
    }
    if hour > 23 || minute > 59 || second > 59 {
        return Err(fail("no such time of day"));
    }
    let mut rest = &text[19..];
    let mut nanos = 0;
    if let Some(after_dot) = rest.strip_prefix('.') {
        let digits = after_dot.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 9 {
            return Err(fail("the fraction needs 1 to 9 digits"));
        }
        nanos = number(20..20 + digits, "fraction")? * 10_i64.pow(9 - digits as u32);
        rest = &after_dot[digits..];
    }
    let offset_seconds = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6 && matches!(&rest[..1], "+" | "-") && &rest[3..4] == ":" => {
            let start = text.len() - 6;
            let (hours, minutes) = (
                number(start + 1..start + 3, "zone hour")?,
                number(start + 4..start + 6, "zone minute")?,
            );
            if hours > 23 || minutes > 59 {
                return Err(fail("no such zone offset"));
            }
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            sign * (hours * 3600 + minutes * 60)
        }
        "" => return Err(fail("no zone (add `Z` for UTC or an offset like `+09:00`)")),
        _ => return Err(fail(&format!("bad zone `{rest}`"))),
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_seconds;
    // In 128 bits: the earliest instants of 1677 are whole seconds below `i64::MIN`
    // nanoseconds, brought back in range only by their fraction.
    let total = i128::from(seconds) * 1_000_000_000 + i128::from(nanos);
    i64::try_from(total)
        .map_err(|_| fail("outside the range of 64-bit nanoseconds (years 1677..2262)"))
}

fn days_in_month(year: i64, month: i64) -> i64 {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => 0,
    }
}

/// Converts (year, month, day) in the proleptic Gregorian calendar to days since 1970-01-01;
/// the inverse of [`civil_from_days`].
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    // Howard Hinnant's algorithm, as below.
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let month_index = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Converts days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    // Howard Hinnant's algorithm: shift the epoch to 0000-03-01 so leap days fall last.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_index + 2) / 5 + 1) as u32;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `utc_instant` answers as `parse_iso8601` reads the same parts, valid or not (month
    /// ends, leap days, second 60, hour 24, the edges of 64-bit nanoseconds), and
    /// `utc_year` gives the year back.
    #[test]
    fn utc_instant_agrees_with_the_parse() {
        for year in [1677, 1678, 1900, 1970, 2000, 2023, 2024, 2026, 2261, 2262] {
            for month in 0..=13 {
                for day in [0, 1, 28, 29, 30, 31, 32] {
                    for (hour, minute, second) in
                        [(0, 0, 0), (23, 59, 59), (24, 0, 0), (0, 60, 0), (12, 0, 60)]
                    {
                        let text = format!(
                            "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}Z"
                        );
                        let made = utc_instant((year, month, day), (hour, minute, second));
                        assert_eq!(made, parse_iso8601(&text).ok(), "{text}");
                        if let Some(nanos) = made {
                            assert_eq!(utc_year(nanos), year, "{text}");
                        }
                    }
                }
            }
        }
    }

    /// Whatever the fast parse answers, the checked parse answers the same; mutations of
    /// edge-case times (range ends, leap days, fractions, zones) in their thousands.
    #[test]
    fn the_fast_parse_agrees_with_the_checked_one() {
        let bases = [
            "2026-11-27T03:58:01Z",
            "2026-11-27T03:58:01.123456789+09:30",
            "1970-01-01 00:00:00.5-00:00",
            "2024-02-29t23:59:59z",
            "2023-02-29T00:00:00Z",
            "1677-09-21T00:12:43.145224192Z",
            "1677-09-21T00:12:43.145224191Z",
            "2262-04-11T23:47:16.854775807Z",
            "2262-04-11T23:47:16.854775808Z",
            "0000-01-01T00:00:00Z",
            "9999-12-31T23:59:59.999999999-23:59",
        ];
        let alphabet = b"0123456789-:.TtZz+ x";
        let mut next = crate::test_rng::xorshift(0x9e37_79b9_7f4a_7c15);
        let (mut fast, mut checked_ok) = (0, 0);
        for base in bases {
            for round in 0..20_000 {
                let mut bytes = base.as_bytes().to_vec();
                for _ in 0..(round % 3) {
                    let at = next() as usize % (bytes.len() + 1);
                    let byte = alphabet[next() as usize % alphabet.len()];
                    match next() % 3 {
                        0 if at < bytes.len() => bytes[at] = byte,
                        1 if at < bytes.len() => {
                            bytes.remove(at);
                        }
                        _ => bytes.insert(at, byte),
                    }
                }
                let text = std::str::from_utf8(&bytes).unwrap();
                let checked = parse_iso8601_checked(text);
                checked_ok += usize::from(checked.is_ok());
                let answer = parse_iso8601_fast(text.as_bytes());
                if let Some(nanos) = answer {
                    assert_eq!(checked, Ok(nanos), "{text}");
                }
                // Away from the ends of 64-bit nanoseconds, whatever the checked parse takes
                // the fast one takes too.
                let year = text.get(..4).and_then(|y| y.parse::<i64>().ok());
                if checked.is_ok() && year.is_some_and(|y| (1678..=2261).contains(&y)) {
                    fast += 1;
                    assert!(answer.is_some(), "{text}");
                }
                assert_eq!(parse_iso8601(text), checked, "{text}");
            }
        }
        // Not a test of nothing: most mutations are times still.
        assert!(fast > 30_000 && checked_ok > 40_000, "{fast}, {checked_ok}");
    }

    #[test]
    fn formats_utc_with_milliseconds() {
        assert_eq!(format_iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            format_iso8601(1_763_604_000_123_456_789),
            "2025-11-20T02:00:00.123Z"
        );
        assert_eq!(
            format_iso8601(951_782_400_000_000_000),
            "2000-02-29T00:00:00.000Z"
        );
        assert_eq!(format_iso8601(-1_000_000), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn exact_form_keeps_every_nanosecond() {
        assert_eq!(
            format_iso8601_exact(1_763_604_000_123_000_000),
            "2025-11-20T02:00:00.123Z"
        );
        assert_eq!(
            format_iso8601_exact(1_763_604_000_123_456_000),
            "2025-11-20T02:00:00.123456Z"
        );
        assert_eq!(
            format_iso8601_exact(1_763_604_000_123_456_789),
            "2025-11-20T02:00:00.123456789Z"
        );
        assert_eq!(format_iso8601_exact(-1), "1969-12-31T23:59:59.999999999Z");
    }

    #[test]
    fn parses_what_it_formats_and_zones() {
        for nanos in [0, -1, 1_763_604_000_123_456_789, 951_782_400_000_000_000] {
            assert_eq!(parse_iso8601(&format_iso8601_exact(nanos)), Ok(nanos));
        }
        assert_eq!(
            parse_iso8601("2025-11-20 11:00:00.5+09:00"),
            Ok(1_763_604_000_500_000_000)
        );
        assert_eq!(parse_iso8601("2025-11-19t21:30:00-04:30z").ok(), None);
        assert_eq!(
            parse_iso8601("2025-11-19T21:30:00-04:30"),
            Ok(1_763_604_000_000_000_000)
        );
    }

    /// Found by fuzzing (http_params): the first second of the range did not parse back.
    #[test]
    fn the_whole_range_parses_back() {
        for nanos in [
            i64::MIN,
            i64::MIN + 999_999_999,
            -9_223_372_036_129_881_813,
            i64::MAX,
        ] {
            assert_eq!(parse_iso8601(&format_iso8601_exact(nanos)), Ok(nanos));
        }
        assert_eq!(
            parse_iso8601("1677-09-21T00:12:43.145224191Z")
                .unwrap_err()
                .reason,
            "outside the range of 64-bit nanoseconds (years 1677..2262)"
        );
    }

    #[test]
    fn refuses_what_is_not_a_time() {
        for (text, reason) in [
            ("yesterday", "too short or not ASCII"),
            ("2025-11-20T02", "too short or not ASCII"),
            (
                "2025-11-20T02:00:00",
                "no zone (add `Z` for UTC or an offset like `+09:00`)",
            ),
            (
                "2025-11-20T02:00:00.000",
                "no zone (add `Z` for UTC or an offset like `+09:00`)",
            ),
            ("2025-02-29T02:00:00Z", "no such date"),
            ("2025-11-20T24:00:00Z", "no such time of day"),
            ("2025/11/20T02:00:00Z", "expected `YYYY-MM-DDTHH:MM:SS`"),
            ("2025-11-20T02:00:00.Z", "the fraction needs 1 to 9 digits"),
            ("2025-11-20T02:00:00+0900", "bad zone `+0900`"),
            ("20x5-11-20T02:00:00Z", "year `20x5` is not a number"),
            (
                "9999-11-20T02:00:00Z",
                "outside the range of 64-bit nanoseconds (years 1677..2262)",
            ),
        ] {
            assert_eq!(parse_iso8601(text).unwrap_err().reason, reason, "{text}");
        }
        assert_eq!(
            parse_iso8601("soon-ish and later").unwrap_err().to_string(),
            "bad time `soon-ish and later`: too short or not ASCII (expected ISO 8601 with a zone, e.g. `2026-11-20T02:00:00.123Z`)"
        );
    }

    #[test]
    fn query_times_take_relative_and_short_forms() {
        let now = parse_iso8601("2026-11-20T03:00:00Z").unwrap();
        let at = |text: &str| parse_time_spec(text, now).unwrap();
        assert_eq!(at("now"), now);
        assert_eq!(at("-1h"), parse_iso8601("2026-11-20T02:00:00Z").unwrap());
        assert_eq!(at("-2d"), parse_iso8601("2026-11-18T03:00:00Z").unwrap());
        assert_eq!(at("+500ms"), now + 500_000_000);
        assert_eq!(
            at("2026-11-20T02:00"),
            parse_iso8601("2026-11-20T02:00:00Z").unwrap()
        );
        assert_eq!(
            at("2026-11-20"),
            parse_iso8601("2026-11-20T00:00:00Z").unwrap()
        );
        assert_eq!(at("2026-11-20T02:00:30"), now - 3570 * 1_000_000_000);
        assert_eq!(
            at("2026-11-20T11:00+09:00"),
            parse_iso8601("2026-11-20T02:00:00Z").unwrap()
        );
        // Found by fuzzing (http_params): cutting these at a byte offset panicked.
        for bad in ["\u{fffd}".repeat(6).as_str(), "2026-11-20T02:0\u{e9}Z"] {
            let err = parse_time_spec(bad, now).unwrap_err();
            assert_eq!(err.reason, "too short or not ASCII", "{bad}");
        }
        for bad in ["-1x", "-h", "yesterday", "2026-13-01", ""] {
            let err = parse_time_spec(bad, now).unwrap_err();
            assert!(err.to_string().contains("bad time"), "{bad}: {err}");
        }
    }
}
