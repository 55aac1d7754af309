//! Information objects across a cluster: changes go to the owner of the object's namespace
//! ([`super::namespaces`]), and every member keeps a copy of every namespace it does not own.
//!
//! - A change (`update`, `delete`) made on a member that does not own the namespace is
//!   forwarded over the route to the owner (`INFO` with a cid of the route's, answered by
//!   `INFO_REPLY` or `ERROR`), and answered with the owner's answer.
//! - The owner applies it, and sends the change to every other member (`INFO_CHANGE`) before
//!   its answer, on the same connection: a member applies the change to its copy before it
//!   answers the client, so a read there right after sees it.
//! - When a route comes up the owner sends the types and a snapshot of its namespaces; the
//!   far member drops from its copy what the snapshot no longer holds.
//! - Reads and info subscriptions are served from each member's store: its own objects and
//!   its copies.
//! - A type declared on one member is declared on every other (`INFO` `declare`).

use std::sync::Arc;
use std::time::Duration;

use herald_info::InfoObject;
use herald_proto::info::{InfoReply, InfoRequest, ObjectData};
use herald_proto::route::InfoChange;
use herald_proto::Frame;

use super::namespaces::Namespaces;
use super::requests::Requests;
use super::{Cluster, Link};
use crate::info::{ChangeListener, InfoFailure};
use crate::local::Local;

/// How long a forwarded change waits for the owner's answer.
pub const FORWARD_TIMEOUT: Duration = Duration::from_secs(10);
/// Objects per `INFO_CHANGE` frame of a snapshot.
const SNAPSHOT_OBJECTS: usize = 500;

/// Where a request is to be applied.
#[derive(Debug)]
pub enum Placement {
    /// On this member: it owns the namespace, or the object is in none.
    Here,
    /// On the owner, over this route.
    There(Arc<Link>),
    /// Nowhere now: why (the owner is unknown or unreachable).
    Nowhere(String),
}

/// The cluster's information objects as this member sees them.
#[derive(Debug)]
pub struct CloudInfo {
    /// The namespaces and their owners.
    pub namespaces: Namespaces,
    /// This member's server name.
    me: String,
    forwarded: Requests<InfoReply>,
    /// Changes of leased namespaces, for the store in Cassandra.
    pub saver: super::saver::Saver,
}

impl CloudInfo {
    /// The namespaces of `me`'s cluster.
    pub fn new(namespaces: Namespaces, me: &str) -> CloudInfo {
        CloudInfo {
            namespaces,
            me: me.to_string(),
            forwarded: Requests::new(1),
            saver: super::saver::Saver::default(),
        }
    }

    /// Returns true if this member owns object `name`'s namespace, or it is in none.
    pub fn owns(&self, name: &str) -> bool {
        self.namespaces
            .of(name)
            .is_none_or(|n| n.owner().is_some_and(|o| o.name == self.me))
    }

    /// Returns true if object `name` is a copy here: in a namespace another member owns (or
    /// none does, while its lease is taken over).
    pub fn is_copy(&self, name: &str) -> bool {
        self.namespaces
            .of(name)
            .is_some_and(|n| n.owner().is_none_or(|o| o.name != self.me))
    }

    /// Returns where `request` is to be applied: changes of another member's namespace go
    /// to it; everything else is answered here.
    pub fn place(&self, cluster: &Cluster, request: &InfoRequest) -> Placement {
        let name = match request {
            InfoRequest::Update { name, .. } | InfoRequest::Delete { name, .. } => name,
            _ => return Placement::Here,
        };
        let Some(namespace) = self.namespaces.of(name) else {
            return Placement::Here;
        };
        let Some(owner) = namespace.owner() else {
            return Placement::Nowhere(format!(
                "`{name}` is in namespace `{}`, which has no owner now (its lease is being \
                 taken over); try again in a moment",
                namespace.name
            ));
        };
        if owner.name == self.me {
            return Placement::Here;
        }
        match cluster.link_to(&owner.name) {
            Some(link) => Placement::There(link),
            None => Placement::Nowhere(format!(
                "`{name}` is in namespace `{}`, owned by cluster member `{}`, which is not \
                 reachable now",
                namespace.name, owner.name
            )),
        }
    }

    /// Sends `request` to the owner over `link` and waits for its answer.
    ///
    /// # Errors
    /// The owner's error, or `unavailable` when it does not answer in time.
    pub async fn forward(
        &self,
        link: &Link,
        request: InfoRequest,
    ) -> Result<InfoReply, InfoFailure> {
        let what = "the change of an object it owns";
        let frame = |cid| Frame::Info { cid, request };
        self.forwarded.ask(link, frame, FORWARD_TIMEOUT, what).await
    }

    /// The owner answered forwarded request `cid`.
    pub fn answered(&self, cid: u64, answer: Result<InfoReply, InfoFailure>) {
        self.forwarded.answered(cid, answer);
    }

    /// Tells every other member of a type declared here.
    pub fn declared(&self, cluster: &Cluster, request: &InfoRequest) {
        if let InfoRequest::Declare(_) = request {
            let cid = self.forwarded.cid();
            cluster.broadcast(Frame::Info {
                cid,
                request: request.clone(),
            });
        }
    }

    /// Sends over `link` every type, then a snapshot of the namespaces this member owns,
    /// with the store locked so that no change slips in between.
    pub fn send_snapshot(&self, shared: &Local, link: &Link) {
        let owned: Vec<String> = self
            .namespaces
            .owned_by(&self.me)
            .map(|n| n.name.clone())
            .collect();
        shared.info.read(|store| {
            let cid = self.forwarded.cid();
            for def in store.types() {
                link.send(Frame::Info {
                    cid,
                    request: InfoRequest::Declare(def.to_data()),
                });
            }
            if owned.is_empty() {
                return;
            }
            let objects: Vec<ObjectData> = store
                .objects()
                .filter(|o| {
                    self.namespaces
                        .of(&o.name)
                        .is_some_and(|n| owned.contains(&n.name))
                })
                .map(|o| o.clone().into())
                .collect();
            for frame in snapshot_frames(&objects, &owned) {
                link.send(frame);
            }
        });
    }
}

/// The `INFO_CHANGE` frames of a snapshot of `objects`: reason `snapshot`, the last of
/// reason `synced` naming the `namespaces` it covers (one, empty, when there is no object).
pub fn snapshot_frames(objects: &[ObjectData], namespaces: &[String]) -> Vec<Frame> {
    let mut chunks: Vec<&[ObjectData]> = objects.chunks(SNAPSHOT_OBJECTS).collect();
    if chunks.is_empty() {
        chunks.push(&[]);
    }
    let last = chunks.len() - 1;
    chunks
        .into_iter()
        .enumerate()
        .map(|(index, chunk)| {
            let (reason, namespaces) = match index == last {
                true => (herald_proto::route::SYNCED, namespaces.to_vec()),
                false => (crate::info::SNAPSHOT_REASON, Vec::new()),
            };
            Frame::InfoChange(InfoChange {
                reason: reason.to_string(),
                objects: chunk.to_vec(),
                namespaces,
            })
        })
        .collect()
}

/// Hears the changes this member applies, under the store's lock: the owner's go to every
/// other member, in the order they are made, and to the store in Cassandra when leased.
#[derive(Debug)]
pub struct Announcer {
    /// The cluster.
    pub cluster: std::sync::Weak<Cluster>,
}

impl ChangeListener for Announcer {
    fn changed(&self, object: &InfoObject, reason: &str) {
        let Some(cluster) = self.cluster.upgrade() else {
            return;
        };
        let info = &cluster.info;
        let Some(namespace) = info.namespaces.of(&object.name) else {
            return;
        };
        cluster.broadcast(Frame::InfoChange(InfoChange {
            reason: reason.to_string(),
            objects: vec![object.clone().into()],
            namespaces: Vec::new(),
        }));
        if namespace.leased() {
            info.saver.save(&namespace.name, object, reason);
        }
    }
}
