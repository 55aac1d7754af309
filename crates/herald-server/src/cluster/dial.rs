//! The route listener, and the dialers: one per seed and one per member learned of whose id
//! is greater than this member's (between two members the smaller id dials). A dialer keeps
//! its route up: after a route ends it dials again, with backoff, for as long as the server
//! runs; it does not dial while a route to its member is open the other way.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};

use super::route::{self, Ended};
use super::Cluster;
use crate::local::Local;
use crate::shutdown::Shutdown;

/// First pause after a failed attempt; doubled up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// Longest pause between attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Accepts routes until shutdown.
pub async fn listen(
    listener: TcpListener,
    shared: Arc<Local>,
    cluster: Arc<Cluster>,
    mut shutdown: Shutdown,
) {
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(err) => {
                    tracing::error!(error = %err, "accepting a route failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = shutdown.recv() => return,
        };
        let (shared, cluster) = (Arc::clone(&shared), Arc::clone(&cluster));
        tokio::spawn(async move {
            let signal = shared.shutdown_signal();
            if let Ended::Refused(why) =
                route::run(stream, peer, false, shared, cluster, signal).await
            {
                tracing::warn!(%peer, "route refused: {why}");
            }
        });
    }
}

/// Keeps a route to `address` (whose member is `id`, once known) until shutdown. A seed's
/// dialer (no `id` at first) follows whatever member answers at its address, a restarted
/// one too; a learned member's dialer stops once that member is forgotten (its name came
/// back under a new id).
pub async fn dial(
    address: String,
    mut id: Option<u64>,
    shared: Arc<Local>,
    cluster: Arc<Cluster>,
    mut shutdown: Shutdown,
) {
    let seed = id.is_none();
    let mut backoff = FIRST_BACKOFF;
    loop {
        if !seed && id.is_some_and(|id| !cluster.knows(id)) {
            tracing::debug!(%address, "no longer dialing a member that is gone for good");
            return;
        }
        if id.is_some_and(|id| cluster.has_route(id)) {
            // Up the other way: look again when routes change.
            tokio::select! {
                () = cluster.changed.notified() => {}
                () = tokio::time::sleep(MAX_BACKOFF) => {}
                () = shutdown.recv() => return,
            }
            continue;
        }
        let attempt = tokio::select! {
            connected = TcpStream::connect(&address) => connected,
            () = shutdown.recv() => return,
        };
        let ended = match attempt {
            Ok(stream) => {
                let peer = stream
                    .peer_addr()
                    .unwrap_or_else(|_| ([0, 0, 0, 0], 0).into());
                let signal = shared.shutdown_signal();
                route::run(
                    stream,
                    peer,
                    true,
                    Arc::clone(&shared),
                    Arc::clone(&cluster),
                    signal,
                )
                .await
            }
            Err(err) => {
                // A member that is down is no news: it is dialed again with backoff.
                tracing::debug!(%address, "cannot reach a member's route listener: {err}");
                Ended::Unreachable
            }
        };
        match ended {
            Ended::Myself => {
                tracing::info!("route {address} is this member's own listener: not dialing it");
                return;
            }
            Ended::Unreachable => {}
            Ended::Closed(far) => {
                if id.is_none() && !cluster.claim_dialer(far) {
                    // A seed whose member another dialer already keeps a route to.
                    return;
                }
                id = Some(far);
                backoff = FIRST_BACKOFF;
            }
            // Another cluster, or not a Herald route listener: the operator should hear of it.
            Ended::Refused(why) => tracing::warn!(%address, "route refused: {why}"),
        }
        tokio::select! {
            () = tokio::time::sleep(backoff) => {}
            () = shutdown.recv() => return,
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}
