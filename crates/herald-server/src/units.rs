//! Parsing of durations (`500ms`, `2s`, `1m`) and byte sizes (`65536`, `64KiB`, `1MiB`).

use std::time::Duration;

/// Parses a duration: an integer followed by `ms`, `s`, `m` or `h`.
///
/// # Errors
/// A sentence quoting the text and the accepted forms.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let bad = || format!("bad duration `{text}` (expected e.g. `500ms`, `2s`, `1m`, `1h`)");
    let number: u64 = number.parse().map_err(|_| bad())?;
    let millis = match unit.trim() {
        "ms" => number,
        "s" => number.saturating_mul(1000),
        "m" => number.saturating_mul(60_000),
        "h" => number.saturating_mul(3_600_000),
        _ => return Err(bad()),
    };
    Ok(Duration::from_millis(millis))
}

/// Parses a byte size: an integer, optionally followed by `B`, `KiB`, `MiB` or `GiB`.
///
/// # Errors
/// A sentence quoting the text and the accepted forms.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let bad =
        || format!("bad byte size `{text}` (expected e.g. `65536`, `64KiB`, `16MiB`, `1GiB`)");
    let number: u64 = number.parse().map_err(|_| bad())?;
    let scale: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        _ => return Err(bad()),
    };
    number.checked_mul(scale).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_bytes("64KiB"), Ok(65_536));
        assert_eq!(parse_bytes("12"), Ok(12));
        assert_eq!(
            parse_duration("2 sec").unwrap_err(),
            "bad duration `2 sec` (expected e.g. `500ms`, `2s`, `1m`, `1h`)"
        );
        assert!(parse_bytes("1TB").is_err());
    }
}
