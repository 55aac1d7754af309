//! Flushing and closing a logger: the background side hands over what it holds, the disk
//! buffer is sent (or kept, at a close), then the client's acknowledgements are awaited.

use std::time::Duration;

use tokio::sync::oneshot;

use super::worker::{CloseAck, Command};
use super::Logger;
use crate::ClientError;

impl Logger {
    /// Hands over everything logged so far (and any drop report), then waits until the
    /// server has it, in all at most `timeout`.
    ///
    /// # Errors
    /// [`ClientError::Timeout`], [`ClientError::Closed`] if the logger is closed, or the
    /// connection's error.
    pub async fn flush(&self, timeout: Duration) -> Result<(), ClientError> {
        let (reply, answer) = oneshot::channel();
        self.hand_over(Command::Flush(reply), answer, timeout).await
    }

    /// Sends `command` to the background side, waits for its `answer` and for the disk
    /// buffer to hold nothing unacknowledged, then flushes the client — all within
    /// `timeout`.
    async fn hand_over(
        &self,
        command: Command,
        answer: oneshot::Receiver<()>,
        timeout: Duration,
    ) -> Result<(), ClientError> {
        let deadline = tokio::time::Instant::now() + timeout;
        let closing = matches!(command, Command::Close(_));
        self.guard
            .commands
            .send(command)
            .map_err(|_| logger_closed())?;
        let answered = tokio::time::timeout_at(deadline, answer).await;
        answered
            .map_err(|_| ClientError::Timeout(timeout))?
            .map_err(|_| logger_closed())?;
        let link = &self.guard.link;
        if closing && link.disk_pending() {
            // Closed with records kept on disk for the next start: nothing more to wait for.
            return Ok(());
        }
        loop {
            let client = link.client().filter(|_| !link.disk_pending());
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if let Some(client) = client {
                return client.flush(left).await;
            }
            if left.is_zero() {
                return Err(ClientError::Timeout(timeout));
            }
            tokio::time::sleep(left.min(DISK_POLL)).await;
        }
    }

    /// Flushes as [`Logger::flush`] and stops the logger, for every clone: later log calls
    /// are dropped and counted. With a disk buffer, what no server took within the close's
    /// time stays on disk for the next start, and the close succeeds.
    ///
    /// # Errors
    /// As [`Logger::flush`]; the logger is closed either way.
    pub async fn close(self, timeout: Duration) -> Result<(), ClientError> {
        self.shared.close();
        let (reply, answer) = oneshot::channel();
        self.hand_over(Command::Close(CloseAck::Async(reply)), answer, timeout)
            .await
    }
}

/// How often a flush looks whether a connection came and the disk buffer was sent.
const DISK_POLL: Duration = Duration::from_millis(5);

fn logger_closed() -> ClientError {
    ClientError::Closed("logger closed".to_string())
}
