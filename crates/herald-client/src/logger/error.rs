//! Why a logger could not be made.

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
}
