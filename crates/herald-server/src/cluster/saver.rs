//! Saves the owner's changes of leased namespaces in Cassandra, in order
//! ([`super::lease`]): a change is answered once it is saved, so that a member that takes the
//! lease over serves it.

use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(feature = "cql")]
use std::sync::Arc;
use std::sync::Mutex;

use herald_info::InfoObject;
use herald_proto::info::ObjectData;
use tokio::sync::{mpsc, watch};

/// A change of a leased namespace's object, to save in Cassandra.
#[derive(Debug)]
#[cfg_attr(not(feature = "cql"), allow(dead_code))]
struct Save {
    ticket: u64,
    namespace: String,
    name: String,
    /// The object's encoding (`ObjectData`), or `None` for a deletion.
    object: Option<Vec<u8>>,
}

/// Saves the owner's changes of leased namespaces in Cassandra, in the order they were
/// made; a change's answer waits until it is saved ([`Saver::saved`]).
#[derive(Debug)]
pub struct Saver {
    queue: Mutex<Option<mpsc::UnboundedSender<Save>>>,
    next: AtomicU64,
    done: watch::Sender<u64>,
}

impl Default for Saver {
    fn default() -> Self {
        Saver {
            queue: Mutex::new(None),
            next: AtomicU64::new(0),
            done: watch::Sender::new(0),
        }
    }
}

impl Saver {
    /// Queues `object`'s change (`reason`) of `namespace` to be saved.
    pub fn save(&self, namespace: &str, object: &InfoObject, reason: &str) {
        let ticket = self.next.fetch_add(1, Ordering::AcqRel) + 1;
        let encoded = (reason != "deleted").then(|| {
            let mut out = Vec::new();
            ObjectData::from(object.clone()).encode(&mut out);
            out
        });
        let save = Save {
            ticket,
            namespace: namespace.to_string(),
            name: object.name.clone(),
            object: encoded,
        };
        let queue = lock(&self.queue);
        match queue.as_ref() {
            Some(queue) if queue.send(save).is_ok() => {}
            _ => {
                tracing::warn!(object = %object.name, "Cassandra is not reachable: the change of a leased namespace is not saved there");
                self.done.send_modify(|done| *done = (*done).max(ticket));
            }
        }
    }

    /// Returns the ticket of the last change queued.
    pub fn last(&self) -> u64 {
        self.next.load(Ordering::Acquire)
    }

    /// Waits until every change up to `ticket` is saved (or given up).
    pub async fn saved(&self, ticket: u64) {
        let mut done = self.done.subscribe();
        let _ = done.wait_for(|done| *done >= ticket).await;
    }

    /// Starts saving through `leases`.
    #[cfg(feature = "cql")]
    pub fn start(&self, leases: Arc<herald_archive::cql::InfoLeases>) {
        let (queue, mut saves) = mpsc::unbounded_channel::<Save>();
        *lock(&self.queue) = Some(queue);
        let done = self.done.clone();
        tokio::spawn(async move {
            while let Some(save) = saves.recv().await {
                let result = match &save.object {
                    Some(object) => leases.put(&save.namespace, &save.name, object).await,
                    None => leases.delete(&save.namespace, &save.name).await,
                };
                if let Err(error) = result {
                    tracing::error!(object = %save.name, %error, "cannot save an object of a leased namespace in Cassandra");
                }
                done.send_modify(|done| *done = (*done).max(save.ticket));
            }
        });
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
