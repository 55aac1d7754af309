//! The accept loop: a connection limit, backoff on accept errors, and shutdown
//! (mini-redis `server.rs`).

use std::sync::Arc;
use std::time::Duration;

use herald_proto::{ErrorCode, ErrorFrame, Frame};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

use crate::connection_limit::Refusal;
use crate::events::{self, CloseReason};
use crate::shared::Shared;
use crate::shutdown::Shutdown;

/// Longest pause after repeated accept errors (e.g. out of file descriptors).
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// Accepts connections until shutdown. Each session holds a clone of `done`; the server
/// knows every session has ended when all clones are dropped.
pub async fn run(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut shutdown: Shutdown,
    done: mpsc::Sender<()>,
) {
    let limit = Arc::clone(&shared.connections);
    let mut backoff = Duration::from_millis(1);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = shutdown.recv() => return,
        };
        let (stream, peer) = match accepted {
            Ok(pair) => {
                backoff = Duration::from_millis(1);
                pair
            }
            Err(err) => {
                tracing::error!(error = %err, "accepting a connection failed");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_ACCEPT_BACKOFF);
                continue;
            }
        };
        let permit = match limit.try_acquire(peer.ip()) {
            Ok(permit) => permit,
            Err(refusal) => {
                tokio::spawn(refuse(stream, peer, refusal, Arc::clone(&shared)));
                continue;
            }
        };
        let (shared, shutdown, done) = (Arc::clone(&shared), shutdown.clone(), done.clone());
        tokio::spawn(async move {
            crate::session::run(stream, peer, shared, shutdown).await;
            drop(permit);
            drop(done);
        });
    }
}

/// Tells a client over a connection limit why it is turned away.
async fn refuse(
    mut stream: TcpStream,
    peer: std::net::SocketAddr,
    refusal: Refusal,
    shared: Arc<Shared>,
) {
    let message = refusal.to_string();
    let error = Frame::Error(ErrorFrame {
        cid: 0,
        code: ErrorCode::Limit,
        message: message.clone(),
    });
    let _ = stream.write_all(&error.to_bytes()).await;
    let _ = stream.shutdown().await;
    events::connection_closed(
        &shared.monitor,
        0,
        peer,
        CloseReason::TooManyConnections,
        &message,
    );
}
