//! How a subscriber wants its records delivered when it cannot keep up: the queue policy,
//! queue bounds, the protected priority, latest-only delivery, and the queue group.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::error::DecodeError;
use crate::msgpack::{self, Reader};
use crate::priority::Priority;

/// What a subscriber's queue does when it is full. Whatever the policy, lower priorities
/// are shed first, records at or above the protected priority are kept while the hard
/// limit allows, and every loss is reported to the subscriber in a gap notice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Policy {
    /// Keep what is queued; refuse the newcomer (or evict the newest queued record of a
    /// lower priority to make room for it). The default: a viewer sees an unbroken past.
    #[default]
    DropNew = 0,
    /// Make room by evicting the oldest queued record of the lowest priority present (up to
    /// the newcomer's own): a display wants the present.
    DropOld = 1,
    /// Make the publisher wait, at most the block timeout, for room; then shed as `DropNew`.
    /// The only policy under which a subscriber can slow a publisher, and only that long.
    Block = 2,
    /// Close the subscriber's connection, telling it why: for consumers that must see
    /// everything or nothing.
    Disconnect = 3,
}

impl Policy {
    /// Every policy, by wire value.
    pub const ALL: [Policy; 4] = [
        Policy::DropNew,
        Policy::DropOld,
        Policy::Block,
        Policy::Disconnect,
    ];

    /// Returns the name used on command lines and in the monitor (`drop-new`).
    pub fn name(self) -> &'static str {
        match self {
            Policy::DropNew => "drop-new",
            Policy::DropOld => "drop-old",
            Policy::Block => "block",
            Policy::Disconnect => "disconnect",
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a policy name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown policy `{0}` (expected drop-new, drop-old, block or disconnect)")]
pub struct PolicyError(pub String);

impl FromStr for Policy {
    type Err = PolicyError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Policy::ALL
            .into_iter()
            .find(|p| p.name() == text.trim())
            .ok_or_else(|| PolicyError(text.to_string()))
    }
}

/// A subscriber's delivery options. `None` means "the server's default".
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeliveryOptions {
    /// What to do when the queue is full.
    pub policy: Policy,
    /// Queue bound in records (the server caps it at its own `queue_records`).
    pub max_records: Option<u64>,
    /// Queue bound in bytes (the server caps it at its own `queue_bytes`).
    pub max_bytes: Option<u64>,
    /// Longest a publisher waits under [`Policy::Block`], in milliseconds (capped by the
    /// server's `max_block_timeout`).
    pub block_timeout_ms: Option<u64>,
    /// Records at or above this priority are never shed while the hard limit allows.
    pub protected: Option<Priority>,
    /// Latest-only delivery: per subject keep only the newest record and deliver at most
    /// this many records per second per subject (what a display wants).
    pub latest_per_second: Option<f64>,
    /// A queue group: each matching record goes to one member of the group (the one with
    /// the shortest queue), not to all of them; other subscribers get their own copy.
    pub group: Option<Arc<str>>,
}

mod key {
    pub const POLICY: u64 = 0;
    pub const MAX_RECORDS: u64 = 1;
    pub const MAX_BYTES: u64 = 2;
    pub const BLOCK_TIMEOUT_MS: u64 = 3;
    pub const PROTECTED: u64 = 4;
    pub const LATEST_PER_SECOND: u64 = 5;
    pub const GROUP: u64 = 6;
}

/// Longest queue group name, in bytes.
pub const MAX_GROUP_BYTES: usize = 255;

/// Highest latest-only rate accepted, per subject per second.
pub const MAX_LATEST_PER_SECOND: f64 = 10_000.0;

impl DeliveryOptions {
    /// Appends the wire encoding: a map that leaves out defaults, keys ascending.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let present = [
            self.policy != Policy::DropNew,
            self.max_records.is_some(),
            self.max_bytes.is_some(),
            self.block_timeout_ms.is_some(),
            self.protected.is_some(),
            self.latest_per_second.is_some(),
            self.group.is_some(),
        ];
        msgpack::write_map_len(out, present.iter().filter(|p| **p).count() as u32);
        if present[0] {
            msgpack::write_uint(out, key::POLICY);
            msgpack::write_uint(out, self.policy as u64);
        }
        let numbers = [
            (key::MAX_RECORDS, self.max_records),
            (key::MAX_BYTES, self.max_bytes),
            (key::BLOCK_TIMEOUT_MS, self.block_timeout_ms),
            (key::PROTECTED, self.protected.map(|p| p as u64)),
        ];
        for (field, value) in numbers {
            if let Some(value) = value {
                msgpack::write_uint(out, field);
                msgpack::write_uint(out, value);
            }
        }
        if let Some(rate) = self.latest_per_second {
            msgpack::write_uint(out, key::LATEST_PER_SECOND);
            msgpack::write_f64(out, rate);
        }
        if let Some(group) = &self.group {
            msgpack::write_uint(out, key::GROUP);
            msgpack::write_str(out, group);
        }
    }

    /// Decodes and checks delivery options.
    ///
    /// # Errors
    /// [`DecodeError`] naming the option and quoting the bad value.
    pub fn decode(reader: &mut Reader<'_>) -> Result<DeliveryOptions, DecodeError> {
        let mut options = DeliveryOptions::default();
        let mut seen = 0u8;
        for _ in 0..reader.read_map_len()? {
            let field = reader.read_uint()?;
            if field > key::GROUP {
                return Err(DecodeError::UnknownField {
                    key: field.to_string(),
                    message: "delivery options",
                });
            }
            if seen & (1 << field) != 0 {
                return Err(DecodeError::DuplicateField {
                    field: NAMES[field as usize],
                    message: "delivery options",
                });
            }
            seen |= 1 << field;
            match field {
                key::POLICY => options.policy = read_policy(reader)?,
                key::MAX_RECORDS => {
                    options.max_records = Some(read_positive(reader, "max_records")?)
                }
                key::MAX_BYTES => options.max_bytes = Some(read_positive(reader, "max_bytes")?),
                key::BLOCK_TIMEOUT_MS => options.block_timeout_ms = Some(reader.read_uint()?),
                key::PROTECTED => options.protected = Some(read_priority(reader)?),
                key::LATEST_PER_SECOND => options.latest_per_second = Some(read_rate(reader)?),
                _ => options.group = Some(read_group(reader)?),
            }
        }
        Ok(options)
    }
}

const NAMES: [&str; 7] = [
    "policy",
    "max_records",
    "max_bytes",
    "block_timeout_ms",
    "protected",
    "latest_per_second",
    "group",
];

fn invalid(field: &'static str, reason: String) -> DecodeError {
    DecodeError::InvalidField { field, reason }
}

fn read_policy(reader: &mut Reader<'_>) -> Result<Policy, DecodeError> {
    let value = reader.read_uint()?;
    Policy::ALL.into_iter().find(|p| *p as u64 == value).ok_or_else(|| {
        invalid("policy", format!("unknown policy {value} (expected 0 drop-new, 1 drop-old, 2 block, 3 disconnect)"))
    })
}

fn read_positive(reader: &mut Reader<'_>, field: &'static str) -> Result<u64, DecodeError> {
    match reader.read_uint()? {
        0 => Err(invalid(field, "0 (must be at least 1)".to_string())),
        n => Ok(n),
    }
}

fn read_priority(reader: &mut Reader<'_>) -> Result<Priority, DecodeError> {
    let value = reader.read_uint()?;
    u8::try_from(value)
        .ok()
        .and_then(|v| Priority::from_u8(v).ok())
        .ok_or_else(|| {
            invalid(
                "protected",
                format!("priority {value} is not defined (expected 1..11 without 7)"),
            )
        })
}

fn read_group(reader: &mut Reader<'_>) -> Result<Arc<str>, DecodeError> {
    let name = reader.read_str()?;
    check_group(name).map_err(|reason| invalid("group", reason))?;
    Ok(Arc::from(name))
}

/// Checks a queue group's name: 1 to 255 bytes without control characters.
///
/// # Errors
/// A sentence naming what is wrong with it.
pub fn check_group(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("empty (a queue group needs a name)".to_string());
    }
    if name.len() > MAX_GROUP_BYTES {
        return Err(format!(
            "a name of {} bytes is longer than {MAX_GROUP_BYTES}",
            name.len()
        ));
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Err(format!(
            "`{}` holds the control character U+{:04X}",
            name.escape_debug(),
            u32::from(c)
        ));
    }
    Ok(())
}

fn read_rate(reader: &mut Reader<'_>) -> Result<f64, DecodeError> {
    let rate = reader.read_f64()?;
    if !(rate > 0.0 && rate <= MAX_LATEST_PER_SECOND) {
        return Err(invalid(
            "latest_per_second",
            format!("{rate} is outside (0, 10000]"),
        ));
    }
    Ok(rate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_encode_as_an_empty_map_and_everything_round_trips() {
        let mut out = Vec::new();
        DeliveryOptions::default().encode(&mut out);
        assert_eq!(out, [0x80]);
        let options = DeliveryOptions {
            policy: Policy::Block,
            max_records: Some(100),
            max_bytes: Some(1 << 20),
            block_timeout_ms: Some(250),
            protected: Some(Priority::Alert),
            latest_per_second: Some(2.5),
            group: Some(Arc::from("writers")),
        };
        let mut out = Vec::new();
        options.encode(&mut out);
        assert_eq!(
            DeliveryOptions::decode(&mut Reader::new(&out)).unwrap(),
            options
        );
    }

    #[test]
    fn bad_options_name_the_option() {
        let decode = |key: u64, value: u64| {
            let mut out = Vec::new();
            msgpack::write_map_len(&mut out, 1);
            msgpack::write_uint(&mut out, key);
            msgpack::write_uint(&mut out, value);
            DeliveryOptions::decode(&mut Reader::new(&out))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(decode(0, 9), "invalid policy: unknown policy 9 (expected 0 drop-new, 1 drop-old, 2 block, 3 disconnect)");
        assert_eq!(decode(1, 0), "invalid max_records: 0 (must be at least 1)");
        assert_eq!(
            decode(4, 7),
            "invalid protected: priority 7 is not defined (expected 1..11 without 7)"
        );
        assert_eq!(decode(9, 1), "unknown field 9 in delivery options");
        let group = |name: &str| {
            let mut out = Vec::new();
            msgpack::write_map_len(&mut out, 1);
            msgpack::write_uint(&mut out, key::GROUP);
            msgpack::write_str(&mut out, name);
            DeliveryOptions::decode(&mut Reader::new(&out)).map_err(|e| e.to_string())
        };
        assert_eq!(
            group("").unwrap_err(),
            "invalid group: empty (a queue group needs a name)"
        );
        assert_eq!(
            group("a\nb").unwrap_err(),
            "invalid group: `a\\nb` holds the control character U+000A"
        );
        assert!(group(&"g".repeat(256)).unwrap_err().contains("256 bytes"));
        assert_eq!(
            group("alarm handlers").unwrap().group.as_deref(),
            Some("alarm handlers")
        );
        assert_eq!(
            "drop-newest".parse::<Policy>().unwrap_err().to_string(),
            "unknown policy `drop-newest` (expected drop-new, drop-old, block or disconnect)"
        );
    }
}
