//! The connection layer, under the public API: the state the handles and the connection's
//! tasks share ([`Inner`]), the tasks themselves ([`io`]: reading and writing frames,
//! [`failover`]: moving to the next server), request/reply routing ([`inbox`]), and
//! [`Handle`], what every public object holds to send a request and wait for its answer.
//! Nothing here knows the public types; they are built on it.

pub(crate) mod failover;
pub(crate) mod inbox;
pub(crate) mod io;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use herald_proto::frame::{Subscribe, Welcome};
use herald_proto::{DeliveryOptions, Filter, Frame};
use tokio::sync::{oneshot, watch, Notify};

use crate::error::ClientError;
use crate::numbering::Numbering;
use crate::options::{ClientOptions, DEFAULT_REQUEST_TIMEOUT};
use crate::outbox::Outbox;
use crate::sink::Sink;
use crate::sync::lock;
use crate::tls::Tls;
use crate::transport::Transport;
use inbox::Inbox;

/// A control request or acknowledgement waiting for its answer.
pub(crate) type Waiter = oneshot::Sender<Result<Frame, ClientError>>;

/// Where the records of one subscription id go.
pub(crate) enum Route {
    /// To a [`Subscription`]'s stream.
    Subscription(Sink),
    /// To the request waiting for this reply.
    Inbox(Arc<Inbox>),
}

/// What a subscription was made with, to make it again after a failover.
#[derive(Debug, Clone)]
pub(crate) enum Restore {
    /// A record subscription.
    Records(Filter, DeliveryOptions),
    /// An information-object subscription.
    Info(herald_proto::info::SelectionData),
}

impl Restore {
    /// Returns the frame that makes subscription `id` under correlation id `cid`.
    pub(crate) fn frame(&self, cid: u64, id: u64) -> Frame {
        match self {
            Restore::Records(filter, options) => Frame::Subscribe(Subscribe {
                cid,
                subscription: id,
                filter: filter.clone(),
                options: options.clone(),
            }),
            Restore::Info(selection) => Frame::InfoSubscribe {
                cid,
                subscription: id,
                selection: selection.clone(),
            },
        }
    }
}

/// The server a client is connected to now.
pub(crate) struct Connected {
    /// Its position in the URL's list.
    pub(crate) index: usize,
    /// Its `host:port`.
    pub(crate) server: String,
    /// Its `WELCOME`.
    pub(crate) welcome: Welcome,
}

/// State shared by the handles and the connection's tasks.
pub(crate) struct Inner {
    pub(crate) options: ClientOptions,
    /// TLS, built once from `options.tls`, for every connection and reconnection.
    pub(crate) tls: Option<Tls>,
    /// Every server of the URL, in order.
    pub(crate) servers: Vec<String>,
    pub(crate) connected: Mutex<Connected>,
    /// Subscriptions to restore after a failover: id → filter and options.
    pub(crate) subscriptions: Mutex<HashMap<u64, Restore>>,
    pub(crate) failovers: AtomicU64,
    /// True while the connection is lost and the client fails over (and once closed).
    pub(crate) down: AtomicBool,
    /// Published records the server refused (acknowledged as fewer than were sent).
    pub(crate) refused_records: AtomicU64,
    /// Stored records archive answers left out because they do not decode.
    pub(crate) archive_skipped: AtomicU64,
    /// Records held without an acknowledgement when the connection ended for good.
    pub(crate) abandoned: AtomicU64,
    pub(crate) outbox: Mutex<Outbox>,
    /// Wakes the writer.
    pub(crate) wake: Notify,
    /// Wakes publishers waiting for outbox space.
    pub(crate) space: Notify,
    pub(crate) pending: Mutex<HashMap<u64, Waiter>>,
    /// Answers coming in parts (`INFO_REPLY`, `QUERY_REPLY`), joined so far, by cid.
    pub(crate) partial: Mutex<HashMap<u64, Frame>>,
    pub(crate) routes: Mutex<HashMap<u64, Route>>,
    pub(crate) inbox: tokio::sync::OnceCell<Arc<Inbox>>,
    /// Why the connection ended, once it has (set once: read without a lock on every
    /// publish).
    pub(crate) error: std::sync::OnceLock<ClientError>,
    pub(crate) stop: watch::Sender<bool>,
    /// Correlation and acknowledgement ids, shared with the outbox.
    pub(crate) ids: Arc<AtomicU64>,
}

impl Inner {
    pub(crate) fn next_id(&self) -> u64 {
        self.ids.fetch_add(1, Ordering::Relaxed)
    }

    /// Returns true once the client is closing on purpose.
    pub(crate) fn is_stopping(&self) -> bool {
        *self.stop.borrow()
    }

    /// The connection failed and the client fails over: requests waiting for answers fail,
    /// except acknowledgements of records that will be resent (they are answered then).
    pub(crate) fn connection_lost(&self, why: &str) {
        let outbox = lock(&self.outbox);
        let mut pending = lock(&self.pending);
        let lost: Vec<u64> = pending
            .keys()
            .copied()
            .filter(|id| !outbox.is_unacked(*id))
            .collect();
        drop(outbox);
        for id in lost {
            if let Some(sender) = pending.remove(&id) {
                let _ = sender.send(Err(ClientError::Closed(why.to_string())));
            }
        }
        // Parts of answers from the lost server are never completed.
        lock(&self.partial).clear();
    }

    /// Ends the connection with `error`: every waiter gets it, every subscription ends.
    pub(crate) fn fail(&self, error: ClientError) {
        if self.error.set(error.clone()).is_ok() {
            tracing::debug!(error = %error, "herald connection closed");
            // What no server acknowledged is given up with the connection: counted.
            let held = lock(&self.outbox).records_held();
            self.abandoned.store(held, Ordering::Relaxed);
            if held > 0 {
                tracing::warn!(error = %error, records = held, "herald client ended with records no server acknowledged");
            }
        }
        for (_, sender) in lock(&self.pending).drain() {
            let _ = sender.send(Err(error.clone()));
        }
        lock(&self.routes).clear();
        if let Some(inbox) = self.inbox.get() {
            inbox.fail();
        }
        self.down.store(true, Ordering::Release);
        let _ = self.stop.send(true);
        self.space.notify_waiters();
        self.wake.notify_one();
    }

    pub(crate) fn closed_error(&self) -> Option<ClientError> {
        self.error.get().cloned()
    }
}

/// Closes the connection when the last [`Client`] clone (or subscription) is dropped.
pub(crate) struct CloseGuard(Arc<Inner>);

impl Drop for CloseGuard {
    fn drop(&mut self) {
        // The writer flushes what is buffered before it shuts the socket.
        let _ = self.0.stop.send(true);
        self.0.wake.notify_one();
    }
}

/// What a public object holds: the connection's state, and a share of the guard that
/// closes the connection when the last handle is dropped.
#[derive(Clone)]
pub(crate) struct Handle {
    pub(crate) inner: Arc<Inner>,
    _guard: Arc<CloseGuard>,
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle")
            .field("server", &lock(&self.inner.connected).server)
            .finish_non_exhaustive()
    }
}

impl Handle {
    /// Returns the connection's error, or an error saying the client closed.
    pub(crate) fn closed_error(&self) -> ClientError {
        self.inner
            .closed_error()
            .unwrap_or_else(|| ClientError::Closed("client closed".to_string()))
    }

    pub(crate) fn check_open(&self) -> Result<(), ClientError> {
        match self.inner.closed_error() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// Registers a waiter under a fresh id, lets `write` queue the request, and waits.
    pub(crate) async fn call(
        &self,
        timeout: Duration,
        write: impl FnOnce(&mut Outbox, u64) -> Result<(), ClientError>,
    ) -> Result<Frame, ClientError> {
        let id = self.inner.next_id();
        let (sender, receiver) = oneshot::channel();
        {
            let mut outbox = lock(&self.inner.outbox);
            self.check_open()?;
            write(&mut outbox, id)?;
            lock(&self.inner.pending).insert(id, sender);
        }
        self.inner.wake.notify_one();
        match tokio::time::timeout(timeout, receiver).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(self.closed_error()),
            Err(_) => {
                lock(&self.inner.pending).remove(&id);
                lock(&self.inner.partial).remove(&id);
                Err(ClientError::Timeout(timeout))
            }
        }
    }

    /// Queues a control frame that needs no answer.
    pub(crate) fn send_frame(&self, frame: &Frame) {
        lock(&self.inner.outbox).push_frame(frame);
        self.inner.wake.notify_one();
    }

    pub(crate) async fn unsubscribe(&self, subscription: u64) -> Result<(), ClientError> {
        self.forget_subscription(subscription);
        self.control(|cid| Frame::Unsubscribe { cid, subscription })
            .await
            .map(|_| ())
    }

    pub(crate) fn forget_subscription(&self, subscription: u64) {
        lock(&self.inner.routes).remove(&subscription);
        lock(&self.inner.subscriptions).remove(&subscription);
    }

    /// Sends a control frame built around a fresh correlation id and waits for `OK`.
    pub(crate) async fn control(&self, frame: impl Fn(u64) -> Frame) -> Result<Frame, ClientError> {
        self.call(DEFAULT_REQUEST_TIMEOUT, |outbox, cid| {
            outbox.push_request(&frame(cid))
        })
        .await
    }
}

/// Makes the connection's state for a connection just opened to `servers[index]`, with
/// records numbered by `numbering`, and starts its tasks.
pub(crate) fn start(
    stream: Transport,
    (servers, index): (&[String], usize),
    welcome: Welcome,
    options: ClientOptions,
    tls: Option<Tls>,
    numbering: Numbering,
) -> Handle {
    let (stop, _) = watch::channel(false);
    let max_frame = usize::try_from(welcome.max_frame_bytes).unwrap_or(usize::MAX);
    let ids = Arc::new(AtomicU64::new(1));
    let connected = Connected {
        index,
        server: servers[index].clone(),
        welcome: welcome.clone(),
    };
    let inner = Arc::new(Inner {
        options,
        tls,
        servers: servers.to_vec(),
        connected: Mutex::new(connected),
        subscriptions: Mutex::new(HashMap::new()),
        failovers: AtomicU64::new(0),
        down: AtomicBool::new(false),
        refused_records: AtomicU64::new(0),
        archive_skipped: AtomicU64::new(0),
        abandoned: AtomicU64::new(0),
        outbox: Mutex::new(Outbox::new(max_frame, Arc::clone(&ids), numbering)),
        wake: Notify::new(),
        space: Notify::new(),
        pending: Mutex::new(HashMap::new()),
        partial: Mutex::new(HashMap::new()),
        routes: Mutex::new(HashMap::new()),
        inbox: tokio::sync::OnceCell::new(),
        error: std::sync::OnceLock::new(),
        stop,
        ids,
    });
    failover::spawn(stream, welcome, Arc::clone(&inner));
    Handle {
        _guard: Arc::new(CloseGuard(Arc::clone(&inner))),
        inner,
    }
}
