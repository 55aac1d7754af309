//! The route listener, and the dialers: one per seed and one per member learned of whose id
//! is greater than this member's (between two members the smaller id dials). A dialer keeps
//! its route up: after a route ends it dials again, with backoff, for as long as the server
//! runs; it does not dial while a route to its member is open the other way. With
//! `[cluster] tls` both speak TLS: the listener with the server's certificate, the dialer
//! checking the other member's.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};

use super::handshake::Ended;
use super::route;
use super::{refusal, Cluster};
use crate::halves::{self, Reading, Writing};
use crate::local::Local;
use crate::shutdown::Shutdown;
use crate::tls::{dial, session};

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
            let _ = stream.set_nodelay(true);
            let io = match accepted(&shared, &cluster, stream).await {
                Ok(io) => io,
                Err(why) => {
                    tracing::warn!(%peer, "{}", refusal::message(&why));
                    return;
                }
            };
            let signal = shared.shutdown_signal();
            if let Ended::Refused(why) = route::run(io, peer, false, shared, cluster, signal).await
            {
                tracing::warn!(%peer, "{}", refusal::message(&why));
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
                let _ = stream.set_nodelay(true);
                let timeout = shared.config().handshake_timeout;
                match dialed(&cluster, &address, stream, timeout).await {
                    Ok(io) => {
                        let signal = shared.shutdown_signal();
                        let (shared, cluster) = (Arc::clone(&shared), Arc::clone(&cluster));
                        route::run(io, peer, true, shared, cluster, signal).await
                    }
                    Err(why) => Ended::Refused(why),
                }
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
            Ended::Refused(why) => tracing::warn!(%address, "{}", refusal::message(&why)),
        }
        tokio::select! {
            () = tokio::time::sleep(backoff) => {}
            () = shutdown.recv() => return,
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// The halves of a route connection accepted: after the TLS handshake when routes speak
/// TLS (a member that speaks plain TCP is told so in an `ERROR`), else the plain stream's.
async fn accepted(
    shared: &Local,
    cluster: &Cluster,
    stream: TcpStream,
) -> Result<(Reading, Writing), String> {
    if cluster.tls.is_none() {
        return Ok(halves::plain(stream));
    }
    // The configuration takes `[cluster] tls` only with the server's certificate.
    let Some(tls) = &shared.tls else {
        return Err("routes speak TLS but this server has no certificate".to_string());
    };
    let answer = refusal::frame(
        "this route listener speaks TLS: set `[cluster] tls = true` on every member",
    );
    let timeout = shared.config().handshake_timeout;
    let (session, _) = session::accept(
        tls.route_acceptor(),
        stream,
        |s| s,
        &answer.to_bytes(),
        timeout,
    )
    .await
    .map_err(|err| err.to_string())?;
    Ok(halves::of(session))
}

/// The halves of a route connection dialed to `address`: over TLS, checking the other
/// member's certificate, when routes speak TLS, else the plain stream's.
async fn dialed(
    cluster: &Cluster,
    address: &str,
    stream: TcpStream,
    timeout: Duration,
) -> Result<(Reading, Writing), String> {
    let Some(tls) = &cluster.tls else {
        return Ok(halves::plain(stream));
    };
    let settings = dial::Settings {
        ca: "`cluster.ca`",
        cert: "a client certificate, which routes do not use",
        plain: "is `[cluster] tls = true` set on the other member?",
    };
    let session = dial::connect(tls, address, stream, &settings, timeout).await?;
    Ok(halves::of(session))
}
