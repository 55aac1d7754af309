//! The cluster secret (`[cluster] secret_file`): members that share it prove so to each
//! other when a route starts, and a member refuses a route whose far side cannot. Each side
//! sends a fresh random nonce in its `MEMBERS`, then `ROUTE_AUTH`: an HMAC-SHA256, keyed by
//! the secret, over its role (dialer or acceptor), the cluster's name, the other side's
//! nonce, its own and its member id. The secret never crosses the wire; a proof answers one
//! connection's nonces only, and a dialer's proof is no acceptor's (a proof sent back to its
//! maker does not pass).

use std::path::{Path, PathBuf};
use std::time::Duration;

use herald_proto::route::Members;
use herald_proto::Frame;
use ring::hmac;
use ring::rand::{SecureRandom, SystemRandom};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use super::refusal;
use crate::connection::FrameReader;

/// Bytes of a nonce.
pub const NONCE_BYTES: usize = 32;
/// Fewest bytes a secret may have.
pub const MIN_SECRET_BYTES: usize = 16;
/// Names what the MAC is of, so a proof is of nothing else.
const LABEL: &[u8] = b"herald route v1";

/// The secret, as a key.
pub struct RouteSecret {
    key: hmac::Key,
    /// The file it was read from, for messages.
    pub path: PathBuf,
}

impl std::fmt::Debug for RouteSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RouteSecret({}, not shown)", self.path.display())
    }
}

impl RouteSecret {
    /// Reads the secret from `path`: the file's bytes, without the white space that ends it.
    ///
    /// # Errors
    /// A message naming the file: unreadable, or shorter than [`MIN_SECRET_BYTES`].
    pub fn load(path: &Path) -> Result<RouteSecret, String> {
        let bytes = std::fs::read(path)
            .map_err(|err| format!("cannot read the cluster secret {}: {err}", path.display()))?;
        let end = bytes
            .iter()
            .rposition(|b| !b.is_ascii_whitespace())
            .map_or(0, |i| i + 1);
        if end < MIN_SECRET_BYTES {
            return Err(format!(
                "the cluster secret {} holds {end} bytes; give at least {MIN_SECRET_BYTES} \
                 (for example: head -c 32 /dev/urandom | base64 > {})",
                path.display(),
                path.display()
            ));
        }
        Ok(RouteSecret {
            key: hmac::Key::new(hmac::HMAC_SHA256, &bytes[..end]),
            path: path.to_path_buf(),
        })
    }

    /// A fresh nonce for one route connection.
    pub fn nonce() -> Vec<u8> {
        let mut nonce = vec![0u8; NONCE_BYTES];
        SystemRandom::new()
            .fill(&mut nonce)
            .expect("the operating system's random source");
        nonce
    }

    /// The proof a sender makes: whether it `dialed`, the cluster's name, the connection's
    /// `nonces` as it sees them, and its member id.
    pub fn proof(
        &self,
        dialed: bool,
        cluster: &str,
        nonces: Nonces<'_>,
        sender_id: u64,
    ) -> Vec<u8> {
        hmac::sign(&self.key, &message(dialed, cluster, nonces, sender_id))
            .as_ref()
            .to_vec()
    }

    /// Whether `proof` is the one a sender of these particulars makes (compared in constant
    /// time, a proof of another length included).
    pub fn verify(
        &self,
        proof: &[u8],
        dialed: bool,
        cluster: &str,
        nonces: Nonces<'_>,
        sender_id: u64,
    ) -> bool {
        let message = message(dialed, cluster, nonces, sender_id);
        hmac::verify(&self.key, &message, proof).is_ok()
    }
}

/// The two nonces of a connection, as a proof's sender sees them.
#[derive(Debug, Clone, Copy)]
pub struct Nonces<'a> {
    /// The nonce of the side the proof is for.
    pub receiver: &'a [u8],
    /// The sender's own nonce.
    pub sender: &'a [u8],
}

fn message(dialed: bool, cluster: &str, nonces: Nonces<'_>, sender_id: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(LABEL.len() + 1 + 8 + cluster.len() + 2 * NONCE_BYTES + 8);
    out.extend_from_slice(LABEL);
    out.push(if dialed { b'd' } else { b'a' });
    for part in [cluster.as_bytes(), nonces.receiver, nonces.sender] {
        out.extend_from_slice(&(part.len() as u64).to_be_bytes());
        out.extend_from_slice(part);
    }
    out.extend_from_slice(&sender_id.to_be_bytes());
    out
}

/// This side of a route connection, as far as its authentication needs.
pub struct NearSide<'a> {
    /// The cluster's secret, if it has one, and the nonce of this side's first `MEMBERS`.
    pub secret: Option<(&'a RouteSecret, &'a [u8])>,
    /// The cluster's name.
    pub cluster: &'a str,
    /// This member's id.
    pub id: u64,
    /// Whether this side dialed.
    pub outbound: bool,
}

/// The far side of a route connection, as far as its authentication needs.
pub struct FarSide<'a> {
    /// Its socket address (what it claims in `MEMBERS` is not trusted yet).
    pub peer: std::net::SocketAddr,
    /// Its first `MEMBERS`.
    pub members: &'a Members,
}

/// Proves to the far side that this member knows the cluster's secret and checks its
/// proof, after both sent their first `MEMBERS`. With no secret on either side there is
/// nothing to prove.
///
/// # Errors
/// Why the route is refused ([`super::refusal`] words it): one side has a secret and
/// the other none, the far side's proof does not match, or it sent something else.
pub async fn authenticate<W: AsyncWrite + Unpin, R: AsyncRead + Unpin>(
    near: NearSide<'_>,
    far: FarSide<'_>,
    (reader, write): (&mut FrameReader<R>, &mut W),
    timeout: Duration,
) -> Result<(), String> {
    let peer = far.peer;
    let (cluster, outbound) = (near.cluster, near.outbound);
    let ((secret, own), challenge) = match (near.secret, &far.members.nonce) {
        (None, None) => return Ok(()),
        (None, Some(_)) => {
            return Err(format!(
                "the member at {peer} has a cluster secret and this member has none; give \
                 every member the same `secret_file`"
            ))
        }
        (Some(_), None) => {
            return Err(format!(
                "the member at {peer} has no cluster secret and this member needs one; give \
                 every member the same `secret_file`"
            ))
        }
        (Some(secret), Some(challenge)) => (secret, challenge),
    };
    if challenge.len() != NONCE_BYTES {
        return Err(format!(
            "the member at {peer} sent a nonce of {} bytes ({NONCE_BYTES} expected)",
            challenge.len()
        ));
    }
    let ours = Nonces {
        receiver: challenge,
        sender: own,
    };
    let proof = secret.proof(outbound, cluster, ours, near.id);
    if write
        .write_all(&Frame::RouteAuth(proof).to_bytes())
        .await
        .is_err()
    {
        return Err(format!("the member at {peer} closed the connection"));
    }
    let answer = match tokio::time::timeout(timeout, reader.read_frame()).await {
        Ok(Ok(Some(frame))) => Some(Frame::decode(frame)),
        _ => None,
    };
    let theirs = Nonces {
        receiver: own,
        sender: challenge,
    };
    match answer {
        Some(Ok(Frame::RouteAuth(proof)))
            if secret.verify(&proof, !outbound, cluster, theirs, far.members.me.id) =>
        {
            Ok(())
        }
        Some(Ok(Frame::RouteAuth(_))) => Err(format!(
            "the member at {peer} does not know this cluster's secret (its proof does not \
             match: is its `secret_file` another?)"
        )),
        Some(Ok(Frame::Error(error))) => Err(format!(
            "the member at {peer} refused it: {}",
            refusal::reason(&error.message)
        )),
        Some(Ok(other)) => Err(format!(
            "the member at {peer} sent {} where its ROUTE_AUTH was due",
            other.frame_type().name()
        )),
        Some(Err(_)) => Err(format!(
            "the member at {peer} sent a frame that does not decode where its ROUTE_AUTH was due"
        )),
        None => Err(format!(
            "the member at {peer} sent no ROUTE_AUTH within the handshake timeout"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(text: &str) -> RouteSecret {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cluster.secret");
        std::fs::write(&path, text).unwrap();
        RouteSecret::load(&path).unwrap()
    }

    #[test]
    fn a_proof_passes_only_for_its_secret_role_nonces_cluster_and_member() {
        let shared = secret("0123456789abcdef0123456789abcdef\n");
        let (receiver, sender) = (RouteSecret::nonce(), RouteSecret::nonce());
        assert_ne!(receiver, sender, "nonces are fresh");
        let nonces = Nonces {
            receiver: &receiver,
            sender: &sender,
        };
        let proof = shared.proof(true, "site", nonces, 7);
        assert!(shared.verify(&proof, true, "site", nonces, 7));
        // The ending white space is not part of the secret.
        let same = secret("0123456789abcdef0123456789abcdef");
        assert!(same.verify(&proof, true, "site", nonces, 7));
        let other = secret("0123456789abcdef0123456789abcdeX");
        assert!(!other.verify(&proof, true, "site", nonces, 7));
        assert!(
            !shared.verify(&proof, false, "site", nonces, 7),
            "an acceptor's"
        );
        let swapped = Nonces {
            receiver: &sender,
            sender: &receiver,
        };
        assert!(
            !shared.verify(&proof, true, "site", swapped, 7),
            "nonces swapped"
        );
        let fresh = RouteSecret::nonce();
        let another = Nonces {
            receiver: &fresh,
            sender: &sender,
        };
        assert!(!shared.verify(&proof, true, "site", another, 7));
        assert!(!shared.verify(&proof, true, "plant", nonces, 7));
        assert!(!shared.verify(&proof, true, "site", nonces, 8));
        assert!(!shared.verify(&proof[..31], true, "site", nonces, 7));
    }

    #[test]
    fn the_proof_is_the_one_docs_protocol_md_gives_as_its_example() {
        let nonces = Nonces {
            receiver: &[2; 32],
            sender: &[1; 32],
        };
        let proof = secret("0123456789abcdef\n").proof(true, "site", nonces, 1);
        let hex: String = proof.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "582dc0e718c3aa9a7bd0e4279b4cc834706e8a24d8c7288ec6863b99f43bf83f"
        );
    }

    #[test]
    fn a_short_or_missing_secret_is_refused_naming_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("short");
        std::fs::write(&path, "fifteen bytes..\n\n").unwrap();
        let err = RouteSecret::load(&path).unwrap_err();
        assert!(err.contains("holds 15 bytes; give at least 16"), "{err}");
        assert!(err.contains(&path.display().to_string()), "{err}");
        let err = RouteSecret::load(&dir.path().join("none")).unwrap_err();
        assert!(err.starts_with("cannot read the cluster secret"), "{err}");
        let debug = format!("{:?}", secret("a secret not to be printed"));
        assert!(!debug.contains("not to be printed"), "{debug}");
    }
}
