//! The start of a route connection, before it is attached to a link: `MEMBERS` both ways
//! (with a nonce each, and no other member named, when the cluster has a secret), the proofs
//! of the secret ([`super::secret`]), then the checks on what the other side said — the same
//! cluster, not this member itself, a name of its own. A refusal is told to the other side
//! as `ERROR handshake` (`refuse`).

use std::net::SocketAddr;
use std::time::Duration;

use herald_proto::route::Members;
use herald_proto::Frame;
use tokio::io::AsyncWriteExt;

use super::refusal;
use super::secret::{self, FarSide, NearSide, RouteSecret};
use super::Cluster;
use crate::connection::FrameReader;
use crate::halves::{Reading, Writing};

/// Why a route ended.
#[derive(Debug)]
pub enum Ended {
    /// The far side is this member (a seed naming this member's own listener).
    Myself,
    /// The far side is of another cluster, has a name taken, or spoke something else: why
    /// ([`super::refusal`] words it).
    Refused(String),
    /// The far side could not be reached (dialers only).
    Unreachable,
    /// The route ran and ended (closed, timed out, replaced); the far member's id.
    Closed(u64),
}

/// Opens a route connection: returns the other side's first `MEMBERS`, or how the
/// connection ended (refusals told to the other side).
pub(super) async fn open(
    cluster: &Cluster,
    outbound: bool,
    peer: SocketAddr,
    (reader, write): (&mut FrameReader<Reading>, &mut Writing),
    timeout: Duration,
) -> Result<Members, Ended> {
    let nonce = cluster.secret.as_ref().map(|_| RouteSecret::nonce());
    let first = cluster.first_members_frame(nonce.clone());
    if write.write_all(&first.to_bytes()).await.is_err() {
        return Err(Ended::Refused(
            "the connection closed before MEMBERS".into(),
        ));
    }
    let members = match read(reader, timeout).await {
        Some(Frame::Members(members)) => members,
        // A listener that speaks TLS (or refuses for another reason) says so.
        Some(Frame::Error(error)) => {
            let why = refusal::reason(&error.message);
            return Err(Ended::Refused(format!("the other side refused it: {why}")));
        }
        other => {
            let what = other.map_or("nothing".to_string(), |f| f.frame_type().name().to_string());
            return Err(Ended::Refused(format!(
                "expected MEMBERS first, got {what}"
            )));
        }
    };
    if members.cluster != cluster.name {
        let reason = format!(
            "this member is of cluster `{}`, the other of `{}`",
            cluster.name, members.cluster
        );
        return Err(refuse(write, reason).await);
    }
    let near = NearSide {
        secret: cluster.secret.as_ref().zip(nonce.as_deref()),
        cluster: &cluster.name,
        id: cluster.me.id,
        outbound,
    };
    let far = FarSide {
        peer,
        members: &members,
    };
    // Nothing else it said (its id, its name, whom it knows) is taken before it proved it
    // knows the secret.
    if let Err(reason) = secret::authenticate(near, far, (reader, &mut *write), timeout).await {
        return Err(refuse(write, reason).await);
    }
    if members.me.id == cluster.me.id {
        return Err(Ended::Myself);
    }
    if members.me.name == cluster.me.name {
        // Namespace owners, the monitor and gap notices tell members apart by name.
        let reason = format!(
            "the member at {} is named `{}` too; give each member its own `name`",
            members.me.address, members.me.name
        );
        return Err(refuse(write, reason).await);
    }
    Ok(members)
}

/// Tells the other side why its route is refused; returns the refusal.
pub(super) async fn refuse(write: &mut Writing, reason: String) -> Ended {
    let _ = write.write_all(&refusal::frame(&reason).to_bytes()).await;
    Ended::Refused(reason)
}

/// The next frame within `timeout`, if one comes and decodes.
async fn read(reader: &mut FrameReader<Reading>, timeout: Duration) -> Option<Frame> {
    match tokio::time::timeout(timeout, reader.read_frame()).await {
        Ok(Ok(Some(frame))) => Frame::decode(frame).ok(),
        _ => None,
    }
}
