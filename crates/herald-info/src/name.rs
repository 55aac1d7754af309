//! Name rules: object names (`Namespace.Object`), type names and attribute names.

use crate::error::{quote, InfoError};

/// Longest object name, in bytes (the same limit as a record's subject).
pub const MAX_OBJECT_NAME_BYTES: usize = 1024;

/// Longest type or attribute name, in bytes.
pub const MAX_TYPE_NAME_BYTES: usize = 256;

/// Checks that `name` can name an information object: `Namespace.Object`, that is at least two
/// non-empty tokens separated by dots, printable, without whitespace, control characters or
/// the wildcards `*` and `?`, at most [`MAX_OBJECT_NAME_BYTES`] bytes.
///
/// # Errors
/// [`InfoError::MalformedName`] saying which rule `name` breaks.
pub fn check_name(name: &str) -> Result<(), InfoError> {
    let malformed = |reason: String| InfoError::MalformedName {
        name: quote(name),
        reason,
    };
    if name.len() > MAX_OBJECT_NAME_BYTES {
        return Err(malformed(format!(
            "{} bytes is longer than {MAX_OBJECT_NAME_BYTES}",
            name.len()
        )));
    }
    if let Some(c) = name
        .chars()
        .find(|c| c.is_whitespace() || c.is_control() || *c == '*' || *c == '?')
    {
        let what = if c == '*' || c == '?' {
            format!("the wildcard `{c}`")
        } else {
            format!(
                "U+{:04X} (no whitespace or control characters)",
                u32::from(c)
            )
        };
        return Err(malformed(format!("contains {what}")));
    }
    if !name.contains('.') {
        return Err(malformed(
            "expected `Namespace.Object` (at least two dot-separated tokens)".into(),
        ));
    }
    if name.split('.').any(str::is_empty) {
        return Err(malformed("has an empty dot-separated token".into()));
    }
    Ok(())
}

/// Returns the namespace of an object name: its first dot-separated token.
pub fn namespace(name: &str) -> &str {
    name.split('.').next().unwrap_or(name)
}

/// The attribute types' own names, which cannot name a declared type.
pub(crate) const BUILTIN_TYPE_NAMES: [&str; 15] = [
    "bool", "s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64", "float", "double", "string",
    "time", "bytes", "array",
];

/// Checks a type name: a letter or `_`, then letters, digits, `_`, `.`, `:` or `-`, at most
/// [`MAX_TYPE_NAME_BYTES`] bytes, and not one of the built-in attribute type names.
///
/// # Errors
/// [`InfoError::MalformedTypeName`] saying which rule `name` breaks.
pub fn check_type_name(name: &str) -> Result<(), InfoError> {
    let reason = if BUILTIN_TYPE_NAMES.contains(&name) {
        Some("it is the name of a built-in attribute type".to_string())
    } else {
        identifier_problem(name, &['_', '.', ':', '-'])
    };
    match reason {
        None => Ok(()),
        Some(reason) => Err(InfoError::MalformedTypeName {
            name: quote(name),
            reason,
        }),
    }
}

/// Checks an attribute name: a letter or `_`, then letters, digits, `_` or `-`, at most
/// [`MAX_TYPE_NAME_BYTES`] bytes. Dots are kept out so `beam.energy` can name a nested value.
///
/// Returns what is wrong, for the caller to put in its error.
pub(crate) fn attribute_name_problem(name: &str) -> Option<String> {
    identifier_problem(name, &['_', '-'])
}

fn identifier_problem(name: &str, extra: &[char]) -> Option<String> {
    if name.is_empty() {
        return Some("the name is empty".into());
    }
    if name.len() > MAX_TYPE_NAME_BYTES {
        return Some(format!(
            "{} bytes is longer than {MAX_TYPE_NAME_BYTES}",
            name.len()
        ));
    }
    let mut chars = name.chars();
    let first = chars.next().unwrap_or_default();
    if !(first.is_ascii_alphabetic() || first == '_') {
        return Some(format!(
            "starts with `{}` (expected a letter or `_`)",
            quote(&first.to_string())
        ));
    }
    if let Some(c) = chars.find(|c| !(c.is_ascii_alphanumeric() || extra.contains(c))) {
        let allowed: String = extra.iter().map(|c| format!(" `{c}`")).collect();
        return Some(format!(
            "contains `{}` (allowed: letters, digits and{allowed})",
            quote(&c.to_string())
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(name: &str) -> String {
        match check_name(name).unwrap_err() {
            InfoError::MalformedName { reason, .. } => reason,
            other => panic!("{other}"),
        }
    }

    #[test]
    fn accepts_namespace_and_object() {
        for name in [
            "RunParams.RunInfo",
            "SR.mag_ps_b.current_dac",
            "a.b",
            "Ä.ö-1",
        ] {
            check_name(name).unwrap();
        }
        assert_eq!(namespace("SR.mag_ps_b.current_dac"), "SR");
    }

    #[test]
    fn refuses_each_broken_rule() {
        assert!(reason("RunInfo").contains("two dot-separated tokens"));
        assert!(reason("").contains("two dot-separated tokens"));
        assert!(reason(".a").contains("empty"));
        assert!(reason("a.").contains("empty"));
        assert!(reason("a..b").contains("empty"));
        assert!(reason("a.b c").contains("U+0020"));
        assert!(reason("a.b\n").contains("U+000A"));
        assert!(reason("a.*").contains("wildcard `*`"));
        assert!(reason("a.?").contains("wildcard `?`"));
        let long = format!("a.{}", "b".repeat(MAX_OBJECT_NAME_BYTES));
        assert!(reason(&long).contains("longer than 1024"));
        check_name(&long[..MAX_OBJECT_NAME_BYTES]).unwrap();
    }

    #[test]
    fn error_message_quotes_the_name() {
        assert_eq!(
            check_name("RunInfo").unwrap_err().to_string(),
            "malformed object name `RunInfo`: expected `Namespace.Object` (at least two \
             dot-separated tokens)"
        );
    }

    #[test]
    fn type_and_attribute_names() {
        check_type_name("RunInfo").unwrap();
        check_type_name("rc::Run-Info.v2").unwrap();
        for bad in ["", "2x", "a b", "array", "u8", "A<B>", "x+", "!x"] {
            assert!(check_type_name(bad).is_err(), "{bad}");
        }
        assert_eq!(attribute_name_problem("run_number"), None);
        assert!(attribute_name_problem("beam.energy").is_some());
        assert!(attribute_name_problem("a=b").is_some());
    }
}
