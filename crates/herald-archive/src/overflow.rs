//! The overflow: records the archive's buffer has no room for, on their way to the spill
//! files. The router hands them over ([`Overflow::hand_over`]) and goes on; a thread of their
//! own writes them, so a publisher never waits on a file. What that thread cannot write (the
//! spill files full, or failing) and what does not fit the hand-over's own bound
//! ([`QUEUE_BYTES`]) is dropped and counted by priority, like any other loss.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::entry::Entry;
use crate::spill::Spill;

/// Bytes of records handed over and not yet in a spill file, at most.
pub const QUEUE_BYTES: usize = 64 << 20;

/// The spill files and the thread that writes them.
pub(crate) struct Overflow {
    spill: Arc<Mutex<Spill>>,
    sender: Mutex<Option<Sender<Vec<Entry>>>>,
    queued_bytes: Arc<AtomicUsize>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn bytes_of(entries: &[Entry]) -> usize {
    entries.iter().map(|e| e.record.bytes.len()).sum()
}

/// Appends `entries` to `spill`, giving each that does not fit or cannot be written to
/// `lost`; returns how many were lost and the last write error.
fn write(
    spill: &mut Spill,
    entries: &[Entry],
    lost: &impl Fn(&Entry),
) -> (usize, Option<std::io::Error>) {
    let (mut dropped, mut error) = (0, None);
    for entry in entries {
        match spill.push(entry) {
            Ok(true) => continue,
            Ok(false) => {}
            Err(err) => error = Some(err),
        }
        lost(entry);
        dropped += 1;
    }
    if let Err(err) = spill.flush() {
        error = Some(err);
    }
    (dropped, error)
}

/// Joins `thread` once it has finished, waiting until `deadline` at most (a thread still
/// running then is left to finish on its own).
pub(crate) fn join_until(thread: JoinHandle<()>, deadline: Instant) {
    while !thread.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    if thread.is_finished() {
        let _ = thread.join();
    }
}

impl Overflow {
    /// Starts the thread that writes into `spill`; `lost` counts each record it could not
    /// write.
    ///
    /// # Errors
    /// The thread could not be spawned.
    pub(crate) fn start(
        spill: Spill,
        lost: impl Fn(&Entry) + Send + 'static,
    ) -> std::io::Result<Overflow> {
        let spill = Arc::new(Mutex::new(spill));
        let queued_bytes = Arc::new(AtomicUsize::new(0));
        let (sender, receiver) = channel::<Vec<Entry>>();
        let thread = std::thread::Builder::new()
            .name("herald-spill".into())
            .spawn({
                let (spill, queued_bytes) = (Arc::clone(&spill), Arc::clone(&queued_bytes));
                move || {
                    let mut last_warning: Option<Instant> = None;
                    for entries in receiver {
                        let (dropped, error) = write(&mut lock(&spill), &entries, &lost);
                        queued_bytes.fetch_sub(bytes_of(&entries), Ordering::AcqRel);
                        // Counted always; said at most once a second.
                        if (dropped > 0 || error.is_some())
                            && last_warning.is_none_or(|at| at.elapsed() >= Duration::from_secs(1))
                        {
                            last_warning = Some(Instant::now());
                            match error {
                                Some(err) => tracing::warn!(dropped, error = %err, "archive spill files not writable: records not archived"),
                                None => tracing::warn!(dropped, "archive spill files full: records not archived"),
                            }
                        }
                    }
                }
            })?;
        Ok(Overflow {
            spill,
            sender: Mutex::new(Some(sender)),
            queued_bytes,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Hands `entries` to the spill thread, or gives them back when they would take the
    /// hand-over past [`QUEUE_BYTES`] or the thread has stopped.
    pub(crate) fn hand_over(&self, entries: Vec<Entry>) -> Result<(), Vec<Entry>> {
        let bytes = bytes_of(&entries);
        let queued = self.queued_bytes.fetch_add(bytes, Ordering::AcqRel);
        let sent = match &*lock(&self.sender) {
            Some(sender) if queued + bytes <= QUEUE_BYTES => sender.send(entries).map_err(|e| e.0),
            _ => Err(entries),
        };
        if sent.is_err() {
            self.queued_bytes.fetch_sub(bytes, Ordering::AcqRel);
        }
        sent
    }

    /// The spill files, for the writer thread (which reads them back) and the counters.
    pub(crate) fn spill(&self) -> MutexGuard<'_, Spill> {
        lock(&self.spill)
    }

    /// Lets the thread write what it was handed and stop, waiting until `deadline` at most.
    pub(crate) fn stop(&self, deadline: Instant) {
        drop(lock(&self.sender).take());
        if let Some(thread) = lock(&self.thread).take() {
            join_until(thread, deadline);
        }
    }
}
