//! [`TypeDef`] and [`AttributeDef`]: a type declared at run time, and its conversion to and
//! from the wire form [`TypeData`].

use herald_proto::info::{AttributeData, TypeData};
use herald_proto::msgpack;

use crate::attr_type::AttrType;
use crate::error::InfoError;

/// One attribute of a type: name, type and a description for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttributeDef {
    /// Attribute name: a letter or `_`, then letters, digits, `_` or `-`.
    pub name: String,
    /// Its type.
    pub attr_type: AttrType,
    /// What it means, for people.
    pub description: String,
}

/// A type of information objects, declared at run time.
///
/// A type with a `base` has the base's attributes first, then its own, and a reader of the
/// base can read it (see [`TypeRegistry::is_a`](crate::TypeRegistry::is_a)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeDef {
    /// Type name (see [`check_type_name`](crate::name::check_type_name)).
    pub name: String,
    /// The type it extends.
    pub base: Option<String>,
    /// What it describes, for people.
    pub description: String,
    /// Its own attributes, not the inherited ones.
    pub attributes: Vec<AttributeDef>,
}

impl AttributeDef {
    /// Returns an attribute definition.
    pub fn new(
        name: impl Into<String>,
        attr_type: AttrType,
        description: impl Into<String>,
    ) -> Self {
        AttributeDef {
            name: name.into(),
            attr_type,
            description: description.into(),
        }
    }
}

impl TypeDef {
    /// Returns a type without base, description or attributes, to fill in.
    pub fn new(name: impl Into<String>) -> Self {
        TypeDef {
            name: name.into(),
            base: None,
            description: String::new(),
            attributes: Vec::new(),
        }
    }

    /// Converts the wire form, parsing each attribute's type text.
    ///
    /// # Errors
    /// [`InfoError::MalformedAttrType`] for attribute-type text that does not parse.
    pub fn from_data(data: TypeData) -> Result<TypeDef, InfoError> {
        let mut attributes = Vec::with_capacity(data.attributes.len());
        for attribute in data.attributes {
            attributes.push(AttributeDef {
                attr_type: attribute.attr_type.parse()?,
                name: attribute.name,
                description: attribute.description,
            });
        }
        Ok(TypeDef {
            name: data.name,
            base: data.base,
            description: data.description,
            attributes,
        })
    }

    /// Returns the wire form.
    pub fn to_data(&self) -> TypeData {
        TypeData {
            name: self.name.clone(),
            base: self.base.clone(),
            description: self.description.clone(),
            attributes: self
                .attributes
                .iter()
                .map(|attribute| AttributeData {
                    name: attribute.name.clone(),
                    attr_type: attribute.attr_type.to_string(),
                    description: attribute.description.clone(),
                })
                .collect(),
        }
    }

    /// Appends the same bytes as [`TypeData::encode`] of [`TypeDef::to_data`], without
    /// copying the strings.
    pub fn encode(&self, out: &mut Vec<u8>) {
        msgpack::write_array_len(out, 4);
        msgpack::write_str(out, &self.name);
        match &self.base {
            Some(base) => msgpack::write_str(out, base),
            None => msgpack::write_nil(out),
        }
        msgpack::write_str(out, &self.description);
        msgpack::write_array_len(out, msgpack::len_u32(self.attributes.len()));
        for attribute in &self.attributes {
            msgpack::write_array_len(out, 3);
            msgpack::write_str(out, &attribute.name);
            msgpack::write_str(out, &attribute.attr_type.to_string());
            msgpack::write_str(out, &attribute.description);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_info() -> TypeDef {
        TypeDef {
            name: "RunInfo".into(),
            base: Some("Base".into()),
            description: "the current run".into(),
            attributes: vec![
                AttributeDef::new("run", AttrType::U32, "run number"),
                AttributeDef::new(
                    "gains",
                    AttrType::Array(Box::new(AttrType::Float)),
                    "per channel",
                ),
            ],
        }
    }

    #[test]
    fn converts_to_and_from_wire_form() {
        let data = run_info().to_data();
        assert_eq!(data.attributes[1].attr_type, "array<float>");
        assert_eq!(TypeDef::from_data(data.clone()).unwrap(), run_info());
        let mut direct = Vec::new();
        run_info().encode(&mut direct);
        let mut via_data = Vec::new();
        data.encode(&mut via_data);
        assert_eq!(direct, via_data);
    }

    #[test]
    fn bad_attribute_type_text_is_an_error() {
        let mut data = run_info().to_data();
        data.attributes[0].attr_type = "array<".into();
        let err = TypeDef::from_data(data).unwrap_err();
        assert!(matches!(err, InfoError::MalformedAttrType { .. }), "{err}");
    }
}
