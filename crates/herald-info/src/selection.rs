//! [`Selection`]: which objects a list or a subscription takes — a regular expression over
//! whole names and/or a [`TypeSelection`], combined with and/or.

use herald_proto::info::SelectionData;
use regex::Regex;

use crate::error::{quote, InfoError};
use crate::registry::TypeRegistry;
use crate::type_selection::TypeSelection;

/// Longest name regex accepted, in bytes.
pub const MAX_REGEX_BYTES: usize = 4096;

/// Most memory one compiled name regex may take, in bytes (the `regex` crate's size limit).
pub const MAX_REGEX_COMPILED_BYTES: usize = 1 << 20;

/// How a selection with both a name regex and a type selection combines them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Combine {
    /// Both must match.
    #[default]
    And,
    /// Either may match.
    Or,
}

/// A selection of information objects. With no criteria it takes every object.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// The regex as given, and compiled anchored at both ends.
    name: Option<(String, Regex)>,
    types: Option<TypeSelection>,
    combine: Combine,
}

impl Selection {
    /// Builds a selection from a name regex (matched against the whole name: `SR\..*`,
    /// not `SR\.`) and a type selection text (`T`, `T+`, `!T`, `!T+`).
    ///
    /// # Errors
    /// [`InfoError::BadRegex`] quoting the regex and the parser's message, or
    /// [`InfoError::BadTypeSelection`].
    pub fn new(
        name_regex: Option<&str>,
        types: Option<&str>,
        combine: Combine,
    ) -> Result<Selection, InfoError> {
        let name = name_regex.map(compile).transpose()?;
        let types = types.map(str::parse).transpose()?;
        Ok(Selection {
            name,
            types,
            combine,
        })
    }

    /// Returns the selection that takes every object.
    pub fn all() -> Selection {
        Selection::default()
    }

    /// Builds a selection from its wire form.
    ///
    /// # Errors
    /// As [`Selection::new`].
    pub fn from_data(data: &SelectionData) -> Result<Selection, InfoError> {
        let combine = if data.any { Combine::Or } else { Combine::And };
        Selection::new(data.name_regex.as_deref(), data.types.as_deref(), combine)
    }

    /// Returns the wire form.
    pub fn to_data(&self) -> SelectionData {
        SelectionData {
            name_regex: self.name_regex().map(str::to_string),
            types: self.types.as_ref().map(TypeSelection::to_string),
            any: self.combine == Combine::Or,
        }
    }

    /// Returns whether the object `name` of type `type_name` is selected.
    pub fn matches(&self, name: &str, type_name: &str, registry: &TypeRegistry) -> bool {
        let by_name = self.name.as_ref().map(|(_, regex)| regex.is_match(name));
        let by_type = self.types.as_ref().map(|t| t.matches(type_name, registry));
        match (by_name, by_type, self.combine) {
            (None, None, _) => true,
            (Some(one), None, _) | (None, Some(one), _) => one,
            (Some(a), Some(b), Combine::And) => a && b,
            (Some(a), Some(b), Combine::Or) => a || b,
        }
    }

    /// Returns the name regex as given.
    pub fn name_regex(&self) -> Option<&str> {
        self.name.as_ref().map(|(text, _)| text.as_str())
    }

    /// Returns the type selection.
    pub fn type_selection(&self) -> Option<&TypeSelection> {
        self.types.as_ref()
    }

    /// Returns how the two criteria combine.
    pub fn combine(&self) -> Combine {
        self.combine
    }
}

/// Compiles `text` matched against whole names.
fn compile(text: &str) -> Result<(String, Regex), InfoError> {
    let bad = |message: String| InfoError::BadRegex {
        regex: quote(text),
        message,
    };
    if text.len() > MAX_REGEX_BYTES {
        return Err(bad(format!(
            "{} bytes is longer than {MAX_REGEX_BYTES}",
            text.len()
        )));
    }
    // Compile the text alone first, so errors point into what the user wrote and so the
    // anchoring group below cannot be unbalanced by it (a valid regex has balanced groups).
    let build = |pattern: &str| {
        regex::RegexBuilder::new(pattern)
            .size_limit(MAX_REGEX_COMPILED_BYTES)
            .build()
    };
    build(text).map_err(|err| bad(err.to_string()))?;
    let anchored = build(&format!("^(?:{text})$")).map_err(|err| bad(err.to_string()))?;
    Ok((text.to_string(), anchored))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::type_def::TypeDef;

    fn registry() -> TypeRegistry {
        let mut registry = TypeRegistry::new();
        registry.declare(TypeDef::new("Run")).unwrap();
        let mut calib = TypeDef::new("CalibRun");
        calib.base = Some("Run".into());
        registry.declare(calib).unwrap();
        registry.declare(TypeDef::new("Magnet")).unwrap();
        registry
    }

    const OBJECTS: [(&str, &str); 4] = [
        ("RunParams.RunInfo", "Run"),
        ("RunParams.Calib", "CalibRun"),
        ("SR.mag_ps_b", "Magnet"),
        ("SR.run_magnet", "Run"),
    ];

    fn selected(regex: Option<&str>, types: Option<&str>, combine: Combine) -> Vec<&'static str> {
        let selection = Selection::new(regex, types, combine).unwrap();
        let registry = registry();
        OBJECTS
            .iter()
            .filter(|(name, type_name)| selection.matches(name, type_name, &registry))
            .map(|(name, _)| *name)
            .collect()
    }

    #[test]
    fn no_criteria_takes_everything() {
        assert_eq!(selected(None, None, Combine::And).len(), 4);
        assert_eq!(selected(None, None, Combine::Or).len(), 4);
        assert!(Selection::all().matches("A.b", "T", &registry()));
    }

    #[test]
    fn regex_matches_whole_names() {
        assert_eq!(
            selected(Some("SR\\..*"), None, Combine::And),
            ["SR.mag_ps_b", "SR.run_magnet"]
        );
        assert!(selected(Some("SR"), None, Combine::And).is_empty());
        assert_eq!(
            selected(Some("SR.mag_ps_b|x"), None, Combine::And),
            ["SR.mag_ps_b"]
        );
        assert_eq!(
            selected(Some("(?i)sr\\.MAG.*"), None, Combine::And),
            ["SR.mag_ps_b"]
        );
    }

    #[test]
    fn and_or_combine_name_and_type() {
        let run_plus = Some("Run+");
        assert_eq!(
            selected(Some("SR\\..*"), run_plus, Combine::And),
            ["SR.run_magnet"]
        );
        assert_eq!(
            selected(Some("SR\\..*"), run_plus, Combine::Or),
            [
                "RunParams.RunInfo",
                "RunParams.Calib",
                "SR.mag_ps_b",
                "SR.run_magnet"
            ]
        );
        assert_eq!(
            selected(Some("RunParams\\..*"), Some("!Run+"), Combine::Or),
            ["RunParams.RunInfo", "RunParams.Calib", "SR.mag_ps_b"]
        );
        assert_eq!(
            selected(Some("RunParams\\..*"), Some("!Run"), Combine::And),
            ["RunParams.Calib"]
        );
        assert_eq!(
            selected(None, Some("Run"), Combine::Or),
            ["RunParams.RunInfo", "SR.run_magnet"]
        );
    }

    #[test]
    fn bad_regex_quotes_it_and_the_parser() {
        let err = Selection::new(Some("SR.("), None, Combine::And).unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("bad name regex `SR.(`: "), "{text}");
        assert!(text.contains("unclosed group"), "{text}");
        let err = Selection::new(Some("a)|(b"), None, Combine::And).unwrap_err();
        assert!(matches!(err, InfoError::BadRegex { .. }), "{err}");
        let err = Selection::new(None, Some("!"), Combine::And).unwrap_err();
        assert!(matches!(err, InfoError::BadTypeSelection { .. }), "{err}");
    }

    #[test]
    fn wire_form_round_trips() {
        let selection = Selection::new(Some("SR\\..*"), Some("!Run+"), Combine::Or).unwrap();
        let data = selection.to_data();
        assert_eq!(data.types.as_deref(), Some("!Run+"));
        assert!(data.any);
        let back = Selection::from_data(&data).unwrap();
        assert_eq!(back.name_regex(), Some("SR\\..*"));
        assert_eq!(back.type_selection(), selection.type_selection());
        assert_eq!(back.combine(), Combine::Or);
    }
}
