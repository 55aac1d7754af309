//! [`MirrorLink`]: one mirror this server feeds — its queue, its connection's frames while
//! connected, its counters for the monitor, and the object changes it takes. `source.rs`
//! makes the links and runs them.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use herald_info::{InfoObject, TypeDef};
use herald_proto::route::InfoChange;
use herald_proto::value::Value;
use herald_proto::Frame;
use herald_router::Queue;
use tokio::sync::mpsc;

use crate::config::MirrorConfig;
use crate::info::ChangeListener;
use crate::monitor::ConnectionState;

/// One mirror this server feeds.
#[derive(Debug)]
pub struct MirrorLink {
    /// Its configuration.
    pub config: MirrorConfig,
    /// The router connection id of its subscriptions.
    pub connection: u64,
    pub(super) state: Arc<ConnectionState>,
    pub(super) queue: Arc<Queue>,
    /// The current connection's frames, while connected.
    pub(super) control: Mutex<Option<mpsc::UnboundedSender<Frame>>>,
    pub(super) up: AtomicBool,
    pub(super) round_trip: crate::round_trip::RoundTrip,
    /// The cid of the next type declared after a feed began (above the start's, which count
    /// from 1; the mirror's answers are not awaited).
    pub(super) declares: AtomicU64,
}

impl MirrorLink {
    pub(super) fn takes(&self, name: &str) -> bool {
        self.config.objects.iter().any(|g| g.matches(name))
    }

    pub(super) fn send(&self, frame: Frame) {
        if let Some(control) = lock(&self.control).as_ref() {
            let _ = control.send(frame);
        }
    }

    /// The mirror for the monitor: where, over TLS or not, whether connected, what waits for
    /// it and how old the oldest record waiting is (its lag), what was sent and lost, the
    /// round trip.
    pub fn snapshot(&self) -> Value {
        let int = |n: u64| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
        let lag_ms = self.queue.oldest_received().map_or(0, |received| {
            let age = herald_proto::time::now_nanos().saturating_sub(received);
            u64::try_from(age / 1_000_000).unwrap_or(0)
        });
        Value::Map(vec![
            ("to".into(), Value::Str(self.config.to.clone())),
            ("tls".into(), Value::Bool(self.config.tls.is_some())),
            ("up".into(), Value::Bool(self.up.load(Ordering::Relaxed))),
            ("queue".into(), int(self.queue.depth())),
            ("lag_ms".into(), int(lag_ms)),
            ("records_out".into(), int(self.queue.delivered())),
            ("dropped".into(), int(self.queue.dropped())),
            ("rtt_us".into(), int(self.round_trip.micros())),
        ])
    }
}

impl ChangeListener for MirrorLink {
    /// Sends the mirror a type declared after the feed began (the feed's start sends the
    /// types there were): the mirror keeps no object whose type it does not know.
    fn declared(&self, def: &TypeDef) {
        let cid = self.declares.fetch_add(1, Ordering::Relaxed);
        let request = herald_proto::info::InfoRequest::Declare(def.to_data());
        self.send(Frame::Info { cid, request });
    }

    fn changed(&self, object: &InfoObject, reason: &str) {
        if self.takes(&object.name) {
            self.send(Frame::InfoChange(InfoChange {
                reason: reason.to_string(),
                objects: vec![object.clone().into()],
                namespaces: Vec::new(),
            }));
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
