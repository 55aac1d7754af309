//! Keeps a client connected: when its connection fails, move to the next server of the URL
//! (then around the list again, with backoff), restore the subscriptions, and resend every
//! `PUBLISH` frame the old server had not acknowledged. The program sees at most a delay,
//! and each subscription an [`Event::Interrupted`](crate::Event::Interrupted) for the time
//! it went unserved.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use herald_proto::frame::Welcome;
use herald_proto::{ErrorCode, Frame};

use super::io::{self, HandshakeError};
use super::{Connected, Inner, Route};
use crate::error::ClientError;
use crate::sync::lock;
use crate::transport::Transport;

/// First pause between rounds of reconnection attempts; it doubles up to the maximum.
const FIRST_BACKOFF: Duration = Duration::from_millis(50);
/// Longest pause between rounds of reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// The least time one failover attempt is given, however little of the reconnect timeout is
/// left (as the Python client).
const MIN_ATTEMPT: Duration = Duration::from_millis(100);

/// Starts the task that runs the connection and replaces it when it fails.
pub(crate) fn spawn(stream: Transport, welcome: Welcome, inner: Arc<Inner>) {
    tokio::spawn(supervise(stream, welcome, inner));
}

async fn supervise(mut stream: Transport, mut welcome: Welcome, inner: Arc<Inner>) {
    loop {
        let error = io::run_connection(stream, Arc::clone(&inner), welcome).await;
        if inner.is_stopping() || is_final(&error) || inner.options.reconnect_timeout.is_zero() {
            inner.fail(error);
            return;
        }
        match reconnect(&inner, &error).await {
            Some((next, next_welcome)) => (stream, welcome) = (next, next_welcome),
            None => {
                inner.fail(error);
                return;
            }
        }
    }
}

/// Returns true for errors another connection would only repeat: the server refused what
/// this client sends.
fn is_final(error: &ClientError) -> bool {
    match error {
        ClientError::Server { code, .. } => {
            matches!(
                code,
                ErrorCode::BadFrame
                    | ErrorCode::Handshake
                    | ErrorCode::Version
                    | ErrorCode::Unauthorized
            )
        }
        ClientError::BadFrame(_) => true,
        _ => false,
    }
}

/// Tries the next servers, round after round with backoff, until one answers or the
/// reconnect timeout passes. On success the subscriptions and unacknowledged records are
/// queued for the new connection.
async fn reconnect(inner: &Inner, error: &ClientError) -> Option<(Transport, Welcome)> {
    inner.down.store(true, Ordering::Release);
    let lost = lock(&inner.connected).server.clone();
    tracing::warn!(server = %lost, error = %error, "herald connection lost; failing over");
    inner.connection_lost(&format!(
        "connection to {lost} lost ({error}); failing over"
    ));
    let lost_at = tokio::time::Instant::now();
    let deadline = lost_at + inner.options.reconnect_timeout;
    let servers = &inner.servers;
    let first = (lock(&inner.connected).index + 1) % servers.len();
    let mut backoff = FIRST_BACKOFF;
    loop {
        for offset in 0..servers.len() {
            if inner.is_stopping() {
                return None;
            }
            let index = (first + offset) % servers.len();
            // An attempt takes its connect timeout, but no longer than the time left (at
            // least 100 ms): giving up takes the reconnect timeout, not that plus the rounds.
            let left = deadline
                .saturating_duration_since(tokio::time::Instant::now())
                .max(MIN_ATTEMPT);
            let attempt = io::connect(&servers[index], &inner.options, inner.tls.as_ref());
            let attempt = match tokio::time::timeout(left, attempt).await {
                Ok(result) => result,
                Err(_) => Err(HandshakeError::Failed(format!(
                    "no answer within the {} ms left of the reconnect timeout",
                    left.as_millis()
                ))),
            };
            match attempt {
                Ok((stream, welcome)) => {
                    resume(inner, index, &welcome);
                    interrupted(inner, &lost, &servers[index], lost_at.elapsed());
                    return Some((stream, welcome));
                }
                Err(HandshakeError::Refused { message, .. } | HandshakeError::Failed(message)) => {
                    tracing::debug!(server = %servers[index], why = %message, "failover attempt failed");
                }
            }
        }
        // The last pause ends at the deadline, and one last round is tried then: a server
        // back just before it is found, and giving up takes the whole reconnect timeout.
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return None;
        }
        tokio::time::sleep(backoff.min(deadline - now)).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// Tells every subscription that it went unserved for `down`, between `lost` and `resumed`.
fn interrupted(inner: &Inner, lost: &str, resumed: &str, down: Duration) {
    let notice = crate::event::Interruption {
        lost: lost.to_string(),
        resumed: resumed.to_string(),
        down,
    };
    for route in lock(&inner.routes).values_mut() {
        if let Route::Subscription(sink) = route {
            sink.offer(vec![crate::Event::Interrupted(notice.clone())]);
        }
    }
}

/// Points the client at its new server and queues, ahead of anything newer, the
/// subscriptions to restore and the records the old server never acknowledged.
fn resume(inner: &Inner, index: usize, welcome: &Welcome) {
    let server = inner.servers[index].clone();
    *lock(&inner.connected) = Connected {
        index,
        server: server.clone(),
        welcome: welcome.clone(),
    };
    // Fresh cids nobody waits for: the answers are dropped, an error logged.
    let restore: Vec<Frame> = lock(&inner.subscriptions)
        .iter()
        .map(|(id, made)| made.frame(inner.next_id(), *id))
        .collect();
    let max_frame = usize::try_from(welcome.max_frame_bytes).unwrap_or(usize::MAX);
    let resent = lock(&inner.outbox).rewind(&restore, max_frame);
    inner.down.store(false, Ordering::Release);
    inner.failovers.fetch_add(1, Ordering::Relaxed);
    tracing::warn!(%server, subscriptions = restore.len(), resent, "herald connection resumed");
    inner.space.notify_waiters();
}
