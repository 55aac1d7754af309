//! Checking attribute values against a declared type ([`TypeRegistry::check`]) and putting
//! them in canonical form ([`TypeRegistry::normalize`]).
//!
//! What each attribute type accepts:
//!
//! | type | accepts |
//! |---|---|
//! | `bool` | [`Value::Bool`] |
//! | `s8` … `u64` | [`Value::Int`] or [`Value::UInt`] within the type's range (`u64` up to 2^64−1) |
//! | `float` | [`Value::Float`] within ±`f32::MAX` (or not finite), and integers |
//! | `double` | [`Value::Float`] and integers |
//! | `string` | [`Value::Str`] |
//! | `time` | [`Value::Time`] only (an integer is not a time: convert it on purpose) |
//! | `bytes` | [`Value::Bytes`] |
//! | `array<T>` | [`Value::Array`] whose every element `T` accepts |
//! | a type name | [`Value::Map`] with every attribute of that type, each checked the same way |
//!
//! Integers are accepted for `float` and `double` because people type `20` for 20.0 on command
//! lines and in JSON; [`TypeRegistry::normalize`] then turns them into [`Value::Float`], so a
//! reader of a `double` attribute always gets a float. Floats are not rounded to `f32`.

use std::collections::{HashMap, HashSet};

use herald_proto::value::{Field, Value};

use crate::attr_type::AttrType;
use crate::error::{quote, InfoError};
use crate::registry::TypeRegistry;
use crate::type_def::AttributeDef;

impl TypeRegistry {
    /// Checks that every attribute in `attributes` belongs to `type_name` (or a base) and
    /// holds a value of its declared type; with `complete`, also that every attribute of the
    /// type is present. Nested values must always be complete.
    ///
    /// # Errors
    /// [`InfoError::UnknownType`], [`InfoError::UnknownAttribute`],
    /// [`InfoError::BadAttribute`] (an attribute given twice), [`InfoError::WrongType`],
    /// [`InfoError::OutOfRange`] or [`InfoError::MissingAttribute`], naming the attribute by
    /// its path (`beam.energy`, `gains[3]`).
    pub fn check(
        &self,
        type_name: &str,
        attributes: &[Field],
        complete: bool,
    ) -> Result<(), InfoError> {
        let context = Context {
            registry: self,
            root: type_name,
        };
        context.check_fields(type_name, "", attributes, complete)
    }

    /// Puts checked attributes in canonical form: in the type's attribute order (inherited
    /// first) and with integers given for `float`/`double` attributes turned into floats,
    /// inside arrays and nested values too. Attributes the type does not have stay, last.
    pub fn normalize(&self, type_name: &str, attributes: &mut [Field]) {
        let declared: HashMap<&str, (usize, &AttributeDef)> = self
            .attributes(type_name)
            .into_iter()
            .enumerate()
            .map(|(position, attribute)| (attribute.name.as_str(), (position, attribute)))
            .collect();
        attributes.sort_by_key(|(name, _)| {
            declared
                .get(name.as_str())
                .map_or(usize::MAX, |(position, _)| *position)
        });
        for (name, value) in attributes.iter_mut() {
            if let Some((_, attribute)) = declared.get(name.as_str()) {
                self.normalize_value(&attribute.attr_type, value);
            }
        }
    }

    fn normalize_value(&self, attr_type: &AttrType, value: &mut Value) {
        match (attr_type, &mut *value) {
            (AttrType::Float | AttrType::Double, Value::Int(integer)) => {
                // Exact up to 2^53; larger integers round to the nearest double.
                let float = *integer as f64;
                *value = Value::Float(float);
            }
            (AttrType::Float | AttrType::Double, Value::UInt(integer)) => {
                let float = *integer as f64;
                *value = Value::Float(float);
            }
            (AttrType::Array(element), Value::Array(items)) => {
                for item in items {
                    self.normalize_value(element, item);
                }
            }
            (AttrType::Nested(nested), Value::Map(fields)) => self.normalize(nested, fields),
            _ => {}
        }
    }
}

/// What every error of one check names: the registry and the object's type.
struct Context<'a> {
    registry: &'a TypeRegistry,
    root: &'a str,
}

impl Context<'_> {
    fn check_fields(
        &self,
        type_name: &str,
        prefix: &str,
        fields: &[Field],
        complete: bool,
    ) -> Result<(), InfoError> {
        if self.registry.get(type_name).is_none() {
            return Err(InfoError::UnknownType {
                name: quote(type_name),
            });
        }
        // Hash lookups keep this linear in the number of attributes, given or declared.
        let declared: HashMap<&str, &AttributeDef> = self
            .registry
            .attributes(type_name)
            .into_iter()
            .map(|attribute| (attribute.name.as_str(), attribute))
            .collect();
        let mut given = HashSet::with_capacity(fields.len());
        for (name, value) in fields {
            let path = format!("{prefix}{name}");
            if !given.insert(name.as_str()) {
                return Err(InfoError::BadAttribute {
                    type_name: quote(self.root),
                    attribute: quote(&path),
                    reason: "it is given twice".into(),
                });
            }
            let Some(attribute) = declared.get(name.as_str()) else {
                return Err(InfoError::UnknownAttribute {
                    type_name: quote(self.root),
                    attribute: quote(&path),
                });
            };
            self.check_value(&path, &attribute.attr_type, value)?;
        }
        if complete {
            // The declared order, so the error names the first missing attribute.
            let missing = self
                .registry
                .attributes(type_name)
                .into_iter()
                .find(|attribute| !given.contains(attribute.name.as_str()));
            if let Some(missing) = missing {
                return Err(InfoError::MissingAttribute {
                    type_name: quote(self.root),
                    attribute: quote(&format!("{prefix}{}", missing.name)),
                });
            }
        }
        Ok(())
    }

    fn check_value(
        &self,
        path: &str,
        attr_type: &AttrType,
        value: &Value,
    ) -> Result<(), InfoError> {
        match (attr_type, value) {
            (AttrType::Bool, Value::Bool(_))
            | (AttrType::Double, Value::Float(_) | Value::Int(_) | Value::UInt(_))
            | (AttrType::Float, Value::Int(_) | Value::UInt(_))
            | (AttrType::String, Value::Str(_))
            | (AttrType::Time, Value::Time(_))
            | (AttrType::Bytes, Value::Bytes(_)) => Ok(()),
            (AttrType::Float, Value::Float(float)) => {
                if float.is_finite() && float.abs() > f64::from(f32::MAX) {
                    return Err(self.out_of_range(path, attr_type, float, "±3.4028235e38"));
                }
                Ok(())
            }
            (AttrType::Array(element), Value::Array(items)) => {
                for (index, item) in items.iter().enumerate() {
                    self.check_value(&format!("{path}[{index}]"), element, item)?;
                }
                Ok(())
            }
            (AttrType::Nested(nested), Value::Map(fields)) => {
                self.check_fields(nested, &format!("{path}."), fields, true)
            }
            (_, Value::Int(_) | Value::UInt(_)) if attr_type.integer_range().is_some() => {
                let (min, max) = attr_type.integer_range().unwrap_or_default();
                let integer = match value {
                    Value::UInt(v) => i128::from(*v),
                    Value::Int(v) => i128::from(*v),
                    _ => unreachable!("matched as an integer"),
                };
                if !(min..=max).contains(&integer) {
                    return Err(self.out_of_range(
                        path,
                        attr_type,
                        &integer,
                        &format!("{min}..={max}"),
                    ));
                }
                Ok(())
            }
            _ => Err(InfoError::WrongType {
                type_name: quote(self.root),
                attribute: quote(path),
                expected: attr_type.to_string(),
                found: describe(value),
            }),
        }
    }

    fn out_of_range(
        &self,
        path: &str,
        attr_type: &AttrType,
        value: &dyn std::fmt::Display,
        range: &str,
    ) -> InfoError {
        InfoError::OutOfRange {
            type_name: quote(self.root),
            attribute: quote(path),
            expected: attr_type.to_string(),
            value: value.to_string(),
            range: range.to_string(),
        }
    }
}

/// Describes a value for an error message: its kind and, for scalars, the value quoted.
fn describe(value: &Value) -> String {
    match value {
        Value::Bool(v) => format!("bool `{v}`"),
        Value::Int(v) => format!("integer `{v}`"),
        Value::UInt(v) => format!("integer `{v}`"),
        Value::Float(v) => format!("float `{v}`"),
        Value::Str(v) => format!("string `{}`", quote(v)),
        Value::Bytes(v) => format!("bytes ({} bytes)", v.len()),
        Value::Time(v) => format!("time `{}`", herald_proto::time::format_iso8601(*v)),
        Value::Array(items) => format!("an array of {} values", items.len()),
        Value::Map(fields) => format!("a map of {} attributes", fields.len()),
    }
}

#[cfg(test)]
mod tests;
