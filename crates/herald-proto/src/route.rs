//! What cluster members say to each other over a route beyond the client frames they
//! reuse: `MEMBERS`, who is in the cluster, `ROUTE_AUTH`, a member's proof that it knows the
//! cluster secret, and `INFO_CHANGE`, what the owner of a namespace of information objects
//! changed. A route connection starts with `MEMBERS` both ways (the sender, its cluster's
//! name and the members it knows), then, with a cluster secret, `ROUTE_AUTH` both ways, and
//! sends `MEMBERS` again when the members it knows change; far subscribers' interests travel as `SUBSCRIBE` and `UNSUBSCRIBE`,
//! records as `DELIVER` (docs/cluster.md).

use crate::error::DecodeError;
use crate::info::ObjectData;
use crate::msgpack::{self, Reader};

/// The body of a `MIRROR` frame: `[source, [subject glob, …], [object glob, …]]`, sent by a
/// server that feeds a read-only mirror, first after `WELCOME`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MirrorFeed {
    /// The source server's name.
    pub source: String,
    /// Subjects whose records it streams (globs).
    pub subjects: Vec<String>,
    /// Information objects it streams (globs).
    pub objects: Vec<String>,
}

impl MirrorFeed {
    /// Appends the body.
    pub fn encode(&self, out: &mut Vec<u8>) {
        msgpack::write_array_len(out, 3);
        msgpack::write_str(out, &self.source);
        for globs in [&self.subjects, &self.objects] {
            msgpack::write_array_len(out, msgpack::len_u32(globs.len()));
            for glob in globs {
                msgpack::write_str(out, glob);
            }
        }
    }

    /// Reads what [`MirrorFeed::encode`] writes.
    ///
    /// # Errors
    /// [`DecodeError`] for anything else.
    pub fn decode(reader: &mut Reader<'_>) -> Result<MirrorFeed, DecodeError> {
        crate::wire::expect_array(reader, "MIRROR", 3)?;
        let source = reader.read_str()?.to_string();
        let mut lists = [Vec::new(), Vec::new()];
        for list in &mut lists {
            let count = reader.read_array_len()?;
            for _ in 0..count.min(4096) {
                list.push(reader.read_str()?.to_string());
            }
            if count > 4096 {
                return Err(DecodeError::InvalidField {
                    field: "MIRROR globs",
                    reason: format!("{count} globs (at most 4096)"),
                });
            }
        }
        let [subjects, objects] = lists;
        Ok(MirrorFeed {
            source,
            subjects,
            objects,
        })
    }
}

/// The reason of the last `INFO_CHANGE` frame of a snapshot.
pub const SYNCED: &str = "synced";

/// The body of an `INFO_CHANGE` frame: `[reason, [object, …], [namespace, …]]`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InfoChange {
    /// `created`, `updated`, `deleted` (one object), `snapshot` (part of a snapshot) or
    /// [`SYNCED`] (its last part).
    pub reason: String,
    /// The objects, as they are after the change (a deleted one as it was).
    pub objects: Vec<ObjectData>,
    /// With [`SYNCED`]: the namespaces the snapshot covered.
    pub namespaces: Vec<String>,
}

impl InfoChange {
    /// Appends the body.
    pub fn encode(&self, out: &mut Vec<u8>) {
        msgpack::write_array_len(out, 3);
        msgpack::write_str(out, &self.reason);
        msgpack::write_array_len(out, msgpack::len_u32(self.objects.len()));
        for object in &self.objects {
            object.encode(out);
        }
        msgpack::write_array_len(out, msgpack::len_u32(self.namespaces.len()));
        for namespace in &self.namespaces {
            msgpack::write_str(out, namespace);
        }
    }

    /// Reads what [`InfoChange::encode`] writes.
    ///
    /// # Errors
    /// [`DecodeError`] for anything else.
    pub fn decode(reader: &mut Reader<'_>) -> Result<InfoChange, DecodeError> {
        crate::wire::expect_array(reader, "INFO_CHANGE", 3)?;
        let reason = reader.read_str()?.to_string();
        let count = reader.read_array_len()?;
        let mut objects = Vec::with_capacity((count as usize).min(1024));
        for _ in 0..count {
            objects.push(ObjectData::decode(reader)?);
        }
        let count = reader.read_array_len()?;
        let mut namespaces = Vec::with_capacity((count as usize).min(1024));
        for _ in 0..count {
            namespaces.push(reader.read_str()?.to_string());
        }
        Ok(InfoChange {
            reason,
            objects,
            namespaces,
        })
    }
}

/// One member of a cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Member {
    /// Chosen at random when the member starts: a restarted member is a new one.
    pub id: u64,
    /// Its server name, for people.
    pub name: String,
    /// `host:port` of its route listener, as the others reach it.
    pub address: String,
}

/// The body of a `MEMBERS` frame.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Members {
    /// The cluster's name: a route between members of different clusters is refused.
    pub cluster: String,
    /// The sender.
    pub me: Member,
    /// Every other member the sender knows of (routed to or not).
    pub known: Vec<Member>,
    /// In the first `MEMBERS` of a route, when the sender has a cluster secret: 32 random
    /// bytes, fresh for the connection. The other side answers with `ROUTE_AUTH`, the
    /// HMAC-SHA256 keyed by the secret of `"herald route v1"`, `d` (it dialed) or `a` (it
    /// accepted), then the cluster's name, this nonce and its own nonce, each preceded by
    /// its length as 8 bytes big-endian, then its member id as 8 bytes big-endian.
    pub nonce: Option<Vec<u8>>,
}

impl Members {
    /// Appends `[cluster, member, [member, …]]`, each member `[id, name, address]`, and
    /// the nonce after them when there is one.
    pub fn encode(&self, out: &mut Vec<u8>) {
        msgpack::write_array_len(out, if self.nonce.is_some() { 4 } else { 3 });
        msgpack::write_str(out, &self.cluster);
        self.me.encode(out);
        msgpack::write_array_len(out, msgpack::len_u32(self.known.len()));
        for member in &self.known {
            member.encode(out);
        }
        if let Some(nonce) = &self.nonce {
            msgpack::write_bin(out, nonce);
        }
    }

    /// Reads what [`Members::encode`] writes.
    ///
    /// # Errors
    /// [`DecodeError`] for anything else.
    pub fn decode(reader: &mut Reader<'_>) -> Result<Members, DecodeError> {
        let len = reader.read_array_len()?;
        if !(3..=4).contains(&len) {
            return Err(DecodeError::WrongLength {
                message: "MEMBERS",
                expected: 3,
                found: len,
            });
        }
        let cluster = reader.read_str()?.to_string();
        let me = Member::decode(reader)?;
        let count = reader.read_array_len()?;
        let mut known = Vec::with_capacity((count as usize).min(1024));
        for _ in 0..count {
            known.push(Member::decode(reader)?);
        }
        let nonce = if len == 4 {
            Some(reader.read_bin()?.to_vec())
        } else {
            None
        };
        Ok(Members {
            cluster,
            me,
            known,
            nonce,
        })
    }
}

impl Member {
    fn encode(&self, out: &mut Vec<u8>) {
        msgpack::write_array_len(out, 3);
        msgpack::write_uint(out, self.id);
        msgpack::write_str(out, &self.name);
        msgpack::write_str(out, &self.address);
    }

    fn decode(reader: &mut Reader<'_>) -> Result<Member, DecodeError> {
        crate::wire::expect_array(reader, "MEMBERS member", 3)?;
        Ok(Member {
            id: reader.read_uint()?,
            name: reader.read_str()?.to_string(),
            address: reader.read_str()?.to_string(),
        })
    }
}
