//! JSON to attribute values, guided by the declared type (see the table in [`super`]).

use herald_proto::time::{parse_iso8601, TimeError};
use herald_proto::value::{Field, Value};
use serde_json::{Map, Number, Value as Json};

use crate::attr_type::AttrType;
use crate::error::{quote, InfoError};
use crate::registry::TypeRegistry;

/// Converts the JSON attributes of an object of type `type_name` to values: times from ISO
/// 8601 text or integer nanoseconds, bytes from hex, integers from floats without a
/// fraction, all where the type declares them, inside arrays and nested values too. With no
/// type, or an undeclared one, values keep their JSON kind. The result still goes through
/// the store's check, which names any value that does not fit.
///
/// # Errors
/// [`InfoError::WrongType`] for `null`, a time text that is not ISO 8601 or hex text that is
/// not hex; [`InfoError::OutOfRange`] for an integer outside its integer attribute's
/// range (above `u64::MAX` is not an integer to JSON's reader but a float). Each names the attribute by its path (`beam.energy`, `gains[3]`).
pub fn attributes_from_json(
    registry: &TypeRegistry,
    type_name: Option<&str>,
    attributes: &Map<String, Json>,
) -> Result<Vec<Field>, InfoError> {
    let reader = Reader {
        registry,
        root: type_name.unwrap_or_default(),
    };
    reader.fields(type_name, "", attributes)
}

/// Reads a producer's time: integer nanoseconds since the epoch, or ISO 8601 text with a
/// zone.
///
/// # Errors
/// [`TimeError`] for anything else.
pub fn time_from_json(json: &Json) -> Result<i64, TimeError> {
    match json {
        Json::String(text) => parse_iso8601(text),
        Json::Number(number) => number.as_i64().ok_or_else(|| TimeError {
            text: number.to_string(),
            reason: "not an integer number of nanoseconds within 64 bits".into(),
        }),
        other => Err(TimeError {
            text: other.to_string(),
            reason: "neither ISO 8601 text nor integer nanoseconds".into(),
        }),
    }
}

/// What every error of one conversion names: the registry and the object's type.
struct Reader<'a> {
    registry: &'a TypeRegistry,
    root: &'a str,
}

impl Reader<'_> {
    fn fields(
        &self,
        type_name: Option<&str>,
        prefix: &str,
        json: &Map<String, Json>,
    ) -> Result<Vec<Field>, InfoError> {
        let declared = type_name
            .map(|name| self.registry.attributes(name))
            .unwrap_or_default();
        let mut fields = Vec::with_capacity(json.len());
        for (name, value) in json {
            let attr_type = declared
                .iter()
                .find(|attribute| attribute.name == *name)
                .map(|attribute| &attribute.attr_type);
            let value = self.value(&format!("{prefix}{name}"), attr_type, value)?;
            fields.push((name.clone(), value));
        }
        Ok(fields)
    }

    fn value(
        &self,
        path: &str,
        attr_type: Option<&AttrType>,
        json: &Json,
    ) -> Result<Value, InfoError> {
        let value = match (attr_type, json) {
            (_, Json::Null) => return Err(self.wrong(path, attr_type, "null".into())),
            (Some(AttrType::Time), Json::String(text)) => match parse_iso8601(text) {
                Ok(nanos) => Value::Time(nanos),
                Err(err) => {
                    let found = format!("string `{}` ({})", quote(text), err.reason);
                    return Err(self.wrong(path, attr_type, found));
                }
            },
            (Some(AttrType::Time), Json::Number(number)) if number.as_i64().is_some() => {
                Value::Time(number.as_i64().unwrap_or_default())
            }
            (Some(AttrType::Bytes), Json::String(text)) => match decode_hex(text) {
                Some(bytes) => Value::Bytes(bytes),
                None => {
                    let found = format!("string `{}` (not hex)", quote(text));
                    return Err(self.wrong(path, attr_type, found));
                }
            },
            (Some(AttrType::Float | AttrType::Double), Json::Number(number)) => {
                Value::Float(number.as_f64().unwrap_or(f64::NAN))
            }
            (Some(integer), Json::Number(number)) if integer.integer_range().is_some() => {
                self.integer(path, integer, number)?
            }
            (Some(AttrType::Array(element)), Json::Array(items)) => {
                let mut values = Vec::with_capacity(items.len());
                for (index, item) in items.iter().enumerate() {
                    values.push(self.value(&format!("{path}[{index}]"), Some(element), item)?);
                }
                Value::Array(values)
            }
            (Some(AttrType::Nested(nested)), Json::Object(map)) => {
                Value::Map(self.fields(Some(nested), &format!("{path}."), map)?)
            }
            (_, json) => self.untyped(path, json)?,
        };
        Ok(value)
    }

    /// A value whose type is unknown (or does not fit its JSON kind: the store's check
    /// then names the mismatch) keeps its JSON kind.
    fn untyped(&self, path: &str, json: &Json) -> Result<Value, InfoError> {
        let value = match json {
            Json::Null => return Err(self.wrong(path, None, "null".into())),
            Json::Bool(flag) => Value::Bool(*flag),
            Json::Number(number) => match (number.as_i64(), number.as_u64()) {
                (Some(integer), _) => Value::Int(integer),
                (None, Some(integer)) => Value::UInt(integer),
                _ => Value::Float(number.as_f64().unwrap_or(f64::NAN)),
            },
            Json::String(text) => Value::Str(text.clone()),
            Json::Array(items) => {
                let mut values = Vec::with_capacity(items.len());
                for (index, item) in items.iter().enumerate() {
                    values.push(self.untyped(&format!("{path}[{index}]"), item)?);
                }
                Value::Array(values)
            }
            Json::Object(map) => Value::Map(self.fields(None, &format!("{path}."), map)?),
        };
        Ok(value)
    }

    fn integer(
        &self,
        path: &str,
        attr_type: &AttrType,
        number: &Number,
    ) -> Result<Value, InfoError> {
        if let Some(integer) = number.as_i64() {
            return Ok(Value::Int(integer));
        }
        if let Some(integer) = number.as_u64() {
            let (min, max) = attr_type.integer_range().unwrap_or_default();
            if (min..=max).contains(&i128::from(integer)) {
                return Ok(Value::UInt(integer));
            }
            return Err(InfoError::OutOfRange {
                type_name: quote(self.root),
                attribute: quote(path),
                expected: attr_type.to_string(),
                value: number.to_string(),
                range: format!("{min}..={max}"),
            });
        }
        let float = number.as_f64().unwrap_or(f64::NAN);
        // 2^63 is exact as a double; anything in [-2^63, 2^63) with no fraction is an i64.
        if float.fract() == 0.0
            && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&float)
        {
            return Ok(Value::Int(float as i64));
        }
        Ok(Value::Float(float))
    }

    fn wrong(&self, path: &str, attr_type: Option<&AttrType>, found: String) -> InfoError {
        InfoError::WrongType {
            type_name: quote(self.root),
            attribute: quote(path),
            expected: attr_type.map_or_else(|| "a value".to_string(), AttrType::to_string),
            found,
        }
    }
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    // `from_str_radix` would take a sign too: only hex digits, in pairs.
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(text.get(at..at + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests;
