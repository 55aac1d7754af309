//! Listens for the server's shutdown signal (mini-redis `Shutdown`).

use tokio::sync::watch;

/// A receiver of the shutdown signal; each task holds one.
#[derive(Debug, Clone)]
pub struct Shutdown {
    receiver: watch::Receiver<bool>,
}

impl Shutdown {
    /// Wraps the receiving end of the server's shutdown channel.
    pub fn new(receiver: watch::Receiver<bool>) -> Self {
        Shutdown { receiver }
    }

    /// Returns true once shutdown has begun.
    pub fn is_shutdown(&self) -> bool {
        *self.receiver.borrow()
    }

    /// Waits until shutdown begins (or the server handle is gone).
    pub async fn recv(&mut self) {
        // An error means the sender is gone, which is also a shutdown.
        let _ = self.receiver.wait_for(|down| *down).await;
    }
}
