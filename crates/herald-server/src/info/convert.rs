//! Between the wire's `herald_proto::info` types and the store's `herald_info` types.

use herald_info::{AttrType, AttributeDef, Combine, InfoError, InfoObject, Selection, TypeDef};
use herald_proto::info::{AttributeData, ObjectData, SelectionData, TypeData};

/// Returns the type a client declared, its attribute types parsed.
///
/// # Errors
/// The parse error of the first attribute type that is not one.
pub fn type_def(data: TypeData) -> Result<TypeDef, String> {
    let mut attributes = Vec::with_capacity(data.attributes.len());
    for attribute in data.attributes {
        let attr_type: AttrType = attribute.attr_type.parse().map_err(|err: InfoError| {
            format!(
                "attribute `{}` of type `{}`: {err}",
                attribute.name, data.name
            )
        })?;
        attributes.push(AttributeDef {
            name: attribute.name,
            attr_type,
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

/// Returns a type as the wire carries it.
pub fn type_data(def: &TypeDef) -> TypeData {
    TypeData {
        name: def.name.clone(),
        base: def.base.clone(),
        description: def.description.clone(),
        attributes: def
            .attributes
            .iter()
            .map(|a| AttributeData {
                name: a.name.clone(),
                attr_type: a.attr_type.to_string(),
                description: a.description.clone(),
            })
            .collect(),
    }
}

/// Returns an object as the wire carries it.
pub fn object_data(object: &InfoObject) -> ObjectData {
    ObjectData {
        name: object.name.clone(),
        type_name: object.type_name.clone(),
        time: object.time,
        version: object.version,
        attributes: object.attributes.clone(),
    }
}

/// Compiles a selection sent by a client.
///
/// # Errors
/// The store's error for a bad regular expression or type selection.
pub fn selection(data: &SelectionData) -> Result<Selection, InfoError> {
    let combine = if data.any { Combine::Or } else { Combine::And };
    Selection::new(data.name_regex.as_deref(), data.types.as_deref(), combine)
}
