//! [`InfoError`]: everything that can go wrong declaring types, checking values, selecting
//! and storing objects.

use std::path::PathBuf;

/// Why an information-service operation failed. Every message quotes the offending value.
///
/// Operations that fail leave the registry and the store as they were.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InfoError {
    /// An object or a nested attribute names a type nobody declared.
    #[error("unknown type `{name}` (declare it first)")]
    UnknownType {
        /// The type name as given.
        name: String,
    },
    /// A type names a base type nobody declared.
    #[error("type `{type_name}` names unknown base type `{base}` (declare the base first)")]
    UnknownBase {
        /// The type being declared.
        type_name: String,
        /// The missing base.
        base: String,
    },
    /// A type is declared again with another definition.
    #[error("type `{name}` is already declared differently (a declared type cannot change)")]
    TypeConflict {
        /// The type name.
        name: String,
    },
    /// A type name is not usable.
    #[error("malformed type name `{name}`: {reason}")]
    MalformedTypeName {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Attribute-type text such as `array<u8` could not be parsed.
    #[error("malformed attribute type `{text}`: {reason}")]
    MalformedAttrType {
        /// The text as given.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An attribute of a type being declared is not acceptable.
    #[error("bad attribute `{attribute}` of type `{type_name}`: {reason}")]
    BadAttribute {
        /// The type being declared (or the object's type when checking a value).
        type_name: String,
        /// The attribute.
        attribute: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A value lacks an attribute that the type requires.
    #[error(
        "missing attribute `{attribute}` of type `{type_name}` (every attribute is required here)"
    )]
    MissingAttribute {
        /// The object's type.
        type_name: String,
        /// The attribute's path (`beam.energy` inside nested values).
        attribute: String,
    },
    /// A value has an attribute its type does not declare.
    #[error("type `{type_name}` has no attribute `{attribute}`")]
    UnknownAttribute {
        /// The object's type.
        type_name: String,
        /// The attribute's path.
        attribute: String,
    },
    /// An attribute's value has another type than declared.
    #[error("attribute `{attribute}` of type `{type_name}` expects {expected}, found {found}")]
    WrongType {
        /// The object's type.
        type_name: String,
        /// The attribute's path (`values[3]` inside arrays).
        attribute: String,
        /// The declared attribute type (`s32`, `array<double>`, `Beam`).
        expected: String,
        /// The value found, described and quoted.
        found: String,
    },
    /// An integer or float does not fit the declared attribute type.
    #[error("attribute `{attribute}` of type `{type_name}`: value `{value}` is out of range for {expected} ({range})")]
    OutOfRange {
        /// The object's type.
        type_name: String,
        /// The attribute's path.
        attribute: String,
        /// The declared attribute type.
        expected: String,
        /// The value as given.
        value: String,
        /// The accepted range.
        range: String,
    },
    /// An object name breaks the `Namespace.Object` rules.
    #[error("malformed object name `{name}`: {reason}")]
    MalformedName {
        /// The name, with control characters escaped.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A selection's name pattern is not a valid regular expression.
    #[error("bad name regex `{regex}`: {message}")]
    BadRegex {
        /// The regular expression as given.
        regex: String,
        /// The regex parser's explanation.
        message: String,
    },
    /// A type selection is not `T`, `T+`, `!T` or `!T+`.
    #[error("bad type selection `{text}`: {reason} (expected `T`, `T+`, `!T` or `!T+`)")]
    BadTypeSelection {
        /// The text as given.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A create names an object that exists already.
    #[error("object `{name}` already exists (update it, or upsert)")]
    Exists {
        /// The object's name.
        name: String,
    },
    /// An update or delete names an object that does not exist.
    #[error("object `{name}` does not exist")]
    NotFound {
        /// The object's name.
        name: String,
    },
    /// A create (or an upsert of a new object) gives no type.
    #[error(
        "object `{name}` does not exist and no type was given (creating an object needs its type)"
    )]
    MissingType {
        /// The object's name.
        name: String,
    },
    /// An update names another type than the object has.
    #[error(
        "object `{name}` has type `{current}`, not `{requested}` (an object's type cannot change)"
    )]
    TypeChange {
        /// The object's name.
        name: String,
        /// Its type.
        current: String,
        /// The type the update named.
        requested: String,
    },
    /// Reading or writing the store's files failed.
    #[error("cannot {operation} `{path}`: {source}", path = path.display())]
    Io {
        /// What the store was doing (`write`, `fsync`, `rename` …).
        operation: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A store file holds bytes that cannot be what the store wrote.
    #[error("corrupt `{path}` at byte {offset}: {reason}", path = path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Offset of the entry (or header) that is wrong.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
}

impl InfoError {
    /// Wraps an I/O error with what was being done and to which file.
    pub(crate) fn io(
        operation: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> InfoError {
        let path = path.into();
        move |source| InfoError::Io {
            operation,
            path,
            source,
        }
    }
}

/// Quotes text for an error message, escaping control characters and cutting it at
/// [`QUOTE_MAX_CHARS`] characters so one huge value cannot flood a log line.
pub fn quote(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(QUOTE_MAX_CHARS)
        .flat_map(char::escape_debug)
        .collect();
    if text.chars().nth(QUOTE_MAX_CHARS).is_some() {
        out.push('…');
    }
    out
}

/// Longest text [`quote`] shows, in characters.
pub const QUOTE_MAX_CHARS: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_quote_the_value() {
        let err = InfoError::UnknownType {
            name: "RunInfoo".into(),
        };
        assert_eq!(
            err.to_string(),
            "unknown type `RunInfoo` (declare it first)"
        );
        let err = InfoError::Corrupt {
            path: "/data/log".into(),
            offset: 12,
            reason: "checksum mismatch".into(),
        };
        assert_eq!(
            err.to_string(),
            "corrupt `/data/log` at byte 12: checksum mismatch"
        );
    }

    #[test]
    fn quote_escapes_and_cuts() {
        assert_eq!(quote("a\tb"), "a\\tb");
        let long = "x".repeat(100);
        assert_eq!(quote(&long).chars().count(), QUOTE_MAX_CHARS + 1);
    }
}
