//! [`Keep`]: how long a rule keeps what it archives — the retention class that partitions
//! the archive, so that expiring means dropping whole days of one class.

use std::fmt;
use std::str::FromStr;

const MINUTE: u64 = 60;
const HOUR: u64 = 3600;
const DAY: u64 = 86_400;

/// A retention period in whole seconds (at least one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Keep(u64);

impl Keep {
    /// Returns a retention of `days` days.
    pub const fn days(days: u64) -> Keep {
        Keep(days * DAY)
    }

    /// Returns a retention of `seconds` seconds (at least one).
    pub fn seconds(seconds: u64) -> Keep {
        Keep(seconds.max(1))
    }

    /// Returns the period in seconds.
    pub fn as_secs(self) -> u64 {
        self.0
    }

    /// Returns the period in nanoseconds, saturating.
    pub fn as_nanos(self) -> i64 {
        i64::try_from(self.0)
            .unwrap_or(i64::MAX)
            .saturating_mul(1_000_000_000)
    }
}

impl fmt::Display for Keep {
    /// Writes the largest whole unit: `30d`, `12h`, `90m`, `45s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            s if s % DAY == 0 => write!(f, "{}d", s / DAY),
            s if s % HOUR == 0 => write!(f, "{}h", s / HOUR),
            s if s % MINUTE == 0 => write!(f, "{}m", s / MINUTE),
            s => write!(f, "{s}s"),
        }
    }
}

impl FromStr for Keep {
    type Err = String;

    /// Parses `30d`, `12h`, `90m`, `45s` or `2w`.
    fn from_str(text: &str) -> Result<Keep, String> {
        let bad =
            || format!("bad retention `{text}` (expected a number and a unit: `30d`, `12h`, `2w`)");
        let split = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        let number: u64 = text[..split].parse().map_err(|_| bad())?;
        let unit = match &text[split..] {
            "s" => 1,
            "m" => MINUTE,
            "h" => HOUR,
            "d" => DAY,
            "w" => 7 * DAY,
            _ => return Err(bad()),
        };
        match number.checked_mul(unit) {
            Some(0) => Err(format!(
                "retention `{text}` keeps nothing; give at least `1s`"
            )),
            Some(seconds) => Ok(Keep(seconds)),
            None => Err(bad()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_prints_and_parses_back() {
        for text in ["30d", "12h", "90m", "45s"] {
            assert_eq!(text.parse::<Keep>().unwrap().to_string(), text);
        }
        assert_eq!("2w".parse::<Keep>().unwrap(), Keep::days(14));
        assert_eq!("24h".parse::<Keep>().unwrap().to_string(), "1d");
        for bad in ["", "30", "d", "3y", "0d", "-1d"] {
            assert!(bad.parse::<Keep>().is_err(), "{bad}");
        }
    }
}
