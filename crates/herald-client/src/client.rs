//! The client handle: publish, subscribe, request, flush, monitor.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use herald_proto::frame::{Ack, Subscribe, Welcome};
use herald_proto::record::check_subject;
use herald_proto::value::Field;
use herald_proto::{AckLevel, DeliveryOptions, Filter, Frame, Kind, Priority, Record, Value};
use tokio::sync::{mpsc, oneshot, watch, Notify};

use crate::delivered::Delivered;
use crate::error::{ClientError, ConnectError};
use crate::inbox::Inbox;
use crate::outbox::{Outbox, DEFAULT_OUTBOX_BYTES};
use crate::subscription::{Counters, Sink, Subscription};
use crate::tls::{Tls, TlsOptions};
use crate::transport::Transport;
use crate::url::ServerUrl;

/// Default events buffered per subscription before the client drops (and reports a gap).
pub const DEFAULT_SUBSCRIPTION_BUFFER: usize = 65_536;
/// Default heartbeat interval asked of the server.
pub const DEFAULT_HEARTBEAT_INTERVAL: Duration = Duration::from_secs(1);
/// Default silence after which the server counts as dead.
pub const DEFAULT_HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(5);
/// Default time allowed to connect and complete the handshake, per server.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Default time a client keeps trying to fail over before it gives up.
pub const DEFAULT_RECONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default time to wait for the answer to a control request.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// How a client connects and behaves.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Name shown by the server's monitor; the URL's `?name=` overrides it.
    pub name: String,
    /// Authentication token; the URL's `?token=` overrides it.
    pub token: String,
    /// TLS to every server: set by a `herald+tls://` URL (with its `?ca=`, `?cert=` and
    /// `?key=`), or here for a `herald://` one.
    pub tls: Option<TlsOptions>,
    /// Heartbeat interval asked of the server; the client pings as often.
    pub heartbeat_interval: Duration,
    /// Silence after which the server counts as dead.
    pub heartbeat_timeout: Duration,
    /// Time allowed per server to connect and shake hands.
    pub connect_timeout: Duration,
    /// Events buffered per subscription.
    pub subscription_buffer: usize,
    /// Bytes buffered for sending (or sent and not yet acknowledged) before `publish`
    /// waits: the window a failover may have to resend.
    pub outbox_bytes: usize,
    /// How long to keep trying to reach a server (the next in the URL, then around again)
    /// after the connection fails; zero turns failover off.
    pub reconnect_timeout: Duration,
    /// The producer id sent in `HELLO`, under which the client numbers its records so that
    /// cluster members can drop what a failover sends again; chosen at random when 0.
    pub producer: u64,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            name: default_name(),
            token: String::new(),
            tls: None,
            heartbeat_interval: DEFAULT_HEARTBEAT_INTERVAL,
            heartbeat_timeout: DEFAULT_HEARTBEAT_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            subscription_buffer: DEFAULT_SUBSCRIPTION_BUFFER,
            outbox_bytes: DEFAULT_OUTBOX_BYTES,
            reconnect_timeout: DEFAULT_RECONNECT_TIMEOUT,
            producer: 0,
        }
    }
}

/// Returns a random non-zero producer id.
fn random_producer() -> u64 {
    use std::hash::BuildHasher;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    // RandomState is seeded from the operating system's randomness.
    let id = std::collections::hash_map::RandomState::new().hash_one((nanos, std::process::id()));
    id.max(1)
}

fn default_name() -> String {
    std::env::args()
        .next()
        .and_then(|arg0| {
            std::path::Path::new(&arg0)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "herald-client".to_string())
}

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
                options: *options,
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
    /// Published records the server refused (acknowledged as fewer than were sent).
    pub(crate) refused_records: AtomicU64,
    /// Stored records archive answers left out because they do not decode.
    archive_skipped: AtomicU64,
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
    pub(crate) error: Mutex<Option<ClientError>>,
    pub(crate) stop: watch::Sender<bool>,
    /// Correlation and acknowledgement ids, shared with the outbox.
    ids: Arc<AtomicU64>,
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
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
        let mut slot = lock(&self.error);
        if slot.is_none() {
            tracing::debug!(error = %error, "herald connection closed");
            *slot = Some(error.clone());
        }
        drop(slot);
        for (_, sender) in lock(&self.pending).drain() {
            let _ = sender.send(Err(error.clone()));
        }
        lock(&self.routes).clear();
        if let Some(inbox) = self.inbox.get() {
            inbox.fail();
        }
        let _ = self.stop.send(true);
        self.space.notify_waiters();
        self.wake.notify_one();
    }

    pub(crate) fn closed_error(&self) -> Option<ClientError> {
        lock(&self.error).clone()
    }
}

/// Closes the connection when the last [`Client`] clone (or subscription) is dropped.
struct CloseGuard(Arc<Inner>);

impl Drop for CloseGuard {
    fn drop(&mut self) {
        // The writer flushes what is buffered before it shuts the socket.
        let _ = self.0.stop.send(true);
        self.0.wake.notify_one();
    }
}

/// A connection to a Herald server. Cheap to clone; the connection closes (after flushing)
/// when the last clone and the last subscription are dropped.
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
    _guard: Arc<CloseGuard>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &lock(&self.inner.connected).server)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Connects to the first server of `url` that answers, with default options.
    ///
    /// # Errors
    /// [`ConnectError`] for a bad URL, no reachable server, or a refused handshake.
    pub async fn connect(url: &str) -> Result<Client, ConnectError> {
        Client::connect_with(url, ClientOptions::default()).await
    }

    /// Connects to the first server of `url` that answers.
    ///
    /// # Errors
    /// [`ConnectError`] for a bad URL, no reachable server, or a refused handshake.
    pub async fn connect_with(
        url: &str,
        mut options: ClientOptions,
    ) -> Result<Client, ConnectError> {
        let url: ServerUrl = url.parse()?;
        if let Some(name) = &url.name {
            options.name = name.clone();
        }
        if let Some(token) = &url.token {
            options.token = token.clone();
        }
        if let Some(tls) = &url.tls {
            options.tls = Some(tls.clone());
        }
        if options.producer == 0 {
            options.producer = random_producer();
        }
        let tls = options.tls.as_ref().map(Tls::new).transpose();
        let tls = tls.map_err(ConnectError::Tls)?;
        let mut attempts = Vec::new();
        for (index, server) in url.servers.iter().enumerate() {
            match crate::io::connect(server, &options, tls.as_ref()).await {
                Ok((stream, welcome)) => {
                    let servers = &url.servers;
                    return Ok(Client::start(stream, servers, index, welcome, options, tls));
                }
                Err(crate::io::HandshakeError::Refused { code, message }) => {
                    return Err(ConnectError::Refused {
                        server: server.clone(),
                        code,
                        message,
                    })
                }
                Err(crate::io::HandshakeError::Failed(why)) => {
                    attempts.push(format!("{server}: {why}"))
                }
            }
        }
        Err(ConnectError::Unreachable { attempts })
    }

    fn start(
        stream: Transport,
        servers: &[String],
        index: usize,
        welcome: Welcome,
        options: ClientOptions,
        tls: Option<Tls>,
    ) -> Client {
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
            refused_records: AtomicU64::new(0),
            archive_skipped: AtomicU64::new(0),
            outbox: Mutex::new(Outbox::new(max_frame, Arc::clone(&ids))),
            wake: Notify::new(),
            space: Notify::new(),
            pending: Mutex::new(HashMap::new()),
            partial: Mutex::new(HashMap::new()),
            routes: Mutex::new(HashMap::new()),
            inbox: tokio::sync::OnceCell::new(),
            error: Mutex::new(None),
            stop,
            ids,
        });
        crate::failover::spawn(stream, welcome, Arc::clone(&inner));
        Client {
            _guard: Arc::new(CloseGuard(Arc::clone(&inner))),
            inner,
        }
    }

    /// Returns the `host:port` this client is connected to (it changes on failover).
    pub fn server(&self) -> String {
        lock(&self.inner.connected).server.clone()
    }

    /// Returns the current server's `WELCOME`: its name, limits and this connection's id.
    pub fn welcome(&self) -> Welcome {
        lock(&self.inner.connected).welcome.clone()
    }

    /// Returns how often the client has failed over to another connection.
    pub fn failovers(&self) -> u64 {
        self.inner.failovers.load(Ordering::Relaxed)
    }

    /// Returns how many published records the server refused as malformed (each refusal
    /// is also logged with the server's reason, or returned by `sync_send`). A record
    /// built with this crate's types is refused only by a server with stricter rules.
    pub fn refused_records(&self) -> u64 {
        self.inner.refused_records.load(Ordering::Relaxed)
    }

    /// Returns how many stored records archive answers left out because the archive could
    /// not decode them (each answer says so; the rest of the answer is whole).
    pub fn archive_skipped(&self) -> u64 {
        self.inner.archive_skipped.load(Ordering::Relaxed)
    }

    pub(crate) fn count_archive_skipped(&self, count: u64) {
        self.inner
            .archive_skipped
            .fetch_add(count, Ordering::Relaxed);
    }

    /// Returns why the connection closed, or `None` while it is open.
    pub fn error(&self) -> Option<ClientError> {
        self.inner.closed_error()
    }

    pub(crate) fn closed_error(&self) -> ClientError {
        self.inner
            .closed_error()
            .unwrap_or_else(|| ClientError::Closed("client closed".to_string()))
    }

    fn check_open(&self) -> Result<(), ClientError> {
        match self.inner.closed_error() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// Queues `record` for sending, waiting while the send buffer is full.
    ///
    /// # Errors
    /// [`ClientError::InvalidRecord`] for a subject the server would refuse,
    /// [`ClientError::TooLarge`], or the connection's error.
    pub async fn publish(&self, record: &Record) -> Result<(), ClientError> {
        check_record(record)?;
        loop {
            let space = self.inner.space.notified();
            tokio::pin!(space);
            space.as_mut().enable();
            {
                let mut outbox = lock(&self.inner.outbox);
                self.check_open()?;
                if outbox.len() < self.inner.options.outbox_bytes {
                    outbox.push_record(record)?;
                    drop(outbox);
                    self.inner.wake.notify_one();
                    return Ok(());
                }
            }
            space.await;
        }
    }

    /// Queues `record` for sending without waiting.
    ///
    /// # Errors
    /// As [`Client::publish`], and [`ClientError::BufferFull`] instead of waiting.
    pub fn try_publish(&self, record: &Record) -> Result<(), ClientError> {
        check_record(record)?;
        let mut outbox = lock(&self.inner.outbox);
        self.check_open()?;
        if outbox.len() >= self.inner.options.outbox_bytes {
            return Err(ClientError::BufferFull(outbox.len()));
        }
        outbox.push_record(record)?;
        drop(outbox);
        self.inner.wake.notify_one();
        Ok(())
    }

    /// Publishes a message on `subject` of `type_name` with `text` and `fields`.
    ///
    /// # Errors
    /// As [`Client::publish`].
    pub async fn message(
        &self,
        subject: &str,
        type_name: &str,
        text: &str,
        fields: Vec<Field>,
    ) -> Result<(), ClientError> {
        let record = Record {
            type_name: type_name.to_string(),
            text: text.to_string(),
            fields,
            ..Record::new(Kind::Message, subject)
        };
        self.publish(&record).await
    }

    /// Logs `text` about `subject` at `priority`, with this host and process as origin.
    ///
    /// # Errors
    /// As [`Client::publish`].
    pub async fn log(
        &self,
        priority: Priority,
        subject: &str,
        text: &str,
    ) -> Result<(), ClientError> {
        let record = Record {
            priority,
            text: text.to_string(),
            origin: crate::origin::local_origin(),
            ..Record::new(Kind::Log, subject)
        };
        self.publish(&record).await
    }

    /// Sends `record` and waits until the server acknowledges it at `level`.
    ///
    /// # Errors
    /// As [`Client::publish`], the server's error (e.g. `stored` without an archive),
    /// [`ClientError::Timeout`], or the connection's error.
    pub async fn sync_send(
        &self,
        record: &Record,
        level: AckLevel,
        timeout: Duration,
    ) -> Result<Ack, ClientError> {
        check_record(record)?;
        self.acknowledged(Some(record), level, timeout).await
    }

    /// Waits until the server has received and routed everything published so far.
    ///
    /// # Errors
    /// [`ClientError::Timeout`], or the connection's error.
    pub async fn flush(&self, timeout: Duration) -> Result<(), ClientError> {
        self.acknowledged(None, AckLevel::Received, timeout)
            .await
            .map(|_| ())
    }

    async fn acknowledged(
        &self,
        record: Option<&Record>,
        level: AckLevel,
        timeout: Duration,
    ) -> Result<Ack, ClientError> {
        let answer = self
            .call(timeout, |outbox, id| {
                if let Some(record) = record {
                    outbox.push_record(record)?;
                }
                outbox.seal(Some((id, level)));
                Ok(())
            })
            .await?;
        match answer {
            Frame::Ack(ack) => Ok(ack),
            other => Err(unexpected(&other)),
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

    /// Subscribes with `filter`; records arrive through the returned [`Subscription`].
    ///
    /// # Errors
    /// The server's error (e.g. too many subscriptions), a timeout, or the connection's error.
    pub async fn subscribe(&self, filter: Filter) -> Result<Subscription, ClientError> {
        self.subscribe_with_options(filter, DeliveryOptions::default())
            .await
    }

    /// Subscribes with `filter` and delivery `options`: the server queue's policy and
    /// bounds, the protected priority, or latest-only delivery.
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub async fn subscribe_with_options(
        &self,
        filter: Filter,
        options: DeliveryOptions,
    ) -> Result<Subscription, ClientError> {
        self.subscribe_to(Restore::Records(filter, options)).await
    }

    /// Makes a subscription of either kind and waits for the server to confirm it.
    pub(crate) async fn subscribe_to(&self, made: Restore) -> Result<Subscription, ClientError> {
        let id = self.inner.next_id();
        let (events, receiver) = mpsc::unbounded_channel();
        let counters = Arc::new(Counters::default());
        let limit = self.inner.options.subscription_buffer.max(1);
        let sink = Sink::new(events, Arc::clone(&counters), limit);
        lock(&self.inner.routes).insert(id, Route::Subscription(sink));
        lock(&self.inner.subscriptions).insert(id, made.clone());
        let subscription = Subscription {
            id,
            client: self.clone(),
            events: receiver,
            taken: std::collections::VecDeque::new(),
            counters,
            active: true,
        };
        self.control(|cid| made.frame(cid, id)).await?;
        Ok(subscription)
    }

    /// Subscribes with `filter` and calls `callback` for each event on a task of its own.
    /// The subscription lasts until the returned handle is aborted or the connection closes.
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub async fn subscribe_with<F>(
        &self,
        filter: Filter,
        mut callback: F,
    ) -> Result<tokio::task::JoinHandle<()>, ClientError>
    where
        F: FnMut(crate::Event) + Send + 'static,
    {
        let mut subscription = self.subscribe(filter).await?;
        Ok(tokio::spawn(async move {
            while let Some(event) = subscription.next().await {
                callback(event);
            }
        }))
    }

    /// Subscribes with `filter`, waits at most `timeout` for one record, and unsubscribes.
    ///
    /// # Errors
    /// [`ClientError::Timeout`] if nothing matched in time, or as [`Client::subscribe`].
    pub async fn subscribe_and_get(
        &self,
        filter: Filter,
        timeout: Duration,
    ) -> Result<Delivered, ClientError> {
        let mut subscription = self.subscribe(filter).await?;
        let result = subscription.next_record_timeout(timeout).await;
        drop(subscription);
        result
    }

    /// Sends `record` as a request and waits at most `timeout` for the first reply.
    ///
    /// # Errors
    /// [`ClientError::NoReply`] if no reply came in time, or as [`Client::publish`].
    pub async fn request(
        &self,
        record: Record,
        timeout: Duration,
    ) -> Result<Delivered, ClientError> {
        let inbox = self.inbox().await?;
        let (id, reply_to, answer) = inbox.expect(self.inner.next_id());
        let subject = record.subject.clone();
        let request = Record {
            reply_to: Some(reply_to),
            id: Some(id),
            ..record
        };
        if let Err(error) = self.publish(&request).await {
            inbox.forget(id);
            return Err(error);
        }
        match tokio::time::timeout(timeout, answer).await {
            Ok(Ok(delivered)) => Ok(delivered),
            Ok(Err(_)) => Err(self.closed_error()),
            Err(_) => {
                inbox.forget(id);
                Err(ClientError::NoReply { subject, timeout })
            }
        }
    }

    /// Publishes `reply` to the requester of `request` (its `reply_to`, with its `id`).
    ///
    /// # Errors
    /// [`ClientError::InvalidRecord`] if `request` asked for no reply, or as
    /// [`Client::publish`].
    pub async fn reply(&self, request: &Record, reply: Record) -> Result<(), ClientError> {
        let Some(reply_to) = &request.reply_to else {
            return Err(ClientError::InvalidRecord(format!(
                "record on `{}` has no reply_to",
                request.subject
            )));
        };
        let reply = Record {
            subject: reply_to.clone(),
            id: request.id,
            ..reply
        };
        self.publish(&reply).await
    }

    async fn inbox(&self) -> Result<Arc<Inbox>, ClientError> {
        let inbox = self.inner.inbox.get_or_try_init(|| async {
            let inbox = Arc::new(Inbox::new());
            let id = self.inner.next_id();
            lock(&self.inner.routes).insert(id, Route::Inbox(Arc::clone(&inbox)));
            let filter = Filter::subject(&inbox.pattern())
                .map_err(|e| ClientError::InvalidRecord(e.to_string()))?;
            lock(&self.inner.subscriptions).insert(
                id,
                Restore::Records(filter.clone(), DeliveryOptions::default()),
            );
            self.control(|cid| {
                Frame::Subscribe(Subscribe {
                    cid,
                    subscription: id,
                    filter: filter.clone(),
                    options: DeliveryOptions::default(),
                })
            })
            .await?;
            Ok::<_, ClientError>(inbox)
        });
        inbox.await.cloned()
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

    /// Asks the server for its monitor data: clients, subscriptions, rates, queue depths, drops.
    ///
    /// # Errors
    /// A timeout or the connection's error.
    pub async fn monitor(&self) -> Result<Vec<Field>, ClientError> {
        match self.control(|cid| Frame::Monitor { cid }).await? {
            Frame::MonitorReply { data, .. } => Ok(data),
            other => Err(unexpected(&other)),
        }
    }

    /// Flushes (waiting at most `timeout`) and closes the connection.
    ///
    /// # Errors
    /// The flush's error; the connection closes either way.
    pub async fn close(self, timeout: Duration) -> Result<(), ClientError> {
        let flushed = self.flush(timeout).await;
        self.inner
            .fail(ClientError::Closed("client closed".to_string()));
        flushed
    }
}

fn check_record(record: &Record) -> Result<(), ClientError> {
    check_subject(&record.subject).map_err(ClientError::InvalidRecord)?;
    if let Some(reply_to) = &record.reply_to {
        check_subject(reply_to)
            .map_err(|why| ClientError::InvalidRecord(format!("reply_to: {why}")))?;
    }
    Ok(())
}

fn unexpected(frame: &Frame) -> ClientError {
    ClientError::Closed(format!(
        "unexpected {} frame in answer",
        frame.frame_type().name()
    ))
}

/// Returns the named value of monitor data, e.g. `monitor_value(&data, "records_in")`.
pub fn monitor_value<'a>(data: &'a [Field], name: &str) -> Option<&'a Value> {
    data.iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value)
}
