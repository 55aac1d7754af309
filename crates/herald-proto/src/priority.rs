//! Priorities 1..11 (as in the ALMA Common Software) and sets of them.

use std::fmt;
use std::str::FromStr;

/// How important a record is. The numbers are the wire values; 7 is unused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(u8)]
pub enum Priority {
    /// Finest detail.
    Trace = 1,
    /// Debugging detail meant to be removed again.
    Delouse = 2,
    /// Debugging.
    Debug = 3,
    /// Normal operation.
    #[default]
    Info = 4,
    /// Normal but significant.
    Notice = 5,
    /// Something may be wrong.
    Warning = 6,
    /// Something failed.
    Error = 8,
    /// A part of the system is unusable.
    Critical = 9,
    /// Someone must act now.
    Alert = 10,
    /// The system is unusable.
    Emergency = 11,
}

/// Every priority in ascending order.
pub const ALL_PRIORITIES: [Priority; 10] = [
    Priority::Trace,
    Priority::Delouse,
    Priority::Debug,
    Priority::Info,
    Priority::Notice,
    Priority::Warning,
    Priority::Error,
    Priority::Critical,
    Priority::Alert,
    Priority::Emergency,
];

/// Why a priority or a priority set could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PriorityError {
    /// A name that is not a priority.
    #[error("unknown priority `{0}` (expected one of TRACE, DELOUSE, DEBUG, INFO, NOTICE, WARNING, ERROR, CRITICAL, ALERT, EMERGENCY or 1..11 without 7)")]
    Unknown(String),
    /// A number that is not a priority.
    #[error("priority {0} is not defined (expected 1..11 without 7)")]
    Number(u64),
    /// A set expression that selects nothing.
    #[error("priority set `{0}` selects no priority")]
    Empty(String),
}

impl Priority {
    /// Returns the priority with wire value `value`.
    ///
    /// # Errors
    /// [`PriorityError::Number`] for 0, 7 and anything above 11.
    pub fn from_u8(value: u8) -> Result<Self, PriorityError> {
        ALL_PRIORITIES
            .into_iter()
            .find(|p| *p as u8 == value)
            .ok_or(PriorityError::Number(u64::from(value)))
    }

    /// Returns the upper-case name (`WARNING`).
    pub fn name(self) -> &'static str {
        match self {
            Priority::Trace => "TRACE",
            Priority::Delouse => "DELOUSE",
            Priority::Debug => "DEBUG",
            Priority::Info => "INFO",
            Priority::Notice => "NOTICE",
            Priority::Warning => "WARNING",
            Priority::Error => "ERROR",
            Priority::Critical => "CRITICAL",
            Priority::Alert => "ALERT",
            Priority::Emergency => "EMERGENCY",
        }
    }

    /// Returns the bit of this priority in a [`PrioritySet`].
    pub fn bit(self) -> u16 {
        1 << (self as u8)
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Priority {
    type Err = PriorityError;

    /// Parses a name (any case) or a number.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let trimmed = text.trim();
        if let Ok(number) = trimmed.parse::<u64>() {
            return u8::try_from(number)
                .ok()
                .and_then(|n| Priority::from_u8(n).ok())
                .ok_or(PriorityError::Number(number));
        }
        ALL_PRIORITIES
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(trimmed))
            .ok_or_else(|| PriorityError::Unknown(text.to_string()))
    }
}

/// A set of priorities, one bit each: the priority channels a subscription listens to.
///
/// Text forms: `*` (all), `>=WARNING`, `>INFO`, `<=DEBUG`, `<NOTICE`, `=DEBUG`, `DEBUG`,
/// `DEBUG..ERROR` (inclusive range) and comma-separated unions of these (`=DEBUG,>=ERROR`),
/// optionally in braces, as the design writes an exact set (`{DEBUG}`, `{DEBUG,ERROR}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PrioritySet(u16);

impl PrioritySet {
    /// Every priority.
    pub const ALL: PrioritySet = PrioritySet(0b0000_1111_0111_1110);

    /// Returns the set holding exactly the priorities whose bits are in `bits`; bits that
    /// name no priority are ignored.
    pub fn from_bits(bits: u16) -> Self {
        PrioritySet(bits & Self::ALL.0)
    }

    /// Returns the raw bits (bit n = priority n).
    pub fn bits(self) -> u16 {
        self.0
    }

    /// Returns the set of priorities `>= low`.
    pub fn at_least(low: Priority) -> Self {
        Self::from_bits(!(low.bit() - 1))
    }

    /// Returns true if `priority` is in the set.
    pub fn contains(self, priority: Priority) -> bool {
        self.0 & priority.bit() != 0
    }

    /// Returns true if no priority is in the set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    fn range(low: Priority, high: Priority) -> Self {
        let bits = ALL_PRIORITIES
            .into_iter()
            .filter(|p| *p >= low && *p <= high)
            .fold(0, |bits, p| bits | p.bit());
        PrioritySet(bits)
    }

    fn parse_term(term: &str) -> Result<Self, PriorityError> {
        let term = term.trim();
        if term == "*" || term.eq_ignore_ascii_case("all") {
            return Ok(Self::ALL);
        }
        if let Some((low, high)) = term.split_once("..") {
            return Ok(Self::range(low.parse()?, high.parse()?));
        }
        let (op, name) = match term.find(|c: char| !matches!(c, '<' | '>' | '=')) {
            Some(split) => term.split_at(split),
            None => return Err(PriorityError::Unknown(term.to_string())),
        };
        let priority: Priority = name.parse()?;
        let set = match op {
            "" | "=" | "==" => PrioritySet(priority.bit()),
            ">=" => Self::range(priority, Priority::Emergency),
            "<=" => Self::range(Priority::Trace, priority),
            ">" => PrioritySet(Self::range(priority, Priority::Emergency).0 & !priority.bit()),
            "<" => PrioritySet(Self::range(Priority::Trace, priority).0 & !priority.bit()),
            _ => return Err(PriorityError::Unknown(term.to_string())),
        };
        Ok(set)
    }
}

impl Default for PrioritySet {
    fn default() -> Self {
        Self::ALL
    }
}

impl FromStr for PrioritySet {
    type Err = PriorityError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let trimmed = text.trim();
        let terms = trimmed
            .strip_prefix('{')
            .and_then(|inner| inner.strip_suffix('}'))
            .unwrap_or(trimmed);
        let mut bits = 0;
        for term in terms.split(',') {
            bits |= Self::parse_term(term)?.0;
        }
        if bits == 0 {
            return Err(PriorityError::Empty(text.to_string()));
        }
        Ok(PrioritySet(bits))
    }
}

impl fmt::Display for PrioritySet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Self::ALL {
            return f.write_str("*");
        }
        let names: Vec<&str> = ALL_PRIORITIES
            .into_iter()
            .filter(|p| self.contains(*p))
            .map(Priority::name)
            .collect();
        f.write_str(&names.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str) -> Vec<Priority> {
        let set: PrioritySet = text.parse().unwrap();
        ALL_PRIORITIES
            .into_iter()
            .filter(|p| set.contains(*p))
            .collect()
    }

    #[test]
    fn parses_operators_ranges_and_unions() {
        use Priority::*;
        assert_eq!(
            set(">=WARNING"),
            [Warning, Error, Critical, Alert, Emergency]
        );
        assert_eq!(set("=DEBUG"), [Debug]);
        assert_eq!(set("debug"), [Debug]);
        assert_eq!(set("<INFO"), [Trace, Delouse, Debug]);
        assert_eq!(set(">ALERT"), [Emergency]);
        assert_eq!(set("INFO..WARNING"), [Info, Notice, Warning]);
        assert_eq!(
            set("=DEBUG,>=CRITICAL"),
            [Debug, Critical, Alert, Emergency]
        );
        assert_eq!(set("*").len(), 10);
        assert_eq!(set(">=8"), [Error, Critical, Alert, Emergency]);
        assert_eq!(set("{DEBUG}"), [Debug]);
        assert_eq!(
            set(" {DEBUG,>=CRITICAL} "),
            [Debug, Critical, Alert, Emergency]
        );
    }

    #[test]
    fn rejects_unknown_names_with_the_value() {
        let err = ">=WARN".parse::<PrioritySet>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown priority `WARN` (expected one of TRACE, DELOUSE, DEBUG, INFO, NOTICE, \
             WARNING, ERROR, CRITICAL, ALERT, EMERGENCY or 1..11 without 7)"
        );
        assert_eq!(
            "7".parse::<Priority>().unwrap_err(),
            PriorityError::Number(7)
        );
        assert!(matches!(
            "ERROR..DEBUG".parse::<PrioritySet>(),
            Err(PriorityError::Empty(_))
        ));
    }

    #[test]
    fn display_round_trips() {
        for text in ["*", "DEBUG", "WARNING,ERROR,CRITICAL,ALERT,EMERGENCY"] {
            assert_eq!(text.parse::<PrioritySet>().unwrap().to_string(), text);
        }
    }
}
