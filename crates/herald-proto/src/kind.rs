//! The three kinds of record and sets of them.

use std::fmt;
use std::str::FromStr;

/// What a record is: a log record, a message or an information-object change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum Kind {
    /// A log record.
    #[default]
    Log = 0,
    /// A publish/subscribe message (also requests and replies).
    Message = 1,
    /// A change of an information object.
    Info = 2,
}

/// Why a kind could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown kind `{0}` (expected log, message or info)")]
pub struct KindError(pub String);

impl Kind {
    /// Returns the kind with wire value `value`.
    pub fn from_u8(value: u8) -> Option<Self> {
        match value {
            0 => Some(Kind::Log),
            1 => Some(Kind::Message),
            2 => Some(Kind::Info),
            _ => None,
        }
    }

    /// Returns the lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Log => "log",
            Kind::Message => "message",
            Kind::Info => "info",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Kind {
    type Err = KindError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        [Kind::Log, Kind::Message, Kind::Info]
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| KindError(text.to_string()))
    }
}

/// A set of kinds, one bit each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KindSet(u8);

impl KindSet {
    /// Every kind.
    pub const ALL: KindSet = KindSet(0b111);

    /// Returns the set with the kinds whose bits are in `bits`.
    pub fn from_bits(bits: u8) -> Self {
        KindSet(bits & Self::ALL.0)
    }

    /// Returns the raw bits (bit n = kind n).
    pub fn bits(self) -> u8 {
        self.0
    }

    /// Returns true if `kind` is in the set.
    pub fn contains(self, kind: Kind) -> bool {
        self.0 & (1 << kind as u8) != 0
    }
}

impl Default for KindSet {
    fn default() -> Self {
        Self::ALL
    }
}

impl From<Kind> for KindSet {
    fn from(kind: Kind) -> Self {
        KindSet(1 << kind as u8)
    }
}

impl FromStr for KindSet {
    type Err = KindError;

    /// Parses `*` or a comma-separated list such as `log,info`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text.trim() == "*" {
            return Ok(Self::ALL);
        }
        let mut bits = 0;
        for name in text.split(',') {
            bits |= KindSet::from(name.parse::<Kind>()?).0;
        }
        Ok(KindSet(bits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists() {
        let set: KindSet = "log, info".parse().unwrap();
        assert!(set.contains(Kind::Log) && set.contains(Kind::Info));
        assert!(!set.contains(Kind::Message));
        assert_eq!(
            "logs".parse::<KindSet>().unwrap_err().to_string(),
            "unknown kind `logs` (expected log, message or info)"
        );
    }
}
