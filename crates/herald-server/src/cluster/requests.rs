//! Requests one member sends another over their route and waits for (a change forwarded to
//! an object's owner, a part of an archive query): a table of waiters by cid, answered by the
//! route's reader, with a timeout that says which member did not answer.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use herald_proto::{ErrorCode, Frame};
use tokio::sync::oneshot;

use super::Link;
use crate::info::InfoFailure;

/// Waiters for answers of type `T`, by cid.
#[derive(Debug)]
pub struct Requests<T> {
    pending: Mutex<HashMap<u64, oneshot::Sender<Result<T, InfoFailure>>>>,
    next_cid: AtomicU64,
}

impl<T> Requests<T> {
    /// A table whose cids count up from `first` (tables of different requests on one route
    /// start far apart, so an `ERROR` finds its waiter by cid alone).
    pub fn new(first: u64) -> Self {
        Requests {
            pending: Mutex::default(),
            next_cid: AtomicU64::new(first),
        }
    }

    /// Returns a fresh cid (for a request whose answer is not awaited).
    pub fn cid(&self) -> u64 {
        self.next_cid.fetch_add(1, Ordering::Relaxed)
    }

    /// Sends `frame(cid)` over `link` and waits at most `timeout` for its answer.
    ///
    /// # Errors
    /// The far member's error, or `unavailable` naming the member that did not answer
    /// `what` in time.
    pub async fn ask(
        &self,
        link: &Link,
        frame: impl FnOnce(u64) -> Frame,
        timeout: Duration,
        what: &str,
    ) -> Result<T, InfoFailure> {
        let cid = self.cid();
        let (answer, answered) = oneshot::channel();
        lock(&self.pending).insert(cid, answer);
        link.send(frame(cid));
        let result = tokio::time::timeout(timeout, answered).await;
        lock(&self.pending).remove(&cid);
        match result {
            Ok(Ok(answer)) => answer,
            _ => Err((
                ErrorCode::Unavailable,
                format!(
                    "cluster member `{}` did not answer {what} within {} s",
                    link.member().name,
                    timeout.as_secs()
                ),
            )),
        }
    }

    /// The far member answered request `cid`; returns false if nothing waits under that
    /// cid here.
    pub fn answered(&self, cid: u64, answer: Result<T, InfoFailure>) -> bool {
        match lock(&self.pending).remove(&cid) {
            Some(waiting) => {
                let _ = waiting.send(answer);
                true
            }
            None => false,
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
