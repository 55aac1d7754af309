//! The client handle: publish, subscribe, request, flush, monitor.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use herald_proto::frame::{Ack, Subscribe, Welcome};
use herald_proto::record::check_subject;
use herald_proto::value::Field;
use herald_proto::{AckLevel, DeliveryOptions, Filter, Frame, Kind, Priority, Record, Value};
use tokio::sync::mpsc;

use crate::connection::inbox::Inbox;
use crate::connection::{Handle, Restore, Route};
use crate::delivered::Delivered;
use crate::error::{ClientError, ConnectError};
use crate::numbering::Numbering;
pub use crate::options::*;
use crate::sink::{Counters, Sink};
use crate::subscription::Subscription;
use crate::sync::lock;
use crate::tls::Tls;
use crate::url::ServerUrl;

/// A connection to a Herald server. Cheap to clone; the connection closes (after flushing)
/// when the last clone and the last subscription are dropped.
#[derive(Clone)]
pub struct Client {
    pub(crate) handle: Handle,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.server())
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
    pub async fn connect_with(url: &str, options: ClientOptions) -> Result<Client, ConnectError> {
        Client::connect_numbered(url, options, None).await
    }

    /// Connects as [`Client::connect_with`], numbering records with `numbering` (and saying
    /// HELLO with its producer id) when given: a logger's disk buffer keeps its numbering
    /// across restarts this way.
    pub(crate) async fn connect_numbered(
        url: &str,
        mut options: ClientOptions,
        numbering: Option<Numbering>,
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
        if let Some(numbering) = &numbering {
            options.producer = numbering.producer();
        } else if options.producer == 0 {
            options.producer = random_producer();
        }
        let numbering = numbering.unwrap_or_else(|| Numbering::new(options.producer));
        let tls = options.tls.as_ref().map(Tls::new).transpose();
        let tls = tls.map_err(ConnectError::Tls)?;
        let mut attempts = Vec::new();
        for (index, server) in url.servers.iter().enumerate() {
            match crate::connection::io::connect(server, &options, tls.as_ref()).await {
                Ok((stream, welcome)) => {
                    let servers = &url.servers;
                    let handle = crate::connection::start(
                        stream,
                        (servers, index),
                        welcome,
                        options,
                        tls,
                        numbering,
                    );
                    return Ok(Client { handle });
                }
                Err(crate::connection::io::HandshakeError::Refused { code, message }) => {
                    return Err(ConnectError::Refused {
                        server: server.clone(),
                        code,
                        message,
                    })
                }
                Err(crate::connection::io::HandshakeError::Failed(why)) => {
                    attempts.push(format!("{server}: {why}"))
                }
            }
        }
        Err(ConnectError::Unreachable { attempts })
    }

    /// Returns the largest frame the current server accepts (from its `WELCOME`).
    pub(crate) fn max_frame_bytes(&self) -> usize {
        let max = lock(&self.handle.inner.connected).welcome.max_frame_bytes;
        usize::try_from(max).unwrap_or(usize::MAX)
    }

    /// Returns the `host:port` this client is connected to (it changes on failover).
    pub fn server(&self) -> String {
        lock(&self.handle.inner.connected).server.clone()
    }

    /// Returns the current server's `WELCOME`: its name, limits and this connection's id.
    pub fn welcome(&self) -> Welcome {
        lock(&self.handle.inner.connected).welcome.clone()
    }

    /// Returns false while the connection is lost and the client fails over to another
    /// server, and once it is closed.
    pub fn is_connected(&self) -> bool {
        !self.handle.inner.down.load(Ordering::Acquire)
    }

    /// Takes every record sent (or waiting to be) that no server acknowledged, as the
    /// `PUBLISH` frames that carry them, oldest first: a logger closing during an outage
    /// puts them in its disk buffer rather than lose them.
    pub(crate) fn take_unacknowledged(&self) -> Vec<bytes::Bytes> {
        let frames = lock(&self.handle.inner.outbox).take_unacknowledged();
        self.handle.inner.space.notify_waiters();
        frames
    }

    /// Returns how often the client has failed over to another connection.
    pub fn failovers(&self) -> u64 {
        self.handle.inner.failovers.load(Ordering::Relaxed)
    }

    /// Returns how many published records the server refused as malformed (each refusal
    /// is also logged with the server's reason, or returned by `sync_send`). A record
    /// built with this crate's types is refused only by a server with stricter rules.
    pub fn refused_records(&self) -> u64 {
        self.handle.inner.refused_records.load(Ordering::Relaxed)
    }

    /// Returns how many records this client held without an acknowledgement when its
    /// connection ended for good — it gave up failing over (`reconnect_timeout`), the server
    /// refused it for good, or it was closed before they were acknowledged: records it
    /// cannot say reached a server (also logged as a warning). 0 while it runs.
    pub fn abandoned(&self) -> u64 {
        self.handle.inner.abandoned.load(Ordering::Relaxed)
    }

    /// Returns how many stored records archive answers left out because the archive could
    /// not decode them (each answer says so; the rest of the answer is whole).
    pub fn archive_skipped(&self) -> u64 {
        self.handle.inner.archive_skipped.load(Ordering::Relaxed)
    }

    pub(crate) fn count_archive_skipped(&self, count: u64) {
        self.handle
            .inner
            .archive_skipped
            .fetch_add(count, Ordering::Relaxed);
    }

    /// Returns why the connection closed, or `None` while it is open.
    pub fn error(&self) -> Option<ClientError> {
        self.handle.inner.closed_error()
    }

    /// Queues `record` for sending, waiting while the send buffer is full.
    ///
    /// # Errors
    /// [`ClientError::InvalidRecord`] for a subject the server would refuse,
    /// [`ClientError::TooLarge`], or the connection's error.
    pub async fn publish(&self, record: &Record) -> Result<(), ClientError> {
        check_record(record)?;
        // Nearly always there is room: queue without registering as a waiter (which costs
        // two turns of the notifier's lock).
        match self.try_queue(record) {
            Err(ClientError::BufferFull(_)) => {}
            queued => return queued,
        }
        loop {
            let space = self.handle.inner.space.notified();
            tokio::pin!(space);
            space.as_mut().enable();
            {
                let mut outbox = lock(&self.handle.inner.outbox);
                self.handle.check_open()?;
                if outbox.len() < self.handle.inner.options.outbox_bytes {
                    let drained = outbox.is_drained();
                    outbox.push_record(record)?;
                    drop(outbox);
                    if drained {
                        self.handle.inner.wake.notify_one();
                    }
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
        self.try_queue(record)
    }

    /// Queues a checked `record` unless the outbox is full.
    fn try_queue(&self, record: &Record) -> Result<(), ClientError> {
        let mut outbox = lock(&self.handle.inner.outbox);
        self.handle.check_open()?;
        if outbox.len() >= self.handle.inner.options.outbox_bytes {
            return Err(ClientError::BufferFull(outbox.len()));
        }
        // The writer needs waking only if it took everything before this record: it
        // takes all it finds (`Outbox::is_drained`). Waking it for every record cost the
        // publishing thread a compare-and-swap on a line the writer shares, and often the
        // notifier's lock and a thread's wake-up.
        let drained = outbox.is_drained();
        outbox.push_record(record)?;
        drop(outbox);
        if drained {
            self.handle.inner.wake.notify_one();
        }
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
        self.flush_at(AckLevel::Received, timeout).await
    }

    /// Waits until the server acknowledges everything published so far at `level`:
    /// `Received` as [`Client::flush`]; `Stored` seals a batch asking `stored`, whose
    /// acknowledgement also covers the records of earlier batches, since the archive writes
    /// in arrival order and a sync makes everything written before it durable: what the
    /// archive's rules keep is then durable, except records the archive shed when it fell
    /// behind, which the server counts as dropped (`drops.archive`, docs/protocol.md).
    ///
    /// # Errors
    /// The server's error (e.g. `stored` without an archive), [`ClientError::Timeout`], or
    /// the connection's error.
    pub async fn flush_at(&self, level: AckLevel, timeout: Duration) -> Result<(), ClientError> {
        self.acknowledged(None, level, timeout).await.map(|_| ())
    }

    async fn acknowledged(
        &self,
        record: Option<&Record>,
        level: AckLevel,
        timeout: Duration,
    ) -> Result<Ack, ClientError> {
        let answer = self
            .handle
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

    /// Sends `runs` of records (encoded, as a `PUBLISH` carries them), each numbered
    /// already from its first number on by this client's numbering, one frame per run, and
    /// waits at most `timeout` for the server's acknowledgement of the last (which covers
    /// the others): a logger's disk buffer sends what it kept this way, under the numbers
    /// its records got when they went to disk. Returns how many records of the last run the
    /// server took.
    ///
    /// # Errors
    /// [`ClientError::TooLarge`] for a frame over the server's limit (that run and the later
    /// ones are not sent), [`ClientError::Timeout`], or the connection's error.
    pub(crate) async fn publish_numbered(
        &self,
        runs: &[(u64, Vec<&[u8]>)],
        timeout: Duration,
    ) -> Result<u64, ClientError> {
        let ids = &self.handle.inner.ids;
        let answer = self
            .handle
            .call(timeout, |outbox, id| {
                for (index, (first_seq, records)) in runs.iter().enumerate() {
                    let last = index + 1 == runs.len();
                    let ack_id = if last {
                        id
                    } else {
                        ids.fetch_add(1, Ordering::Relaxed)
                    };
                    outbox.push_numbered(records, *first_seq, ack_id)?;
                }
                Ok(())
            })
            .await?;
        match answer {
            Frame::Ack(ack) => Ok(ack.count),
            other => Err(unexpected(&other)),
        }
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
        let id = self.handle.inner.next_id();
        let (events, receiver) = mpsc::unbounded_channel();
        let counters = Arc::new(Counters::default());
        let limit = self.handle.inner.options.subscription_buffer.max(1);
        let sink = Sink::new(events, Arc::clone(&counters), limit);
        lock(&self.handle.inner.routes).insert(id, Route::Subscription(sink));
        lock(&self.handle.inner.subscriptions).insert(id, made.clone());
        let subscription = Subscription {
            id,
            conn: self.handle.clone(),
            events: receiver,
            taken: Vec::new().into_iter(),
            counters,
            active: true,
        };
        self.handle.control(|cid| made.frame(cid, id)).await?;
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
        let (id, reply_to, answer) = inbox.expect(self.handle.inner.next_id());
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
            Ok(Err(_)) => Err(self.handle.closed_error()),
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
        let inbox = self.handle.inner.inbox.get_or_try_init(|| async {
            let inbox = Arc::new(Inbox::new());
            let id = self.handle.inner.next_id();
            lock(&self.handle.inner.routes).insert(id, Route::Inbox(Arc::clone(&inbox)));
            let filter = Filter::subject(&inbox.pattern())
                .map_err(|e| ClientError::InvalidRecord(e.to_string()))?;
            lock(&self.handle.inner.subscriptions).insert(
                id,
                Restore::Records(filter.clone(), DeliveryOptions::default()),
            );
            self.handle
                .control(|cid| {
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

    /// Asks the server for its monitor data: clients, subscriptions, rates, queue depths, drops.
    ///
    /// # Errors
    /// A timeout or the connection's error.
    pub async fn monitor(&self) -> Result<Vec<Field>, ClientError> {
        match self.handle.control(|cid| Frame::Monitor { cid }).await? {
            Frame::MonitorReply { data, .. } => Ok(data),
            other => Err(unexpected(&other)),
        }
    }

    /// Asks the server to read its configuration again and put in force what can change
    /// live (the `admin` permission): the answer's `applied` and `restart` name the settings
    /// changed now and those waiting for a restart (docs/configuration.md, Reload).
    ///
    /// # Errors
    /// [`ClientError::Server`] with code `bad_config` when the new configuration is refused
    /// (the old one stays in force), `denied` without the permission; a timeout or the
    /// connection's error.
    pub async fn reload(&self) -> Result<Vec<Field>, ClientError> {
        match self.handle.control(|cid| Frame::Reload { cid }).await? {
            Frame::ReloadReply { data, .. } => Ok(data),
            other => Err(unexpected(&other)),
        }
    }

    /// Flushes (waiting at most `timeout`) and closes the connection.
    ///
    /// # Errors
    /// The flush's error; the connection closes either way.
    pub async fn close(self, timeout: Duration) -> Result<(), ClientError> {
        let flushed = self.flush(timeout).await;
        self.handle
            .inner
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
