//! [`InfoStore`]: the latest value of every object and the type registry, kept in memory and
//! persisted as a snapshot plus a log (format in [`crate::persist`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{quote, InfoError};
use crate::name::check_name;
use crate::object::{Change, InfoObject, ObjectUpdate, UpdateMode};
use crate::options::{FsyncPolicy, StoreOptions};
use crate::persist::entry::{self, Entry};
use crate::persist::framing::frame;
use crate::persist::log_file::LogFile;
use crate::persist::{snapshot, LOG_FILE};
use crate::registry::TypeRegistry;
use crate::selection::Selection;
use crate::type_def::TypeDef;

/// What [`InfoStore::open`] found on disk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Entries loaded from the snapshot.
    pub snapshot_entries: u64,
    /// Entries replayed from the log.
    pub log_entries: u64,
    /// Bytes of a torn last log entry that were dropped: a change whose write a crash
    /// interrupted, so it was never acknowledged. Worth a warning when not zero.
    pub torn_tail_bytes: u64,
}

/// The latest value of every information object, and the declared types.
///
/// Objects live in a `BTreeMap` by name, so listing is in name order; see
/// [`InfoObject`]'s memory note for what each costs. Every change is written to the log
/// before the call returns; failed calls change nothing, in memory or on disk.
#[derive(Debug)]
pub struct InfoStore {
    dir: PathBuf,
    options: StoreOptions,
    registry: TypeRegistry,
    objects: BTreeMap<String, InfoObject>,
    log: LogFile,
    recovery: Recovery,
    /// Log length past which the next change compacts (raised after a failed compaction,
    /// so a full disk is not retried on every change).
    compact_at_bytes: u64,
    compaction_error: Option<InfoError>,
    /// Reused buffer for framing entries.
    framed: Vec<u8>,
}

impl InfoStore {
    /// Opens the store in `dir`, creating the directory if needed: loads the snapshot and
    /// replays the log. A torn last log entry is dropped and counted in
    /// [`InfoStore::recovery`].
    ///
    /// # Errors
    /// [`InfoError::Io`], or [`InfoError::Corrupt`] naming the file and offset of damaged
    /// data.
    pub fn open(dir: &Path, options: StoreOptions) -> Result<InfoStore, InfoError> {
        std::fs::create_dir_all(dir).map_err(InfoError::io("create directory", dir))?;
        snapshot::remove_stale_temp(dir)?;
        let mut registry = TypeRegistry::new();
        let mut objects = BTreeMap::new();
        let snapshot_entries =
            snapshot::load(dir, |entry| apply(&mut registry, &mut objects, entry))?;
        let (log, replay) = LogFile::open(&dir.join(LOG_FILE), options.fsync, |entry| {
            apply(&mut registry, &mut objects, entry)
        })?;
        Ok(InfoStore {
            dir: dir.to_path_buf(),
            compact_at_bytes: options.compact_after_bytes,
            options,
            registry,
            objects,
            log,
            recovery: Recovery {
                snapshot_entries,
                log_entries: replay.entries,
                torn_tail_bytes: replay.torn_bytes,
            },
            compaction_error: None,
            framed: Vec::new(),
        })
    }

    /// Returns what opening the store found.
    pub fn recovery(&self) -> Recovery {
        self.recovery
    }

    /// Returns the store's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Declares a type and persists the declaration. Declaring an identical type again does
    /// nothing and writes nothing. Returns whether the type is new.
    ///
    /// # Errors
    /// As [`TypeRegistry::declare`], and [`InfoError::Io`].
    pub fn declare_type(&mut self, def: TypeDef) -> Result<bool, InfoError> {
        if !self.registry.check_declaration(&def)? {
            return Ok(false);
        }
        self.persist(|out| entry::encode_declare(out, &def))?;
        self.registry.declare(def)?;
        self.maybe_compact();
        Ok(true)
    }

    /// Creates or changes an object, as `mode` allows, and persists it. Returns the object
    /// after the change and whether it was created or updated.
    ///
    /// - `Create` needs a type and every attribute, and fails if the object exists.
    /// - `Update` fails if the object does not exist; the given attributes replace theirs
    ///   and the others keep their values; a type, if given, must be the object's.
    /// - `Upsert` creates or updates, whichever applies.
    ///
    /// The version is 1 for a new object and increments with every change; the time is the
    /// update's (the store does not reorder by time: the last call wins).
    ///
    /// # Errors
    /// [`InfoError::MalformedName`], [`InfoError::Exists`], [`InfoError::NotFound`],
    /// [`InfoError::MissingType`], [`InfoError::TypeChange`], the errors of
    /// [`TypeRegistry::check`], and [`InfoError::Io`]. The store is then unchanged.
    pub fn update(
        &mut self,
        update: ObjectUpdate,
        mode: UpdateMode,
    ) -> Result<(InfoObject, Change), InfoError> {
        let (object, change) = match (self.objects.get(&update.name), mode) {
            (Some(_), UpdateMode::Create) => {
                return Err(InfoError::Exists {
                    name: quote(&update.name),
                })
            }
            (None, UpdateMode::Update) => {
                return Err(InfoError::NotFound {
                    name: quote(&update.name),
                })
            }
            (None, _) => (self.created(update)?, Change::Created),
            (Some(current), _) => (self.updated(current, update)?, Change::Updated),
        };
        self.persist(|out| entry::encode_put(out, &object))?;
        match self.objects.get_mut(&object.name) {
            Some(held) => *held = object.clone(),
            None => {
                self.objects.insert(object.name.clone(), object.clone());
            }
        }
        self.maybe_compact();
        Ok((object, change))
    }

    fn created(&self, update: ObjectUpdate) -> Result<InfoObject, InfoError> {
        check_name(&update.name)?;
        let Some(type_name) = update.type_name else {
            return Err(InfoError::MissingType {
                name: quote(&update.name),
            });
        };
        self.registry.check(&type_name, &update.attributes, true)?;
        let mut attributes = update.attributes;
        self.registry.normalize(&type_name, &mut attributes);
        Ok(InfoObject {
            name: update.name,
            type_name,
            time: update.time,
            version: 1,
            attributes,
        })
    }

    fn updated(&self, current: &InfoObject, update: ObjectUpdate) -> Result<InfoObject, InfoError> {
        if let Some(requested) = &update.type_name {
            if *requested != current.type_name {
                return Err(InfoError::TypeChange {
                    name: quote(&current.name),
                    current: quote(&current.type_name),
                    requested: quote(requested),
                });
            }
        }
        self.registry
            .check(&current.type_name, &update.attributes, false)?;
        let mut object = current.clone();
        for (name, value) in update.attributes {
            match object.attributes.iter_mut().find(|(held, _)| *held == name) {
                Some((_, held)) => *held = value,
                None => object.attributes.push((name, value)),
            }
        }
        self.registry
            .normalize(&object.type_name, &mut object.attributes);
        object.time = update.time;
        object.version += 1;
        Ok(object)
    }

    /// Deletes an object and persists the deletion. Returns the object as it was, with the
    /// deletion's time and its version incremented (what subscribers are told).
    ///
    /// # Errors
    /// [`InfoError::NotFound`] and [`InfoError::Io`]; the store is then unchanged.
    pub fn delete(&mut self, name: &str, time: i64) -> Result<InfoObject, InfoError> {
        let Some((key, mut object)) = self.objects.remove_entry(name) else {
            return Err(InfoError::NotFound { name: quote(name) });
        };
        let version = object.version + 1;
        if let Err(err) = self.persist(|out| entry::encode_delete(out, name, time, version)) {
            self.objects.insert(key, object);
            return Err(err);
        }
        object.time = time;
        object.version = version;
        self.maybe_compact();
        Ok(object)
    }

    /// Frames one entry and appends it to the log.
    fn persist(&mut self, encode: impl FnOnce(&mut Vec<u8>)) -> Result<(), InfoError> {
        self.framed.clear();
        let framed = frame(&mut self.framed, encode);
        framed.map_err(|message| InfoError::Io {
            operation: "append to",
            path: self.dir.join(LOG_FILE),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, message),
        })?;
        self.log.append(&self.framed)
    }

    fn maybe_compact(&mut self) {
        if self.log.len() <= self.compact_at_bytes {
            return;
        }
        match self.compact() {
            Ok(()) => self.compaction_error = None,
            Err(err) => {
                self.compact_at_bytes = self.log.len() + self.options.compact_after_bytes;
                self.compaction_error = Some(err);
            }
        }
    }

    /// Returns the error of the last automatic compaction, if it failed (the change that
    /// triggered it was persisted all the same; compaction is retried once the log has grown
    /// by another [`StoreOptions::compact_after_bytes`]).
    pub fn take_compaction_error(&mut self) -> Option<InfoError> {
        self.compaction_error.take()
    }

    /// Puts `object` as it is — a copy of an object another server owns and has checked —
    /// replacing whatever the store held under its name, and persists it.
    ///
    /// # Errors
    /// [`InfoError::UnknownType`] when its type is not declared here (the store could not
    /// read its own log back with it), [`InfoError::Io`]; the store is then unchanged.
    pub fn put_copy(&mut self, object: InfoObject) -> Result<(), InfoError> {
        if self.registry.get(&object.type_name).is_none() {
            return Err(InfoError::UnknownType {
                name: object.type_name,
            });
        }
        self.persist(|out| entry::encode_put(out, &object))?;
        self.objects.insert(object.name.clone(), object);
        self.maybe_compact();
        Ok(())
    }

    /// Removes the copy of `name` (its owner deleted it at `time`, as version `version`), if
    /// the store holds one, and persists the removal; returns the object as it was.
    ///
    /// # Errors
    /// [`InfoError::Io`]; the store is then unchanged.
    pub fn remove_copy(
        &mut self,
        name: &str,
        time: i64,
        version: u64,
    ) -> Result<Option<InfoObject>, InfoError> {
        if !self.objects.contains_key(name) {
            return Ok(None);
        }
        self.persist(|out| entry::encode_delete(out, name, time, version))?;
        let removed = self.objects.remove(name);
        self.maybe_compact();
        Ok(removed)
    }

    /// Returns every object, by name.
    pub fn objects(&self) -> impl Iterator<Item = &InfoObject> {
        self.objects.values()
    }

    /// Returns the object named `name`.
    pub fn get(&self, name: &str) -> Option<&InfoObject> {
        self.objects.get(name)
    }

    /// Returns copies of the named objects, all as of one instant (`None` where there is no
    /// such object).
    pub fn get_many<S: AsRef<str>>(&self, names: &[S]) -> Vec<Option<InfoObject>> {
        names
            .iter()
            .map(|name| self.objects.get(name.as_ref()).cloned())
            .collect()
    }

    /// Returns the objects `selection` takes, by name.
    pub fn list(&self, selection: &Selection) -> Vec<&InfoObject> {
        self.objects
            .values()
            .filter(|object| selection.matches(&object.name, &object.type_name, &self.registry))
            .collect()
    }

    /// Returns up to `limit` objects `selection` takes whose names sort after `after` (from
    /// the first when `None`), by name, looking at no more than `scan` objects; and the name
    /// the next page starts after, `None` when no object is left. A long list is read page
    /// by page this way without copying it whole.
    pub fn list_page(
        &self,
        selection: &Selection,
        after: Option<&str>,
        limit: usize,
        scan: usize,
    ) -> (Vec<&InfoObject>, Option<String>) {
        use std::ops::Bound;
        let start = after.map_or(Bound::Unbounded, Bound::Excluded);
        let mut rest = self
            .objects
            .range::<str, _>((start, Bound::Unbounded))
            .peekable();
        let mut page = Vec::new();
        let mut last = None;
        for _ in 0..scan.max(1) {
            let Some((name, object)) = rest.next() else {
                return (page, None);
            };
            last = Some(name);
            if selection.matches(&object.name, &object.type_name, &self.registry) {
                page.push(object);
                if page.len() >= limit {
                    break;
                }
            }
        }
        let next = rest.peek().is_some().then(|| last.cloned()).flatten();
        (page, next)
    }

    /// Returns every type, by name.
    pub fn types(&self) -> Vec<&TypeDef> {
        self.registry.types()
    }

    /// Returns the type registry.
    pub fn registry(&self) -> &TypeRegistry {
        &self.registry
    }

    /// Returns the number of objects.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Returns true when the store holds no object.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// Returns the log's current size in bytes.
    pub fn log_bytes(&self) -> u64 {
        self.log.len()
    }

    /// Returns the bytes of changes written to the log since the store was opened: it only
    /// grows (compaction does not reset it), so whoever fsyncs the log from outside can tell
    /// whether anything was written since its last sync.
    pub fn log_appended(&self) -> u64 {
        self.log.appended()
    }

    /// fsyncs the log now if changes await it (the server calls this on its fsync interval).
    ///
    /// # Errors
    /// [`InfoError::Io`].
    pub fn sync(&mut self) -> Result<(), InfoError> {
        self.log.sync()
    }

    /// Writes a new snapshot of everything and empties the log.
    ///
    /// # Errors
    /// [`InfoError::Io`]; the store stays consistent on disk whichever step failed.
    pub fn compact(&mut self) -> Result<(), InfoError> {
        snapshot::write(&self.dir, &self.registry, self.objects.values())?;
        self.log.reset()?;
        self.compact_at_bytes = self.options.compact_after_bytes;
        Ok(())
    }
}

impl Drop for InfoStore {
    /// fsyncs what the log holds unless the policy is [`FsyncPolicy::Never`].
    fn drop(&mut self) {
        if self.options.fsync != FsyncPolicy::Never && self.log.is_unsynced() {
            // Nobody is left to tell; the data is written, only its fsync failed.
            let _ = self.log.sync();
        }
    }
}

/// Applies one entry from the snapshot or the log. Applying is idempotent (see
/// [`crate::persist`]).
fn apply(
    registry: &mut TypeRegistry,
    objects: &mut BTreeMap<String, InfoObject>,
    entry: Entry,
) -> Result<(), String> {
    match entry {
        Entry::DeclareType(def) => {
            registry.declare(def).map_err(|err| err.to_string())?;
        }
        Entry::PutObject(object) => {
            if registry.get(&object.type_name).is_none() {
                return Err(format!(
                    "object `{}` has undeclared type `{}`",
                    quote(&object.name),
                    quote(&object.type_name)
                ));
            }
            objects.insert(object.name.clone(), object);
        }
        Entry::DeleteObject { name, .. } => {
            objects.remove(&name);
        }
        Entry::End { .. } => return Err("an end entry outside a snapshot".into()),
    }
    Ok(())
}
