//! Listens for the server's shutdown signal (mini-redis `Shutdown`).

use tokio::sync::watch;

/// A receiver of the shutdown signal; each task holds one.
#[derive(Debug, Clone)]
pub struct Shutdown {
    receiver: watch::Receiver<bool>,
    /// A second signal that also ends the task: a listener a reload stops.
    also: Option<watch::Receiver<bool>>,
}

impl Shutdown {
    /// Wraps the receiving end of the server's shutdown channel.
    pub fn new(receiver: watch::Receiver<bool>) -> Self {
        Shutdown {
            receiver,
            also: None,
        }
    }

    /// Returns a receiver that also ends when `other` says so.
    pub fn or(&self, other: watch::Receiver<bool>) -> Self {
        Shutdown {
            receiver: self.receiver.clone(),
            also: Some(other),
        }
    }

    /// Returns true once shutdown has begun.
    pub fn is_shutdown(&self) -> bool {
        *self.receiver.borrow() || self.also.as_ref().is_some_and(|also| *also.borrow())
    }

    /// Waits until shutdown begins (or the server handle is gone).
    pub async fn recv(&mut self) {
        // An error means the sender is gone, which is also a shutdown.
        match &mut self.also {
            None => {
                let _ = self.receiver.wait_for(|down| *down).await;
            }
            Some(also) => {
                tokio::select! {
                    _ = self.receiver.wait_for(|down| *down) => {}
                    _ = also.wait_for(|down| *down) => {}
                }
            }
        }
    }
}
