//! [`TypeSelection`]: which types a selection takes — `T`, `T+`, `!T` or `!T+`.

use std::fmt;
use std::str::FromStr;

use crate::error::{quote, InfoError};
use crate::name::check_type_name;
use crate::registry::TypeRegistry;

/// How a [`TypeSelection`] treats its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeMode {
    /// `T`: objects of exactly this type.
    Exactly,
    /// `T+`: objects of this type or any of its subtypes.
    AndSubtypes,
    /// `!T`: objects of any type but this one (its subtypes are taken).
    Not,
    /// `!T+`: objects of any type that is neither this one nor one of its subtypes.
    NotAndSubtypes,
}

/// A selection of objects by type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeSelection {
    /// The type.
    pub type_name: String,
    /// What to do with it.
    pub mode: TypeMode,
}

impl TypeSelection {
    /// Returns whether an object of `type_name` is selected. Subtypes are looked up in
    /// `registry`; the selected type need not be declared.
    pub fn matches(&self, type_name: &str, registry: &TypeRegistry) -> bool {
        match self.mode {
            TypeMode::Exactly => type_name == self.type_name,
            TypeMode::AndSubtypes => registry.is_a(type_name, &self.type_name),
            TypeMode::Not => type_name != self.type_name,
            TypeMode::NotAndSubtypes => !registry.is_a(type_name, &self.type_name),
        }
    }
}

impl FromStr for TypeSelection {
    type Err = InfoError;

    /// Parses `T`, `T+`, `!T` or `!T+` (spaces around the text are ignored).
    fn from_str(text: &str) -> Result<TypeSelection, InfoError> {
        let trimmed = text.trim();
        let (negated, rest) = match trimmed.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, trimmed),
        };
        let (subtypes, type_name) = match rest.strip_suffix('+') {
            Some(name) => (true, name),
            None => (false, rest),
        };
        if let Err(err) = check_type_name(type_name) {
            let reason = match err {
                InfoError::MalformedTypeName { name, reason } => {
                    format!("`{name}` is not a type name: {reason}")
                }
                other => other.to_string(),
            };
            return Err(InfoError::BadTypeSelection {
                text: quote(text),
                reason,
            });
        }
        let mode = match (negated, subtypes) {
            (false, false) => TypeMode::Exactly,
            (false, true) => TypeMode::AndSubtypes,
            (true, false) => TypeMode::Not,
            (true, true) => TypeMode::NotAndSubtypes,
        };
        Ok(TypeSelection {
            type_name: type_name.to_string(),
            mode,
        })
    }
}

impl fmt::Display for TypeSelection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (prefix, suffix) = match self.mode {
            TypeMode::Exactly => ("", ""),
            TypeMode::AndSubtypes => ("", "+"),
            TypeMode::Not => ("!", ""),
            TypeMode::NotAndSubtypes => ("!", "+"),
        };
        write!(f, "{prefix}{}{suffix}", self.type_name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::type_def::TypeDef;

    fn registry() -> TypeRegistry {
        let mut registry = TypeRegistry::new();
        registry.declare(TypeDef::new("Base")).unwrap();
        let mut derived = TypeDef::new("Derived");
        derived.base = Some("Base".into());
        registry.declare(derived).unwrap();
        let mut leaf = TypeDef::new("Leaf");
        leaf.base = Some("Derived".into());
        registry.declare(leaf).unwrap();
        registry.declare(TypeDef::new("Other")).unwrap();
        registry
    }

    /// Returns which of the four types `text` selects.
    fn selected(text: &str) -> Vec<&'static str> {
        let selection: TypeSelection = text.parse().unwrap();
        assert_eq!(selection.to_string(), text);
        let registry = registry();
        ["Base", "Derived", "Leaf", "Other"]
            .into_iter()
            .filter(|type_name| selection.matches(type_name, &registry))
            .collect()
    }

    #[test]
    fn every_mode_with_subtypes() {
        assert_eq!(selected("Derived"), ["Derived"]);
        assert_eq!(selected("Derived+"), ["Derived", "Leaf"]);
        assert_eq!(selected("!Derived"), ["Base", "Leaf", "Other"]);
        assert_eq!(selected("!Derived+"), ["Base", "Other"]);
        assert_eq!(selected("Base+"), ["Base", "Derived", "Leaf"]);
        assert_eq!(selected("!Base+"), ["Other"]);
        assert!(selected("Undeclared+").is_empty());
        assert_eq!(selected("!Undeclared+").len(), 4);
    }

    #[test]
    fn malformed_selections_are_named() {
        for text in ["", "!", "+", "!+", "T++", "!!T", "T +", "a b"] {
            let err = text.parse::<TypeSelection>().unwrap_err();
            assert!(
                matches!(err, InfoError::BadTypeSelection { .. }),
                "{text}: {err}"
            );
        }
        assert_eq!(
            "T++".parse::<TypeSelection>().unwrap_err().to_string(),
            "bad type selection `T++`: `T+` is not a type name: contains `+` (allowed: letters, \
             digits and `_` `.` `:` `-`) (expected `T`, `T+`, `!T` or `!T+`)"
        );
    }
}
