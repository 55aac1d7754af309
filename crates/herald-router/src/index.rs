//! An immutable snapshot of all subscriptions, rebuilt on every change.
//!
//! Subscriptions change rarely and records flow constantly, so the router reads a snapshot
//! through `ArcSwap` (no lock) and writers rebuild it whole. Subscriptions on an exact subject
//! sit in a hash map; only pattern subscriptions are scanned, and only on a cache miss.

use std::collections::HashMap;
use std::sync::Arc;

use herald_proto::priority::ALL_PRIORITIES;

use crate::subscription::Subscription;

/// Every subscription, by subject form.
#[derive(Debug, Default)]
pub struct Index {
    /// Changes whenever a subscription is added or removed; match caches compare it.
    pub generation: u64,
    exact: HashMap<String, Vec<Arc<Subscription>>>,
    patterns: Vec<Arc<Subscription>>,
    count: usize,
}

/// The subscriptions whose subject pattern matches one subject, split into priority
/// channels: `channels[p]` holds those that want priority `p`.
#[derive(Debug, Default)]
pub struct Matched {
    /// Indexed by priority number (0 and 7 stay empty).
    pub channels: [Vec<Arc<Subscription>>; 12],
}

impl Index {
    /// Returns a new index: this one plus `added`, minus those `remove` selects.
    pub fn rebuild(
        &self,
        added: Option<Arc<Subscription>>,
        remove: &impl Fn(&Subscription) -> bool,
    ) -> Index {
        let mut next = Index {
            generation: self.generation + 1,
            ..Index::default()
        };
        let current = self.iter().cloned();
        for subscription in current.chain(added).filter(|s| !remove(s)) {
            next.insert(subscription);
        }
        next
    }

    fn insert(&mut self, subscription: Arc<Subscription>) {
        self.count += 1;
        let subject = &subscription.filter.subject;
        if subject.as_str().contains(['*', '?']) {
            self.patterns.push(subscription);
        } else {
            let key = subject.as_str().to_string();
            self.exact.entry(key).or_default().push(subscription);
        }
    }

    /// Returns every subscription.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Subscription>> {
        self.exact.values().flatten().chain(&self.patterns)
    }

    /// Returns the number of subscriptions.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Returns true if there is no subscription.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Computes the subscriptions matching `subject`, by priority channel.
    pub fn matching(&self, subject: &str) -> Matched {
        let mut matched = Matched::default();
        // The identity's narrowing is looked at here, once per subject and index generation
        // (the match cache keeps the result), never per record.
        let exact = self.exact.get(subject).into_iter().flatten();
        let exact = exact.filter(|s| s.may_see(subject));
        let patterns = self.patterns.iter().filter(|s| s.wants_subject(subject));
        for subscription in exact.chain(patterns) {
            for priority in ALL_PRIORITIES {
                if subscription.filter.priorities.contains(priority) {
                    matched.channels[priority as usize].push(Arc::clone(subscription));
                }
            }
        }
        matched
    }
}
