//! Request/reply: one inbox subscription per client (`_INBOX.<unique>.*`); each request
//! carries `reply_to = _INBOX.<unique>.<id>` and `id`, and the reply comes back with that id.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::oneshot;

use crate::delivered::Delivered;
use crate::sync::lock;

/// Requests waiting for their replies.
#[derive(Debug)]
pub(crate) struct Inbox {
    prefix: String,
    waiting: Mutex<HashMap<u64, oneshot::Sender<Delivered>>>,
}

impl Inbox {
    pub(crate) fn new() -> Self {
        let nanos = herald_proto::time::now_nanos();
        Inbox {
            prefix: format!("_INBOX.{:x}{:x}", std::process::id(), nanos),
            waiting: Mutex::default(),
        }
    }

    /// Returns the subscription pattern covering every reply subject.
    pub(crate) fn pattern(&self) -> String {
        format!("{}.*", self.prefix)
    }

    /// Registers request `id`; returns it with its reply subject and the reply's receiver.
    pub(crate) fn expect(&self, id: u64) -> (u64, String, oneshot::Receiver<Delivered>) {
        let (sender, receiver) = oneshot::channel();
        lock(&self.waiting).insert(id, sender);
        (id, format!("{}.{id}", self.prefix), receiver)
    }

    /// Gives up on request `id`.
    pub(crate) fn forget(&self, id: u64) {
        lock(&self.waiting).remove(&id);
    }

    /// Hands a reply to its request; later replies to the same request are ignored.
    pub(crate) fn deliver(&self, delivered: Delivered) {
        let Some(id) = delivered.record().id else {
            return;
        };
        if let Some(sender) = lock(&self.waiting).remove(&id) {
            let _ = sender.send(delivered);
        }
    }

    /// Ends every waiting request (their receivers see the connection's error).
    pub(crate) fn fail(&self) {
        lock(&self.waiting).clear();
    }
}
