//! Identities and what each may do: a connection presents a token, the server finds the
//! identity whose secret hashes to it ([`store`]), and every request is checked against
//! that identity's [`Permissions`]. A server with no identities is open: every connection
//! may do everything ([`Access::Open`]); the refusing default (loopback only, unless
//! `--insecure-open`) is the configuration's.

pub mod guard;
pub mod store;

pub use guard::Guard;

use std::sync::Arc;

use herald_router::GlobRules;

/// What one identity may do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Permissions {
    /// Subjects it may publish records about.
    pub publish: GlobRules,
    /// Subjects it may receive records about; a wider subscription is narrowed to them.
    pub subscribe: GlobRules,
    /// Information objects it may read (get, list, subscribe to).
    pub info_read: GlobRules,
    /// Information objects it may create, update and delete (and types it may declare).
    pub info_write: GlobRules,
    /// Archive queries.
    pub query: bool,
    /// Control messages (threshold changes) and other connections' details (the monitor).
    pub admin: bool,
}

/// A named identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// Its name, shown by the monitor and in every refusal.
    pub name: String,
    /// What it may do.
    pub permissions: Permissions,
    /// The SHA-256 of its secret: a new token under the same name is another identity.
    pub hash: [u8; 32],
}

/// What a connection may do: everything (a server without identities), or what its
/// identity may.
#[derive(Debug, Clone)]
pub enum Access {
    /// No identities are configured: everyone may do everything.
    Open,
    /// The identity the connection's token names.
    Identity(Arc<Identity>),
}

/// One kind of operation, as a refusal names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// Publishing a record about a subject.
    Publish,
    /// Subscribing to records.
    Subscribe,
    /// Reading an information object.
    InfoRead,
    /// Changing an information object.
    InfoWrite,
    /// Declaring an information type: any identity that may write some object may.
    Declare,
    /// Querying the archive.
    Query,
    /// An administrative operation.
    Admin,
}

impl Operation {
    /// The operation as a permission is named on the command line (`publish`, `info-write`).
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Publish => "publish",
            Operation::Subscribe => "subscribe",
            Operation::InfoRead => "info-read",
            Operation::InfoWrite => "info-write",
            Operation::Declare => "info-write",
            Operation::Query => "query",
            Operation::Admin => "admin",
        }
    }
}

/// Subjects of Herald's own control messages (`_HERALD.threshold`): everyone may receive
/// them (a logger must hear its threshold), only `admin` may publish them.
pub const CONTROL_SUBJECTS: &str = "_HERALD.*";
const CONTROL_PREFIX: &str = "_HERALD.";

impl Access {
    /// Checks publishing a record about `subject`: the identity's publish globs, and
    /// `admin` for a control subject.
    ///
    /// # Errors
    /// The refusal, naming the identity and the subject.
    pub fn check_publish(&self, subject: &str) -> Result<(), String> {
        let Some(permissions) = self.permissions() else {
            return Ok(());
        };
        if subject.starts_with(CONTROL_PREFIX) && !permissions.admin {
            let what = format!("publish about control subject `{subject}`");
            return Err(self.refusal(Operation::Admin, &what));
        }
        self.check(Operation::Publish, subject)
    }

    /// The identity's name, or `None` on an open server.
    pub fn name(&self) -> Option<&str> {
        match self {
            Access::Open => None,
            Access::Identity(identity) => Some(&identity.name),
        }
    }

    fn permissions(&self) -> Option<&Permissions> {
        match self {
            Access::Open => None,
            Access::Identity(identity) => Some(&identity.permissions),
        }
    }

    /// Checks `operation` on `what` (a subject or an object name; ignored for query and
    /// admin).
    ///
    /// # Errors
    /// A message naming the identity, the operation and `what`.
    pub fn check(&self, operation: Operation, what: &str) -> Result<(), String> {
        let Some(permissions) = self.permissions() else {
            return Ok(());
        };
        let allowed = match operation {
            Operation::Publish => permissions.publish.allows(what),
            // With no subscribe glob, only the control subjects (a logger's threshold).
            Operation::Subscribe => {
                !permissions.subscribe.allows_none() || what.starts_with(CONTROL_PREFIX)
            }
            Operation::InfoRead => permissions.info_read.allows(what),
            Operation::InfoWrite => permissions.info_write.allows(what),
            Operation::Declare => !permissions.info_write.allows_none(),
            Operation::Query => permissions.query,
            Operation::Admin => permissions.admin,
        };
        if allowed {
            return Ok(());
        }
        Err(self.refusal(operation, what))
    }

    /// The message refusing `operation` on `what`.
    pub fn refusal(&self, operation: Operation, what: &str) -> String {
        let name = self.name().unwrap_or("(open)");
        let may = |rules: &GlobRules| rules.describe();
        let Some(permissions) = self.permissions() else {
            return format!("`{name}` may not {}", operation.as_str());
        };
        match operation {
            Operation::Publish => format!(
                "identity `{name}` may not publish about `{what}` (it may publish about {})",
                may(&permissions.publish)
            ),
            Operation::Subscribe => format!(
                "identity `{name}` may not subscribe (it may see nothing; asked for `{what}`)"
            ),
            Operation::InfoRead => format!(
                "identity `{name}` may not read information object `{what}` (it may read {})",
                may(&permissions.info_read)
            ),
            Operation::InfoWrite => format!(
                "identity `{name}` may not write information object `{what}` (it may write {})",
                may(&permissions.info_write)
            ),
            Operation::Declare => format!(
                "identity `{name}` may not declare type `{what}` (it may write no information \
                 object)"
            ),
            Operation::Query => format!(
                "identity `{name}` may not query the archive (it has no `query` permission)"
            ),
            Operation::Admin => {
                format!("identity `{name}` may not {what} (that needs the `admin` permission)")
            }
        }
    }

    /// The subjects a subscription of this connection may see, when not all: its
    /// subscribe globs and the control subjects.
    pub fn visible_subjects(&self) -> Option<Arc<GlobRules>> {
        let permissions = self.permissions()?;
        let rules = &permissions.subscribe;
        (!rules.allows_all()).then(|| Arc::new(rules.clone().also_allowing(CONTROL_SUBJECTS)))
    }

    /// Returns true if the identity may read information object `name`.
    pub fn may_read(&self, name: &str) -> bool {
        self.permissions()
            .is_none_or(|permissions| permissions.info_read.allows(name))
    }

    /// The object names an info subscription of this connection may see (and whose change
    /// records an ordinary subscription may receive), when not all.
    pub fn visible_objects(&self) -> Option<Arc<GlobRules>> {
        let permissions = self.permissions()?;
        let rules = &permissions.info_read;
        (!rules.allows_all()).then(|| Arc::new(rules.clone()))
    }

    /// Returns true if every publish is allowed (then records need no check one by one).
    pub fn publishes_anything(&self) -> bool {
        self.permissions()
            .is_none_or(|permissions| permissions.admin && permissions.publish.allows_all())
    }
}
