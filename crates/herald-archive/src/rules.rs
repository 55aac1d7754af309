//! [`Rules`]: which records the archive keeps, and for how long. The first rule that matches
//! a record decides; a record no rule matches is not archived. Rules only steer new records,
//! so changing them needs no migration: what is stored keeps the retention it was stored with.

use herald_proto::frame::RawRecord;
use herald_proto::{Glob, Kind, KindSet, Priority, PrioritySet};

use crate::keep::Keep;

/// One rule: a filter and a retention.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Kinds it applies to.
    pub kinds: KindSet,
    /// Subject (object name) glob.
    pub subject: Glob,
    /// Priorities it applies to.
    pub priorities: PrioritySet,
    /// Type glob (`*` for any, including none).
    pub type_name: Glob,
    /// How long to keep what it matches.
    pub keep: Keep,
}

impl Rule {
    /// Returns a rule matching every record, kept for `keep`.
    pub fn everything(keep: Keep) -> Rule {
        Rule {
            kinds: KindSet::ALL,
            subject: Glob::any(),
            priorities: PrioritySet::ALL,
            type_name: Glob::any(),
            keep,
        }
    }

    /// Returns whether `record` passes this rule's filter.
    pub fn matches(&self, record: &RawRecord) -> bool {
        let meta = &record.meta;
        self.kinds.contains(meta.kind)
            && self.priorities.contains(meta.priority)
            && (self.subject.is_any() || self.subject.matches(record.subject()))
            && (self.type_name.is_any() || self.type_name.matches(record.type_name()))
    }

    /// Describes the rule in the config's words, for `--check-config` and logs.
    pub fn describe(&self) -> String {
        let kinds: Vec<&str> = [Kind::Log, Kind::Message, Kind::Info]
            .into_iter()
            .filter(|kind| self.kinds.contains(*kind))
            .map(Kind::name)
            .collect();
        format!(
            "kinds {} subject `{}` priorities {} type `{}` keep {}",
            kinds.join(","),
            self.subject.as_str(),
            self.priorities,
            self.type_name.as_str(),
            self.keep
        )
    }
}

/// The archive's rules, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules(Vec<Rule>);

/// The retention of the default rules.
pub const DEFAULT_KEEP: Keep = Keep::days(30);

impl Default for Rules {
    /// Every information-object change, and every log at INFO or above, kept 30 days.
    fn default() -> Self {
        let info = Rule {
            kinds: KindSet::from(Kind::Info),
            ..Rule::everything(DEFAULT_KEEP)
        };
        let logs = Rule {
            kinds: KindSet::from(Kind::Log),
            priorities: PrioritySet::at_least(Priority::Info),
            ..Rule::everything(DEFAULT_KEEP)
        };
        Rules(vec![info, logs])
    }
}

impl Rules {
    /// Returns these rules, in order.
    pub fn new(rules: Vec<Rule>) -> Rules {
        Rules(rules)
    }

    /// Returns the rules.
    pub fn rules(&self) -> &[Rule] {
        &self.0
    }

    /// Returns the retention of the first rule matching `record`, or `None`: not archived.
    pub fn keep_for(&self, record: &RawRecord) -> Option<Keep> {
        self.0
            .iter()
            .find(|rule| rule.matches(record))
            .map(|rule| rule.keep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use herald_proto::Record;

    fn raw(kind: Kind, subject: &str, priority: Priority) -> RawRecord {
        let record = Record {
            priority,
            ..Record::new(kind, subject)
        };
        RawRecord::new(Bytes::from(record.to_bytes())).unwrap()
    }

    #[test]
    fn defaults_keep_info_and_logs_from_info_up() {
        let rules = Rules::default();
        let month = Some(DEFAULT_KEEP);
        assert_eq!(
            rules.keep_for(&raw(Kind::Info, "A.b", Priority::Info)),
            month
        );
        assert_eq!(rules.keep_for(&raw(Kind::Log, "A", Priority::Info)), month);
        assert_eq!(rules.keep_for(&raw(Kind::Log, "A", Priority::Error)), month);
        assert_eq!(rules.keep_for(&raw(Kind::Log, "A", Priority::Debug)), None);
        assert_eq!(
            rules.keep_for(&raw(Kind::Message, "A", Priority::Info)),
            None
        );
    }

    #[test]
    fn the_first_matching_rule_decides() {
        let errors = Rule {
            priorities: PrioritySet::at_least(Priority::Error),
            ..Rule::everything(Keep::days(365))
        };
        let antenna = Rule {
            subject: Glob::new("ANTENNA.*").unwrap(),
            ..Rule::everything(Keep::days(7))
        };
        let rules = Rules::new(vec![errors, antenna]);
        let error = raw(Kind::Log, "ANTENNA.DV01", Priority::Error);
        assert_eq!(rules.keep_for(&error), Some(Keep::days(365)));
        let info = raw(Kind::Log, "ANTENNA.DV01", Priority::Info);
        assert_eq!(rules.keep_for(&info), Some(Keep::days(7)));
        assert_eq!(rules.keep_for(&raw(Kind::Log, "DAQ", Priority::Info)), None);
    }
}
