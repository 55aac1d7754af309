//! Glob patterns over a whole string: `*` matches any run of characters, `?` exactly one.
//!
//! Patterns are compiled once into the cheapest form that decides them: most filters are
//! `*`, an exact name or a prefix, and those never walk the general matcher.

use std::fmt;
use std::str::FromStr;

/// Longest pattern (and subject) Herald accepts, in bytes.
pub const MAX_PATTERN_BYTES: usize = 1024;

/// Why a pattern was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GlobError {
    /// The empty string matches nothing useful; `*` means everything.
    #[error("empty pattern (use `*` to match everything)")]
    Empty,
    /// Longer than [`MAX_PATTERN_BYTES`].
    #[error("pattern of {0} bytes is longer than the maximum of 1024")]
    TooLong(usize),
    /// A control character, which no subject may hold.
    #[error("pattern `{pattern}` contains control character U+{code:04X}")]
    ControlCharacter {
        /// The pattern, with the character escaped.
        pattern: String,
        /// The character's code point.
        code: u32,
    },
}

/// A compiled glob.
#[derive(Clone, PartialEq, Eq)]
pub struct Glob {
    source: String,
    form: Form,
}

#[derive(Clone, PartialEq, Eq)]
enum Form {
    Any,
    Exact,
    Prefix(usize),
    Suffix(usize),
    General(Vec<Segment>),
}

/// A run between two `*`s: literal characters and `?`s.
#[derive(Clone, PartialEq, Eq)]
struct Segment {
    parts: Vec<Part>,
    chars: usize,
}

#[derive(Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    AnyChar,
}

impl Glob {
    /// Compiles `pattern`.
    ///
    /// # Errors
    /// [`GlobError`] for an empty or over-long pattern or one with a control character.
    pub fn new(pattern: &str) -> Result<Self, GlobError> {
        if pattern.is_empty() {
            return Err(GlobError::Empty);
        }
        if pattern.len() > MAX_PATTERN_BYTES {
            return Err(GlobError::TooLong(pattern.len()));
        }
        if let Some(c) = pattern.chars().find(|c| c.is_control()) {
            return Err(GlobError::ControlCharacter {
                pattern: pattern.escape_debug().to_string(),
                code: u32::from(c),
            });
        }
        // `**` means what `*` means; keep one spelling so equal globs compare equal.
        let mut source = String::with_capacity(pattern.len());
        for c in pattern.chars() {
            if !(c == '*' && source.ends_with('*')) {
                source.push(c);
            }
        }
        let form = Form::compile(&source);
        Ok(Glob { source, form })
    }

    /// Returns the glob that matches everything.
    pub fn any() -> Self {
        Glob {
            source: "*".to_string(),
            form: Form::Any,
        }
    }

    /// Returns the pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Returns true if this glob matches every string.
    pub fn is_any(&self) -> bool {
        matches!(self.form, Form::Any)
    }

    /// Returns true if the glob matches the whole of `text`.
    pub fn matches(&self, text: &str) -> bool {
        match &self.form {
            Form::Any => true,
            Form::Exact => text == self.source,
            Form::Prefix(len) => text.as_bytes().starts_with(&self.source.as_bytes()[..*len]),
            Form::Suffix(len) => {
                let suffix = &self.source.as_bytes()[self.source.len() - len..];
                text.as_bytes().ends_with(suffix)
            }
            Form::General(segments) => match_segments(segments, text),
        }
    }
}

impl Form {
    fn compile(pattern: &str) -> Form {
        if pattern.chars().all(|c| c == '*') {
            return Form::Any;
        }
        let stars = pattern.matches('*').count();
        if !pattern.contains('?') {
            if stars == 0 {
                return Form::Exact;
            }
            if stars == 1 && pattern.ends_with('*') {
                return Form::Prefix(pattern.len() - 1);
            }
            if stars == 1 && pattern.starts_with('*') {
                return Form::Suffix(pattern.len() - 1);
            }
        }
        Form::General(pattern.split('*').map(Segment::compile).collect())
    }
}

impl Segment {
    fn compile(text: &str) -> Segment {
        let mut parts = Vec::new();
        let mut literal = String::new();
        for c in text.chars() {
            if c == '?' {
                if !literal.is_empty() {
                    parts.push(Part::Literal(std::mem::take(&mut literal)));
                }
                parts.push(Part::AnyChar);
            } else {
                literal.push(c);
            }
        }
        if !literal.is_empty() {
            parts.push(Part::Literal(literal));
        }
        Segment {
            chars: text.chars().count(),
            parts,
        }
    }

    /// Returns the byte length matched if the segment matches at the start of `text`.
    fn match_at(&self, text: &str) -> Option<usize> {
        let mut pos = 0;
        for part in &self.parts {
            match part {
                Part::Literal(literal) => {
                    if !text[pos..].starts_with(literal.as_str()) {
                        return None;
                    }
                    pos += literal.len();
                }
                Part::AnyChar => pos += text[pos..].chars().next()?.len_utf8(),
            }
        }
        Some(pos)
    }

    /// Returns the byte range after the leftmost match in `text`.
    fn find(&self, text: &str) -> Option<usize> {
        if let Some(Part::Literal(first)) = self.parts.first() {
            // Jump between occurrences of the leading literal instead of every position.
            let mut start = 0;
            while let Some(found) = text[start..].find(first.as_str()) {
                let at = start + found;
                if let Some(len) = self.match_at(&text[at..]) {
                    return Some(at + len);
                }
                start = at + first.chars().next().map_or(1, char::len_utf8);
            }
            return None;
        }
        text.char_indices()
            .map(|(at, _)| at)
            .chain(std::iter::once(text.len()))
            .find_map(|at| self.match_at(&text[at..]).map(|len| at + len))
    }
}

fn match_segments(segments: &[Segment], text: &str) -> bool {
    let (first, rest) = segments
        .split_first()
        .expect("split always yields one segment");
    let Some(mut pos) = first.match_at(text) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return pos == text.len();
    };
    for segment in middle {
        match segment.find(&text[pos..]) {
            Some(end) => pos += end,
            None => return false,
        }
    }
    // The last segment matches a fixed number of characters at the very end.
    let tail = &text[pos..];
    if last.chars == 0 {
        return true;
    }
    let Some((start, _)) = tail.char_indices().rev().nth(last.chars - 1) else {
        return false;
    };
    last.match_at(&tail[start..]) == Some(tail.len() - start)
}

impl FromStr for Glob {
    type Err = GlobError;

    fn from_str(pattern: &str) -> Result<Self, Self::Err> {
        Glob::new(pattern)
    }
}

impl Default for Glob {
    fn default() -> Self {
        Glob::any()
    }
}

impl fmt::Display for Glob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl fmt::Debug for Glob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Glob({:?})", self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The obviously correct matcher the compiled one is checked against.
    fn naive(pattern: &[char], text: &[char]) -> bool {
        match pattern.split_first() {
            None => text.is_empty(),
            Some(('*', rest)) => (0..=text.len()).any(|skip| naive(rest, &text[skip..])),
            Some(('?', rest)) => !text.is_empty() && naive(rest, &text[1..]),
            Some((c, rest)) => text.first() == Some(c) && naive(rest, &text[1..]),
        }
    }

    fn check(pattern: &str, text: &str) -> bool {
        Glob::new(pattern).unwrap().matches(text)
    }

    #[test]
    fn common_forms() {
        assert!(check("*", ""));
        assert!(check("ANTENNA.*", "ANTENNA.DV01.Mount"));
        assert!(!check("ANTENNA.*", "ANTENNA"));
        assert!(check("*.Mount", "ANTENNA.DV01.Mount"));
        assert!(check("ANTENNA.DV??.Mount", "ANTENNA.DV01.Mount"));
        assert!(!check("ANTENNA.DV?.Mount", "ANTENNA.DV01.Mount"));
        assert!(check("A*B*C", "AxxBxxC"));
        assert!(!check("A*B*C", "AxxBxxCx"));
        assert!(check("*é?", "aéü"));
        assert!(check("a*?", "ab"));
        assert!(!check("a*??", "ab"));
        assert!(check("a*a", "aa"));
        assert_eq!(Glob::new("a**b***").unwrap().as_str(), "a*b*");
        assert!(Glob::new("**").unwrap().is_any());
        assert!(!check("a*a", "a"));
    }

    #[test]
    fn refuses_bad_patterns() {
        assert_eq!(Glob::new("").unwrap_err(), GlobError::Empty);
        assert_eq!(
            Glob::new("a\u{7}b").unwrap_err().to_string(),
            "pattern `a\\u{7}b` contains control character U+0007"
        );
        assert_eq!(
            Glob::new(&"x".repeat(1025)).unwrap_err(),
            GlobError::TooLong(1025)
        );
    }

    proptest! {
        #[test]
        fn agrees_with_the_naive_matcher(
            pattern in "[ab.*?é]{1,8}",
            text in "[ab.é]{0,10}",
        ) {
            let p: Vec<char> = pattern.chars().collect();
            let t: Vec<char> = text.chars().collect();
            prop_assert_eq!(check(&pattern, &text), naive(&p, &t), "{} vs {}", pattern, text);
        }
    }
}
