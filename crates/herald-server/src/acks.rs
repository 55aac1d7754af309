//! A connection's `received` acknowledgements, kept in order while some wait for cluster
//! routes: a batch that went to another member is acknowledged only once that member has
//! routed it (or the route is down), and an `ACK` still means that everything the
//! connection published before it is done — which is what a client's flush relies on (and a
//! client forgets, at an `ACK`, every frame it sent before).

use std::future::Future;
use std::sync::Arc;

use herald_proto::Frame;
use herald_router::Queue;
use tokio::sync::{mpsc, watch};

/// The last acknowledgement of a connection still waiting, if any.
#[derive(Debug, Default)]
pub struct AckOrder {
    last: Option<watch::Receiver<bool>>,
}

impl AckOrder {
    /// Sends `ack` once every earlier acknowledgement of the connection is out, `first`
    /// (the archive's durability, for `stored`) is done, and every numbered queue of
    /// `marks` is settled up to its mark: at once when nothing waits.
    pub async fn send<F>(
        &mut self,
        ack: Frame,
        first: Option<F>,
        marks: Vec<(Arc<Queue>, u64)>,
        replies: &mpsc::Sender<Frame>,
    ) where
        F: Future<Output = ()> + Send + 'static,
    {
        if first.is_none() && marks.is_empty() && self.idle() {
            let _ = replies.send(ack).await;
            return;
        }
        let (done, next) = watch::channel(false);
        let before = self.last.replace(next);
        let replies = replies.clone();
        tokio::spawn(async move {
            if let Some(mut before) = before {
                // An error means the earlier waiter is gone: the connection is closing.
                let _ = before.wait_for(|done| *done).await;
            }
            if let Some(first) = first {
                first.await;
            }
            for (queue, mark) in marks {
                queue.wait_settled(mark).await;
            }
            let _ = replies.send(ack).await;
            let _ = done.send(true);
        });
    }

    /// Returns true if no acknowledgement waits.
    fn idle(&mut self) -> bool {
        if self.last.as_ref().is_some_and(|last| !*last.borrow()) {
            return false;
        }
        self.last = None;
        true
    }
}
