//! Allow and deny globs over subjects or object names, as one permission of an identity.

use herald_proto::glob::{Glob, GlobError};

/// What one permission allows: a subject or name some allow glob matches and no deny glob
/// does. No allow glob allows nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GlobRules {
    allow: Vec<Glob>,
    deny: Vec<Glob>,
}

impl GlobRules {
    /// Allows everything.
    pub fn all() -> GlobRules {
        GlobRules {
            allow: vec![Glob::any()],
            deny: Vec::new(),
        }
    }

    /// Compiles `allow` and `deny` patterns.
    ///
    /// # Errors
    /// The first bad pattern, with what is wrong with it.
    pub fn new(allow: &[String], deny: &[String]) -> Result<GlobRules, (String, GlobError)> {
        let compile = |patterns: &[String]| {
            patterns
                .iter()
                .map(|p| Glob::new(p).map_err(|err| (p.clone(), err)))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(GlobRules {
            allow: compile(allow)?,
            deny: compile(deny)?,
        })
    }

    /// These rules, also allowing what `pattern` matches (unless a deny glob matches it).
    ///
    /// # Panics
    /// If `pattern` is not a valid glob (it is a constant of the caller's).
    #[must_use]
    pub fn also_allowing(mut self, pattern: &str) -> GlobRules {
        self.allow.push(Glob::new(pattern).expect("a valid glob"));
        self
    }

    /// Returns true if `text` is allowed.
    pub fn allows(&self, text: &str) -> bool {
        self.allow.iter().any(|g| g.matches(text)) && !self.deny.iter().any(|g| g.matches(text))
    }

    /// Returns true if everything is allowed (then no per-record check is needed).
    pub fn allows_all(&self) -> bool {
        self.deny.is_empty() && self.allow.iter().any(Glob::is_any)
    }

    /// Returns true if nothing is allowed.
    pub fn allows_none(&self) -> bool {
        self.allow.is_empty()
    }

    /// The allow patterns as written.
    pub fn allowed(&self) -> impl Iterator<Item = &str> {
        self.allow.iter().map(Glob::as_str)
    }

    /// The deny patterns as written.
    pub fn denied(&self) -> impl Iterator<Item = &str> {
        self.deny.iter().map(Glob::as_str)
    }

    /// Describes the rules for people: `DAQ.* but not DAQ.Secret*`, `nothing`.
    pub fn describe(&self) -> String {
        if self.allow.is_empty() {
            return "nothing".to_string();
        }
        let allow: Vec<&str> = self.allowed().collect();
        let mut text = allow.join(", ");
        if !self.deny.is_empty() {
            let deny: Vec<&str> = self.denied().collect();
            text.push_str(" but not ");
            text.push_str(&deny.join(", "));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(allow: &[&str], deny: &[&str]) -> GlobRules {
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        GlobRules::new(&owned(allow), &owned(deny)).unwrap()
    }

    #[test]
    fn allowed_when_an_allow_glob_matches_and_no_deny_glob_does() {
        let daq = rules(&["DAQ.*", "Run.Info"], &["DAQ.Secret*"]);
        assert!(daq.allows("DAQ.Readout"));
        assert!(daq.allows("Run.Info"));
        assert!(!daq.allows("DAQ.SecretKey"));
        assert!(!daq.allows("Magnet.Current"));
        assert!(!daq.allows_all());
        assert_eq!(daq.describe(), "DAQ.*, Run.Info but not DAQ.Secret*");
    }

    #[test]
    fn no_allow_glob_allows_nothing_and_star_allows_all() {
        assert!(!rules(&[], &[]).allows("A"));
        assert!(rules(&[], &[]).allows_none());
        assert!(rules(&["*"], &[]).allows_all());
        assert!(!rules(&["*"], &["X*"]).allows_all());
        assert!(GlobRules::all().allows("anything"));
    }

    #[test]
    fn a_bad_pattern_is_named() {
        let err = GlobRules::new(&["".to_string()], &[]).unwrap_err();
        assert_eq!(err.0, "");
    }
}
