//! Subscription filters: subject and type globs, a priority set, audiences and kinds.

use crate::error::DecodeError;
use crate::glob::{Glob, GlobError};
use crate::kind::{Kind, KindError, KindSet};
use crate::msgpack::{self, Reader};
use crate::priority::{Priority, PriorityError, PrioritySet};

/// What a subscriber wants to receive. Every dimension must match.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Filter {
    /// Glob over the record's subject.
    pub subject: Glob,
    /// Glob over the record's type.
    pub type_name: Glob,
    /// Priority channels.
    pub priorities: PrioritySet,
    /// Audiences this subscriber belongs to; empty receives every record. A record with an
    /// empty audience is for everyone.
    pub audience: Vec<String>,
    /// Kinds of record.
    pub kinds: KindSet,
}

/// Why a filter was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FilterError {
    /// A bad subject pattern.
    #[error("bad subject pattern: {0}")]
    Subject(GlobError),
    /// A bad type pattern.
    #[error("bad type pattern: {0}")]
    Type(GlobError),
    /// A bad priority set.
    #[error("{0}")]
    Priority(#[from] PriorityError),
    /// A bad kind.
    #[error("{0}")]
    Kind(#[from] KindError),
    /// An empty or over-long audience name.
    #[error("bad audience name `{0}`: names are 1..=64 bytes")]
    Audience(String),
    /// Malformed wire encoding.
    #[error("{0}")]
    Decode(#[from] DecodeError),
}

/// Longest audience name, in bytes.
pub const MAX_AUDIENCE_BYTES: usize = 64;

mod key {
    pub const SUBJECT: u64 = 0;
    pub const TYPE: u64 = 1;
    pub const PRIORITIES: u64 = 2;
    pub const AUDIENCE: u64 = 3;
    pub const KINDS: u64 = 4;
}

impl Filter {
    /// Returns a filter on subject pattern `subject`, everything else open.
    ///
    /// # Errors
    /// [`FilterError::Subject`] for a bad pattern.
    pub fn subject(subject: &str) -> Result<Filter, FilterError> {
        Ok(Filter {
            subject: Glob::new(subject).map_err(FilterError::Subject)?,
            ..Filter::default()
        })
    }

    /// Parses each dimension from its text form; `None` leaves it open.
    ///
    /// # Errors
    /// The [`FilterError`] of the first dimension that does not parse.
    pub fn parse(
        subject: Option<&str>,
        type_name: Option<&str>,
        priorities: Option<&str>,
        audience: &[String],
        kinds: Option<&str>,
    ) -> Result<Filter, FilterError> {
        let mut filter = Filter::default();
        if let Some(subject) = subject {
            filter.subject = Glob::new(subject).map_err(FilterError::Subject)?;
        }
        if let Some(type_name) = type_name {
            filter.type_name = Glob::new(type_name).map_err(FilterError::Type)?;
        }
        if let Some(priorities) = priorities {
            filter.priorities = priorities.parse()?;
        }
        if let Some(kinds) = kinds {
            filter.kinds = kinds.parse()?;
        }
        for name in audience {
            check_audience(name)?;
        }
        filter.audience = audience.to_vec();
        Ok(filter)
    }

    /// Returns true if a record with these properties passes every dimension but the subject
    /// (which the router has already matched through its cache).
    pub fn matches_rest(
        &self,
        kind: Kind,
        priority: Priority,
        type_name: &str,
        audience: &[u8],
    ) -> bool {
        self.kinds.contains(kind)
            && self.priorities.contains(priority)
            && self.type_name.matches(type_name)
            && self.audience_matches(audience)
    }

    /// Returns true if `record` passes every dimension but the subject; its type is only
    /// looked at when this filter has a type pattern.
    pub fn matches_record(&self, record: &crate::raw_record::RawRecord) -> bool {
        let meta = &record.meta;
        self.kinds.contains(meta.kind)
            && self.priorities.contains(meta.priority)
            && (self.type_name.is_any() || self.type_name.matches(record.type_name()))
            && self.audience_matches(record.audience())
    }

    /// Returns true if the encoded audience array `audience` (empty slice when the record has
    /// none) shares a name with this filter's audiences.
    fn audience_matches(&self, audience: &[u8]) -> bool {
        if self.audience.is_empty() || audience.is_empty() {
            return true;
        }
        let mut reader = Reader::new(audience);
        let Ok(count) = reader.read_array_len() else {
            return false;
        };
        if count == 0 {
            return true;
        }
        (0..count).any(|_| {
            reader
                .read_str()
                .is_ok_and(|name| self.audience.iter().any(|a| a == name))
        })
    }

    /// Appends the wire encoding: a map that leaves out open dimensions.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let present = [
            !self.subject.is_any(),
            !self.type_name.is_any(),
            self.priorities != PrioritySet::ALL,
            !self.audience.is_empty(),
            self.kinds != KindSet::ALL,
        ];
        msgpack::write_map_len(out, present.iter().filter(|p| **p).count() as u32);
        if present[0] {
            msgpack::write_uint(out, key::SUBJECT);
            msgpack::write_str(out, self.subject.as_str());
        }
        if present[1] {
            msgpack::write_uint(out, key::TYPE);
            msgpack::write_str(out, self.type_name.as_str());
        }
        if present[2] {
            msgpack::write_uint(out, key::PRIORITIES);
            msgpack::write_uint(out, u64::from(self.priorities.bits()));
        }
        if present[3] {
            msgpack::write_uint(out, key::AUDIENCE);
            msgpack::write_array_len(out, msgpack::len_u32(self.audience.len()));
            for name in &self.audience {
                msgpack::write_str(out, name);
            }
        }
        if present[4] {
            msgpack::write_uint(out, key::KINDS);
            msgpack::write_uint(out, u64::from(self.kinds.bits()));
        }
    }

    /// Decodes and validates a filter.
    ///
    /// # Errors
    /// [`FilterError`] naming the bad dimension and its value.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Filter, FilterError> {
        let mut filter = Filter::default();
        for _ in 0..reader.read_map_len()? {
            match reader.read_uint()? {
                key::SUBJECT => {
                    filter.subject = Glob::new(reader.read_str()?).map_err(FilterError::Subject)?
                }
                key::TYPE => {
                    filter.type_name = Glob::new(reader.read_str()?).map_err(FilterError::Type)?
                }
                key::PRIORITIES => {
                    let bits = reader.read_uint()?;
                    // Name the first bit that is no priority, rather than calling the set empty.
                    let undefined = bits & !u64::from(PrioritySet::ALL.bits());
                    if undefined != 0 {
                        let number = u64::from(undefined.trailing_zeros());
                        return Err(PriorityError::Number(number).into());
                    }
                    let set = PrioritySet::from_bits(bits as u16);
                    if set.is_empty() {
                        return Err(PriorityError::Empty(format!("bits {bits:#x}")).into());
                    }
                    filter.priorities = set;
                }
                key::AUDIENCE => {
                    for _ in 0..reader.read_array_len()? {
                        let name = reader.read_str()?;
                        check_audience(name)?;
                        filter.audience.push(name.to_string());
                    }
                }
                key::KINDS => {
                    let bits = reader.read_uint()?;
                    filter.kinds = match u8::try_from(bits) {
                        Ok(b) if b != 0 && b & !KindSet::ALL.bits() == 0 => KindSet::from_bits(b),
                        _ => return Err(KindError(format!("bits {bits:#x}")).into()),
                    };
                }
                other => {
                    let key = other.to_string();
                    return Err(DecodeError::UnknownField {
                        key,
                        message: "filter",
                    }
                    .into());
                }
            }
        }
        Ok(filter)
    }
}

fn check_audience(name: &str) -> Result<(), FilterError> {
    if name.is_empty() || name.len() > MAX_AUDIENCE_BYTES {
        return Err(FilterError::Audience(name.to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_leaves_out_open_dimensions() {
        let open = Filter::default();
        let mut out = Vec::new();
        open.encode(&mut out);
        assert_eq!(out, [0x80]);

        let filter = Filter::parse(
            Some("ANTENNA.*"),
            Some("fault"),
            Some(">=WARNING"),
            &["operator".into()],
            Some("log"),
        )
        .unwrap();
        let mut out = Vec::new();
        filter.encode(&mut out);
        assert_eq!(Filter::decode(&mut Reader::new(&out)).unwrap(), filter);
    }

    #[test]
    fn audience_rules() {
        let mut audience = Vec::new();
        msgpack::write_array_len(&mut audience, 2);
        msgpack::write_str(&mut audience, "science");
        msgpack::write_str(&mut audience, "operator");
        let operator = Filter {
            audience: vec!["operator".into()],
            ..Filter::default()
        };
        let developer = Filter {
            audience: vec!["developer".into()],
            ..Filter::default()
        };
        let matches = |f: &Filter, a: &[u8]| f.matches_rest(Kind::Log, Priority::Info, "", a);
        assert!(matches(&operator, &audience));
        assert!(!matches(&developer, &audience));
        assert!(
            matches(&developer, &[]),
            "a record with no audience is for everyone"
        );
        assert!(matches(&Filter::default(), &audience));
    }

    #[test]
    fn undefined_priority_bits_are_named() {
        let decode = |bits: u64| {
            let mut out = Vec::new();
            msgpack::write_map_len(&mut out, 1);
            msgpack::write_uint(&mut out, key::PRIORITIES);
            msgpack::write_uint(&mut out, bits);
            Filter::decode(&mut Reader::new(&out)).map(|f| f.priorities)
        };
        let trace_and_14 = (1 << 14) | Priority::Trace.bit();
        assert_eq!(
            decode(u64::from(trace_and_14)).unwrap_err().to_string(),
            "priority 14 is not defined (expected 1..11 without 7)"
        );
        assert_eq!(
            decode(1 << 40).unwrap_err().to_string(),
            "priority 40 is not defined (expected 1..11 without 7)"
        );
        assert_eq!(
            decode(0).unwrap_err().to_string(),
            "priority set `bits 0x0` selects no priority"
        );
        let warning = PrioritySet::at_least(Priority::Warning);
        assert_eq!(decode(u64::from(warning.bits())), Ok(warning));
    }

    #[test]
    fn errors_name_the_dimension() {
        let err = Filter::parse(Some(""), None, None, &[], None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "bad subject pattern: empty pattern (use `*` to match everything)"
        );
        let err = Filter::parse(None, None, Some(">=WARN"), &[], None).unwrap_err();
        assert!(
            err.to_string().starts_with("unknown priority `WARN`"),
            "{err}"
        );
        let err = Filter::parse(None, None, None, &[String::new()], None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "bad audience name ``: names are 1..=64 bytes"
        );
    }
}
