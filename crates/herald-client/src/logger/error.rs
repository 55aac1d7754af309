//! Why a logger could not be made.

use std::path::PathBuf;

/// Why [`Logger::new`](super::Logger::new) or [`Logger::with_subject`](super::Logger::with_subject)
/// failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LoggerError {
    /// The subject cannot be published to.
    #[error("invalid logger subject: {0}")]
    InvalidSubject(String),
    /// There is no tokio runtime to run the background side on.
    #[error(
        "a logger must be made inside a tokio runtime (the client's), and none is running here"
    )]
    NoRuntime,
    /// Another process (or logger) holds the disk buffer's directory.
    #[error("disk buffer `{}` is in use by another producer ({holder}); one producer per directory", .dir.display())]
    BufferLocked {
        /// The directory.
        dir: PathBuf,
        /// Who holds it, as its lock file says: `pid=… host=…`.
        holder: String,
    },
    /// The disk buffer's directory could not be made, locked or read.
    #[error("disk buffer `{}`: {what}: {message}", .dir.display())]
    Buffer {
        /// The directory.
        dir: PathBuf,
        /// What failed (`reading the segments`, …).
        what: &'static str,
        /// The operating system's message.
        message: String,
    },
    /// An option is out of its range; the message names it and its value.
    #[error("invalid logger option: {0}")]
    InvalidOption(String),
    /// A disk buffer needs a logger that makes its own connection.
    #[error("a disk buffer (`buffer_dir`) needs a logger that makes its own connection, under the buffer's producer id: use `Logger::connect`")]
    BufferNeedsOwnConnection,
    /// The URL given to [`Logger::connect`](super::Logger::connect) is malformed.
    #[error(transparent)]
    Url(#[from] crate::UrlError),
}
