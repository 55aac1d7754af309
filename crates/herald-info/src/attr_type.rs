//! [`AttrType`]: the type of one attribute, written as text (`u32`, `array<double>`, `Beam`).

use std::fmt;
use std::str::FromStr;

use crate::error::{quote, InfoError};
use crate::name::{check_type_name, MAX_TYPE_NAME_BYTES};

/// The declared type of an attribute.
///
/// As text (see [`FromStr`] and [`Display`](fmt::Display)): `bool`, `s8`, `u8`, `s16`,
/// `u16`, `s32`, `u32`, `s64`, `u64`, `float`, `double`, `string`, `time`, `bytes`,
/// `array<T>` for any of these, and any other type name for a nested value of that type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AttrType {
    /// `true` or `false`.
    Bool,
    /// Signed 8-bit integer.
    S8,
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 16-bit integer.
    S16,
    /// Unsigned 16-bit integer.
    U16,
    /// Signed 32-bit integer.
    S32,
    /// Unsigned 32-bit integer.
    U32,
    /// Signed 64-bit integer.
    S64,
    /// Unsigned 64-bit integer (values travel as `i64`, so at most `i64::MAX`).
    U64,
    /// 32-bit float (held as `f64`, range-checked against `f32`).
    Float,
    /// 64-bit float.
    Double,
    /// UTF-8 text.
    String,
    /// Nanoseconds since the Unix epoch.
    Time,
    /// Raw bytes.
    Bytes,
    /// A list of values of one type.
    Array(Box<AttrType>),
    /// A value of a declared type, held as a map of its attributes.
    Nested(String),
}

/// Longest attribute-type text, in bytes (bounds the `array<…>` nesting too).
pub const MAX_ATTR_TYPE_BYTES: usize = MAX_TYPE_NAME_BYTES + 64;

impl AttrType {
    /// Returns the scalar types' names, in declaration order.
    fn scalar_name(&self) -> Option<&'static str> {
        let name = match self {
            AttrType::Bool => "bool",
            AttrType::S8 => "s8",
            AttrType::U8 => "u8",
            AttrType::S16 => "s16",
            AttrType::U16 => "u16",
            AttrType::S32 => "s32",
            AttrType::U32 => "u32",
            AttrType::S64 => "s64",
            AttrType::U64 => "u64",
            AttrType::Float => "float",
            AttrType::Double => "double",
            AttrType::String => "string",
            AttrType::Time => "time",
            AttrType::Bytes => "bytes",
            AttrType::Array(_) | AttrType::Nested(_) => return None,
        };
        Some(name)
    }

    fn from_scalar_name(name: &str) -> Option<AttrType> {
        let attr_type = match name {
            "bool" => AttrType::Bool,
            "s8" => AttrType::S8,
            "u8" => AttrType::U8,
            "s16" => AttrType::S16,
            "u16" => AttrType::U16,
            "s32" => AttrType::S32,
            "u32" => AttrType::U32,
            "s64" => AttrType::S64,
            "u64" => AttrType::U64,
            "float" => AttrType::Float,
            "double" => AttrType::Double,
            "string" => AttrType::String,
            "time" => AttrType::Time,
            "bytes" => AttrType::Bytes,
            _ => return None,
        };
        Some(attr_type)
    }

    /// Returns the inclusive range of an integer type, or `None` for other types.
    pub fn integer_range(&self) -> Option<(i128, i128)> {
        let range = match self {
            AttrType::S8 => (i128::from(i8::MIN), i128::from(i8::MAX)),
            AttrType::U8 => (0, i128::from(u8::MAX)),
            AttrType::S16 => (i128::from(i16::MIN), i128::from(i16::MAX)),
            AttrType::U16 => (0, i128::from(u16::MAX)),
            AttrType::S32 => (i128::from(i32::MIN), i128::from(i32::MAX)),
            AttrType::U32 => (0, i128::from(u32::MAX)),
            AttrType::S64 => (i128::from(i64::MIN), i128::from(i64::MAX)),
            AttrType::U64 => (0, i128::from(u64::MAX)),
            _ => return None,
        };
        Some(range)
    }

    /// Returns the name of the nested type this type refers to, looking through arrays.
    pub fn nested_type(&self) -> Option<&str> {
        match self {
            AttrType::Nested(name) => Some(name),
            AttrType::Array(inner) => inner.nested_type(),
            _ => None,
        }
    }
}

impl fmt::Display for AttrType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttrType::Array(inner) => write!(f, "array<{inner}>"),
            AttrType::Nested(name) => f.write_str(name),
            scalar => f.write_str(scalar.scalar_name().unwrap_or_default()),
        }
    }
}

impl FromStr for AttrType {
    type Err = InfoError;

    /// Parses `u32`, `array<double>`, `array<array<u8>>` or a type name. Spaces around the
    /// text and inside the angle brackets are ignored.
    fn from_str(text: &str) -> Result<AttrType, InfoError> {
        let malformed = |reason: String| InfoError::MalformedAttrType {
            text: quote(text),
            reason,
        };
        if text.len() > MAX_ATTR_TYPE_BYTES {
            return Err(malformed(format!(
                "{} bytes is longer than {MAX_ATTR_TYPE_BYTES}",
                text.len()
            )));
        }
        let trimmed = text.trim();
        if let Some(rest) = trimmed.strip_prefix("array") {
            let rest = rest.trim_start();
            if let Some(inner) = rest.strip_prefix('<') {
                let Some(inner) = inner.strip_suffix('>') else {
                    return Err(malformed("`array<` has no closing `>`".into()));
                };
                if inner.trim().is_empty() {
                    return Err(malformed("`array<>` names no element type".into()));
                }
                let element = inner.parse::<AttrType>().map_err(|err| match err {
                    InfoError::MalformedAttrType { reason, .. } => malformed(reason),
                    InfoError::MalformedTypeName { reason, .. } => malformed(reason),
                    other => other,
                })?;
                return Ok(AttrType::Array(Box::new(element)));
            }
            if trimmed == "array" {
                return Err(malformed(
                    "`array` needs an element type: `array<T>`".into(),
                ));
            }
        }
        if let Some(scalar) = AttrType::from_scalar_name(trimmed) {
            return Ok(scalar);
        }
        check_type_name(trimmed).map_err(|err| match err {
            InfoError::MalformedTypeName { name, reason } => malformed(format!(
                "`{name}` is neither a built-in type nor a type name: {reason}"
            )),
            other => other,
        })?;
        Ok(AttrType::Nested(trimmed.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_every_scalar_and_arrays() {
        for name in BUILTIN_SCALARS {
            let parsed: AttrType = name.parse().unwrap();
            assert_eq!(parsed.to_string(), name);
        }
        assert_eq!(
            "array<array<u8>>".parse::<AttrType>().unwrap(),
            AttrType::Array(Box::new(AttrType::Array(Box::new(AttrType::U8))))
        );
        assert_eq!(
            " array < Beam > ".parse::<AttrType>().unwrap(),
            AttrType::Array(Box::new(AttrType::Nested("Beam".into())))
        );
        assert_eq!(
            "Beam".parse::<AttrType>().unwrap().nested_type(),
            Some("Beam")
        );
        assert_eq!(
            "arrayish".parse::<AttrType>().unwrap(),
            AttrType::Nested("arrayish".into())
        );
    }

    const BUILTIN_SCALARS: [&str; 14] = [
        "bool", "s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64", "float", "double", "string",
        "time", "bytes",
    ];

    #[test]
    fn refuses_malformed_text() {
        for (text, needle) in [
            ("array", "needs an element type"),
            ("array<u8", "no closing"),
            ("array<>", "no element type"),
            ("array<a b>", "neither a built-in type"),
            ("", "neither a built-in type"),
            ("int", ""),
        ] {
            match text.parse::<AttrType>() {
                Err(err) => assert!(err.to_string().contains(needle), "{text}: {err}"),
                Ok(parsed) => assert_eq!(parsed, AttrType::Nested("int".into()), "{text}"),
            }
        }
        assert_eq!(
            "array<u8".parse::<AttrType>().unwrap_err().to_string(),
            "malformed attribute type `array<u8`: `array<` has no closing `>`"
        );
    }

    #[test]
    fn integer_ranges() {
        assert_eq!(AttrType::U8.integer_range(), Some((0, 255)));
        assert_eq!(AttrType::S16.integer_range(), Some((-32768, 32767)));
        assert_eq!(AttrType::Double.integer_range(), None);
        assert_eq!(
            AttrType::U64.integer_range(),
            Some((0, 18_446_744_073_709_551_615))
        );
    }

    fn attr_type_strategy() -> impl Strategy<Value = AttrType> {
        let leaf = prop_oneof![
            (0usize..14).prop_map(|i| BUILTIN_SCALARS[i].parse::<AttrType>().unwrap()),
            "[A-Z][A-Za-z0-9_]{0,8}".prop_map(AttrType::Nested),
        ];
        leaf.prop_recursive(4, 8, 1, |inner| {
            inner.prop_map(|t| AttrType::Array(Box::new(t)))
        })
    }

    proptest! {
        #[test]
        fn display_then_parse_round_trips(attr_type in attr_type_strategy()) {
            let text = attr_type.to_string();
            prop_assert_eq!(text.parse::<AttrType>().unwrap(), attr_type);
        }
    }
}
