//! Typed field values: what a record's `fields` map holds.

use crate::error::DecodeError;
use crate::msgpack::{self, Kind, Reader};

/// A named field of a record, in the order the producer wrote it.
pub type Field = (String, Value);

/// A typed value. `time` travels as MessagePack extension 1 (see docs/protocol.md).
///
/// Integers are one type on the wire, from −2^63 to 2^64−1: `Int` holds those that fit
/// `i64`, `UInt` those above `i64::MAX` (hardware counters, 64-bit masks). A `UInt` at or
/// below `i64::MAX` is written exactly as the same `Int` and read back as `Int`; the two
/// compare equal.
#[derive(Debug, Clone)]
pub enum Value {
    /// A boolean.
    Bool(bool),
    /// A signed 64-bit integer.
    Int(i64),
    /// An unsigned 64-bit integer; read from the wire only above `i64::MAX`.
    UInt(u64),
    /// A 64-bit float.
    Float(f64),
    /// A UTF-8 string.
    Str(String),
    /// Raw bytes.
    Bytes(Vec<u8>),
    /// Nanoseconds since the Unix epoch, UTC.
    Time(i64),
    /// A list of values.
    Array(Vec<Value>),
    /// Named values, in order.
    Map(Vec<Field>),
}

impl Value {
    /// Appends the MessagePack encoding of this value.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Value::Bool(v) => msgpack::write_bool(out, *v),
            Value::Int(v) => msgpack::write_int(out, *v),
            Value::UInt(v) => msgpack::write_uint(out, *v),
            Value::Float(v) => msgpack::write_f64(out, *v),
            Value::Str(v) => msgpack::write_str(out, v),
            Value::Bytes(v) => msgpack::write_bin(out, v),
            Value::Time(v) => msgpack::write_time(out, *v),
            Value::Array(items) => {
                msgpack::write_array_len(out, msgpack::len_u32(items.len()));
                for item in items {
                    item.encode(out);
                }
            }
            Value::Map(fields) => encode_fields(out, fields),
        }
    }

    /// Decodes one value.
    ///
    /// # Errors
    /// [`DecodeError`] for malformed bytes, `nil`, or nesting deeper than
    /// [`msgpack::MAX_DEPTH`].
    pub fn decode(reader: &mut Reader<'_>, depth: u32) -> Result<Value, DecodeError> {
        if depth > msgpack::MAX_DEPTH {
            return Err(DecodeError::TooDeep {
                offset: reader.position(),
            });
        }
        let value = match reader.peek_kind()? {
            Kind::Bool => Value::Bool(reader.read_bool()?),
            Kind::Int => match reader.read_int_or_uint()? {
                Ok(v) => Value::Int(v),
                Err(v) => Value::UInt(v),
            },
            Kind::Float => Value::Float(reader.read_f64()?),
            Kind::Str => Value::Str(reader.read_str()?.to_string()),
            Kind::Bin => Value::Bytes(reader.read_bin()?.to_vec()),
            Kind::Ext => Value::Time(reader.read_time()?),
            Kind::Array => {
                let len = reader.read_array_len()?;
                let mut items = Vec::with_capacity(len.min(1024) as usize);
                for _ in 0..len {
                    items.push(Value::decode(reader, depth + 1)?);
                }
                Value::Array(items)
            }
            Kind::Map => Value::Map(decode_fields(reader, depth + 1)?),
            Kind::Nil => {
                return Err(DecodeError::InvalidField {
                    field: "fields",
                    reason: format!("nil at byte {} is not a value", reader.position()),
                })
            }
        };
        Ok(value)
    }

    /// Returns the value as plain text for people (`true`, `42`, `1.5`, `"text"` without quotes).
    pub fn to_text(&self) -> String {
        match self {
            Value::Bool(v) => v.to_string(),
            Value::Int(v) => v.to_string(),
            Value::UInt(v) => v.to_string(),
            Value::Float(v) => v.to_string(),
            Value::Str(v) => v.clone(),
            Value::Bytes(v) => v.iter().map(|b| format!("{b:02x}")).collect(),
            Value::Time(v) => crate::time::format_iso8601(*v),
            Value::Array(items) => {
                let parts: Vec<String> = items.iter().map(Value::to_text).collect();
                format!("[{}]", parts.join(","))
            }
            Value::Map(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{k}={}", v.to_text()))
                    .collect();
                format!("{{{}}}", parts.join(","))
            }
        }
    }
}

/// Appends a map of named values.
pub fn encode_fields(out: &mut Vec<u8>, fields: &[Field]) {
    msgpack::write_map_len(out, msgpack::len_u32(fields.len()));
    for (name, value) in fields {
        msgpack::write_str(out, name);
        value.encode(out);
    }
}

/// Decodes a map of named values, refusing duplicate names.
///
/// # Errors
/// [`DecodeError`] for malformed bytes or a name that appears twice.
pub fn decode_fields(reader: &mut Reader<'_>, depth: u32) -> Result<Vec<Field>, DecodeError> {
    let len = reader.read_map_len()?;
    let mut fields: Vec<Field> = Vec::with_capacity(len.min(1024) as usize);
    let mut seen = SeenNames::default();
    for _ in 0..len {
        let name = reader.read_str()?;
        seen.insert(name)?;
        let value = Value::decode(reader, depth).map_err(|err| name_value_error(name, err))?;
        fields.push((name.to_string(), value));
    }
    Ok(fields)
}

/// Validates a map of named values exactly as [`decode_fields`] would, without allocating
/// for the common case of up to 16 names.
///
/// # Errors
/// The same errors [`decode_fields`] returns for the same bytes.
pub fn check_fields(reader: &mut Reader<'_>, depth: u32) -> Result<(), DecodeError> {
    let len = reader.read_map_len()?;
    let mut seen = SeenNames::default();
    for _ in 0..len {
        let name = reader.read_str()?;
        seen.insert(name)?;
        check_value(reader, depth).map_err(|err| name_value_error(name, err))?;
    }
    Ok(())
}

/// Names compared in a plain array before [`SeenNames`] turns to its hash set.
const FEW_NAMES: usize = 16;

/// The names seen so far in one map. Most maps are small, so the first names are compared
/// in a short array; past that a hash set keeps checking a map linear in its size (a
/// frame of 170,000 distinct names took 96 s with a list). The set is made only then: making
/// one reads the thread's hash keys, which for a record with a field or two cost as much as
/// the rest of its fields' checks.
#[derive(Default)]
struct SeenNames<'a> {
    few: [&'a str; FEW_NAMES],
    count: usize,
    many: Option<std::collections::HashSet<&'a str>>,
}

impl<'a> SeenNames<'a> {
    /// Adds `name`, or says it appears twice.
    fn insert(&mut self, name: &'a str) -> Result<(), DecodeError> {
        let few = &self.few[..self.count.min(FEW_NAMES)];
        let repeated = few.contains(&name) || self.many.as_ref().is_some_and(|m| m.contains(name));
        if repeated {
            return Err(DecodeError::InvalidField {
                field: "fields",
                reason: format!("name `{name}` appears twice"),
            });
        }
        match self.count < FEW_NAMES {
            true => self.few[self.count] = name,
            false => {
                self.many.get_or_insert_with(Default::default).insert(name);
            }
        }
        self.count += 1;
        Ok(())
    }
}

/// Names the field whose value is an integer out of range or of a type the data model
/// does not have.
fn name_value_error(name: &str, err: DecodeError) -> DecodeError {
    match err {
        DecodeError::OutOfRange { value, offset } => DecodeError::InvalidField {
            field: "fields",
            reason: format!(
                "`{name}` holds {value} at byte {offset}, outside the integer range \
                 {}..={}",
                i64::MIN,
                u64::MAX
            ),
        },
        DecodeError::UnknownExtension { ext_type, offset } => DecodeError::InvalidField {
            field: "fields",
            reason: format!(
                "`{name}` holds MessagePack extension type {ext_type} at byte {offset}, \
                 which is no Herald value type (extension 1 is time)"
            ),
        },
        other => other,
    }
}

fn check_value(reader: &mut Reader<'_>, depth: u32) -> Result<(), DecodeError> {
    if depth > msgpack::MAX_DEPTH {
        return Err(DecodeError::TooDeep {
            offset: reader.position(),
        });
    }
    match reader.peek_kind()? {
        Kind::Array => {
            for _ in 0..reader.read_array_len()? {
                check_value(reader, depth + 1)?;
            }
            Ok(())
        }
        Kind::Map => check_fields(reader, depth + 1),
        Kind::Nil => Err(DecodeError::InvalidField {
            field: "fields",
            reason: format!("nil at byte {} is not a value", reader.position()),
        }),
        // Integers must fit i64 or u64, as `Value::decode` requires.
        Kind::Int => reader.read_int_or_uint().map(drop),
        Kind::Ext => reader.read_time().map(drop),
        _ => reader.skip_value(depth),
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<u64> for Value {
    /// `Int` when the value fits `i64`, as a reader would see it; else `UInt`.
    fn from(v: u64) -> Self {
        match i64::try_from(v) {
            Ok(v) => Value::Int(v),
            Err(_) => Value::UInt(v),
        }
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::UInt(a), Value::UInt(b)) => a == b,
            (Value::Int(a), Value::UInt(b)) | (Value::UInt(b), Value::Int(a)) => {
                u64::try_from(*a) == Ok(*b)
            }
            (Value::Float(a), Value::Float(b)) => a == b,
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::Bytes(a), Value::Bytes(b)) => a == b,
            (Value::Time(a), Value::Time(b)) => a == b,
            (Value::Array(a), Value::Array(b)) => a == b,
            (Value::Map(a), Value::Map(b)) => a == b,
            _ => false,
        }
    }
}

impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Value::Int(i64::from(v))
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Str(v.to_string())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Str(v)
    }
}

impl Value {
    /// Parses text from a command line: `true`/`false`, an integer, a float, else a string.
    pub fn parse_text(text: &str) -> Value {
        if let Ok(v) = text.parse::<bool>() {
            return Value::Bool(v);
        }
        if let Ok(v) = text.parse::<i64>() {
            return Value::Int(v);
        }
        if let Ok(v) = text.parse::<u64>() {
            return Value::UInt(v);
        }
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Value::Float(v),
            _ => Value::Str(text.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_values_round_trip() {
        let value = Value::Map(vec![
            ("ok".into(), Value::Bool(true)),
            ("n".into(), Value::Int(-70_000)),
            ("x".into(), Value::Float(1.5)),
            ("when".into(), Value::Time(1_763_700_000_123_456_789)),
            ("raw".into(), Value::Bytes(vec![0, 1, 255])),
            (
                "list".into(),
                Value::Array(vec![Value::from("a"), Value::Int(1)]),
            ),
        ]);
        let mut out = Vec::new();
        value.encode(&mut out);
        let decoded = Value::decode(&mut Reader::new(&out), 0).unwrap();
        assert_eq!(decoded, value);
    }

    #[test]
    fn check_agrees_with_decode() {
        let mut out = Vec::new();
        msgpack::write_map_len(&mut out, 2);
        msgpack::write_str(&mut out, "a");
        msgpack::write_nil(&mut out);
        msgpack::write_str(&mut out, "a");
        msgpack::write_int(&mut out, 1);
        let decoded = decode_fields(&mut Reader::new(&out), 0).unwrap_err();
        let checked = check_fields(&mut Reader::new(&out), 0).unwrap_err();
        assert_eq!(decoded, checked);
        assert_eq!(
            checked.to_string(),
            "invalid fields: nil at byte 3 is not a value"
        );
    }

    #[test]
    fn unsigned_values_above_i64_round_trip_and_small_ones_read_as_int() {
        let fields: Vec<Field> = vec![
            ("max".into(), Value::UInt(u64::MAX)),
            ("just_over".into(), Value::UInt(1 << 63)),
            ("small".into(), Value::UInt(7)),
            ("from".into(), Value::from(u64::MAX - 1)),
        ];
        let mut out = Vec::new();
        encode_fields(&mut out, &fields);
        check_fields(&mut Reader::new(&out), 0).unwrap();
        let back = decode_fields(&mut Reader::new(&out), 0).unwrap();
        assert!(matches!(back[0].1, Value::UInt(u64::MAX)));
        assert!(matches!(back[1].1, Value::UInt(v) if v == 1 << 63));
        assert!(matches!(back[2].1, Value::Int(7)), "{:?}", back[2].1);
        assert!(matches!(back[3].1, Value::UInt(v) if v == u64::MAX - 1));
        assert_eq!(back, fields);
        assert_eq!(Value::from(5u64), Value::Int(5));
        assert_ne!(Value::Int(-1), Value::UInt(u64::MAX));
        assert_eq!(Value::UInt(u64::MAX).to_text(), "18446744073709551615");
        assert_eq!(
            Value::parse_text("18446744073709551615"),
            Value::UInt(u64::MAX)
        );
    }

    #[test]
    fn an_extension_other_than_time_is_refused_by_name() {
        let mut out = Vec::new();
        msgpack::write_map_len(&mut out, 1);
        msgpack::write_str(&mut out, "when");
        out.extend_from_slice(&[0xd7, 0xff, 0, 0, 0, 0, 0, 0, 0, 1]);
        let decoded = decode_fields(&mut Reader::new(&out), 0).unwrap_err();
        let checked = check_fields(&mut Reader::new(&out), 0).unwrap_err();
        assert_eq!(decoded, checked);
        let message = checked.to_string();
        assert!(
            message.contains("`when` holds MessagePack extension type -1"),
            "{message}"
        );
    }

    #[test]
    fn many_distinct_names_check_in_linear_time_and_repeats_are_found() {
        let names = 170_000;
        let mut out = Vec::new();
        msgpack::write_map_len(&mut out, names + 1);
        for index in 0..names {
            msgpack::write_str(&mut out, &format!("f{index}"));
            msgpack::write_bool(&mut out, true);
        }
        // A repeat of a name far past the first few, so the hash set must catch it.
        msgpack::write_str(&mut out, "f123456");
        msgpack::write_bool(&mut out, true);
        let checked = check_fields(&mut Reader::new(&out), 0).unwrap_err();
        assert_eq!(
            checked,
            decode_fields(&mut Reader::new(&out), 0).unwrap_err()
        );
        assert_eq!(
            checked.to_string(),
            "invalid fields: name `f123456` appears twice"
        );
    }

    #[test]
    fn parses_command_line_text() {
        assert_eq!(Value::parse_text("42"), Value::Int(42));
        assert_eq!(Value::parse_text("2.5"), Value::Float(2.5));
        assert_eq!(Value::parse_text("false"), Value::Bool(false));
        assert_eq!(Value::parse_text("nan"), Value::from("nan"));
        assert_eq!(Value::parse_text("DV01"), Value::from("DV01"));
    }
}
