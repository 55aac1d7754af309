//! [`ArchiveError`]: a kind the writer decides on (retry, give up, report) and a message
//! naming what failed, whichever backend it came from.

/// What kind of failure, so callers can decide without knowing the backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArchiveErrorKind {
    /// The backend cannot be reached or refused for now (Cassandra down, disk full): retry.
    Unavailable,
    /// Stored data could not be read back as records.
    Corrupt,
    /// The query itself is wrong (bad range, limit or pattern): tell the asker.
    BadQuery,
    /// A file-system or database error.
    Io,
}

impl ArchiveErrorKind {
    /// Returns the lower-case name used in error codes and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            ArchiveErrorKind::Unavailable => "unavailable",
            ArchiveErrorKind::Corrupt => "corrupt",
            ArchiveErrorKind::BadQuery => "bad_query",
            ArchiveErrorKind::Io => "io",
        }
    }
}

/// An archive operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ArchiveError {
    /// What kind of failure.
    pub kind: ArchiveErrorKind,
    /// What failed, for people.
    pub message: String,
}

impl ArchiveError {
    /// Returns an error of `kind`.
    pub fn new(kind: ArchiveErrorKind, message: impl Into<String>) -> Self {
        ArchiveError {
            kind,
            message: message.into(),
        }
    }

    /// A query that cannot be answered as asked.
    pub fn bad_query(message: impl Into<String>) -> Self {
        ArchiveError::new(ArchiveErrorKind::BadQuery, message)
    }

    /// An I/O or database failure while doing `what`.
    pub fn io(what: &str, err: impl std::fmt::Display) -> Self {
        ArchiveError::new(ArchiveErrorKind::Io, format!("{what}: {err}"))
    }
}

impl From<rusqlite::Error> for ArchiveError {
    fn from(err: rusqlite::Error) -> Self {
        ArchiveError::io("sqlite", err)
    }
}
