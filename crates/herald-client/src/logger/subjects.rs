//! The subjects a logger has seen, by number, so that a log call carries a `u32` instead of
//! a string.
//!
//! Readers (log calls naming a subject, and the background side) load the current table
//! through an [`ArcSwap`], which takes no lock. A subject seen for the first time copies the
//! table under a writer mutex; that happens once per subject, not per call, and the table is
//! bounded by [`MAX_SUBJECTS`] (subjects beyond it travel as owned strings).

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use herald_proto::record::check_subject;

use super::entry::SubjectRef;

/// Most subjects one logger numbers; later new subjects are copied into each entry.
pub const MAX_SUBJECTS: usize = 4096;

/// Subjects each thread remembers with their numbers (per table), most recent kept.
const RECENT_SUBJECTS: usize = 4;

/// Numbers the tables, so that a thread's remembered subjects are told apart by table (an
/// address could be reused by a later table).
static NEXT_TABLE: AtomicU64 = AtomicU64::new(1);

/// The subjects a thread named last: (table, subject, number).
#[derive(Default)]
struct Recent {
    slots: [Option<(u64, Arc<str>, u32)>; RECENT_SUBJECTS],
    next: usize,
}

thread_local! {
    /// A thread logs to a few subjects over and over: a hit here costs a string comparison
    /// instead of the table's lookup (an `ArcSwap` load, a hash, a probe: ~40 ns measured).
    static RECENT: RefCell<Recent> = RefCell::new(Recent::default());
}

/// A multiply-rotate hash (as rustc's FxHash) for the table's keys: a log call naming a
/// subject hashes it every time, and SipHash cost as much as the rest of the lookup. The
/// keys are the program's own subjects, at most [`MAX_SUBJECTS`], so flooding is no concern.
#[derive(Default)]
struct SubjectHasher(u64);

impl Hasher for SubjectHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
            self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
        }
        for &byte in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(byte)).wrapping_mul(K);
        }
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// One version of the table.
#[derive(Default)]
pub(crate) struct Table {
    ids: HashMap<Arc<str>, u32, BuildHasherDefault<SubjectHasher>>,
    names: Vec<Arc<str>>,
}

impl Table {
    /// Returns the subject numbered `id`.
    pub(crate) fn name(&self, id: u32) -> Option<&str> {
        self.names.get(id as usize).map(|name| &**name)
    }
}

/// The numbered subjects of one logger and its clones.
pub(crate) struct SubjectTable {
    current: ArcSwap<Table>,
    writer: Mutex<()>,
    limit: usize,
    serial: u64,
}

impl Default for SubjectTable {
    fn default() -> Self {
        SubjectTable::with_limit(MAX_SUBJECTS)
    }
}

impl SubjectTable {
    /// Returns an empty table that numbers at most `limit` subjects.
    pub(crate) fn with_limit(limit: usize) -> Self {
        SubjectTable {
            current: ArcSwap::default(),
            writer: Mutex::new(()),
            limit,
            serial: NEXT_TABLE.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Returns the reference to log `subject` with.
    ///
    /// # Errors
    /// Why `subject` cannot be published to.
    pub(crate) fn intern(&self, subject: &str) -> Result<SubjectRef, String> {
        if let Some(id) = self.recent(subject) {
            return Ok(SubjectRef::Id(id));
        }
        match self.lookup(subject)? {
            Some((id, name)) => {
                self.remember(name, id);
                Ok(SubjectRef::Id(id))
            }
            None => Ok(SubjectRef::Owned(subject.into())),
        }
    }

    /// Returns the number this thread remembers for `subject` in this table.
    #[inline]
    fn recent(&self, subject: &str) -> Option<u32> {
        RECENT
            .try_with(|recent| {
                recent
                    .borrow()
                    .slots
                    .iter()
                    .flatten()
                    .find_map(|(table, name, id)| {
                        (*table == self.serial && &**name == subject).then_some(*id)
                    })
            })
            .ok()
            .flatten()
    }

    /// Remembers `name`'s number for this thread, in place of the oldest remembered.
    fn remember(&self, name: Arc<str>, id: u32) {
        let _gone = RECENT.try_with(|recent| {
            let mut recent = recent.borrow_mut();
            let slot = recent.next;
            recent.slots[slot] = Some((self.serial, name, id));
            recent.next = (slot + 1) % RECENT_SUBJECTS;
        });
    }

    /// Finds or numbers `subject` in the table: its number and the table's copy of it, or
    /// `None` when the table is full.
    fn lookup(&self, subject: &str) -> Result<Option<(u32, Arc<str>)>, String> {
        if let Some((name, id)) = self.current.load().ids.get_key_value(subject) {
            return Ok(Some((*id, Arc::clone(name))));
        }
        check_subject(subject)?;
        let _writer = self
            .writer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let table = self.current.load_full();
        if let Some((name, id)) = table.ids.get_key_value(subject) {
            return Ok(Some((*id, Arc::clone(name))));
        }
        if table.names.len() >= self.limit {
            return Ok(None);
        }
        let id = table.names.len() as u32;
        let name: Arc<str> = subject.into();
        let mut next = Table {
            ids: table.ids.clone(),
            names: table.names.clone(),
        };
        next.ids.insert(Arc::clone(&name), id);
        next.names.push(Arc::clone(&name));
        self.current.store(Arc::new(next));
        Ok(Some((id, name)))
    }

    /// Returns the current table, for the background side to resolve a batch with.
    pub(crate) fn snapshot(&self) -> Arc<Table> {
        self.current.load_full()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_each_subject_once_and_refuses_bad_ones() {
        let table = SubjectTable::default();
        let a = table.intern("A.b").unwrap();
        let b = table.intern("C").unwrap();
        assert!(matches!((a, b), (SubjectRef::Id(0), SubjectRef::Id(1))));
        assert!(matches!(table.intern("A.b"), Ok(SubjectRef::Id(0))));
        assert_eq!(table.snapshot().name(1), Some("C"));
        assert!(table.intern("A.*").unwrap_err().contains("`*`"));
    }

    #[test]
    fn a_thread_remembers_numbers_per_table() {
        let (one, two) = (SubjectTable::default(), SubjectTable::default());
        two.intern("first.in.two").unwrap();
        assert!(matches!(one.intern("A.b"), Ok(SubjectRef::Id(0))));
        assert_eq!(one.recent("A.b"), Some(0));
        // The same subject in another table has that table's number, not the one remembered.
        assert_eq!(two.recent("A.b"), None);
        assert!(matches!(two.intern("A.b"), Ok(SubjectRef::Id(1))));
        assert_eq!((one.recent("A.b"), two.recent("A.b")), (Some(0), Some(1)));
        // Only the last few are remembered; the others are still found in the table.
        for n in 0..RECENT_SUBJECTS {
            one.intern(&format!("S{n}")).unwrap();
        }
        assert_eq!(one.recent("A.b"), None);
        assert!(matches!(one.intern("A.b"), Ok(SubjectRef::Id(0))));
    }

    #[test]
    fn subjects_beyond_the_limit_are_owned() {
        let table = SubjectTable::with_limit(16);
        for n in 0..16 {
            table.intern(&format!("S{n}")).unwrap();
        }
        assert!(matches!(table.intern("late"), Ok(SubjectRef::Owned(s)) if &*s == "late"));
        assert!(matches!(table.intern("S7"), Ok(SubjectRef::Id(7))));
    }
}
