//! The disk buffer: where a logger keeps its records while no server answers, within a
//! quota, across its own restarts. The design and the bytes on disk are the Python
//! client's (python/README.md, "Disk buffer"), so a directory is readable by both.
//!
//! Directory layout:
//! ```text
//! lock                 held with flock while open (`lock`)
//! state                producer id, numbering limit, how far the server acknowledged (`state`)
//! <ident:020>.seg      segments, oldest (lowest ident) first (`segment`)
//! ```
//! Records are numbered when they enter the buffer, from the producer's numbering, which
//! the logger's client shares; the segments hold them in the order of their numbers.
//! [`Spool::read`] gives them back in that order; [`Spool::acknowledge`] records how far the
//! server has acknowledged them and deletes the segments that hold nothing after it.
//!
//! Quota: when a batch does not fit, the lowest priority goes first (`quota`). Every record
//! lost is counted by priority and reason in [`Spool::take_losses`]: shed by the quota, cut
//! from a torn tail at opening, or refused by a failing disk.
//!
//! Not thread-safe: the logger's background side does all of it (only the numbering's
//! reserve hook, which writes `state`, may run on a thread that publishes).
//!
//! # Layout
//! this file: [`Spool`], opening, appending, reading back; `quota`: making room;
//! `segment`, `state`, `lock`: the files; `replay`: sending it to the server.

mod lock;
mod quota;
pub(crate) mod replay;
pub(crate) mod segment;
mod state;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::numbering::Numbering;
use crate::sync::lock;
use lock::{LockError, SpoolLock};
pub(crate) use segment::REPORT_RANK;
use segment::{Counts, Segment, HEADER_BYTES, MAGIC, PRIORITY_SLOTS};
use state::StateFile;

/// Largest record put on disk: what a `PUBLISH` frame holds under the default frame limit.
pub(crate) const MAX_SPILLED_RECORD_BYTES: usize =
    herald_proto::frame::DEFAULT_MAX_FRAME_BYTES as usize - 41;
/// Default bytes of segments a disk buffer may hold.
pub const DEFAULT_BUFFER_QUOTA_BYTES: u64 = 256 * 1024 * 1024;
/// Smallest quota allowed (one segment's worth).
pub const MIN_BUFFER_QUOTA_BYTES: u64 = MIN_SEGMENT_BYTES;
/// Segments are closed at a sixteenth of the quota, within these bounds.
const MIN_SEGMENT_BYTES: u64 = 64 * 1024;
const MAX_SEGMENT_BYTES: u64 = 8 * 1024 * 1024;
/// The ident of the first segment of an empty directory.
const FIRST_IDENT: u64 = 1 << 40;

/// Why a record on disk was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DiskLoss {
    /// Shed when the quota was full.
    Quota = 0,
    /// Cut from a torn segment tail at opening.
    Torn = 1,
    /// The disk would not take it (or its number could not be reserved).
    Error = 2,
}

/// Records lost, by reason and priority slot.
pub(crate) type Losses = [Counts; 3];

/// Why a disk buffer could not be opened.
#[derive(Debug)]
pub(crate) enum SpoolError {
    /// Another process (or logger) holds the directory.
    Locked { dir: PathBuf, holder: String },
    /// A file of the directory could not be made or read.
    Io {
        dir: PathBuf,
        what: &'static str,
        source: std::io::Error,
    },
}

/// An open disk buffer directory.
#[derive(Debug)]
pub(crate) struct Spool {
    dir: PathBuf,
    quota: u64,
    segment_bytes: u64,
    _lock: SpoolLock,
    state: Arc<Mutex<StateFile>>,
    numbering: Numbering,
    segments: Vec<Segment>,
    /// Where `read` goes on: (segment ident, offset); `None`: from the oldest.
    cursor: Option<(u64, u64)>,
    losses: Losses,
}

impl Spool {
    /// Opens (making it if need be) the disk buffer in `dir`: takes its lock, reads its
    /// state and segments (cutting torn tails, counting what they held), and numbers on
    /// after the highest number found. `new_producer` gives the id of a new producer.
    ///
    /// # Errors
    /// [`SpoolError::Locked`] naming the holder, or [`SpoolError::Io`].
    pub(crate) fn open(
        dir: &Path,
        quota: u64,
        new_producer: impl FnOnce() -> u64,
    ) -> Result<Spool, SpoolError> {
        let io = |what| {
            move |source| SpoolError::Io {
                dir: dir.to_path_buf(),
                what,
                source,
            }
        };
        std::fs::create_dir_all(dir).map_err(io("making the directory"))?;
        let spool_lock = SpoolLock::take(dir).map_err(|error| match error {
            LockError::Held(holder) => SpoolError::Locked {
                dir: dir.to_path_buf(),
                holder,
            },
            LockError::Io(source) => io("locking `lock`")(source),
        })?;
        let mut state = StateFile::read(dir, new_producer).map_err(io("reading `state`"))?;
        let mut losses = [[0; PRIORITY_SLOTS]; 3];
        let segments = open_segments(dir, &mut losses).map_err(io("reading the segments"))?;
        let last = segments.iter().map(|s| s.last_seq).max().unwrap_or(0);
        // In case `state` was lost: new numbers must not repeat the ones on disk.
        state.state.limit = state.state.limit.max(last + 1);
        state.write().map_err(io("writing `state`"))?;
        let limit = state.state.limit;
        let state = Arc::new(Mutex::new(state));
        let hook_state = Arc::clone(&state);
        let reserve = Box::new(move |limit: u64| {
            let mut file = lock(&hook_state);
            file.state.limit = limit;
            file.write()
                .map_err(|error| format!("writing the disk buffer's `state`: {error}"))
        });
        let producer = lock(&state).state.producer;
        let mut spool = Spool {
            dir: dir.to_path_buf(),
            quota,
            segment_bytes: (quota / 16).clamp(MIN_SEGMENT_BYTES, MAX_SEGMENT_BYTES),
            _lock: spool_lock,
            numbering: Numbering::with_reserve(producer, limit, limit, reserve),
            state,
            segments,
            cursor: None,
            losses,
        };
        spool.forget_acknowledged();
        Ok(spool)
    }

    /// Returns the producer's numbering, which the logger's client shares.
    pub(crate) fn numbering(&self) -> &Numbering {
        &self.numbering
    }

    /// Returns the losses counted since the last call, and forgets them.
    pub(crate) fn take_losses(&mut self) -> Losses {
        std::mem::replace(&mut self.losses, [[0; PRIORITY_SLOTS]; 3])
    }

    fn lose(&mut self, priority: u8, reason: DiskLoss, count: u64) {
        self.losses[reason as usize][segment::slot(priority)] += count;
    }

    fn acked(&self) -> u64 {
        lock(&self.state).state.acked
    }

    /// Returns the bytes of the segments.
    pub(crate) fn used_bytes(&self) -> u64 {
        self.segments.iter().map(|s| s.size).sum()
    }

    /// Returns true while the buffer holds records no server has acknowledged.
    pub(crate) fn pending(&self) -> bool {
        let acked = self.acked();
        self.segments.iter().any(|s| s.last_seq > acked)
    }

    /// Returns the highest number in the buffer (0 if empty).
    pub(crate) fn last_seq(&self) -> u64 {
        self.segments.iter().map(|s| s.last_seq).max().unwrap_or(0)
    }

    /// Numbers `incoming` (priority, encoded record) and writes it after everything in the
    /// buffer, shedding by priority when the quota is full; every record not written is
    /// counted as lost.
    pub(crate) fn append(&mut self, incoming: Vec<(u8, Vec<u8>)>) {
        let keep = self.room_for(&incoming);
        let kept: Vec<(u8, Vec<u8>)> = incoming
            .into_iter()
            .zip(keep)
            .filter_map(|(entry, kept)| kept.then_some(entry))
            .collect();
        if kept.is_empty() {
            return;
        }
        let first = match self.numbering.take(kept.len() as u64) {
            Ok(first) => first,
            Err(why) => {
                tracing::warn!(dir = %self.dir.display(), why, "herald disk buffer lost records");
                kept.iter()
                    .for_each(|(p, _)| self.lose(*p, DiskLoss::Error, 1));
                return;
            }
        };
        let entries: Vec<(u64, u8, &[u8])> = kept
            .iter()
            .enumerate()
            .map(|(i, (priority, record))| (first + i as u64, *priority, record.as_slice()))
            .collect();
        self.write(&entries);
    }

    /// Puts `entries` (number, priority, encoded record), numbered already and older than
    /// everything on disk, in front of it: the records a client sent and no server
    /// acknowledged when the logger closes during an outage. They go in a segment of their
    /// own, before the oldest, so the next start sends them first, under their numbers. A
    /// record the quota has no room for, or numbered at or below what the state says was
    /// acknowledged (it would never be read), is counted as lost.
    pub(crate) fn prepend(&mut self, entries: Vec<(u64, u8, Vec<u8>)>) {
        let acked = self.acked();
        let (entries, stale): (Vec<_>, Vec<_>) = entries.into_iter().partition(|e| e.0 > acked);
        for (_, priority, _) in &stale {
            self.lose(*priority, DiskLoss::Error, 1);
        }
        let incoming: Vec<(u8, Vec<u8>)> = entries.iter().map(|e| (e.1, e.2.clone())).collect();
        let keep = self.room_for(&incoming);
        let kept: Vec<(u64, u8, &[u8])> = entries
            .iter()
            .zip(keep)
            .filter(|(_, kept)| *kept)
            .map(|((seq, priority, record), _)| (*seq, *priority, record.as_slice()))
            .collect();
        if kept.is_empty() {
            return;
        }
        let ident = self.segments.first().map_or(FIRST_IDENT, |s| s.ident) - 1;
        let written = Segment::create(&self.dir, ident).and_then(|mut segment| {
            segment.append(&kept)?;
            segment.seal(true)?;
            Ok(segment)
        });
        match written {
            Ok(segment) => {
                self.segments.insert(0, segment);
                self.cursor = None;
            }
            Err(error) => {
                tracing::warn!(dir = %self.dir.display(), %error, "herald disk buffer cannot write");
                for (_, priority, _) in &kept {
                    self.lose(*priority, DiskLoss::Error, 1);
                }
            }
        }
    }

    /// Writes numbered entries to the active segments (a new one when full).
    fn write(&mut self, entries: &[(u64, u8, &[u8])]) {
        let mut start = 0;
        while start < entries.len() {
            let written = self.write_some(&entries[start..]);
            match written {
                Ok(count) => start += count,
                Err(error) => {
                    tracing::warn!(dir = %self.dir.display(), %error, "herald disk buffer cannot write");
                    for (_, priority, _) in &entries[start..] {
                        self.lose(*priority, DiskLoss::Error, 1);
                    }
                    return;
                }
            }
        }
    }

    /// Appends as many of `entries` as the active segment takes (one at least).
    fn write_some(&mut self, entries: &[(u64, u8, &[u8])]) -> std::io::Result<usize> {
        let segment = self.active()?;
        let mut room = segment.segment_room;
        let mut end = 0;
        while end < entries.len() && (end == 0 || room > 0) {
            room -= (HEADER_BYTES + entries[end].2.len() as u64) as i64;
            end += 1;
        }
        if room < 0 && end > 1 {
            end -= 1; // the last one goes in the next segment
        }
        let index = self.segments.len() - 1;
        self.segments[index].append(&entries[..end])?;
        Ok(end)
    }

    /// Returns the room left in the segment appends go to (a new one when the last is full).
    fn active(&mut self) -> std::io::Result<Active> {
        if let Some(last) = self.segments.last() {
            if last.size < self.segment_bytes {
                return Ok(Active {
                    segment_room: (self.segment_bytes - last.size) as i64,
                });
            }
        }
        let ident = match self.segments.last_mut() {
            Some(last) => {
                last.seal(true)?;
                last.ident + 1
            }
            None => FIRST_IDENT,
        };
        self.segments.push(Segment::create(&self.dir, ident)?);
        Ok(Active {
            segment_room: (self.segment_bytes - MAGIC.len() as u64) as i64,
        })
    }

    /// Returns the next records not acknowledged, in order, about `max_bytes` of them, as
    /// (number, priority, encoded record); none at the end of the buffer.
    ///
    /// # Errors
    /// A read error; [`Spool::rewind`] then reads again from the oldest.
    pub(crate) fn read(&mut self, max_bytes: u64) -> std::io::Result<Vec<(u64, u8, Vec<u8>)>> {
        let acked = self.acked();
        let mut found = Vec::new();
        let mut budget = i64::try_from(max_bytes).unwrap_or(i64::MAX);
        while budget > 0 {
            let Some((index, offset)) = self.locate() else {
                break;
            };
            let segment = &self.segments[index];
            let (data, entries, end) = segment.read(offset, budget as u64)?;
            if entries.is_empty() {
                let Some(next) = self.segments.get(index + 1) else {
                    break;
                };
                self.cursor = Some((next.ident, MAGIC.len() as u64));
                continue;
            }
            self.cursor = Some((segment.ident, end));
            for entry in entries.into_iter().filter(|e| e.seq > acked) {
                budget -= (HEADER_BYTES as usize + entry.record.len()) as i64;
                found.push((entry.seq, entry.priority, data[entry.record].to_vec()));
            }
        }
        Ok(found)
    }

    fn locate(&self) -> Option<(usize, u64)> {
        let first = self.segments.first()?;
        let Some((ident, offset)) = self.cursor else {
            return Some((0, MAGIC.len() as u64));
        };
        debug_assert!(first.ident <= ident || self.segments.iter().all(|s| s.ident > ident));
        let index = self.segments.iter().position(|s| s.ident >= ident)?;
        let at = if self.segments[index].ident == ident {
            offset
        } else {
            MAGIC.len() as u64
        };
        Some((index, at))
    }

    /// Reads again from the oldest record not acknowledged (after a failed send).
    pub(crate) fn rewind(&mut self) {
        self.cursor = None;
    }

    /// Notes that every record numbered up to `through` has been acknowledged: deletes the
    /// segments holding nothing after it and writes the state down. A state not written
    /// only means those records may be sent again after a restart (the server drops them).
    pub(crate) fn acknowledge(&mut self, through: u64) {
        {
            let mut file = lock(&self.state);
            if through <= file.state.acked {
                return;
            }
            file.state.acked = through;
        }
        self.forget_acknowledged();
        if let Err(error) = lock(&self.state).write() {
            tracing::warn!(dir = %self.dir.display(), %error, "herald disk buffer cannot write its state");
        }
    }

    fn forget_acknowledged(&mut self) {
        let acked = self.acked();
        while self.segments.first().is_some_and(|s| s.last_seq <= acked) {
            let segment = self.segments.remove(0);
            if let Err(error) = segment.remove() {
                tracing::warn!(%error, "herald disk buffer cannot delete a segment");
            }
        }
        if self.segments.is_empty() {
            self.cursor = None;
        }
    }

    /// Syncs the segment being written and the state; the lock goes when the spool drops.
    pub(crate) fn close(&mut self) {
        let sealed = self.segments.last_mut().map_or(Ok(()), |s| s.seal(true));
        let written = lock(&self.state).write();
        if let Err(error) = sealed.and(written) {
            tracing::warn!(dir = %self.dir.display(), %error, "herald disk buffer cannot sync at close");
        }
    }
}

/// Runs `work` (disk work) on the logger's background task: on a multi-thread runtime the
/// thread's other tasks move to another thread meanwhile, so that a slow disk holds up no
/// network task; on a current-thread runtime it simply runs.
pub(crate) fn on_disk<R>(work: impl FnOnce() -> R) -> R {
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(work),
        _ => work(),
    }
}

/// Room left in the active segment (may go below zero by the last entry written).
struct Active {
    segment_room: i64,
}

/// Opens the segments of `dir` in the order of their names, removing `.tmp` leftovers of
/// writes cut short and counting torn tails into `losses`.
fn open_segments(dir: &Path, losses: &mut Losses) -> std::io::Result<Vec<Segment>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| entry.file_name().into_string().ok())
        .collect();
    names.sort();
    let mut segments = Vec::new();
    for name in names {
        let path = dir.join(&name);
        if name.ends_with(".tmp") {
            std::fs::remove_file(&path)?; // the old file stands
            continue;
        }
        let Some(ident) = name
            .strip_suffix(".seg")
            .and_then(|n| n.parse::<u64>().ok())
        else {
            continue;
        };
        let (segment, torn) = Segment::open(path, ident)?;
        for (slot, count) in torn.iter().enumerate() {
            losses[DiskLoss::Torn as usize][slot] += count;
        }
        if segment.size > 0 {
            segments.push(segment);
        }
    }
    Ok(segments)
}
