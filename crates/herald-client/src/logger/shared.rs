//! The state shared by a logger's handles and its background side, and what a log call
//! does with it.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_utils::CachePadded;
use herald_proto::Priority;
use tokio::sync::mpsc;

use super::buffer::{Buffer, WhenFull};
use super::clock::Clock;
use super::drops::{DropCounter, DropReason};
use super::entry::Entry;
use super::link::LinkState;
use super::options::LoggerOptions;
use super::recorder::FlightRecorder;
use super::subjects::SubjectTable;
use super::worker::{CloseAck, Command};

/// Set in the threshold once the logger is closed: no priority reaches it.
pub(super) const CLOSED: u8 = 0x80;

/// State shared by the handles and the background side. The log calls only read
/// `threshold` and the options, and push into `buffer` or `recorder`. What the background
/// side writes often (the drop counts, the buffer's wake-up) lies on cache lines of its own,
/// so that a log call's reads stay in its core's cache; the whole of it is aligned to cache
/// lines, so that no other allocation shares its first or last line (without it, C's
/// `HERALD_LOG` took 230 ns with some loggers and 400 with others).
#[repr(align(128))]
pub(crate) struct Shared {
    /// The threshold's wire value, with [`CLOSED`] set once closed.
    pub(super) threshold: AtomicU8,
    pub(super) flush_immediately: Priority,
    pub(super) flight_recorder_trigger: Priority,
    pub(super) when_full: WhenFull,
    pub(super) buffer: Buffer,
    pub(super) recorder: FlightRecorder,
    pub(super) drops: CachePadded<DropCounter>,
    pub(super) subjects: SubjectTable,
    pub(super) clock: Clock,
}

/// Where a log call's record goes.
pub(super) enum Route {
    Send,
    Record,
    Discard,
}

impl Shared {
    /// Sets the lowest priority sent, unless the logger is closed.
    pub(super) fn set_threshold(&self, threshold: Priority) {
        let _ = self
            .threshold
            .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |value| {
                Some(value & CLOSED | threshold as u8)
            });
    }

    pub(super) fn new(options: &LoggerOptions) -> Self {
        let clock = Clock::new();
        Shared {
            threshold: AtomicU8::new(options.threshold as u8),
            flush_immediately: options.flush_immediately,
            flight_recorder_trigger: options.flight_recorder_trigger,
            when_full: options.when_full,
            buffer: Buffer::new(
                options.buffer_records,
                options.batch_records,
                options.buffer_shards,
            ),
            recorder: FlightRecorder::new(
                options.flight_recorder_records,
                clock.span(options.flight_recorder_age),
            ),
            drops: CachePadded::new(DropCounter::default()),
            subjects: SubjectTable::default(),
            clock,
        }
    }

    #[inline]
    /// Returns whether a record of `priority` would be sent or kept for the flight recorder
    /// (nothing counted): callers that must gather a record's fields first ask this.
    pub(super) fn takes(&self, priority: Priority) -> bool {
        let threshold = self.threshold.load(Ordering::Relaxed);
        priority as u8 >= threshold & !CLOSED || self.recorder.is_enabled()
    }

    pub(super) fn route(&self, priority: Priority) -> Route {
        let threshold = self.threshold.load(Ordering::Relaxed);
        if priority as u8 >= threshold {
            Route::Send
        } else if threshold & CLOSED != 0 {
            // Lost only if it would have been sent: below the threshold it never would.
            if priority as u8 >= threshold & !CLOSED {
                self.drops.count(priority, DropReason::Closed);
            }
            Route::Discard
        } else if self.recorder.is_enabled() {
            Route::Record
        } else {
            Route::Discard
        }
    }

    // Always inlined: the entry is several cache lines, and each call it is handed through
    // copies it.
    #[inline(always)]
    pub(super) fn submit(
        &self,
        route: Route,
        priority: Priority,
        time: i64,
        entry: impl FnOnce() -> Entry,
    ) {
        let lost = |entry: Entry| {
            for lost in entry.context.iter().chain([&entry]) {
                self.drops.count(lost.priority, DropReason::BufferFull);
            }
        };
        match route {
            Route::Send if priority >= self.flight_recorder_trigger => {
                // Taken here, not by the background side, so that records logged after
                // this one cannot push the context out of the ring first.
                let context = self.recorder.take_context(time);
                let entry = || Entry { context, ..entry() };
                let urgent = priority >= self.flush_immediately;
                self.buffer.push(entry, urgent, self.when_full, lost);
            }
            Route::Send => {
                let urgent = priority >= self.flush_immediately;
                self.buffer.push(entry, urgent, self.when_full, lost);
            }
            Route::Record => self.recorder.record(entry()),
            Route::Discard => {}
        }
    }

    /// Marks the logger closed: later log calls drop and count.
    pub(super) fn close(&self) {
        self.threshold.fetch_or(CLOSED, Ordering::AcqRel);
    }
}

/// Tells the background side to close when the last handle goes.
pub(super) struct CloseGuard {
    pub(super) shared: Arc<Shared>,
    /// The client now, for flushes.
    pub(super) link: Arc<LinkState>,
    pub(super) commands: mpsc::UnboundedSender<Command>,
    pub(super) close_timeout: Duration,
}

/// What a dropped logger waits beyond its `close_timeout` for its background side to put
/// what is left on disk (it answers at once when it has no disk buffer).
const CLOSE_DISK_GRACE: Duration = Duration::from_secs(5);

impl Drop for CloseGuard {
    fn drop(&mut self) {
        self.shared.close();
        let (done, wait) = std::sync::mpsc::sync_channel(1);
        let ack = CloseAck::Blocking {
            done,
            flush_timeout: self.close_timeout,
        };
        if self.commands.send(Command::Close(ack)).is_err() {
            return; // closed already, or the runtime is gone
        }
        // The background side sends for at most `close_timeout`, then puts what is left in
        // its disk buffer (if it has one) and lets the directory go: wait for that too, so
        // that the directory is free when the drop returns.
        let timeout = self.close_timeout + CLOSE_DISK_GRACE;
        let wait = move || {
            let _ = wait.recv_timeout(timeout);
        };
        match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
            // The background task would need this very thread: it finishes on its own
            // if the runtime keeps running.
            Ok(tokio::runtime::RuntimeFlavor::CurrentThread) => {}
            // Hand this worker's other tasks to another thread while waiting.
            Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(wait),
            Ok(_) => {}
            Err(_) => wait(),
        }
    }
}
