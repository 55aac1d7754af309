//! The non-blocking logger: the hot path of every program that logs to Herald.
//!
//! A log call ([`Logger::log`] and friends) stamps the time, compares the priority with the
//! logger's threshold (one atomic load) and pushes an entry into a bounded lock-free buffer,
//! split into shards so that threads logging at the same time do not share a queue.
//! It takes no lock shared with other threads, does no I/O and never waits: when the buffer
//! is full the record is dropped and counted ([`Logger::dropped`]) unless the logger was made
//! with [`WhenFull::Wait`]. Short texts (up to [`INLINE_TEXT_BYTES`]) and the thread name are
//! copied into the entry, so a call without fields does not allocate.
//!
//! A background task on the client's tokio runtime wakes every [`LoggerOptions::tick`], when
//! about [`LoggerOptions::batch_records`] are waiting (each thread looks at its shard's
//! length every 16th call), or at once for a record at or above
//! [`LoggerOptions::flush_immediately`] (EMERGENCY by default). It builds the records (kind
//! log; origin host and process of this program, thread and source file/line of the call)
//! and hands them to the client without waiting ([`Client::try_publish`](crate::Client::try_publish)). Every loss is
//! counted and reported: after drops, the background side publishes a WARNING record of type
//! [`DROP_REPORT_TYPE`] on the logger's subject saying how many records of which priorities
//! were lost, and why.
//!
//! **Flight recorder.** Records below the threshold are not thrown away: the last
//! [`LoggerOptions::flight_recorder_records`] of them stay in a lock-free ring. When a
//! record at or above [`LoggerOptions::flight_recorder_trigger`] (ERROR by default) is
//! logged, the ring's records made in the [`LoggerOptions::flight_recorder_age`] before it
//! are taken out and sent just before it, oldest first, each with the field
//! [`FLIGHT_RECORDER_FIELD`] (`flight_recorder`) set to `true` so that viewers can show them
//! as context. That log call does more work than others: it moves the ring's entries (at
//! most `flight_recorder_records`), still without a lock.
//!
//! **Own connection and disk buffer.** [`Logger::connect`] makes a logger that connects
//! itself (no server needs to answer at its start; the records wait) and may keep what it
//! cannot deliver in a disk buffer ([`LoggerOptions::buffer_dir`]): while no server answers,
//! the background side moves the records to segment files, within
//! [`LoggerOptions::buffer_quota`]; once one answers they are sent first, in order, with
//! their timestamps and numbers, and what is on disk at exit is sent at the next start.
//! Losses on disk are counted and reported as `disk_quota`, `disk_torn` and `disk_error`.
//! The log calls never touch the disk. The files are the Python client's
//! (python/README.md, "Disk buffer").
//!
//! **Closing.** [`Logger::flush`] hands everything over and waits for the server;
//! [`Logger::close`] does the same and stops the logger. Dropping the last clone of a logger
//! closes it too, waiting at most [`LoggerOptions::close_timeout`], so exit never hangs. On
//! a current-thread runtime a drop cannot wait (the background task needs the same thread):
//! there, call [`Logger::close`] before the end of `main`.
//!
//! # Layout
//! - this file: [`Logger`], the log calls, flush and close; `options`: [`LoggerOptions`].
//! - `shared`: the state the handles and the background side share, and the close guard.
//! - `entry`: what a log call buffers; `clock`: when it was made (the processor's
//!   time-stamp counter where it is a clock, turned into wall-clock time by the background
//!   side); `buffer`: the queue and [`WhenFull`];
//!   `recorder`: the flight recorder; `subjects`: subjects by number; `drops`: loss counts
//!   and the drop report; `open`: starting a logger; `flush`: flushing and closing it;
//!   `worker`: the background task; `link`: the client it sends
//!   through, given or its own; `spooling`: what the background task does with a disk
//!   buffer; `spool`: the disk buffer's files; [`bridge`]: the `log` crate facade;
//!   [`remote`]: thresholds set from afar with `herald threshold`.
//!
//! # Example
//! ```no_run
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use herald_client::{Client, Logger, LoggerOptions};
//! use herald_proto::{Priority, Value};
//!
//! let client = Client::connect("herald://127.0.0.1:7400").await?;
//! let logger = Logger::new(&client, LoggerOptions::new("ANTENNA.DV01.Mount"))?;
//! logger.debug("servo loop tuned"); // below INFO: kept by the flight recorder only
//! logger.warning("encoder fault");
//! logger.log(Priority::Error, "azimuth axis stopped", vec![("axis".into(), Value::from("az"))]);
//! logger.close(Duration::from_secs(5)).await?;
//! # Ok(()) }
//! ```

pub mod bridge;
mod buffer;
mod clock;
mod deferred;
mod drops;
mod entry;
mod error;
mod flush;
mod layer;
mod link;
mod open;
mod options;
mod recorder;
pub mod remote;
mod shared;
mod spool;
mod spooling;
mod subjects;
mod worker;

use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use herald_proto::value::Field;
use herald_proto::Priority;

use entry::{Entry, SubjectRef, Text};
pub(crate) use shared::Shared;
use shared::{CloseGuard, Route, CLOSED};

pub use bridge::{install_log, LogBridge};
pub use buffer::{
    default_buffer_shards, WhenFull, DEFAULT_BATCH_RECORDS, DEFAULT_BUFFER_RECORDS,
    MAX_BUFFER_SHARDS,
};
pub use deferred::DeferredText;
pub use drops::DROP_REPORT_TYPE;
pub use entry::{Source, INLINE_TEXT_BYTES, THREAD_NAME_BYTES};
pub use error::LoggerError;
pub use layer::{priority_of_level, TracingLayer};
pub use options::{LoggerOptions, DEFAULT_CLOSE_TIMEOUT, DEFAULT_THRESHOLD};
pub use recorder::{DEFAULT_FLIGHT_RECORDER_AGE, DEFAULT_FLIGHT_RECORDER_RECORDS};
pub use remote::{threshold_message, THRESHOLD_SUBJECT};
pub use spool::{DEFAULT_BUFFER_QUOTA_BYTES, MIN_BUFFER_QUOTA_BYTES};
pub use subjects::MAX_SUBJECTS;
pub use worker::{DEFAULT_DROP_REPORT_INTERVAL, DEFAULT_TICK, FLIGHT_RECORDER_FIELD};

/// A handle for logging to Herald without blocking. Cheap to clone; clones share the
/// buffer, threshold and counts. See the [module documentation](self).
#[derive(Clone)]
pub struct Logger {
    shared: Arc<Shared>,
    guard: Arc<CloseGuard>,
    /// This handle's default subject, by number (`None` if the table was full).
    subject_id: Option<u32>,
    subject: Arc<str>,
}

impl fmt::Debug for Logger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Logger")
            .field("subject", &self.subject)
            .field("threshold", &self.threshold())
            .field("dropped", &self.dropped())
            .finish_non_exhaustive()
    }
}

impl Logger {
    /// Returns a handle on the same logger whose records go to `subject` by default.
    ///
    /// # Errors
    /// [`LoggerError::InvalidSubject`].
    pub fn with_subject(&self, subject: &str) -> Result<Logger, LoggerError> {
        Ok(Logger {
            subject_id: intern_id(&self.shared, subject)?,
            subject: subject.into(),
            ..self.clone()
        })
    }

    /// Returns this handle's default subject.
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// Logs `text` with `fields` at `priority` on this handle's subject. Never blocks
    /// (unless the logger waits when full); see the [module documentation](self).
    #[track_caller]
    #[inline]
    pub fn log(&self, priority: Priority, text: &str, fields: Vec<Field>) {
        let _counted = self.emit(
            priority,
            None,
            |t| t.set_bytes(text.as_bytes()),
            fields,
            Source::caller(),
        );
    }

    /// Logs `text` with `fields` at `priority` on `subject`. A subject that cannot be
    /// published to is counted as a drop.
    #[track_caller]
    pub fn log_on(&self, subject: &str, priority: Priority, text: &str, fields: Vec<Field>) {
        let source = Source::caller();
        let _counted = self.emit(
            priority,
            Some(subject),
            |t| t.set_bytes(text.as_bytes()),
            fields,
            source,
        );
    }

    /// Logs `text` at `priority` on `subject` (this handle's subject when `None`) from
    /// `source`: for callers that know their own source location, such as the C API's
    /// `HERALD_LOG`, which passes `__FILE__`, `__LINE__` and `__func__`.
    ///
    /// # Errors
    /// [`LoggerError::InvalidSubject`] for a subject that cannot be published to (the record
    /// is also counted as dropped, as the other log calls count it).
    #[inline]
    pub fn log_from(
        &self,
        priority: Priority,
        subject: Option<&str>,
        text: &str,
        source: Source,
    ) -> Result<(), LoggerError> {
        self.log_bytes_from(priority, subject, text.as_bytes(), source)
    }

    /// As [`Logger::log_from`], for a text that should be UTF-8 but was not checked (a C
    /// program's): it is checked on the background side, where each sequence of bytes that
    /// is not UTF-8 becomes U+FFFD — the record is never lost for its text.
    ///
    /// # Errors
    /// [`LoggerError::InvalidSubject`], as [`Logger::log_from`].
    #[inline]
    pub fn log_bytes_from(
        &self,
        priority: Priority,
        subject: Option<&str>,
        text: &[u8],
        source: Source,
    ) -> Result<(), LoggerError> {
        self.emit(priority, subject, |t| t.set_bytes(text), Vec::new(), source)
            .map_err(LoggerError::InvalidSubject)
    }

    /// Logs at `priority` on `subject` (this handle's subject when `None`) from `source` a
    /// text that `render` makes from `args` on the background side: the log call copies
    /// `args` and formats nothing. Arguments longer than [`INLINE_TEXT_BYTES`] go to the
    /// heap. C's `HERALD_LOG` logs this way (see [`DeferredText`]).
    ///
    /// # Errors
    /// [`LoggerError::InvalidSubject`], as [`Logger::log_from`].
    #[inline]
    pub fn log_deferred(
        &self,
        priority: Priority,
        subject: Option<&str>,
        source: Source,
        render: &'static dyn DeferredText,
        args: &[u8],
    ) -> Result<(), LoggerError> {
        self.emit(
            priority,
            subject,
            |t| t.set_deferred(render, args),
            Vec::new(),
            source,
        )
        .map_err(LoggerError::InvalidSubject)
    }

    /// Logs formatted text at `priority`, formatting in place (no allocation for a short
    /// result): `logger.log_fmt(Priority::Info, format_args!("run {run} started"))`.
    #[track_caller]
    pub fn log_fmt(&self, priority: Priority, args: fmt::Arguments<'_>) {
        let source = Source::caller();
        let _counted = self.emit(priority, None, |t| t.set_args(args), Vec::new(), source);
    }

    /// The common path of every log call; a subject that cannot be published to is counted
    /// as a drop and returned as the error.
    #[inline]
    pub(crate) fn emit(
        &self,
        priority: Priority,
        subject: Option<&str>,
        text: impl FnOnce(&mut Text),
        fields: Vec<Field>,
        source: Source,
    ) -> Result<(), String> {
        let route = self.shared.route(priority);
        if let Route::Discard = route {
            return Ok(());
        }
        let subject = match subject {
            None => self.default_subject(),
            // The handle's own subject, named again (as C's HERALD_LOG does): no lookup.
            Some(subject) if subject == &*self.subject => self.default_subject(),
            Some(subject) => match self.shared.subjects.intern(subject) {
                Ok(subject) => subject,
                Err(why) => {
                    tracing::debug!(why, "herald logger dropped a record with a bad subject");
                    self.shared
                        .drops
                        .count(priority, drops::DropReason::Rejected);
                    return Err(why);
                }
            },
        };
        let time = self.shared.clock.stamp();
        // Made where the buffer takes it, its text filled in place: each move of an entry
        // is a copy of several cache lines.
        self.shared.submit(route, priority, time, || {
            let mut entry = Entry::new(time, priority, subject, Text::EMPTY, fields, source);
            text(&mut entry.text);
            entry
        });
        Ok(())
    }

    #[inline]
    fn default_subject(&self) -> SubjectRef {
        match self.subject_id {
            Some(id) => SubjectRef::Id(id),
            None => SubjectRef::Owned(self.subject.as_ref().into()),
        }
    }

    /// Returns true if a record at `priority` would be sent (not only recorded).
    pub fn enabled(&self, priority: Priority) -> bool {
        priority as u8 >= self.shared.threshold.load(Ordering::Relaxed)
    }

    /// Returns the lowest priority sent.
    pub fn threshold(&self) -> Priority {
        let value = self.shared.threshold.load(Ordering::Relaxed) & !CLOSED;
        Priority::from_u8(value).unwrap_or(DEFAULT_THRESHOLD)
    }

    /// Sets the lowest priority sent, at once for every thread and clone. This is also the
    /// way a threshold message from afar takes effect (see [`remote`]). No effect once the
    /// logger is closed.
    pub fn set_threshold(&self, threshold: Priority) {
        self.shared.set_threshold(threshold);
    }

    /// Returns how many records were lost so far: buffer full, send buffer full, refused by
    /// the client, or logged at or above the threshold after closing. Each loss before the
    /// close is also reported to the server.
    pub fn dropped(&self) -> u64 {
        self.shared.drops.total()
    }

    /// Returns how many records wait in the buffer.
    pub fn pending(&self) -> usize {
        self.shared.buffer.len()
    }

    /// Returns true once the logger is closed.
    pub fn is_closed(&self) -> bool {
        self.shared.threshold.load(Ordering::Relaxed) & CLOSED != 0
    }
}

macro_rules! priority_methods {
    ($($name:ident => $priority:ident),* $(,)?) => {
        impl Logger {
            $(
                #[doc = concat!("Logs `text` at ", stringify!($priority), " on this handle's subject.")]
                #[track_caller]
                #[inline]
                pub fn $name(&self, text: &str) {
                    let _counted = self.emit(Priority::$priority, None, |t| t.set_bytes(text.as_bytes()), Vec::new(), Source::caller());
                }
            )*
        }
    };
}

priority_methods! {
    trace => Trace,
    debug => Debug,
    info => Info,
    notice => Notice,
    warning => Warning,
    error => Error,
    critical => Critical,
    alert => Alert,
    emergency => Emergency,
}

fn intern_id(shared: &Shared, subject: &str) -> Result<Option<u32>, LoggerError> {
    match shared.subjects.intern(subject) {
        Ok(SubjectRef::Id(id)) => Ok(Some(id)),
        Ok(SubjectRef::Owned(_)) => Ok(None),
        Err(why) => Err(LoggerError::InvalidSubject(why)),
    }
}
