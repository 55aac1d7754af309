//! Starting a logger: over a client it is given ([`Logger::new`]), or over a connection it
//! makes itself, with a disk buffer if asked ([`Logger::connect`]); both start the
//! background side ([`worker`](super::worker)).

use std::sync::Arc;

use tokio::sync::mpsc;

use super::link::{Link, LinkState};
use super::shared::{CloseGuard, Shared};
use super::spool::{Spool, SpoolError, MIN_BUFFER_QUOTA_BYTES};
use super::{intern_id, remote, worker, Logger, LoggerError, LoggerOptions};
use crate::{Client, ClientOptions, ServerUrl};

impl Logger {
    /// Starts a logger that sends through `client`, with its background task on the current
    /// tokio runtime.
    ///
    /// # Errors
    /// [`LoggerError::InvalidSubject`], [`LoggerError::NoRuntime`] outside a runtime, or
    /// [`LoggerError::BufferNeedsOwnConnection`] with a `buffer_dir` (the client numbers its
    /// records under its own producer id; a disk buffer needs [`Logger::connect`]).
    pub fn new(client: &Client, options: LoggerOptions) -> Result<Logger, LoggerError> {
        if options.buffer_dir.is_some() {
            return Err(LoggerError::BufferNeedsOwnConnection);
        }
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| LoggerError::NoRuntime)?;
        let (link, state) = Link::given(client.clone());
        Logger::start(&runtime, options, link, state, None)
    }

    /// Starts a logger that makes its own connection to `url` with `client_options`, with its
    /// background task on the current tokio runtime. No server needs to answer now: the
    /// background side tries until one does (with backoff up to 5 s), and fails over without
    /// end. With [`LoggerOptions::buffer_dir`] it opens the disk buffer here (taking its
    /// lock, reading what a previous run left, cutting torn tails), and says `HELLO` with the
    /// buffer's producer id, numbering on from where the last run stopped.
    ///
    /// # Errors
    /// [`LoggerError::Url`], [`LoggerError::InvalidSubject`], [`LoggerError::NoRuntime`],
    /// [`LoggerError::InvalidOption`] for a quota under [`MIN_BUFFER_QUOTA_BYTES`],
    /// [`LoggerError::BufferLocked`] naming the process that holds the directory, or
    /// [`LoggerError::Buffer`] when it cannot be made or read.
    pub fn connect(
        url: &str,
        client_options: ClientOptions,
        options: LoggerOptions,
    ) -> Result<Logger, LoggerError> {
        url.parse::<ServerUrl>()?;
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| LoggerError::NoRuntime)?;
        let spool = match &options.buffer_dir {
            Some(dir) => Some(open_spool(dir, options.buffer_quota)?),
            None => None,
        };
        let numbering = spool.as_ref().map(|s| s.numbering().clone());
        let (link, state) = Link::own(url.to_string(), client_options, numbering);
        Logger::start(&runtime, options, link, state, spool)
    }

    fn start(
        runtime: &tokio::runtime::Handle,
        options: LoggerOptions,
        link: Link,
        state: Arc<LinkState>,
        spool: Option<Spool>,
    ) -> Result<Logger, LoggerError> {
        let shared = Arc::new(Shared::new(&options));
        let subject_id = intern_id(&shared, &options.subject)?;
        let (commands, receiver) = mpsc::unbounded_channel();
        if options.remote_threshold {
            let (link, subject) = (Arc::clone(&state), options.subject.clone());
            runtime.spawn(remote::listen_once_connected(
                link,
                Arc::downgrade(&shared),
                subject,
            ));
        }
        let worker = worker::Worker {
            shared: Arc::clone(&shared),
            link,
            spool,
            commands: receiver,
            tick: options.tick,
            report_interval: options.drop_report_interval,
            report_subject: options.subject.clone(),
            storm: options.storm,
            close_timeout: options.close_timeout,
        };
        runtime.spawn(worker.run());
        let guard = CloseGuard {
            shared: Arc::clone(&shared),
            link: state,
            commands,
            close_timeout: options.close_timeout,
        };
        Ok(Logger {
            shared,
            guard: Arc::new(guard),
            subject_id,
            subject: options.subject.into(),
        })
    }
}

/// Opens the disk buffer in `dir`.
fn open_spool(dir: &std::path::Path, quota: u64) -> Result<Spool, LoggerError> {
    if quota < MIN_BUFFER_QUOTA_BYTES {
        return Err(LoggerError::InvalidOption(format!(
            "buffer_quota of {quota} bytes is below the least, {MIN_BUFFER_QUOTA_BYTES}"
        )));
    }
    Spool::open(dir, quota, crate::options::random_producer).map_err(|error| match error {
        SpoolError::Locked { dir, holder } => LoggerError::BufferLocked { dir, holder },
        SpoolError::Io { dir, what, source } => LoggerError::Buffer {
            dir,
            what,
            message: source.to_string(),
        },
    })
}
