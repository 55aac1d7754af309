//! [`TypeRegistry`]: the declared types, their inheritance, and the rules a declaration must
//! follow. Checking values against a type is in [`crate::check`].

use std::collections::{BTreeMap, HashSet};

use herald_proto::info::TypeData;

use crate::error::{quote, InfoError};
use crate::name::{attribute_name_problem, check_type_name};
use crate::type_def::{AttributeDef, TypeDef};

/// Every declared type, by name.
///
/// Types only grow: a declared type never changes and is never removed, so a base or nested
/// type is always declared before any type that uses it, and inheritance has no cycles.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TypeRegistry {
    types: BTreeMap<String, TypeDef>,
    /// Names in declaration order: every type comes after its base and nested types, so
    /// replaying declarations in this order always succeeds (the snapshot relies on it).
    order: Vec<String>,
}

impl TypeRegistry {
    /// Returns an empty registry.
    pub fn new() -> Self {
        TypeRegistry::default()
    }

    /// Returns a registry of `types` given in any order (as a server lists them, by name):
    /// each is declared once its base and nested types are.
    ///
    /// # Errors
    /// As [`TypeDef::from_data`] and [`TypeRegistry::declare`]; a type whose base or nested
    /// type is missing from `types` gives [`InfoError::UnknownBase`] or
    /// [`InfoError::UnknownType`].
    pub fn from_data(types: Vec<TypeData>) -> Result<TypeRegistry, InfoError> {
        let mut pending = types
            .into_iter()
            .map(TypeDef::from_data)
            .collect::<Result<Vec<_>, _>>()?;
        let mut registry = TypeRegistry::new();
        while !pending.is_empty() {
            let before = pending.len();
            let mut waiting = Vec::new();
            for def in pending {
                if registry.dependencies_declared(&def) {
                    registry.declare(def)?;
                } else {
                    waiting.push(def);
                }
            }
            if waiting.len() == before {
                // Nothing could be declared: this fails, naming what is missing.
                registry.declare(waiting.swap_remove(0))?;
            }
            pending = waiting;
        }
        Ok(registry)
    }

    fn dependencies_declared(&self, def: &TypeDef) -> bool {
        let nested = def
            .attributes
            .iter()
            .filter_map(|attribute| attribute.attr_type.nested_type());
        def.base
            .as_deref()
            .into_iter()
            .chain(nested)
            .all(|name| self.types.contains_key(name))
    }

    /// Declares a type. Declaring a type again with the identical definition does nothing.
    ///
    /// Returns whether the type is new.
    ///
    /// # Errors
    /// As [`TypeRegistry::check_declaration`]; the registry is then unchanged.
    pub fn declare(&mut self, def: TypeDef) -> Result<bool, InfoError> {
        if !self.check_declaration(&def)? {
            return Ok(false);
        }
        self.order.push(def.name.clone());
        self.types.insert(def.name.clone(), def);
        Ok(true)
    }

    /// Checks that `def` could be declared, without declaring it. Returns whether it is new
    /// (false when an identical type is already declared).
    ///
    /// # Errors
    /// - [`InfoError::MalformedTypeName`] for a bad type name;
    /// - [`InfoError::UnknownBase`] if the base is not declared;
    /// - [`InfoError::UnknownType`] if an attribute's nested type is not declared;
    /// - [`InfoError::BadAttribute`] for a bad or repeated attribute name, one that an
    ///   inherited attribute already has, or a type that contains itself;
    /// - [`InfoError::TypeConflict`] if the name is declared with another definition.
    pub fn check_declaration(&self, def: &TypeDef) -> Result<bool, InfoError> {
        if let Some(existing) = self.types.get(&def.name) {
            if existing == def {
                return Ok(false);
            }
            return Err(InfoError::TypeConflict {
                name: quote(&def.name),
            });
        }
        self.validate(def)?;
        Ok(true)
    }

    fn validate(&self, def: &TypeDef) -> Result<(), InfoError> {
        check_type_name(&def.name)?;
        let bad = |attribute: &str, reason: String| InfoError::BadAttribute {
            type_name: quote(&def.name),
            attribute: quote(attribute),
            reason,
        };
        if let Some(base) = &def.base {
            // A type naming itself as base is caught here too: it is not declared yet.
            if !self.types.contains_key(base) {
                return Err(InfoError::UnknownBase {
                    type_name: quote(&def.name),
                    base: quote(base),
                });
            }
        }
        // Sets keep a declaration's check linear in its number of attributes.
        let inherited: HashSet<&str> = match &def.base {
            Some(base) => self
                .attributes(base)
                .iter()
                .map(|a| a.name.as_str())
                .collect(),
            None => HashSet::new(),
        };
        let mut declared = HashSet::with_capacity(def.attributes.len());
        for attribute in &def.attributes {
            if let Some(problem) = attribute_name_problem(&attribute.name) {
                return Err(bad(&attribute.name, problem));
            }
            if !declared.insert(attribute.name.as_str()) {
                return Err(bad(&attribute.name, "the name is declared twice".into()));
            }
            if inherited.contains(attribute.name.as_str()) {
                let base = def.base.as_deref().unwrap_or_default();
                return Err(bad(
                    &attribute.name,
                    format!(
                        "base type `{}` already has an attribute of that name",
                        quote(base)
                    ),
                ));
            }
            self.validate_nested(def, attribute)?;
        }
        Ok(())
    }

    fn validate_nested(&self, def: &TypeDef, attribute: &AttributeDef) -> Result<(), InfoError> {
        let Some(nested) = attribute.attr_type.nested_type() else {
            return Ok(());
        };
        if nested == def.name {
            return Err(InfoError::BadAttribute {
                type_name: quote(&def.name),
                attribute: quote(&attribute.name),
                reason: format!(
                    "type `{}` cannot contain itself (`{}`)",
                    quote(nested),
                    attribute.attr_type
                ),
            });
        }
        if !self.types.contains_key(nested) {
            return Err(InfoError::UnknownType {
                name: quote(nested),
            });
        }
        Ok(())
    }

    /// Returns the type named `name`.
    pub fn get(&self, name: &str) -> Option<&TypeDef> {
        self.types.get(name)
    }

    /// Returns every type, sorted by name.
    pub fn types(&self) -> Vec<&TypeDef> {
        self.types.values().collect()
    }

    /// Returns every type in declaration order, each after its base and nested types.
    pub fn types_in_declaration_order(&self) -> impl Iterator<Item = &TypeDef> {
        self.order.iter().filter_map(|name| self.types.get(name))
    }

    /// Returns the number of declared types.
    pub fn len(&self) -> usize {
        self.types.len()
    }

    /// Returns true when no type is declared.
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }

    /// Returns whether `type_name` is `base` or one of its subtypes (so a reader of `base` can
    /// read it). An undeclared `type_name` is only itself.
    pub fn is_a(&self, type_name: &str, base: &str) -> bool {
        let mut current = Some(type_name);
        while let Some(name) = current {
            if name == base {
                return true;
            }
            current = self.types.get(name).and_then(|def| def.base.as_deref());
        }
        false
    }

    /// Returns the attributes of `type_name`: inherited ones first (the root type's first),
    /// then its own. Empty for an undeclared type.
    pub fn attributes(&self, type_name: &str) -> Vec<&AttributeDef> {
        let mut chain = Vec::new();
        let mut current = self.types.get(type_name);
        while let Some(def) = current {
            chain.push(def);
            current = def.base.as_deref().and_then(|base| self.types.get(base));
        }
        chain
            .iter()
            .rev()
            .flat_map(|def| def.attributes.iter())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr_type::AttrType;

    fn def(name: &str, base: Option<&str>, attributes: &[(&str, &str)]) -> TypeDef {
        TypeDef {
            name: name.into(),
            base: base.map(Into::into),
            description: String::new(),
            attributes: attributes
                .iter()
                .map(|(name, attr_type)| AttributeDef::new(*name, attr_type.parse().unwrap(), ""))
                .collect(),
        }
    }

    fn registry() -> TypeRegistry {
        let mut registry = TypeRegistry::new();
        registry
            .declare(def("Base", None, &[("id", "u32")]))
            .unwrap();
        registry
            .declare(def("Run", Some("Base"), &[("run", "u32")]))
            .unwrap();
        registry
            .declare(def("Calib", Some("Run"), &[("gain", "double")]))
            .unwrap();
        registry
            .declare(def("Other", None, &[("x", "bool")]))
            .unwrap();
        registry
    }

    #[test]
    fn inheritance_and_attribute_order() {
        let registry = registry();
        let names: Vec<&str> = registry
            .attributes("Calib")
            .iter()
            .map(|attribute| attribute.name.as_str())
            .collect();
        assert_eq!(names, ["id", "run", "gain"]);
        assert!(registry.attributes("Nope").is_empty());
        assert!(registry.is_a("Calib", "Base"));
        assert!(registry.is_a("Calib", "Run"));
        assert!(registry.is_a("Calib", "Calib"));
        assert!(!registry.is_a("Base", "Calib"));
        assert!(!registry.is_a("Other", "Base"));
        assert!(registry.is_a("Nope", "Nope"));
        let sorted: Vec<&str> = registry.types().iter().map(|t| t.name.as_str()).collect();
        assert_eq!(sorted, ["Base", "Calib", "Other", "Run"]);
        let declared: Vec<&str> = registry
            .types_in_declaration_order()
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(declared, ["Base", "Run", "Calib", "Other"]);
    }

    #[test]
    fn redeclaring_identically_is_fine_differently_is_not() {
        let mut registry = registry();
        assert!(!registry
            .declare(def("Run", Some("Base"), &[("run", "u32")]))
            .unwrap());
        let err = registry
            .declare(def("Run", Some("Base"), &[("run", "u64")]))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "type `Run` is already declared differently (a declared type cannot change)"
        );
        assert_eq!(registry, self::registry());
    }

    #[test]
    fn refuses_bad_declarations() {
        let mut registry = registry();
        let cases = [
            (def("X", Some("Nope"), &[]), "unknown base type `Nope`"),
            (def("X", Some("X"), &[]), "unknown base type `X`"),
            (def("X", None, &[("b", "Beam")]), "unknown type `Beam`"),
            (
                def("X", None, &[("b", "array<Beam>")]),
                "unknown type `Beam`",
            ),
            (
                def("X", None, &[("a", "u8"), ("a", "s8")]),
                "declared twice",
            ),
            (
                def("X", Some("Run"), &[("id", "u8")]),
                "base type `Run` already has",
            ),
            (
                def("X", None, &[("me", "array<X>")]),
                "cannot contain itself",
            ),
            (def("X", None, &[("a.b", "u8")]), "bad attribute `a.b`"),
            (def("X", None, &[("", "u8")]), "the name is empty"),
            (def("1X", None, &[]), "malformed type name `1X`"),
            (def("string", None, &[]), "built-in attribute type"),
        ];
        for (bad, needle) in cases {
            let err = registry.declare(bad).unwrap_err().to_string();
            assert!(err.contains(needle), "{err} lacks {needle}");
        }
        assert_eq!(registry, self::registry());
    }

    #[test]
    fn from_data_declares_in_any_order() {
        let mut registry = registry();
        registry
            .declare(def("Fill", None, &[("runs", "array<Run>")]))
            .unwrap();
        let mut data: Vec<TypeData> = registry.types().into_iter().map(TypeDef::to_data).collect();
        data.reverse();
        let rebuilt = TypeRegistry::from_data(data.clone()).unwrap();
        assert_eq!(rebuilt.types(), registry.types());
        data.retain(|t| t.name != "Base");
        let err = TypeRegistry::from_data(data).unwrap_err();
        assert!(
            err.to_string().contains("unknown base type `Base`"),
            "{err}"
        );
    }

    #[test]
    fn nested_types_may_be_used_once_declared() {
        let mut registry = registry();
        let beam = def("Beam", None, &[("energy", "double")]);
        registry.declare(beam).unwrap();
        registry
            .declare(def(
                "Fill",
                None,
                &[("beams", "array<Beam>"), ("main", "Beam")],
            ))
            .unwrap();
        assert_eq!(
            registry.attributes("Fill")[0].attr_type,
            AttrType::Array(Box::new(AttrType::Nested("Beam".into())))
        );
    }
}
