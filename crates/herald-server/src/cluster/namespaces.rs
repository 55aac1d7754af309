//! Namespaces of information objects in a cluster: which member owns which names.
//!
//! The configuration splits the names into namespaces (name globs, first match wins), each
//! owned by one member: the one it names (static), or — when the archive is Apache
//! Cassandra and the namespace names no owner — whichever member holds its lease in
//! Cassandra ([`herald_archive::cql::InfoLeases`]). The owner applies every change of its
//! namespaces and sends it to the other members, which keep a copy: reads and info
//! subscriptions are served from the copy on every member, changes go to the owner
//! ([`super::info`]).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use herald_proto::glob::Glob;
use herald_proto::value::Value;

use crate::config::NamespaceConfig;

/// The owner a namespace has now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// The member's server name.
    pub name: String,
    /// The member's id, when known (a lease names it; a static owner is known by name).
    pub member: u64,
}

/// One namespace and its owner now.
#[derive(Debug)]
pub struct Namespace {
    /// Its name (the lease's key).
    pub name: String,
    globs: Vec<Glob>,
    /// The member the configuration names, if any: otherwise the owner holds a lease.
    pub configured: Option<String>,
    owner: Mutex<Option<Owner>>,
}

impl Namespace {
    /// Returns true if the namespace's globs take object `name`.
    pub fn takes(&self, name: &str) -> bool {
        self.globs.iter().any(|glob| glob.matches(name))
    }

    /// Returns its owner now, if it has one.
    pub fn owner(&self) -> Option<Owner> {
        lock(&self.owner).clone()
    }

    /// Sets its owner; returns the one it had.
    pub fn set_owner(&self, owner: Option<Owner>) -> Option<Owner> {
        std::mem::replace(&mut lock(&self.owner), owner)
    }

    /// Returns true if it is leased (no owner configured).
    pub fn leased(&self) -> bool {
        self.configured.is_none()
    }
}

/// Every namespace of the cluster, in the order configured.
#[derive(Debug, Default)]
pub struct Namespaces {
    list: Vec<Arc<Namespace>>,
    /// How long a lease lasts without renewal.
    pub lease: Duration,
}

impl Namespaces {
    /// The namespaces configured; static owners are set at once.
    pub fn new(configured: &[NamespaceConfig], lease: Duration) -> Namespaces {
        let list = configured
            .iter()
            .map(|config| {
                Arc::new(Namespace {
                    name: config.name.clone(),
                    globs: config.names.clone(),
                    configured: config.owner.clone(),
                    owner: Mutex::new(config.owner.clone().map(|name| Owner { name, member: 0 })),
                })
            })
            .collect();
        Namespaces { list, lease }
    }

    /// Returns true if no namespace is configured (every object is each member's own).
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Returns the namespace object `name` belongs to, if any (the first that takes it).
    pub fn of(&self, name: &str) -> Option<&Arc<Namespace>> {
        self.list.iter().find(|namespace| namespace.takes(name))
    }

    /// Returns every namespace.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Namespace>> {
        self.list.iter()
    }

    /// Returns the namespaces `me` owns now.
    pub fn owned_by<'a>(&'a self, me: &'a str) -> impl Iterator<Item = &'a Arc<Namespace>> {
        self.list
            .iter()
            .filter(move |n| n.owner().is_some_and(|o| o.name == me))
    }

    /// The namespaces for the monitor: name, globs, owner (`""` when none) and whether
    /// the owner holds a lease.
    pub fn snapshot(&self) -> Value {
        Value::Array(
            self.list
                .iter()
                .map(|namespace| {
                    let owner = namespace.owner().map(|o| o.name).unwrap_or_default();
                    let names = namespace
                        .globs
                        .iter()
                        .map(|g| Value::Str(g.as_str().to_string()))
                        .collect();
                    Value::Map(vec![
                        ("name".into(), Value::Str(namespace.name.clone())),
                        ("names".into(), Value::Array(names)),
                        ("owner".into(), Value::Str(owner)),
                        ("leased".into(), Value::Bool(namespace.leased())),
                    ])
                })
                .collect(),
        )
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
