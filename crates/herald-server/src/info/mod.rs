//! The information service: the store of latest values and types, the subscribers to
//! objects, and the records every change becomes.
//!
//! One mutex guards the store and the list of info subscribers. A change is applied,
//! persisted, routed to ordinary subscribers (as a record of kind `info`) and queued for
//! every matching info subscriber while that mutex is held; a new info subscriber takes its
//! snapshot and joins the list under the same mutex. So it sees every change exactly once:
//! either in the snapshot or in the stream, never both, never neither.
//!
//! [`log_sync`]: the store's log made durable on an interval, when it changed.

pub mod log_sync;

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use herald_archive::Archive;
use herald_info::{
    Change, FsyncPolicy, InfoError, InfoObject, InfoStore, ObjectUpdate, Selection, StoreOptions,
    TypeDef,
};
use herald_proto::frame::RawRecord;
use herald_proto::info::{InfoReply, InfoRequest, SelectionData};
use herald_proto::time::now_nanos;
use herald_proto::{ErrorCode, Kind, Priority, Record};
use herald_router::{Delivery, GlobRules, Queue, RouteContext, Router};

/// What a request did wrong: the code and message of the `ERROR` answering it.
pub type InfoFailure = (ErrorCode, String);

/// Hears every change this server applies to an object (not the copies it keeps of other
/// members' objects), while the store is locked: in the order they are made.
pub trait ChangeListener: Send + Sync + std::fmt::Debug {
    /// `object` changed; `reason` is `created`, `updated` or `deleted`.
    fn changed(&self, object: &InfoObject, reason: &str);

    /// A type was declared here, by a client or from another member: heard before any
    /// object of that type changes. Nothing by default.
    fn declared(&self, _def: &TypeDef) {}
}

/// The `text` of a snapshot record: the object as it is when the subscription starts.
pub const SNAPSHOT_REASON: &str = "snapshot";

/// Objects a page of a streamed list looks at, at most, while holding the service's lock.
const LIST_PAGE_SCAN: usize = 20_000;

struct Subscriber {
    connection: u64,
    id: u64,
    selection: Selection,
    /// The names its identity may read, when not all.
    visible: Option<Arc<GlobRules>>,
    queue: Arc<Queue>,
}

impl Subscriber {
    fn wants(&self, object: &InfoObject, registry: &herald_info::TypeRegistry) -> bool {
        self.visible.as_ref().is_none_or(|v| v.allows(&object.name))
            && self
                .selection
                .matches(&object.name, &object.type_name, registry)
    }
}

struct State {
    store: InfoStore,
    subscribers: Vec<Subscriber>,
}

/// The information service of one server.
pub struct InfoService {
    state: Mutex<State>,
    /// Where changes are archived, if anywhere.
    archive: Option<Arc<Archive>>,
    /// The store's log, which [`InfoService::sync`] fsyncs through a handle of its own.
    log: log_sync::LogSync,
    /// Who hears of changes: a cluster, which sends them to the other members, and the
    /// mirrors this server feeds.
    listeners: std::sync::RwLock<Vec<Arc<dyn ChangeListener>>>,
}

impl std::fmt::Debug for InfoService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InfoService").finish_non_exhaustive()
    }
}

fn failure(error: InfoError) -> InfoFailure {
    (ErrorCode::BadInfo, error.to_string())
}

impl InfoService {
    /// Opens (or creates) the store in `dir`.
    ///
    /// # Errors
    /// The store's error: unreadable or corrupt files.
    pub fn open(dir: &Path, archive: Option<Arc<Archive>>) -> Result<InfoService, InfoError> {
        // Every change is written to the log before it is answered, so a killed server
        // loses nothing it acknowledged. The fsync that guards against a machine crash runs
        // outside the store's lock ([`InfoService::sync`]), so no update waits for the disk.
        let options = StoreOptions {
            fsync: FsyncPolicy::Never,
            ..StoreOptions::default()
        };
        let store = InfoStore::open(dir, options)?;
        tracing::info!(objects = store.len(), dir = %dir.display(), "information store open");
        Ok(InfoService {
            archive,
            log: log_sync::LogSync::new(dir.join(herald_info::persist::LOG_FILE)),
            listeners: std::sync::RwLock::default(),
            state: Mutex::new(State {
                store,
                subscribers: Vec::new(),
            }),
        })
    }

    /// Adds one who hears of every change.
    pub fn add_listener(&self, listener: Arc<dyn ChangeListener>) {
        self.listeners
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .push(listener);
    }

    fn tell_declared(&self, def: &TypeDef) {
        for listener in self
            .listeners
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            listener.declared(def);
        }
    }

    fn tell_listeners(&self, object: &InfoObject, reason: &str) {
        for listener in self
            .listeners
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            listener.changed(object, reason);
        }
    }

    /// Applies changes another member made to objects it owns: puts (or, for `deleted`,
    /// removes) the copies and tells the info subscribers. Ordinary subscribers hear of
    /// them over the route, as of any record, and the archive of the owner keeps them.
    pub fn apply_copies(&self, objects: Vec<InfoObject>, reason: &str, router: &Router) {
        let mut state = self.lock();
        for object in objects {
            let deleted = reason == Change::Deleted.name();
            if !deleted && state.store.get(&object.name) == Some(&object) {
                continue;
            }
            let stored = if deleted {
                state
                    .store
                    .remove_copy(&object.name, object.time, object.version)
                    .map(|_| ())
            } else {
                state.store.put_copy(object.clone())
            };
            match stored {
                Ok(()) => tell_subscribers(&state, &object, reason, router),
                Err(error) => {
                    // A cluster member's or a mirror's source's object, not kept here.
                    tracing::error!(object = %object.name, %error, "cannot keep the copy of another server's object");
                }
            }
        }
    }

    /// Replaces the copies of the objects `takes` selects with `objects` (a snapshot from
    /// their owner): the others of those names are removed; info subscribers hear of each
    /// change.
    pub fn replace_copies(
        &self,
        objects: Vec<InfoObject>,
        takes: impl Fn(&str) -> bool,
        router: &Router,
    ) {
        let names: std::collections::HashSet<String> =
            objects.iter().map(|o| o.name.clone()).collect();
        let gone: Vec<InfoObject> = self
            .lock()
            .store
            .objects()
            .filter(|o| takes(&o.name) && !names.contains(&o.name))
            .cloned()
            .collect();
        let changed: Vec<InfoObject> = {
            let state = self.lock();
            objects
                .into_iter()
                .filter(|o| state.store.get(&o.name) != Some(o))
                .collect()
        };
        self.apply_copies(changed, SNAPSHOT_REASON, router);
        let deleted = gone
            .into_iter()
            .map(|mut o| {
                o.version += 1;
                o
            })
            .collect();
        self.apply_copies(deleted, Change::Deleted.name(), router);
    }

    /// Declares a type another member declared; one declared already the same way is no
    /// change.
    ///
    /// # Errors
    /// The store's error (a conflicting definition, an unknown base).
    pub fn declare_copy(&self, data: herald_proto::info::TypeData) -> Result<(), InfoError> {
        let def = TypeDef::from_data(data)?;
        let mut state = self.lock();
        if state.store.declare_type(def.clone())? {
            self.tell_declared(&def);
        }
        Ok(())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Applies one request; changes are routed (through `router`, as the publisher
    /// `context` owns) and queued for info subscribers before the answer.
    ///
    /// # Errors
    /// The code and message of the `ERROR` to answer with; the store is unchanged.
    pub fn handle(
        &self,
        request: InfoRequest,
        router: &Router,
        context: &mut RouteContext,
    ) -> Result<InfoReply, InfoFailure> {
        self.execute(request, router, context).map_err(failure)
    }

    /// As [`InfoService::handle`], with the store's own error, whose kind the HTTP front
    /// door turns into a status (404 for a missing object, 409 for an existing one …).
    ///
    /// # Errors
    /// The [`InfoError`]; the store is unchanged.
    pub fn execute(
        &self,
        request: InfoRequest,
        router: &Router,
        context: &mut RouteContext,
    ) -> Result<InfoReply, InfoError> {
        let mut state = self.lock();
        let mut reply = InfoReply::default();
        match request {
            InfoRequest::Declare(data) => {
                let def = TypeDef::from_data(data)?;
                // Told under the store's lock, as changes are: a listener hears of a type
                // before any object of it.
                if state.store.declare_type(def.clone())? {
                    self.tell_declared(&def);
                }
            }
            InfoRequest::Update {
                mode,
                name,
                type_name,
                time,
                attributes,
            } => {
                let update = ObjectUpdate {
                    name,
                    type_name,
                    time,
                    attributes,
                };
                let (object, change) = state.store.update(update, mode)?;
                publish(
                    self.archive.as_deref(),
                    &state,
                    &object,
                    change.name(),
                    router,
                    context,
                );
                self.tell_listeners(&object, change.name());
                reply.objects.push(Some(object.clone().into()));
            }
            InfoRequest::Delete { name, time } => {
                let object = state.store.delete(&name, time)?;
                publish(
                    self.archive.as_deref(),
                    &state,
                    &object,
                    Change::Deleted.name(),
                    router,
                    context,
                );
                self.tell_listeners(&object, Change::Deleted.name());
                reply.objects.push(Some(object.clone().into()));
            }
            InfoRequest::Get(names) => {
                reply.objects = names
                    .iter()
                    .map(|name| state.store.get(name).map(|o| o.clone().into()))
                    .collect();
            }
            InfoRequest::List(data) => {
                let selection = Selection::from_data(&data)?;
                reply.objects = state
                    .store
                    .list(&selection)
                    .into_iter()
                    .map(|o| Some(o.clone().into()))
                    .collect();
            }
            InfoRequest::Types => {
                reply.types = state
                    .store
                    .types()
                    .into_iter()
                    .map(TypeDef::to_data)
                    .collect()
            }
        }
        Ok(reply)
    }

    /// A page of the objects `selection` takes after `after`, by name, copied out under the
    /// lock ([`InfoStore::list_page`]), and where the next page starts (`None`: the end).
    pub fn list_page(
        &self,
        selection: &Selection,
        after: Option<&str>,
        limit: usize,
    ) -> (Vec<herald_proto::info::ObjectData>, Option<String>) {
        let state = self.lock();
        let (objects, next) = state
            .store
            .list_page(selection, after, limit, LIST_PAGE_SCAN);
        let objects = objects.into_iter().map(|o| o.clone().into()).collect();
        (objects, next)
    }

    /// Adds an info subscriber: queues the current value of every matching object (records
    /// with text [`SNAPSHOT_REASON`]), then every change as it happens.
    ///
    /// # Errors
    /// The code and message of the `ERROR` to answer with (a bad selection).
    pub fn subscribe(
        &self,
        connection: u64,
        id: u64,
        data: &SelectionData,
        visible: Option<Arc<GlobRules>>,
        queue: Arc<Queue>,
        router: &Router,
    ) -> Result<(), InfoFailure> {
        let selection = Selection::from_data(data).map_err(failure)?;
        let mut state = self.lock();
        let mut objects = state.store.list(&selection);
        if let Some(visible) = &visible {
            objects.retain(|object| visible.allows(&object.name));
        }
        let first_seq = router.allocate_seq(objects.len() as u64);
        let received = now_nanos();
        let mut snapshot: Vec<Delivery> = objects
            .iter()
            .enumerate()
            .map(|(offset, object)| {
                delivery(object, SNAPSHOT_REASON, first_seq + offset as u64, received)
            })
            .collect();
        if !snapshot.is_empty() {
            // A snapshot larger than the queue loses records like any other overflow: counted
            // and reported to the subscriber in a gap notice.
            queue.push_batch(&mut snapshot);
        }
        state.subscribers.push(Subscriber {
            connection,
            id,
            selection,
            visible,
            queue,
        });
        Ok(())
    }

    /// Removes info subscription `id` of `connection`; returns whether it existed.
    pub fn unsubscribe(&self, connection: u64, id: u64) -> bool {
        let mut state = self.lock();
        let before = state.subscribers.len();
        state
            .subscribers
            .retain(|s| (s.connection, s.id) != (connection, id));
        state.subscribers.len() < before
    }

    /// Removes every info subscription of `connection`.
    pub fn remove_connection(&self, connection: u64) {
        self.lock()
            .subscribers
            .retain(|s| s.connection != connection);
    }

    /// Runs `read` with the store locked, e.g. to render an object with its type's
    /// descriptions. Every change waits meanwhile: keep `read` short.
    pub fn read<R>(&self, read: impl FnOnce(&InfoStore) -> R) -> R {
        read(&self.lock().store)
    }

    /// Flushes the store's log to disk if changes were written to it since the last time.
    /// Called on an interval; it holds the store's lock only to read how much was written,
    /// so updates never wait for the disk.
    pub fn sync(&self) {
        let appended = self.lock().store.log_appended();
        if let Err(error) = self.log.sync(appended) {
            tracing::error!(%error, path = %self.log.path().display(), "cannot sync the information store");
        }
    }
}

/// Returns the record a change of `object` becomes: kind `info`, subject = name, type =
/// type name, producer's time, text = why (`created`, `updated`, `deleted`, `snapshot`),
/// fields = attributes, `id` = the object's version.
pub fn change_record(object: &InfoObject, reason: &str) -> Record {
    Record {
        kind: Kind::Info,
        subject: object.name.clone(),
        type_name: object.type_name.clone(),
        time: object.time,
        priority: Priority::Info,
        text: reason.to_string(),
        fields: object.attributes.clone(),
        id: Some(object.version),
        ..Record::default()
    }
}

fn delivery(object: &InfoObject, reason: &str, seq: u64, received: i64) -> Delivery {
    let raw = RawRecord::from_record(&change_record(object, reason))
        .expect("the store's names are valid subjects");
    Delivery {
        seq,
        received,
        priority: Priority::Info,
        subject: raw.meta.subject,
        producer: 0,
        pseq: 0,
        record: raw.bytes,
        groups: None,
    }
}

/// Routes a change to ordinary subscribers and queues it for matching info subscribers.
fn publish(
    archive: Option<&Archive>,
    state: &State,
    object: &InfoObject,
    reason: &str,
    router: &Router,
    context: &mut RouteContext,
) {
    let raw = RawRecord::from_record(&change_record(object, reason))
        .expect("the store's names are valid subjects");
    let received = now_nanos();
    let stats = router.route(context, std::slice::from_ref(&raw), received);
    if let Some(archive) = archive {
        archive.offer(vec![raw.clone()], stats.first_seq, received, false);
    }
    queue_for_subscribers(state, object, &raw, stats.first_seq, received);
}

/// Queues the change record `raw` of `object` for every info subscriber that wants it.
fn queue_for_subscribers(
    state: &State,
    object: &InfoObject,
    raw: &RawRecord,
    seq: u64,
    received: i64,
) {
    for subscriber in &state.subscribers {
        if subscriber.wants(object, state.store.registry()) {
            let delivery = Delivery {
                seq,
                received,
                priority: Priority::Info,
                subject: raw.meta.subject,
                producer: 0,
                pseq: 0,
                record: raw.bytes.clone(),
                groups: None,
            };
            subscriber.queue.push_batch(&mut vec![delivery]);
        }
    }
}

/// Tells the info subscribers of a change of a copy (`reason`), with a sequence number of
/// this server's.
fn tell_subscribers(state: &State, object: &InfoObject, reason: &str, router: &Router) {
    if !state
        .subscribers
        .iter()
        .any(|s| s.wants(object, state.store.registry()))
    {
        return;
    }
    let raw = RawRecord::from_record(&change_record(object, reason))
        .expect("the store's names are valid subjects");
    let seq = router.allocate_seq(1);
    queue_for_subscribers(state, object, &raw, seq, now_nanos());
}
